"""Key-to-complete-frame latency of the real program in a pseudo-terminal.

Starts ``ansi2048`` in a pty (80x30, 256 colours), waits for the first frame,
then sends one move at a time and times how long it takes until the frame
that answers it has been written completely (its last line, the keys line,
has arrived). Prints p50, p90, p99 and max over the keys sent.

    python benchmarks/latency.py [--keys 500]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from ansi2048.render.repaint import FRAME_END as FRAME_END_CODE

# Every frame drawn in place ends with the renderer's FRAME_END.
FRAME_END = re.escape(FRAME_END_CODE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=500)
    count = parser.parse_args().keys
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, TERM="xterm-256color", ANSI2048_DATA_DIR=data)
        env.pop("NO_COLOR", None)
        child = pexpect.spawn(
            sys.executable,
            ["-m", "ansi2048", "--seed", "1", "--new"],
            env=env,
            dimensions=(30, 80),
            timeout=10,
            maxread=1 << 16,
        )
        child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
        child.expect(FRAME_END)
        samples = []
        moves = "wasd"
        for i in range(count):
            start = time.perf_counter()
            child.send(moves[i % 4])
            child.expect(FRAME_END)
            samples.append((time.perf_counter() - start) * 1000)
        child.send("q")
        child.expect(pexpect.EOF)
    samples.sort()

    def pct(p: float) -> float:
        return samples[min(len(samples) - 1, int(p / 100 * len(samples)))]

    print(f"python {sys.version.split()[0]}, {count} keys, 80x30 pty, 256 colours")
    figures = "  ".join(f"p{p} {pct(p):.2f} ms" for p in (50, 90, 99))
    print(f"key -> complete frame: {figures}  max {samples[-1]:.2f} ms")
    print(f"mean {statistics.mean(samples):.2f} ms   (target p99 < 5 ms)")


if __name__ == "__main__":
    main()
