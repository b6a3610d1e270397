"""Key-to-frame latency of the real program in a pseudo-terminal.

Starts ``ansi2048`` in a pty (80x30, 256 colours), with and without
animation, waits for the first frame, then sends one move at a time and
times how long until the first frame that answers it is complete (it ends
with FRAME_END), and until the last frame the key caused (the settled one:
with animation, after its motion; the output then rests for QUIET seconds).
Prints p50, p90, p99 and max over the keys sent.

    python benchmarks/latency.py [--keys 200]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from ansi2048.render.repaint import FRAME_END as FRAME_END_CODE

# Every frame drawn in place ends with the renderer's FRAME_END.
FRAME_END = re.escape(FRAME_END_CODE)
# How long the output must rest after a frame for it to count as the key's last.
QUIET = 0.25


def measure(count: int, animation: bool) -> tuple[list[float], list[float]]:
    """Per key: ms to the first complete frame, and ms to the last frame it
    caused (the settled one; the same frame without animation)."""
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, TERM="xterm-256color", ANSI2048_DATA_DIR=data)
        env.pop("NO_COLOR", None)
        env.pop("ANSI2048_NO_ANIMATION", None)
        args = ["-m", "ansi2048", "--seed", "1", "--new"] + ([] if animation else ["--no-animation"])
        child = pexpect.spawn(sys.executable, args, env=env, dimensions=(30, 80), timeout=10, maxread=1 << 16)
        child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
        child.expect(FRAME_END)
        first: list = []  # type: ignore[type-arg]
        settled: list = []  # type: ignore[type-arg]
        moves = "wasd"
        for i in range(count):
            start = time.perf_counter()
            child.send(moves[i % 4])
            child.expect(FRAME_END)
            first.append((time.perf_counter() - start) * 1000)
            last = first[-1]
            # More frames of the same key follow within a frame time or two;
            # the key's last frame is the one after which the output rests.
            while True:
                try:
                    child.expect(FRAME_END, timeout=QUIET)
                except pexpect.TIMEOUT:
                    break
                last = (time.perf_counter() - start) * 1000
            settled.append(last)
        child.send("q")
        child.expect(pexpect.EOF)
    return first, settled


def figures(samples: list[float]) -> str:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    return "  ".join(f"p{p} {pct(p):7.2f}" for p in (50, 90, 99)) + f"  max {ordered[-1]:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    count = 4 if args.quick else args.keys
    print(f"python {sys.version.split()[0]}, {count} keys each, 80x30 pty, 256 colours")
    for animation in (False, True):
        first, settled = measure(count, animation)
        name = "animated" if animation else "no animation"
        print(f"{name:13} key -> first frame:   {figures(first)}")
        print(f"{name:13} key -> settled frame: {figures(settled)}")


if __name__ == "__main__":
    main()
