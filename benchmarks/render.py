"""Render time and bytes per frame, for a 4x4 board in each colour depth.

Builds frames for a game in progress (random moves on seed 1) at 80x30 and
prints the mean time to build a frame (frame_lines + Repainter) and the bytes
written per frame. Then, per depth, what an animated move writes (its motion
frames and its settled frame, through the same repainter) against one whole
frame, and the largest and mean ratio over the moves of the game: the target
is an animated move at most 3x one frame, at 24-bit.

    python benchmarks/render.py [--frames 2000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import List, Tuple

from ansi2048 import Direction, Game
from ansi2048.engine import trace_move
from ansi2048.render.frame import View, frame_lines
from ansi2048.render.motion import motion_frames
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
    print()
    print(f"{'depth':10} {'one frame':>10} {'moving':>8} {'ratio mean':>11} {'ratio max':>10}   (bytes; 300 moves)")
    for depth in ColorDepth:
        one, moving = animated_move_bytes(depth, 300)
        ratios = [m / o for o, m in zip(one, moving)]
        print(
            f"{depth.name:10} {sum(one) // len(one):10} {sum(moving) // len(moving):8}"
            f" {sum(ratios) / len(ratios):11.2f} {max(ratios):10.2f}"
        )


def animated_move_bytes(depth: ColorDepth, moves: int) -> Tuple[List[int], List[int]]:
    """Per move: bytes of one whole frame of the board, and bytes of the
    animated move (motion frames then the settled frame) repainted over the
    frame before it."""
    rng = random.Random(1)
    session = Session(Game(seed=1))
    game = session.game
    repainter = Repainter()
    repainter.frame(frame_lines(View.of(session), depth, 80, 30), 80, 30)
    one: List[int] = []
    moving: List[int] = []
    while len(one) < moves:
        if game.over:
            game.restart()
            repainter.frame(frame_lines(View.of(session), depth, 80, 30), 80, 30)
        direction = rng.choice(list(Direction))
        before, score = game.cells, game.score
        if not game.move(direction):
            continue
        slides = trace_move(before, game.rows, game.cols, direction)
        spawn = game.spawned
        value = game.board[spawn[0]][spawn[1]] if spawn else 0
        view = View.of(session)
        gained = game.score - score
        written = 0
        for _, sprites in motion_frames(slides, game.cols, spawn, value):
            lines = frame_lines(view, depth, 80, 30, sprites=sprites)
            written += len(repainter.frame(lines, 80, 30).encode())
        settled = frame_lines(View(**{**view.__dict__, "gained": gained}), depth, 80, 30)
        written += len(repainter.frame(settled, 80, 30).encode())
        moving.append(written)
        one.append(len(Repainter().frame(settled, 80, 30).encode()))
    return one, moving


if __name__ == "__main__":
    main()
