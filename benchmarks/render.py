"""Render time and bytes per frame, for a 4x4 board in each colour depth.

Builds frames for a game in progress (random moves on seed 1) at 80x30 and
prints the mean time to build a frame (frame_lines + Repainter) and the bytes
written per frame.

    python benchmarks/render.py [--frames 2000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from ansi2048 import Game
from ansi2048.render.frame import View, frame_lines
from ansi2048.render.repaint import Repainter
from ansi2048.render.style import ColorDepth
from ansi2048.session import Session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2000)
    frames = parser.parse_args().frames
    print(f"python {sys.version.split()[0]}, 4x4 board, 80x30 terminal, {frames} frames per depth")
    print(f"{'depth':10} {'ms/frame':>9} {'frames/s':>9} {'bytes/frame':>12}")
    for depth in ColorDepth:
        rng = random.Random(0)
        session = Session(Game(seed=1))
        repainter = Repainter()
        total_bytes = 0
        elapsed = 0.0
        for _ in range(frames):
            if session.game.over:
                session.game.restart()
            session.game.move(rng.choice(("up", "down", "left", "right")))
            start = time.perf_counter()
            text = repainter.frame(frame_lines(View.of(session), depth, 80, 30), 80)
            elapsed += time.perf_counter() - start
            total_bytes += len(text.encode())
        print(f"{depth.name:10} {elapsed / frames * 1000:9.3f} {frames / elapsed:9.0f} {total_bytes // frames:12}")


if __name__ == "__main__":
    main()
