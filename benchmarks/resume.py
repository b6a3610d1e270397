"""Resuming a huge saved game: time and peak memory.

Writes a save of real play (random moves that change the board, ``r`` when
a game is over) of each size, then times one resume of it (``Keeper.resume``,
what an interactive start does) in a fresh process and prints its peak
memory (max RSS). Resume streams the save, so memory stays flat.

    python benchmarks/resume.py [--sizes 5,50]   # megabytes
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Tuple

from ansi2048 import Direction, Game

_KEYS = (("w", Direction.UP), ("a", Direction.LEFT), ("s", Direction.DOWN), ("d", Direction.RIGHT))

_MEASURE = """
import resource, sys, time
from ansi2048.storage.data_dir import BoardStore
start = time.perf_counter()
keeper = BoardStore({"ANSI2048_DATA_DIR": sys.argv[1]}, 4, 4, 2048, lambda message: None)
resumed = keeper.resume()
keeper.close()
assert resumed is not None
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def make_save(path: Path, size: int) -> None:
    """A save of ``size`` bytes of real play, written as the game writes it."""
    rng = random.Random(0)
    game = Game(seed=1)
    with open(path, "w", encoding="ascii") as out:
        out.write("# ansi2048 version=0.1.0 seed=1 size=4x4 goal=2048\n")
        written, buffer = 0, []
        while written < size:
            if game.over:
                game.restart()
                buffer.append("r")
            else:
                key, direction = _KEYS[int(rng.random() * 4)]
                if game.move(direction):
                    buffer.append(key)
            if len(buffer) >= 65536:
                out.write("".join(buffer))
                written += len(buffer)
                buffer.clear()
        out.write("".join(buffer))


def run(save: Path) -> Tuple[float, int]:
    """(seconds, peak RSS in KiB) of one resume of a fresh copy of ``save``."""
    with tempfile.TemporaryDirectory() as data:
        shutil.copy(save, Path(data) / "game-4x4-2048.keys")
        out = subprocess.run([sys.executable, "-c", _MEASURE, data], capture_output=True, check=True, text=True)
    seconds, rss = out.stdout.split()
    return float(seconds), int(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,50", help="save sizes in megabytes, comma-separated")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.sizes = "0.02"
    with tempfile.TemporaryDirectory() as work:
        for megabytes in (float(text) for text in args.sizes.split(",")):
            save = Path(work) / "save.keys"
            make_save(save, int(megabytes * 1_000_000))
            seconds, rss = run(save)
            print(f"{megabytes:g} MB save: resume {seconds:.1f} s, peak memory {rss / 1024:.1f} MiB", flush=True)


if __name__ == "__main__":
    main()
