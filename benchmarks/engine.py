"""Engine throughput: random moves per second on 4x4, with a game-over check per move.

Three engines play the same random direction sequence (drawn once from
``random.Random(0).random``), each restarting when its game is over:

1. ansi2048's ``Game`` (``move`` + ``over``, ``restart`` when over);
2. a naive list-of-lists engine written here: squeeze-merge-squeeze per row,
   transposed copies for up/down, reversed copies for right, a 2/4 spawn on a
   random empty cell and a full game-over scan after every move;
3. term2048's ``Board`` (``move`` spawns; ``canMove`` is the game-over check),
   when term2048 is installed.

Each engine runs for ``--seconds`` per trial, trials interleaved across the\nengines; the best of ``--trials`` counts.

    python benchmarks/engine.py [--seconds 2] [--trials 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from ansi2048 import Direction, Game

SEQUENCE = 100_000  # directions drawn once, replayed cyclically
BATCH = 10_000  # moves between two looks at the clock

UP, DOWN, LEFT, RIGHT = range(4)

# A runner plays one batch of directions (already mapped to the engine's own
# constants) and returns how many games it finished in that batch.
Runner = Callable[[Sequence[object]], int]
Trial = Tuple[float, int, int]  # moves/s, moves, games finished


def directions() -> List[int]:
    draw = random.Random(0).random
    return [int(draw() * 4) for _ in range(SEQUENCE)]


# -- 1. ansi2048 ---------------------------------------------------------------


def ansi2048_runner() -> Runner:
    game = Game(4, 4, 2048, seed=0)
    move = game.move
    restart = game.restart

    def run(batch: Sequence[object]) -> int:
        finished = 0
        for direction in batch:
            move(direction)  # type: ignore[arg-type]
            if game.over:
                restart()
                finished += 1
        return finished

    return run


ANSI2048_DIRECTIONS = (Direction.UP, Direction.DOWN, Direction.LEFT, Direction.RIGHT)


# -- 2. naive transpose/invert engine ------------------------------------------


class NaiveBoard:
    """The textbook engine: new lists for every row, transposes for columns."""

    def __init__(self, rng: random.Random, size: int = 4) -> None:
        self.size = size
        self.random = rng.random
        self.cells = [[0] * size for _ in range(size)]
        self.score = 0
        self.spawn()
        self.spawn()

    @staticmethod
    def slide(row: List[int]) -> List[int]:
        tiles = [v for v in row if v]
        out: List[int] = []
        i = 0
        while i < len(tiles):
            if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
                out.append(tiles[i] * 2)
                i += 2
            else:
                out.append(tiles[i])
                i += 1
        return out + [0] * (len(row) - len(out))

    def move(self, direction: int) -> bool:
        cells, slide = self.cells, self.slide
        if direction == LEFT:
            new = [slide(row) for row in cells]
        elif direction == RIGHT:
            new = [slide(row[::-1])[::-1] for row in cells]
        elif direction == UP:
            new = [list(row) for row in zip(*[slide(list(col)) for col in zip(*cells)])]
        else:
            new = [list(row) for row in zip(*[slide(list(col)[::-1])[::-1] for col in zip(*cells)])]
        if new == cells:
            return False
        self.cells = new
        self.spawn()
        return True

    def spawn(self) -> None:
        empty = [(r, c) for r in range(self.size) for c in range(self.size) if not self.cells[r][c]]
        if empty:
            r, c = empty[int(self.random() * len(empty))]
            self.cells[r][c] = 4 if self.random() < 0.1 else 2

    def over(self) -> bool:
        cells, size = self.cells, self.size
        for r in range(size):
            for c in range(size):
                v = cells[r][c]
                if not v or (c + 1 < size and v == cells[r][c + 1]) or (r + 1 < size and v == cells[r + 1][c]):
                    return False
        return True


def naive_runner() -> Runner:
    rng = random.Random(1)
    board = NaiveBoard(rng)

    def run(batch: Sequence[object]) -> int:
        nonlocal board
        finished = 0
        for direction in batch:
            board.move(direction)  # type: ignore[arg-type]
            if board.over():
                board = NaiveBoard(rng)
                finished += 1
        return finished

    return run


NAIVE_DIRECTIONS = (UP, DOWN, LEFT, RIGHT)


# -- 3. term2048 ---------------------------------------------------------------


def term2048_runner() -> Optional[Runner]:
    try:
        from term2048.board import Board
    except ImportError:
        return None
    random.seed(1)  # term2048 spawns through the global random module
    board = Board()

    def run(batch: Sequence[object]) -> int:
        nonlocal board
        finished = 0
        for direction in batch:
            board.move(direction)
            if not board.canMove():
                board = Board()
                finished += 1
        return finished

    return run


def term2048_directions() -> Optional[Sequence[object]]:
    try:
        from term2048.board import Board
    except ImportError:
        return None
    return (Board.UP, Board.DOWN, Board.LEFT, Board.RIGHT)


# -- measuring -----------------------------------------------------------------


def trial(make: Callable[[], Optional[Runner]], batches: Sequence[Sequence[object]], seconds: float) -> Trial:
    """One run of a fresh engine for ``seconds``: (moves/s, moves, games finished)."""
    run = make()
    assert run is not None
    moves = games = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        games += run(batches[(moves // BATCH) % len(batches)])
        moves += BATCH
        elapsed = time.perf_counter() - start
    return moves / elapsed, moves, games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one trial (default 2)")
    parser.add_argument("--trials", type=int, default=3, help="trials per engine, best counts (default 3)")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.trials = 0.05, 1

    print(f"python {platform.python_version()} ({platform.python_implementation()}), {os.cpu_count()} CPUs")
    print("4x4, random directions from random.Random(0).random, game-over check after every move,")
    print(f"restart when over; best of {args.trials} x {args.seconds:g} s")
    print()
    print(f"{'engine':<34}{'moves/s':>12}{'moves':>12}{'games':>9}")

    rates: Dict[str, float] = {}
    engines: List[Tuple[str, Callable[[], Optional[Runner]], Sequence[object]]] = [
        ("ansi2048 Game (flat, two-pointer)", ansi2048_runner, ANSI2048_DIRECTIONS),
        ("naive transpose/invert lists", naive_runner, NAIVE_DIRECTIONS),
    ]
    term_dirs = term2048_directions()
    if term_dirs is not None:
        engines.append(("term2048 Board", term2048_runner, term_dirs))
    sequence = directions()
    batches = {}
    for name, _make, mapping in engines:
        mapped = [mapping[d] for d in sequence]
        batches[name] = [mapped[i : i + BATCH] for i in range(0, SEQUENCE, BATCH)]
    # Trials interleave the engines, so a burst of load elsewhere on the
    # machine does not land on one engine's trials only; the best trial counts.
    best: Dict[str, Trial] = {name: (0.0, 0, 0) for name, _, _ in engines}
    for _ in range(args.trials):
        for name, make, _mapping in engines:
            result = trial(make, batches[name], args.seconds)
            if result[0] > best[name][0]:
                best[name] = result
    for name, _, _ in engines:
        rate, moves, games = best[name]
        rates[name] = rate
        print(f"{name:<34}{rate:>12,.0f}{moves:>12,}{games:>9,}")
    if term_dirs is None:
        print(f"{'term2048 Board':<34}{'term2048 not installed':>33}")

    ansi = rates[engines[0][0]]
    print()
    print(f"ratio ansi2048 / naive     {ansi / rates[engines[1][0]]:6.2f}x")
    if term_dirs is not None:
        print(f"ratio ansi2048 / term2048  {ansi / rates['term2048 Board']:6.2f}x")
    else:
        print("ratio ansi2048 / term2048  n/a (term2048 not installed)")


if __name__ == "__main__":
    main()
