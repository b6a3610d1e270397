"""What a frame costs: time to build and diff one, and the bytes written.

First the figure a server is sized by: one 100x30 frame of a 4x4 board (the
LARGE layout, the largest that fits 100x30) at 24-bit colour, built and
diffed against the frame before it, all in, through ``Screen.paint`` (the
view in, the bytes to write out); the game is random moves on seed 1, one
frame per move. Then, per depth, the same at 80x30. Then, per depth, what an
animated move writes (its motion frames and its settled frame, through the
same screen) against one whole frame, and the largest and mean ratio over
the moves of the game (the target: an animated move at most 3x one frame,
at 24-bit), and what an animated move costs to build and diff, all its
frames (3 of motion and the settled one).

Times are this process's CPU time (``time.process_time``: what a server
pays per frame, and less moved by other work on the machine than the wall
clock), each the best of ``--repeat`` runs of ``--frames`` frames.

    python benchmarks/render.py [--frames 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from typing import List, Tuple

from ansi2048 import Direction, Game
from ansi2048.game.engine import trace_move
from ansi2048.game.session import Session
from ansi2048.play.screen import Screen
from ansi2048.render.frame import View, layout_for
from ansi2048.render.motion import motion_frames
from ansi2048.render.style import ColorDepth

ENV = {"TERM": "xterm-256color"}


def frame_cost(depth: ColorDepth, width: int, height: int, frames: int) -> Tuple[float, int]:
    """Mean seconds per frame (built and diffed) and bytes written per frame."""
    written: List[str] = []
    screen = Screen(written.append, lambda: (width, height), depth, ENV)
    rng = random.Random(0)
    session = Session(Game(seed=1))
    screen.paint(View.of(session))
    written.clear()
    elapsed = 0.0
    for _ in range(frames):
        if session.game.over:
            session.game.restart()
        session.game.move(rng.choice(("up", "down", "left", "right")))
        view = View.of(session)
        start = time.process_time()
        screen.paint(view)
        elapsed += time.process_time() - start
    return elapsed / frames, sum(len(text.encode()) for text in written) // frames


def best_cost(depth: ColorDepth, width: int, height: int, frames: int, repeat: int) -> Tuple[float, int]:
    runs = [frame_cost(depth, width, height, frames) for _ in range(repeat)]
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    frames, repeat = (10, 1) if args.quick else (args.frames, args.repeat)
    moves = 10 if args.quick else 300
    layout = layout_for(View.of(Session(Game(seed=1))), 100, 30)
    assert layout is not None
    seconds, size = best_cost(ColorDepth.TRUE, 100, 30, frames, repeat)
    print(f"python {sys.version.split()[0]}, 4x4 board, best of {repeat} x {frames} frames")
    print(
        f"one 100x30 frame ({layout.name} layout, 24-bit), built and diffed: "
        f"{seconds * 1000:.3f} ms ({1 / seconds:.0f} frames/s), {size} bytes"
    )
    print()
    print(f"80x30:     {'ms/frame':>9} {'frames/s':>9} {'bytes/frame':>12}")
    for depth in ColorDepth:
        seconds, size = best_cost(depth, 80, 30, frames, repeat)
        print(f"{depth.name:10} {seconds * 1000:9.3f} {1 / seconds:9.0f} {size:12}")
    print()
    print(
        f"{'depth':10} {'one frame':>10} {'moving':>8} {'ratio mean':>11} {'ratio max':>10}"
        f" {'ms/move':>8}   (bytes; {moves} moves at 80x30)"
    )
    for depth in ColorDepth:
        one, moving, seconds = min((animated_move_bytes(depth, moves) for _ in range(repeat)), key=lambda run: run[2])
        ratios = [m / o for o, m in zip(one, moving)]
        print(
            f"{depth.name:10} {sum(one) // len(one):10} {sum(moving) // len(moving):8}"
            f" {sum(ratios) / len(ratios):11.2f} {max(ratios):10.2f} {seconds / len(one) * 1000:8.3f}"
        )


def animated_move_bytes(depth: ColorDepth, moves: int) -> Tuple[List[int], List[int], float]:
    """Per move: bytes of one whole frame of the board, and bytes of the
    animated move (motion frames then the settled frame) repainted over the
    frame before it; and the seconds all the animated moves took to build
    and diff."""
    rng = random.Random(1)
    session = Session(Game(seed=1))
    game = session.game
    written: List[str] = []
    screen = Screen(written.append, lambda: (80, 30), depth, ENV)
    screen.paint(View.of(session))
    one: List[int] = []
    moving: List[int] = []
    elapsed = 0.0
    while len(one) < moves:
        if game.over:
            game.restart()
            screen.paint(View.of(session))
        direction = rng.choice(list(Direction))
        before, score = game.cells, game.score
        if not game.move(direction):
            continue
        slides = trace_move(before, game.rows, game.cols, direction)
        spawn = game.spawned
        value = game.board[spawn[0]][spawn[1]] if spawn else 0
        view = View.of(session)
        written.clear()
        start = time.process_time()
        for _, sprites in motion_frames(slides, game.cols, spawn, value):
            screen.paint(view, sprites=sprites)
        settled = replace(view, gained=game.score - score)
        screen.paint(settled)
        elapsed += time.process_time() - start
        moving.append(sum(len(text.encode()) for text in written))
        fresh: List[str] = []
        Screen(fresh.append, lambda: (80, 30), depth, ENV).paint(settled)
        one.append(sum(len(text.encode()) for text in fresh))
    return one, moving, elapsed


if __name__ == "__main__":
    main()
