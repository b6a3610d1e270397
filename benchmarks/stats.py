"""``--stats`` and ``--replay-best`` on big histories: time and peak memory.

Writes histories of made-up but valid games (random keys, scores and tiles
within what such a game can reach; one game in fifty kept twice, as game
over then undo and play on does) and runs the real command on each:

- 100k games over 4 boards and many seeds (about 27 MB);
- 8,000 games on one seed and board (a favourite seed, a daily player);
- with ``--big``, about 200 MB of games (750k).

For each: CPU seconds (user + system) and peak memory (max RSS) of the
process, for ``--stats``, ``--stats --json`` and ``--replay-best 1 --delay 0``.

    python benchmarks/stats.py [--big]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Tuple

from ansi2048.game.engine import default_goal
from ansi2048.records.history import Record

_MEASURE = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "ansi2048", *sys.argv[1:]], stdout=subprocess.DEVNULL, check=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""

_BOARDS = [(4, 4), (3, 3), (5, 5), (4, 4)]  # 4x4 twice: the most played
_RUNS = 3


def games(count: int, rng: random.Random, one_seed: bool) -> Iterator[Record]:
    """``count`` records (some the same game kept twice, counted as one)."""
    made = 0
    while made < count:
        rows, cols = (4, 4) if one_seed else rng.choice(_BOARDS)
        length = rng.randint(40, 220)
        keys = "".join(rng.choices("wasd", k=length))
        moves = length
        biggest = 1 << rng.randint(3, min(11, (4 * (moves + 2)).bit_length() - 1))
        record = Record(
            date=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
            rows=rows,
            cols=cols,
            goal=default_goal(rows, cols),
            seed=7 if one_seed else rng.getrandbits(64),
            score=rng.randint(moves, 12 * moves),
            moves=moves,
            biggest=biggest,
            won=False,
            over=True,
            undo=False,
            ai=rng.random() < 0.1,
            keys=keys,
        )
        yield record
        made += 1
        if made < count and rng.random() < 0.02:
            more = "u" + "".join(rng.choices("wasd", k=20))
            yield Record(**{**record.__dict__, "keys": keys + more, "moves": moves + 19, "undo": True})
            made += 1


def write_history(path: Path, count: int, one_seed: bool) -> int:
    rng = random.Random(count)
    with open(path, "w", encoding="utf-8") as out:
        for record in games(count, rng, one_seed):
            out.write(record.to_json() + "\n")
    return path.stat().st_size


def measure(data: Path, *args: str) -> Tuple[float, float]:
    """(CPU seconds, peak MiB) of ``ansi2048 ARGS``: the best CPU of ``_RUNS`` runs."""
    env = {**os.environ, "ANSI2048_DATA_DIR": str(data), "NO_COLOR": "1"}
    best, peak = float("inf"), 0.0
    for _ in range(_RUNS):
        out = subprocess.run(
            [sys.executable, "-c", _MEASURE, *args], capture_output=True, check=True, text=True, env=env
        )
        cpu, rss = out.stdout.split()
        best = min(best, float(cpu))
        peak = max(peak, int(rss) / 1024)
    return best, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="also a history of about 200 MB")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    options = parser.parse_args()
    cases = [("100k games", 100_000, False), ("8,000 games on one seed", 8_000, True)]
    if options.quick:
        global _RUNS
        _RUNS = 1
        cases = [("1,000 games", 1_000, False), ("100 games on one seed", 100, True)]
    if options.big:
        cases.append(("750k games", 750_000, False))
    for name, count, one_seed in cases:
        with tempfile.TemporaryDirectory() as temp:
            data = Path(temp)
            size = write_history(data / "history.jsonl", count, one_seed)
            print(f"{name} ({size / 1e6:.0f} MB):")
            for args in (["--stats"], ["--stats", "--json"], ["--replay-best", "1", "--delay", "0"]):
                cpu, peak = measure(data, *args)
                print(f"  {' '.join(args):<28} {cpu:6.2f} s CPU  {peak:6.1f} MiB peak")


if __name__ == "__main__":
    main()
