"""The 4x4 board as one 64-bit int: 4 bits a cell holding the tile's rank
(0 = empty, k = a tile of 2**k), cell (r, c) at bit 4 * (4 * r + c).

Row r is ``(b >> 16 * r) & 0xFFFF`` with column 0 in the low nibble, so a
whole row indexes a 65536-entry table. The tables are built on first use, not
at import time (~0.1 s in CPython), and cached for the process.

Rank 15 (32768) is the largest a nibble holds: two 32768s do not merge here.
Callers route boards holding a tile above 32768 to the exact generic search
(:mod:`ansi2048.ai.heuristic`), so this cap never changes a suggested move on
such boards; and a board with two 32768s about to merge is not reachable in
4x4 play below that.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

__all__ = [
    "MAX_RANK",
    "RowTables",
    "decode",
    "empty_cells",
    "encode",
    "moves",
    "row_tables",
    "transpose",
]

MAX_RANK = 15
_ROWS = 65536


class RowTables:
    """Per-row results of sliding left and right, and per-column results of
    sliding up and down already spread to their bit positions in the board."""

    __slots__ = ("down", "left", "right", "score", "up")

    def __init__(self) -> None:
        left: List[int] = [0] * _ROWS
        score: List[int] = [0] * _ROWS
        # Straight-line code over the 65536 rows, nibble 0 fastest: about 3x
        # quicker than a helper call per row, and this is the first hint's wait.
        row = 0
        for d in range(16):
            for c in range(16):
                for b in range(16):
                    for a in range(16):
                        tiles = [x for x in (a, b, c, d) if x]
                        out = points = shift = j = 0
                        n = len(tiles)
                        while j < n:
                            x = tiles[j]
                            if j + 1 < n and tiles[j + 1] == x and x < MAX_RANK:
                                x += 1
                                points += 1 << x
                                j += 2
                            else:
                                j += 1
                            out |= x << shift
                            shift += 4
                        left[row] = out
                        score[row] = points
                        row += 1
        rev = [((x & 0xF) << 12) | ((x & 0xF0) << 4) | ((x >> 4) & 0xF0) | (x >> 12) for x in range(_ROWS)]
        right = [rev[left[rev[x]]] for x in range(_ROWS)]
        self.left = left
        self.right = right
        # A run of equal tiles merges into the same tiles from either end, so
        # a row scores the same sliding left or right (tested).
        self.score = score
        # Up on the board is left on the transposed board: a column read top
        # to bottom is a row of the transpose; spreading nibble j to nibble
        # 4 * j puts it back as column 0 of a board.
        self.up = [(x & 0xF) | ((x & 0xF0) << 12) | ((x & 0xF00) << 24) | ((x & 0xF000) << 36) for x in left]
        self.down = [(x & 0xF) | ((x & 0xF0) << 12) | ((x & 0xF00) << 24) | ((x & 0xF000) << 36) for x in right]


_tables: Optional[RowTables] = None


def row_tables() -> RowTables:
    global _tables
    if _tables is None:
        _tables = RowTables()
    return _tables


def transpose(b: int) -> int:
    """Swap rows and columns: nibble 4r+c <-> 4c+r, by two rounds of masked swaps."""
    a = (b & 0xF0F00F0FF0F00F0F) | ((b & 0x0000F0F00000F0F0) << 12) | ((b >> 12) & 0x0000F0F00000F0F0)
    return (a & 0xFF00FF0000FF00FF) | ((a & 0x00FF00FF00000000) >> 24) | ((a << 24) & 0x00FF00FF00000000)


def moves(b: int, t: RowTables) -> Tuple[Tuple[int, int], Tuple[int, int], Tuple[int, int], Tuple[int, int]]:
    """(board, points) after up, down, left, right, in that order (the order of
    ``MOVE_NAMES`` in :mod:`ansi2048.ai.heuristic`)."""
    left, right, score = t.left, t.right, t.score
    r0 = b & 0xFFFF
    r1 = (b >> 16) & 0xFFFF
    r2 = (b >> 32) & 0xFFFF
    r3 = b >> 48
    row_points = score[r0] + score[r1] + score[r2] + score[r3]
    tb = transpose(b)
    c0 = tb & 0xFFFF
    c1 = (tb >> 16) & 0xFFFF
    c2 = (tb >> 32) & 0xFFFF
    c3 = tb >> 48
    col_points = score[c0] + score[c1] + score[c2] + score[c3]
    up, down = t.up, t.down
    return (
        (up[c0] | (up[c1] << 4) | (up[c2] << 8) | (up[c3] << 12), col_points),
        (down[c0] | (down[c1] << 4) | (down[c2] << 8) | (down[c3] << 12), col_points),
        (left[r0] | (left[r1] << 16) | (left[r2] << 32) | (left[r3] << 48), row_points),
        (right[r0] | (right[r1] << 16) | (right[r2] << 32) | (right[r3] << 48), row_points),
    )


def empty_cells(b: int) -> List[int]:
    """Shifts (4 * cell index) of the empty cells, in row-major order."""
    return [shift for shift in range(0, 64, 4) if not (b >> shift) & 0xF]


def encode(cells: Sequence[int]) -> Optional[int]:
    """16 tile values, row-major, to a board; None if a tile is above 2**15."""
    b = 0
    for i, value in enumerate(cells):
        if value:
            rank = value.bit_length() - 1
            if rank > MAX_RANK:
                return None
            b |= rank << (4 * i)
    return b


def decode(b: int) -> List[int]:
    """A board to 16 tile values, row-major."""
    out = []
    for shift in range(0, 64, 4):
        rank = (b >> shift) & 0xF
        out.append(1 << rank if rank else 0)
    return out
