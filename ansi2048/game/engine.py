"""The 2048 rules: a pure, seeded, in-place engine.

The board is one flat list of cells (row-major, 0 = empty). Every direction is
the same two-pointer slide walking a different precomputed tuple of index
lines, so no move builds transposed or reversed copies of the board.

Randomness comes from ``spawns`` (SplitMix64, a documented 64-bit generator
whose whole state is one integer): a recorded game replays identically on
every Python version and platform, and an undo snapshot costs one int.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Deque, Dict, List, Optional, Sequence, Tuple, Union

from .limits import DEFAULT_GOAL, MAX_GOAL, MAX_SEED_DIGITS, MAX_SIDE, MIN_GOAL, MIN_SIDE
from .spawns import SplitMix64, seed_state, spawn_draw

__all__ = [
    "MAX_GOAL",
    "MAX_SEED_DIGITS",
    "MAX_SIDE",
    "MIN_GOAL",
    "MIN_SIDE",
    "UNDO_DEPTH",
    "Board",
    "Direction",
    "Game",
    "GameState",
    "Slide",
    "biggest_tile",
    "check_goal",
    "check_size",
    "default_goal",
    "parse_goal",
    "parse_size",
    "slide_line",
    "slide_lines",
    "trace_move",
]

UNDO_DEPTH = 1000


class Direction(str, Enum):
    """A move. ``Direction("left")`` and ``Game.move("left")`` both work.

    A ``str`` mixin: members hash as their values, in C, which keeps the
    per-move table lookup cheap (Enum's own ``__hash__`` is Python code)."""

    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"

    @classmethod
    def _missing_(cls, value: object) -> Optional[Direction]:
        # Accept "LEFT", "Left": bots and humans both write directions in any case.
        if isinstance(value, str):
            lowered = value.lower()
            for member in cls:
                if member.value == lowered:
                    return member
        return None


def check_size(rows: int, cols: int) -> None:
    """Raise ValueError unless both sides are from MIN_SIDE to MAX_SIDE."""
    for name, side in (("rows", rows), ("cols", cols)):
        if not MIN_SIDE <= side <= MAX_SIDE:
            raise ValueError(f"{name} must be from {MIN_SIDE} to {MAX_SIDE}, got {side}")


def check_goal(goal: int, rows: Optional[int] = None, cols: Optional[int] = None) -> None:
    """Raise ValueError unless ``goal`` is a power of two from MIN_GOAL to
    MAX_GOAL and, given a board size, a tile that board can hold."""
    if not (MIN_GOAL <= goal <= MAX_GOAL and goal & (goal - 1) == 0):
        raise ValueError(f"goal must be a power of two from {MIN_GOAL} to {MAX_GOAL}, got {goal}")
    if rows is not None and cols is not None and goal > biggest_tile(rows, cols):
        raise ValueError(
            f"goal {goal} cannot be reached on a {rows}x{cols} board: its biggest tile is {biggest_tile(rows, cols)}"
        )


def parse_size(text: str) -> Tuple[int, int]:
    """A board size written ``N`` or ``RxC`` (the command line's ``--size``,
    the config's ``size``), checked; ValueError saying what is allowed."""
    # At most 3 digits a side: anything longer is out of range anyway, and
    # int() of thousands of digits would fail with an unrelated message.
    match = re.fullmatch(r"\s*([0-9]{1,3})\s*(?:[xX\u00d7]\s*([0-9]{1,3})\s*)?", text)
    allowed = f"N or RxC with sides from {MIN_SIDE} to {MAX_SIDE}"
    if not match:
        raise _bad(allowed, text)
    rows = int(match.group(1))
    cols = int(match.group(2)) if match.group(2) else rows
    try:
        check_size(rows, cols)
    except ValueError:
        raise _bad(allowed, text) from None
    return rows, cols


def parse_goal(text: str) -> int:
    """A goal written as a number (``--goal``, the config's ``goal``),
    checked alone; :func:`check_goal` with the size checks it fits the board."""
    allowed = f"a power of two from {MIN_GOAL} to {MAX_GOAL}"
    if not re.fullmatch(r"\s*[0-9]{1,12}\s*", text):
        raise _bad(allowed, text)
    goal = int(text)
    try:
        check_goal(goal)
    except ValueError:
        raise _bad(allowed, text) from None
    return goal


def _bad(allowed: str, text: str) -> ValueError:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return ValueError(f"expected {allowed}, got {shown!r}")


def biggest_tile(rows: int, cols: int) -> int:
    """The biggest tile a ``rows`` x ``cols`` board can ever hold.

    A tile of 2^k is made of two 2^(k-1) tiles, each built while the
    smaller tiles it is made of wait in the other cells: n cells hold at
    most the chain 2^n, ..., 8, 4 plus a spawned 4, which merges to 2^(n+1)."""
    return 1 << (rows * cols + 1)


def default_goal(rows: int, cols: int) -> int:
    """The goal when none is given: DEFAULT_GOAL (2048), or on boards too
    small to reach it in ordinary play (under 12 cells), 2^(n-1) for n cells,
    a quarter of the most the board can hold (2x2: 8, 2x3: 32, 3x3: 256)."""
    return max(MIN_GOAL, min(DEFAULT_GOAL, 1 << (rows * cols - 1)))


Lines = Tuple[Tuple[int, ...], ...]


def slide_lines(cells: List[int], lines: Lines) -> Tuple[bool, int, int]:
    """Slide each line of ``cells`` in place toward its first index.

    Per line, ``read`` walks every position; ``write`` is where the next tile
    lands; ``mergeable`` is the value just before ``write`` that may still take
    a merge, reset to 0 after a merge so a tile merges at most once per move.
    Returns (changed, points gained, biggest tile made by a merge).

    One loop for all lines of a move, because a call per line costs a fifth of
    a whole move in CPython (measured with benchmarks/engine.py).
    """
    changed = False
    gained = 0
    biggest = 0
    for line in lines:
        write = 0
        mergeable = 0
        for index in line:
            value = cells[index]
            if not value:
                continue
            if value == mergeable:
                merged = value + value
                cells[line[write - 1]] = merged
                cells[index] = 0
                gained += merged
                if merged > biggest:
                    biggest = merged
                mergeable = 0
                changed = True
            else:
                target = line[write]
                if target != index:
                    cells[target] = value
                    cells[index] = 0
                    changed = True
                mergeable = value
                write += 1
    return changed, gained, biggest


def slide_line(cells: List[int], line: Tuple[int, ...]) -> Tuple[bool, int, int]:
    """Slide one line in place: :func:`slide_lines` for a single line."""
    return slide_lines(cells, (line,))


@dataclass(frozen=True)
class Slide:
    """Where one tile went in a move: flat indices ``start`` and ``end``;
    ``merged`` if it ended in a merge (two tiles end on a merged cell)."""

    value: int
    start: int
    end: int
    merged: bool


def trace_move(cells: Sequence[int], rows: int, cols: int, direction: Direction) -> Tuple[Slide, ...]:
    """Every tile's path in a move of ``cells`` toward ``direction``: the
    walk :func:`slide_lines` makes, recording where each tile goes instead of
    moving it. For the animation; :func:`slide_lines` stays the fast path,
    and the tests check that the two always agree."""
    lines = _geometry(rows, cols)[0][direction]
    out: List[Slide] = []
    for line in lines:
        write = 0
        mergeable = 0
        last: Optional[int] = None  # index into ``out`` of the tile at write - 1
        for index in line:
            value = cells[index]
            if not value:
                continue
            if value == mergeable and last is not None:
                target = line[write - 1]
                out[last] = Slide(out[last].value, out[last].start, target, True)
                out.append(Slide(value, index, target, True))
                mergeable = 0
                last = None
            else:
                out.append(Slide(value, index, line[write], False))
                last = len(out) - 1
                mergeable = value
                write += 1
    return tuple(out)


@cache
def _geometry(rows: int, cols: int) -> Tuple[Dict[object, Lines], Tuple[Tuple[int, int], ...]]:
    """Index lines per direction (each starting at the edge tiles move toward)
    and the neighbour pairs the game-over check compares."""
    by_row = [tuple(r * cols + c for c in range(cols)) for r in range(rows)]
    by_col = [tuple(r * cols + c for r in range(rows)) for c in range(cols)]
    lines: Dict[object, Lines] = {
        Direction.LEFT: tuple(by_row),
        Direction.RIGHT: tuple(line[::-1] for line in by_row),
        Direction.UP: tuple(by_col),
        Direction.DOWN: tuple(line[::-1] for line in by_col),
    }
    # No separate "left" keys are needed: a str enum member hashes and compares
    # as its value, so move("left") finds Direction.LEFT's entry directly.
    pairs = [(i, i + 1) for line in by_row for i in line[:-1]]
    pairs += [(i, i + cols) for line in by_col for i in line[:-1]]
    return lines, tuple(pairs)


# What undo restores: (cells, score, moves, won, rng_state, seed, spawned).
# The generator is part of it, so redoing an undone move spawns the same
# tile and undo cannot be used to fish for better spawns. A plain tuple,
# because one is made per move and a NamedTuple or dataclass costs 2-4x.
_Snapshot = Tuple[Tuple[int, ...], int, int, bool, int, int, Optional[int]]


Board = Tuple[Tuple[int, ...], ...]

# A game whole: its state now and what undo can restore, oldest first (each
# as undo restores it). A served game's snapshot keeps it (serve/snapshot.py).
GameState = Tuple[_Snapshot, Tuple[_Snapshot, ...]]


class Game:
    """A game of 2048 on a ``rows`` x ``cols`` board.

    ``restart()`` starts the next game with a seed drawn from the current
    generator, so a recording that contains restarts still replays exactly;
    ``seed`` always names the seed of the game on the board.
    """

    def __init__(self, rows: int = 4, cols: int = 4, goal: int = 2048, seed: int = 0) -> None:
        check_size(rows, cols)
        check_goal(goal)
        self.rows = rows
        self.cols = cols
        self.goal = goal
        self._lines, self._pairs = _geometry(rows, cols)
        self._history: Deque[_Snapshot] = deque(maxlen=UNDO_DEPTH)
        self._start(seed)

    def _start(self, seed: int) -> None:
        self.seed = seed
        self._rng = SplitMix64(seed_state(seed))
        self._cells = [0] * (self.rows * self.cols)
        self.score = 0
        self.moves = 0
        self.won = False
        self._spawned: Optional[int] = None  # flat index of the newest tile
        self._spawn()
        self._spawn()
        self.over = self._is_over()

    @classmethod
    def from_board(
        cls,
        board: Sequence[Sequence[int]],
        goal: int = 2048,
        seed: int = 0,
        score: int = 0,
        moves: int = 0,
        won: Optional[bool] = None,
    ) -> Game:
        """A game in the middle: ``board`` (rows of tiles, 0 = empty) on the
        table, the generator as a fresh game of ``seed`` left it, no undo
        history and no newest tile. ``won`` defaults to whether a tile has
        reached ``goal``. For tests, puzzles and the AI."""
        rows = len(board)
        cols = len(board[0]) if rows else 0
        if any(len(row) != cols for row in board):
            raise ValueError("every row of the board must have the same length")
        game = cls(rows, cols, goal, seed)
        cells = [int(value) for row in board for value in row]
        for value in cells:
            if value < 0 or value == 1 or value & (value - 1):
                raise ValueError(f"tiles must be 0 or powers of two from 2 up, got {value}")
        game._cells[:] = cells
        game._spawned = None
        game.score = score
        game.moves = moves
        game.won = max(cells) >= goal if won is None else won
        game.over = game._is_over()
        return game

    @classmethod
    def restored(cls, rows: int, cols: int, goal: int, state: GameState) -> Game:
        """The game :meth:`state` gave (its board's size and goal are not in
        it); ValueError if ``state`` is no game of this board."""
        now, history = state
        game = cls(rows, cols, goal, now[5])
        if len(history) > UNDO_DEPTH or any(len(kept[0]) != rows * cols for kept in (now, *history)):
            raise ValueError("not a state of this board")
        game._history.extend(history)
        cells, game.score, game.moves, game.won, game._rng.state, game.seed, game._spawned = now
        game._cells[:] = cells
        game.over = game._is_over()
        return game

    # -- queries -----------------------------------------------------------

    @property
    def board(self) -> Board:
        cells, cols = self._cells, self.cols
        return tuple(tuple(cells[i : i + cols]) for i in range(0, len(cells), cols))

    @property
    def cells(self) -> Tuple[int, ...]:
        """The flat row-major board."""
        return tuple(self._cells)

    @property
    def spawned(self) -> Optional[Tuple[int, int]]:
        """(row, col) of the newest tile, or None."""
        if self._spawned is None:
            return None
        row, col = divmod(self._spawned, self.cols)
        return (row, col)

    @property
    def rng_state(self) -> int:
        return self._rng.state

    def state(self) -> GameState:
        """The game whole, generator and undo history included (:meth:`restored` makes it again)."""
        return self._snapshot(), tuple(self._history)

    @property
    def can_undo(self) -> bool:
        return bool(self._history)

    @property
    def biggest(self) -> int:
        return max(self._cells)

    # -- actions -----------------------------------------------------------

    def move(self, direction: Union[Direction, str]) -> bool:
        """Slide every tile toward ``direction``; True if the board changed.

        A move that changes nothing spawns nothing, scores nothing, counts
        nothing and draws nothing from the generator.
        """
        lines = self._lines.get(direction)
        if lines is None:
            lines = self._lines[Direction(direction)]
        cells = self._cells
        before = self._snapshot()
        changed, gained, biggest = slide_lines(cells, lines)
        if not changed:
            return False
        self._history.append(before)
        self.score += gained
        self.moves += 1
        if biggest >= self.goal:
            self.won = True
        self._spawn()
        self.over = self._is_over()
        return True

    def undo(self) -> bool:
        """Step back one move or restart; True if something was undone."""
        if not self._history:
            return False
        cells, self.score, self.moves, self.won, self._rng.state, self.seed, self._spawned = self._history.pop()
        self._cells[:] = cells
        self.over = self._is_over()
        return True

    def restart(self, seed: Optional[int] = None) -> None:
        """Start a new game (undoable): with ``seed`` if given (``--seed`` over
        an unfinished game), else with a seed drawn from this game's generator."""
        if seed is not None:
            seed_state(seed)  # a bad seed must fail before the game is touched
        self._history.append(self._snapshot())
        self._start(self._rng.next() if seed is None else seed)

    # -- internals ---------------------------------------------------------

    def _snapshot(self) -> _Snapshot:
        return (tuple(self._cells), self.score, self.moves, self.won, self._rng.state, self.seed, self._spawned)

    def _spawn(self) -> None:
        """Put a 2 (p = 0.9) or a 4 (p = 0.1) on a uniformly chosen empty cell:
        one 64-bit draw per spawn, read by :func:`spawn_draw`."""
        cells = self._cells
        empty = cells.count(0)
        if not empty:
            return
        nth, value = spawn_draw(self._rng.next(), empty)
        index = -1
        for _ in range(nth + 1):
            index = cells.index(0, index + 1)
        cells[index] = value
        self._spawned = index

    def _is_over(self) -> bool:
        cells = self._cells
        if 0 in cells:
            return False
        return all(cells[a] != cells[b] for a, b in self._pairs)
