"""Piped replay throughput and memory.

Prints keys per second for ``ansi2048 < keys`` (start-up subtracted) beside the
in-process engine rate for the same keys, and the peak memory (max RSS) of a
replay of 3k keys and of 300k keys (streaming input keeps it flat), and of
one endless game of 300k keys (moves and undos: nothing kept grows with the
game's length either).

Rates are per CPU second (the child's user + system time; the engine's
process time), best of 5: on a shared machine wall time measures the
neighbours too. The wall-clock rate is printed beside it.

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
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""
_RUNS = 5


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


def make_endless(path: Path, count: int) -> None:
    """One game that never ends: each move undone at once."""
    rng = random.Random(0)
    keys = bytearray()
    while len(keys) < count:
        keys += bytes([b"wasd"[int(rng.random() * 4)], ord("u")])
    path.write_bytes(bytes(keys[:count]))


def run(path: Path) -> Tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in KiB) of one piped replay:
    the best times of ``_RUNS``, the largest peak."""
    best_wall, best_cpu, peak = float("inf"), float("inf"), 0
    for _ in range(_RUNS):
        out = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True, check=True, text=True)
        wall, cpu, rss = out.stdout.split()
        best_wall, best_cpu = min(best_wall, float(wall)), min(best_cpu, float(cpu))
        peak = max(peak, int(rss))
    return best_wall, best_cpu, peak


def in_process_rate(path: Path) -> float:
    """The same keys straight into Game.move / Game.restart, no decoding or I/O."""
    keys = [_DIRECTIONS.get(b) for b in path.read_bytes()]
    best = 0.0
    for _ in range(_RUNS):
        game = Game(seed=1)
        start = time.process_time()
        for direction in keys:
            if direction is None:
                game.restart()
            else:
                game.move(direction)
        best = max(best, len(keys) / (time.process_time() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=300_000)
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    global _RUNS
    count, _RUNS = (2000, 1) if args.quick else (args.keys, _RUNS)
    with tempfile.TemporaryDirectory() as tmp:
        empty, small, large = Path(tmp, "0.keys"), Path(tmp, "small.keys"), Path(tmp, "large.keys")
        endless = Path(tmp, "endless.keys")
        make_endless(endless, count)
        make_keys(empty, 0)
        make_keys(small, count // 100)
        make_keys(large, count)
        startup_wall, startup_cpu, _ = run(empty)
        _, _, small_rss = run(small)
        large_wall, large_cpu, large_rss = run(large)
        _, _, endless_rss = run(endless)
        engine = in_process_rate(large)
    piped = count / (large_cpu - startup_cpu)
    piped_wall = count / (large_wall - startup_wall)
    print(f"python {sys.version.split()[0]}, {count} keys of random play (w a s d, r when over), seed 1")
    print(f"start-up (0 keys)            {startup_cpu * 1000:8.1f} ms CPU   ({startup_wall * 1000:.1f} ms wall)")
    print(f"piped replay                 {piped:10,.0f} keys/s   ({large_cpu:.2f} s CPU for {count} keys)")
    print(f"  by the wall clock          {piped_wall:10,.0f} keys/s   ({large_wall:.2f} s)")
    print(f"in-process engine (Game.move){engine:10,.0f} keys/s")
    print(f"piped / in-process           {piped / engine:10.2f}x   (target >= 0.6x)")
    print(f"peak memory, {count // 100:>7} keys     {small_rss / 1024:8.1f} MiB")
    print(f"peak memory, {count:>7} keys     {large_rss / 1024:8.1f} MiB   (target: flat)")
    print(f"peak memory, one game, {count:>7} keys {endless_rss / 1024:6.1f} MiB   (moves undone: flat too)")


if __name__ == "__main__":
    main()
