"""Seeding: what a new game costs, the seed's SHA-256 included.

Every new ``Game`` (a start, ``r``, each replay or race board, the server's
every game) turns its seed into the generator's state through SHA-256
(``game.spawns.seed_state``). Times, per call, ``seed_state`` alone and a
whole new 4x4 ``Game``, over distinct seeds; the best of ``--trials`` runs of
``--count`` calls each (CPU time, ``time.process_time``).

    python benchmarks/seeding.py [--count 20000] [--trials 5]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from ansi2048 import Game
from ansi2048.game.spawns import seed_state


def best_per_call(call: Callable[[int], object], count: int, trials: int) -> float:
    """The least CPU seconds per call over ``trials`` runs of ``count`` calls (seeds 0, 1, ...)."""
    best = float("inf")
    for _ in range(trials):
        start = time.process_time()
        for seed in range(count):
            call(seed)
        best = min(best, (time.process_time() - start) / count)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000, help="calls per run")
    parser.add_argument("--trials", type=int, default=5, help="runs; the best counts")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.count, args.trials = 200, 1
    print(f"CPython {platform.python_version()}, {args.count} calls a run, best of {args.trials}")
    state = best_per_call(seed_state, args.count, args.trials)
    print(f"seed_state: {state * 1e6:.1f} us a call", flush=True)
    game = best_per_call(lambda seed: Game(4, 4, 2048, seed), args.count, args.trials)
    print(f"new 4x4 Game: {game * 1e6:.1f} us a call", flush=True)


if __name__ == "__main__":
    main()
