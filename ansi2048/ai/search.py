"""Expectimax over the 4x4 bitboard, valued by the n-tuple network.

The network values afterstates (the board after a move, before the spawn), so
the search alternates: a move node takes the best of points + value of each
changed afterstate; a chance node averages the move nodes after every spawn
(a 2 with p = 0.9, a 4 with p = 0.1, on each empty cell alike). ``depth`` is
the number of chance nodes on a path: depth 0 is the greedy 1-ply player the
network was trained as, depth 1 one expectimax level below each move.

A position without a move is worth 0, the value training gives game over.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

from .bitboard import RowTables, empty_cells, moves
from .ntuple import Network

__all__ = ["Deadline", "choose", "search_depth"]

# Index i of bitboard.moves()'s result; the caller maps it to a Direction.
MOVE_NAMES = ("up", "down", "left", "right")


class Deadline(Exception):
    """Raised inside a search when the optional time cap is spent."""


def search_depth(b: int, level: int) -> int:
    """Depth of the deterministic default: deeper only where the game is decided.

    With many empty cells nothing is at risk and a chance node is costly (its
    width is twice the empty count), so one level; with few, two levels, which
    is where a greedy-ish player loses its games. ``level`` 2 is the stronger
    setting: one more level throughout.
    """
    empty = len(empty_cells(b))
    depth = 2 if empty <= 3 else 1
    if level >= 2:
        depth += 1 if empty <= 5 else 0
    return depth


def choose(
    b: int,
    net: Network,
    tables: RowTables,
    depth: int,
    clock: Optional[Callable[[], float]] = None,
    deadline: float = 0.0,
    twos_only: bool = False,
) -> Tuple[int, float]:
    """(index into MOVE_NAMES, expected value) of the best move; (-1, 0.0) if none.

    Ties go to the first move in MOVE_NAMES order, so the answer is a function
    of the board and the depth. With ``clock``, raises :class:`Deadline` once
    ``clock()`` passes ``deadline`` (checked at every chance node).
    """
    value = net.value
    top_depth = depth
    cache: Dict[Tuple[int, int], float] = {}
    leaves: Dict[int, float] = {}

    def chance(after: int, depth: int) -> float:
        if depth <= 0:
            known = leaves.get(after)
            if known is None:
                known = leaves[after] = value(after)
            return known
        key = (after, depth)
        hit = cache.get(key)
        if hit is not None:
            return hit
        if clock is not None and clock() > deadline:
            raise Deadline
        empty = empty_cells(after)
        total = 0.0
        if depth < top_depth and depth == 1 and twos_only:
            # The last level of a deeper search: the 2s only, half the leaves.
            for shift in empty:
                total += best(after | (1 << shift), 0)
        else:
            for shift in empty:
                total += 0.9 * best(after | (1 << shift), depth - 1) + 0.1 * best(after | (2 << shift), depth - 1)
        result = total / len(empty)
        cache[key] = result
        return result

    def best(board: int, depth: int) -> float:
        top = 0.0
        found = False
        if depth <= 0:
            # The leaves, inlined and memoised: most of the search's time is
            # spent here, and about half the leaves recur (spawns commute).
            for after, points in moves(board, tables):
                if after != board:
                    known = leaves.get(after)
                    if known is None:
                        known = leaves[after] = value(after)
                    v = points + known
                    if not found or v > top:
                        top, found = v, True
            return top
        for after, points in moves(board, tables):
            if after != board:
                v = points + chance(after, depth)
                if not found or v > top:
                    top, found = v, True
        return top

    choice = -1
    top = 0.0
    for i, (after, points) in enumerate(moves(b, tables)):
        if after != b:
            v = points + chance(after, depth)
            if choice < 0 or v > top:
                choice, top = i, v
    return choice, top
