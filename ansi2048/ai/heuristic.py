"""Heuristic expectimax for any board shape, rectangular too.

The board is a tuple of rows, each a tuple of tile ranks (0 = empty, k = a
tile of 2**k), so tiles of any size are exact. Sliding, and the heuristic,
work a line at a time and are memoised per line: a board has few distinct
lines, and they recur from move to move.

Heuristic (after nneonneo/2048-ai, generalised to lines of any length): per
row and per column, a constant + 270 per empty cell + 700 per pair of equal
neighbours (blanks skipped) - 47 * the smaller of the two monotonicity
penalties (on rank**4) - 11 * the sum of rank**3.5 (big tiles cost, so the
search prefers merging them). A board sums its rows and columns.

The search: a move node takes the best of its changed afterstates; a chance
node averages a 2 (p = 0.9) and a 4 (p = 0.1) on every empty cell, and stops
at the heuristic when its depth is spent or the path's probability drops
below ``1e-4`` (the 4 branch is cut first, being 9x less likely). A game over
is worth 0, below any live board.

Iterative deepening, deterministic by default: depth 0 (the greedy
afterstate), 1, 2, ... up to ``max_depth``, one work budget for them all; the
depth that runs out of it is abandoned and the last completed depth answers. The node count
depends only on the board, so the same board and settings give the same
move; a small board gets deep searches, a 10x10 board shallow ones, within
about the same time. An optional wall-clock cap (an injected clock, so this
module stays pure and testable) can also abandon a depth.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

__all__ = ["Budget", "Ranks", "afterstates", "choose", "greedy", "moves", "to_ranks"]

Ranks = Tuple[Tuple[int, ...], ...]
Line = Tuple[int, ...]

# The moves in the order of moves()'s results, here and in the 4x4 search
# (ansi2048.ai.bitboard.moves): the AI's one list of them.
MOVE_NAMES = ("up", "down", "left", "right")

_LINE_BASE = 200000.0
_EMPTY = 270.0
_MERGES = 700.0
_MONOTONICITY = 47.0
_SUM = 11.0
_PRUNE = 1e-4
# Work units per hint, for all the depths together (a node costs 24 + its
# cell count): 10-20 ms of CPython on average and ~20-60 ms at the 99th
# percentile on the development machine under load, for every shape
# (benchmarks/ai.py --size).
DEFAULT_BUDGET = 160000

_CACHE_LIMIT = 200_000
_slid: Dict[Line, Tuple[Line, int]] = {}
_scores: Dict[Line, float] = {}


class Budget(Exception):
    """Raised inside a search when the node budget or the time cap is spent."""


def to_ranks(board: Tuple[Tuple[int, ...], ...]) -> Ranks:
    return tuple(tuple(v.bit_length() - 1 if v else 0 for v in row) for row in board)


def _slide(line: Line) -> Tuple[Line, int]:
    """Slide toward index 0: (new line, points). Memoised."""
    hit = _slid.get(line)
    if hit is not None:
        return hit
    tiles = [t for t in line if t]
    out: List[int] = []
    points = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i + 1] == tiles[i]:
            out.append(tiles[i] + 1)
            points += 1 << (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    result = (tuple(out + [0] * (len(line) - len(out))), points)
    if len(_slid) >= _CACHE_LIMIT:
        _slid.clear()  # a long game on a big board meets ever new lines; keep memory bounded
    _slid[line] = result
    return result


def _line_score(line: Line) -> float:
    hit = _scores.get(line)
    if hit is not None:
        return hit
    empty = 0
    merges = 0
    run = 0
    prev = 0
    total = 0.0
    for rank in line:
        if not rank:
            empty += 1
            continue
        total += rank**3.5
        if rank == prev:
            run += 1
        else:
            if run:
                merges += 1 + run
            run = 0
        prev = rank
    if run:
        merges += 1 + run
    down = up = 0
    for a, b in zip(line, line[1:]):
        if a > b:
            down += a**4 - b**4
        else:
            up += b**4 - a**4
    score = _LINE_BASE + _EMPTY * empty + _MERGES * merges - _MONOTONICITY * min(down, up) - _SUM * total
    if len(_scores) >= _CACHE_LIMIT:
        _scores.clear()
    _scores[line] = score
    return score


def heuristic(board: Ranks) -> float:
    # The memo looked up here, not through a call per line; a score of
    # exactly 0.0 would only be computed again.
    known = _scores.get
    score = _line_score
    return sum([known(row) or score(row) for row in board]) + sum([known(col) or score(col) for col in zip(*board)])


def moves(board: Ranks) -> Tuple[Tuple[Ranks, int], ...]:
    """(board, points) after up, down, left, right."""
    slide = _slide
    left = [slide(row) for row in board]
    right = [slide(row[::-1]) for row in board]
    cols = list(zip(*board))
    up = [slide(col) for col in cols]
    down = [slide(col[::-1]) for col in cols]
    return (
        (tuple(zip(*(line for line, _ in up))), sum(p for _, p in up)),
        (tuple(zip(*(line[::-1] for line, _ in down))), sum(p for _, p in down)),
        (tuple(line for line, _ in left), sum(p for _, p in left)),
        (tuple(line[::-1] for line, _ in right), sum(p for _, p in right)),
    )


# Lines slid toward index 0 ("left") and toward the end ("right"), without
# the points: the search's moves need only the boards.
_lefts: Dict[Line, Line] = {}
_rights: Dict[Line, Line] = {}


def _slid_left(line: Line) -> Line:
    if len(_lefts) >= _CACHE_LIMIT:
        _lefts.clear()
    slid = _lefts[line] = _slide(line)[0]
    return slid


def _slid_right(line: Line) -> Line:
    if len(_rights) >= _CACHE_LIMIT:
        _rights.clear()
    slid = _rights[line] = _slide(line[::-1])[0][::-1]
    return slid


def afterstates(board: Ranks) -> Tuple[Ranks, Ranks, Ranks, Ranks]:
    """The boards after up, down, left, right: :func:`moves` without the
    points, for the search's inner loop (about half of a hint's time was
    there). A slid line is never empty, so ``get(...) or`` is a memo hit."""
    left, right = _lefts.get, _rights.get
    cols = tuple(zip(*board))
    return (
        tuple(zip(*[left(col) or _slid_left(col) for col in cols])),
        tuple(zip(*[right(col) or _slid_right(col) for col in cols])),
        tuple([left(row) or _slid_left(row) for row in board]),
        tuple([right(row) or _slid_right(row) for row in board]),
    )


def _empties(board: Ranks) -> List[Tuple[int, int]]:
    return [(r, c) for r, row in enumerate(board) for c, v in enumerate(row) if not v]


def _put(board: Ranks, r: int, c: int, rank: int) -> Ranks:
    row = board[r]
    return (*board[:r], (*row[:c], rank, *row[c + 1 :]), *board[r + 1 :])


def _search(
    board: Ranks,
    depth: int,
    budget: int,
    clock: Optional[Callable[[], float]],
    deadline: float,
    nodes: List[int],
    cache: Dict[Tuple[Ranks, int], float],
) -> Tuple[int, float]:
    """One depth of the expectimax: (move index, value); may raise Budget."""
    # Work units: a heuristic or a move generation costs about one unit per
    # cell, so one budget takes about the same time on every board size.
    cost = 24 + len(board) * len(board[0])

    def chance(after: Ranks, depth: int, prob: float) -> float:
        if depth <= 0 or prob < _PRUNE:
            # Counted as work even when remembered, so the depths reached, and
            # the moves, are those of a search without the memo: it saves
            # time, not moves.
            nodes[0] += cost
            known = cache.get((after, 0))
            if known is None:
                known = cache[(after, 0)] = heuristic(after)
            return known
        key = (after, depth)
        hit = cache.get(key)
        if hit is not None:
            return hit
        if nodes[0] > budget or (clock is not None and clock() > deadline):
            raise Budget
        empty = _empties(after)
        share = prob / len(empty)
        total = 0.0
        for r, c in empty:
            v = 0.9 * best(_put(after, r, c, 1), depth - 1, share * 0.9)
            if share * 0.1 >= _PRUNE:
                v += 0.1 * best(_put(after, r, c, 2), depth - 1, share * 0.1)
            else:
                v /= 0.9  # the 4 is cut: the 2 stands for the cell
            total += v
        result = total / len(empty)
        cache[key] = result
        return result

    def best(b: Ranks, depth: int, prob: float) -> float:
        top = 0.0
        nodes[0] += cost
        for after in afterstates(b):
            if after != b:
                v = chance(after, depth, prob)
                if v > top:
                    top = v
        return top

    choice, top = -1, 0.0
    for i, after in enumerate(afterstates(board)):
        if after != board:
            v = chance(after, depth, 1.0)
            if choice < 0 or v > top:
                choice, top = i, v
    return choice, top


def choose(
    board: Ranks,
    budget: int = DEFAULT_BUDGET,
    max_depth: int = 8,
    clock: Optional[Callable[[], float]] = None,
    time_budget: Optional[float] = None,
) -> Tuple[int, int]:
    """(index into MOVE_NAMES, depth completed) of the best move; (-1, 0) if none.

    Depth 0 always completes; deeper ones while the work of all depths so far
    stays within ``budget`` units (and, with ``clock`` and ``time_budget``,
    within that many seconds of the clock).
    """
    deadline = clock() + time_budget if clock is not None and time_budget is not None else 0.0
    capped = clock if clock is not None and time_budget is not None else None
    # One budget for all the depths together, so a hint's work is bounded by
    # it whatever the board; one transposition table too (deeper iterations
    # reuse what shallower ones computed).
    nodes = [0]
    cache: Dict[Tuple[Ranks, int], float] = {}
    choice, _ = _search(board, 0, budget, None, 0.0, nodes, cache)
    if choice < 0:
        return -1, 0
    done = 0
    for depth in range(1, max_depth + 1):
        try:
            choice, _ = _search(board, depth, budget, capped, deadline, nodes, cache)
        except Budget:
            break
        done = depth
    return choice, done


def greedy(board: Ranks) -> int:
    """The baseline player: the move with the most points, then the most empty
    cells, then the first in MOVE_NAMES order; -1 if none."""
    choice, top = -1, (-1, -1)
    for i, (after, points) in enumerate(moves(board)):
        if after != board:
            key = (points, sum(row.count(0) for row in after))
            if key > top:
                choice, top = i, key
    return choice
