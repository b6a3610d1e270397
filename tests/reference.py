"""The reference rules the tests check the engine against: a slide written
the obvious way (squeeze, merge equal neighbours once from the front,
squeeze), shared by every test module so there is one reference."""

from __future__ import annotations

from typing import Sequence

from ansi2048.game.engine import Direction

DIRECTIONS = tuple(Direction)
Flat = list[int]


def ref_slide(row: Sequence[int]) -> tuple[list[int], int, int]:
    """Slide toward index 0: squeeze out the zeros, merge equal neighbours
    pairwise from the front (each tile at most once), squeeze again.
    Returns (row, points, biggest merged tile or 0)."""
    tiles = [v for v in row if v]
    out: list[int] = []
    points = biggest = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            out.append(tiles[i] * 2)
            points += tiles[i] * 2
            biggest = max(biggest, tiles[i] * 2)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (len(row) - len(out)), points, biggest


def ref_lines(rows: int, cols: int, direction: Direction) -> list[list[int]]:
    """Flat indices of each line, starting at the edge the tiles move toward."""
    if direction is Direction.LEFT:
        return [[r * cols + c for c in range(cols)] for r in range(rows)]
    if direction is Direction.RIGHT:
        return [[r * cols + c for c in reversed(range(cols))] for r in range(rows)]
    if direction is Direction.UP:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    return [[r * cols + c for r in reversed(range(rows))] for c in range(cols)]


def ref_move(cells: Sequence[int], rows: int, cols: int, direction: Direction) -> tuple[Flat, int, bool]:
    """(cells after the slide, points, changed) by the reference slide."""
    out, points, _ = ref_move_biggest(cells, rows, cols, direction)
    return out, points, out != list(cells)


def ref_move_biggest(cells: Sequence[int], rows: int, cols: int, direction: Direction) -> tuple[Flat, int, int]:
    out = list(cells)
    points = biggest = 0
    for line in ref_lines(rows, cols, direction):
        slid, pts, big = ref_slide([cells[i] for i in line])
        for i, v in zip(line, slid):
            out[i] = v
        points += pts
        biggest = max(biggest, big)
    return out, points, biggest


def ref_over(cells: Sequence[int], rows: int, cols: int) -> bool:
    return not any(ref_move(cells, rows, cols, d)[2] for d in DIRECTIONS)


def ref_move_board(board: Sequence[Sequence[int]], direction: Direction) -> list[list[int]]:
    """The board (rows) after sliding toward ``direction``."""
    rows, cols = len(board), len(board[0])
    cells = [v for row in board for v in row]
    out = ref_move(cells, rows, cols, direction)[0]
    return [out[r * cols : (r + 1) * cols] for r in range(rows)]


def ref_over_board(board: Sequence[Sequence[int]]) -> bool:
    return ref_over([v for row in board for v in row], len(board), len(board[0]))
