"""Expectimax over the 4x4 bitboard, valued by the n-tuple network.

The network values afterstates (the board after a move, before the spawn), so
the search alternates: a move node takes the best of points + value of each
changed afterstate; a chance node averages the move nodes after every spawn
(a 2 with p = 0.9, a 4 with p = 0.1, on each empty cell alike). ``depth`` is
the number of chance nodes on a path: depth 0 is the greedy 1-ply player the
network was trained as, depth 1 one expectimax level below each move.

A position without a move is worth 0, the value training gives game over.

The move nodes are written out by hand (the four slides of
:func:`ansi2048.ai.bitboard.moves` inlined, each afterstate valued once per
search, an up or down afterstate handing the network its transpose, which the
slide makes for free): in CPython a function call and a tuple per node cost
as much as the arithmetic.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from .bitboard import RowTables, empty_cells, moves, transpose
from .ntuple import Network

__all__ = ["Deadline", "choose", "search_depth"]


# (bit shift of cell i on the board, on the transposed board) for the 16 cells.
_CELLS = tuple((4 * i, 4 * (4 * (i % 4) + i // 4)) for i in range(16))


class Deadline(Exception):
    """Raised inside a search when the optional time cap is spent."""


def search_depth(b: int, level: int) -> int:
    """Depth of the deterministic default: deeper only where the game is decided.

    With many empty cells nothing is at risk and a chance node is costly (its
    width is twice the empty count), so one level; with 5 or fewer, two
    levels, which is where a greedy-ish player loses its games (measured:
    8192 in 52-55% of games instead of 40% with two levels at 3 or fewer).
    ``level`` 2 is the stronger, ~10x slower setting: one more level there.
    """
    empty = len(empty_cells(b))
    if empty > 5:
        return 1
    return 3 if level >= 2 else 2


def choose(
    b: int,
    net: Network,
    tables: RowTables,
    depth: int,
    clock: Optional[Callable[[], float]] = None,
    deadline: float = 0.0,
) -> Tuple[int, float]:
    """(index into :data:`ansi2048.ai.heuristic.MOVE_NAMES`, expected value) of
    the best move; (-1, 0.0) if none.

    Ties go to the first move in MOVE_NAMES order, so the answer is a function
    of the board and the depth. With ``clock``, raises :class:`Deadline` once
    ``clock()`` passes ``deadline`` (checked at every chance node).
    """
    # Every afterstate valued is depth + 1 moves or fewer below b.
    value = net.evaluator(b, depth + 1)
    left, right, up, down, score = tables.left, tables.right, tables.up, tables.down, tables.score
    # Per depth: afterstate -> its worth below (the network's value at depth
    # 0, its chance node's above): spawns commute, so positions recur.
    memo: List[Dict[int, float]] = [{} for _ in range(depth + 1)]

    def best(board: int, tb: int, depth: int) -> float:
        """The move node on ``board`` (``tb`` its transpose): the best of points +
        worth over the changed afterstates; 0 if none."""
        known = memo[depth]
        c0 = tb & 0xFFFF
        c1 = (tb >> 16) & 0xFFFF
        c2 = (tb >> 32) & 0xFFFF
        c3 = tb >> 48
        top = -1e300
        # Up and down slide the columns, which gives the afterstate's transpose too.
        after = up[c0] | (up[c1] << 4) | (up[c2] << 8) | (up[c3] << 12)
        if after != board:
            v = known.get(after)
            if v is None:
                ta = left[c0] | (left[c1] << 16) | (left[c2] << 32) | (left[c3] << 48)
                v = known[after] = chance(after, ta, depth) if depth else value(after, ta)
            top = v
        after = down[c0] | (down[c1] << 4) | (down[c2] << 8) | (down[c3] << 12)
        if after != board:
            v = known.get(after)
            if v is None:
                ta = right[c0] | (right[c1] << 16) | (right[c2] << 32) | (right[c3] << 48)
                v = known[after] = chance(after, ta, depth) if depth else value(after, ta)
            if v > top:
                top = v
        if top > -1e300:
            top += score[c0] + score[c1] + score[c2] + score[c3]
        r0 = board & 0xFFFF
        r1 = (board >> 16) & 0xFFFF
        r2 = (board >> 32) & 0xFFFF
        r3 = board >> 48
        side = -1e300
        for after in (
            left[r0] | (left[r1] << 16) | (left[r2] << 32) | (left[r3] << 48),
            right[r0] | (right[r1] << 16) | (right[r2] << 32) | (right[r3] << 48),
        ):
            if after != board:
                v = known.get(after)
                if v is None:
                    a = (
                        (after & 0xF0F00F0FF0F00F0F)
                        | ((after & 0x0000F0F00000F0F0) << 12)
                        | ((after >> 12) & 0x0000F0F00000F0F0)
                    )
                    ta = (a & 0xFF00FF0000FF00FF) | ((a & 0x00FF00FF00000000) >> 24) | ((a << 24) & 0x00FF00FF00000000)
                    v = known[after] = chance(after, ta, depth) if depth else value(after, ta)
                if v > side:
                    side = v
        if side > -1e300:
            # A run of equal tiles scores the same slid either way (bitboard.RowTables).
            side += score[r0] + score[r1] + score[r2] + score[r3]
            if side > top:
                top = side
        return top if top > -1e300 else 0.0

    def chance(after: int, ta: int, depth: int) -> float:
        if clock is not None and clock() > deadline:
            raise Deadline
        total = 0.0
        count = 0
        below = depth - 1
        for shift, tshift in _CELLS:
            if not (after >> shift) & 0xF:
                total += 0.9 * best(after | (1 << shift), ta | (1 << tshift), below) + 0.1 * best(
                    after | (2 << shift), ta | (2 << tshift), below
                )
                count += 1
        return total / count

    choice = -1
    top = 0.0
    for i, (after, points) in enumerate(moves(b, tables)):
        if after != b:
            ta = transpose(after)
            v = points + (chance(after, ta, depth) if depth else value(after, ta))
            if choice < 0 or v > top:
                choice, top = i, v
    return choice, top
