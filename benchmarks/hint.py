"""The hint's latency in play: ``t`` to the complete frame that shows it.

Starts ``ansi2048`` in a pty (100x40, 256 colours, no animation) for each
board shape, then repeatedly sends ``t``, times how long it takes until the
frame showing the hint has been written completely, and plays the hinted
move (so the boards are the AI's own game, early to late). The AI loads in
the background once the board is up; the first hint of each run is sent
``--first-after`` seconds after the first frame (a player looks at the
board first) and reported apart: with ``--first-after 0`` it waits for the
loading (and on 4x4 the weights).

    python benchmarks/hint.py [--hints 200] [--shapes 4x4,3x3,5x5,6x6,2x6,3x5] [--first-after 1]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import List

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from ansi2048.render.repaint import FRAME_END as FRAME_END_CODE

HINT = re.compile(rb"hint: \S+ (left|right|up|down)|hint: no move")
KEYS = {b"left": "a", b"right": "d", b"up": "w", b"down": "s"}


def run(shape: str, hints: int, first_after: float) -> List[float]:
    """Milliseconds per hint, the first (loading the AI) first."""
    samples: List[float] = []
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, TERM="xterm-256color", ANSI2048_DATA_DIR=data)
        env.pop("NO_COLOR", None)
        child = pexpect.spawn(
            sys.executable,
            ["-m", "ansi2048", "--seed", "1", "--new", "--no-animation", "--size", shape],
            env=env,
            dimensions=(40, 100),
            timeout=10,
            maxread=1 << 16,
        )
        child.delaybeforesend = None
        child.expect(re.escape(FRAME_END_CODE))
        time.sleep(first_after)
        for _ in range(hints):
            start = time.perf_counter()
            child.send("t")
            child.expect(HINT)
            word = child.match.group(1)
            child.expect(re.escape(FRAME_END_CODE))
            samples.append((time.perf_counter() - start) * 1000)
            if word is None:  # game over
                child.send("r")
            else:
                child.send(KEYS[word])
            child.expect(re.escape(FRAME_END_CODE))
        child.send("q")
        child.expect(pexpect.EOF)
    return samples


def percentile(ordered: List[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hints", type=int, default=200)
    parser.add_argument("--shapes", default="4x4,3x3,5x5,6x6,2x6,3x5")
    parser.add_argument("--first-after", type=float, default=1.0, help="seconds from the first frame to the first t")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.hints, args.shapes, args.first_after = 3, "3x3", 0.1
    print(f"| board | first hint ({args.first_after:g} s after the first frame) | p50 | p99 | max |")
    print("| --- | --- | --- | --- | --- |")
    for shape in args.shapes.split(","):
        samples = run(shape, args.hints, args.first_after)
        first, rest = samples[0], sorted(samples[1:])
        p50, p99 = (percentile(rest, p) for p in (50, 99))
        print(f"| {shape} | {first:.0f} ms | {p50:.1f} ms | {p99:.1f} ms | {rest[-1]:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
