"""Piped replay throughput and memory.

Prints keys per second for ``ansi2048 < keys`` (start-up subtracted) beside the
in-process engine rate for the same keys, and the peak memory (max RSS) of a
replay of 3k keys and of 300k keys: streaming input keeps it flat.

    python benchmarks/replay.py [--keys 300000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Tuple

from ansi2048 import Direction, Game

_DIRECTIONS = {ord("w"): Direction.UP, ord("a"): Direction.LEFT, ord("s"): Direction.DOWN, ord("d"): Direction.RIGHT}

_MEASURE = """
import resource, subprocess, sys, time
with open(sys.argv[1], "rb") as keys:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ansi2048", "--seed", "1"], stdin=keys, stdout=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - start
print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def make_keys(path: Path, count: int) -> None:
    """A recording of real play: random moves, and a restart whenever the
    game is over (so the replay keeps playing instead of idling on a dead board)."""
    rng = random.Random(0)
    game = Game(seed=1)
    keys = bytearray()
    directions = list(_DIRECTIONS.items())
    while len(keys) < count:
        if game.over:
            game.restart()
            keys += b"r"
            continue
        key, direction = directions[int(rng.random() * 4)]
        game.move(direction)
        keys.append(key)
    path.write_bytes(bytes(keys))


def run(path: Path) -> Tuple[float, int]:
    """(seconds, peak RSS in KiB) of one piped replay, best of 3 seconds."""
    best_time, peak = float("inf"), 0
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True, check=True, text=True)
        seconds, rss = out.stdout.split()
        best_time = min(best_time, float(seconds))
        peak = max(peak, int(rss))
    return best_time, peak


def in_process_rate(path: Path) -> float:
    """The same keys straight into Game.move / Game.restart, no decoding or I/O."""
    keys = [_DIRECTIONS.get(b) for b in path.read_bytes()]
    best = 0.0
    for _ in range(3):
        game = Game(seed=1)
        start = time.perf_counter()
        for direction in keys:
            if direction is None:
                game.restart()
            else:
                game.move(direction)
        best = max(best, len(keys) / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=300_000)
    count = parser.parse_args().keys
    with tempfile.TemporaryDirectory() as tmp:
        empty, small, large = Path(tmp, "0.keys"), Path(tmp, "small.keys"), Path(tmp, "large.keys")
        make_keys(empty, 0)
        make_keys(small, count // 100)
        make_keys(large, count)
        startup, _ = run(empty)
        _, small_rss = run(small)
        large_time, large_rss = run(large)
        engine = in_process_rate(large)
    piped = count / (large_time - startup)
    print(f"python {sys.version.split()[0]}, {count} keys of random play (w a s d, r when over), seed 1")
    print(f"start-up (0 keys)            {startup * 1000:8.1f} ms")
    print(f"piped replay                 {piped:10,.0f} keys/s   ({large_time:.2f} s for {count} keys)")
    print(f"in-process engine (Game.move){engine:10,.0f} keys/s")
    print(f"piped / in-process           {piped / engine:10.2f}x   (target >= 0.5x)")
    print(f"peak memory, {count // 100:>7} keys     {small_rss / 1024:8.1f} MiB")
    print(f"peak memory, {count:>7} keys     {large_rss / 1024:8.1f} MiB   (target: flat)")


if __name__ == "__main__":
    main()
