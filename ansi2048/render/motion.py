"""The motion of a move (pure): where every tile is at each frame.

Timing follows the original game (its stylesheet): every tile slides to its
place in 100 ms whatever the distance, easing in and out; then a merged tile
"pops" and the new tile appears, over the next 100 ms. In a terminal that is
a handful of frames, at 30 per second or more:

=========  =====  ===========================================================
frame      time   what it shows
=========  =====  ===========================================================
slide 1     0 ms  tiles a quarter of the way (the slide's 33 ms point)
slide 2    33 ms  three quarters of the way (its 67 ms point)
arrive     67 ms  tiles in place; merged tiles popped (emphasised); the new
                  tile faded in half way
settled   167 ms  the static frame, exactly as without animation
=========  =====  ===========================================================

The motion runs one frame ahead of the clock, so that the first frame is
written the moment the key is read: a key is answered as fast as without
animation, and the slide still takes its 100 ms of eased path.

Four writes a move: each rewrites most of the board, so a fifth (a frame
between the pop and the settled board) would take an animated move past 3x
the bytes of one frame (benchmarks/render.py).

The caller shows each frame at its time and cuts the motion short the
moment a key arrives, jumping to the settled frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Optional, Sequence, Tuple

from ..game.engine import Slide

__all__ = [
    "FRAME_SECONDS",
    "FRAME_TIMES",
    "GAIN_SECONDS",
    "SETTLE_SECONDS",
    "SHAKE_SECONDS",
    "SLIDE_SECONDS",
    "Phase",
    "Sprite",
    "ease_in_out",
    "motion_frames",
]

SLIDE_SECONDS = 0.100
# One frame at 30 a second, and how far ahead of the clock the motion runs.
FRAME_SECONDS = 1 / 30
SETTLE_SECONDS = SLIDE_SECONDS - FRAME_SECONDS + 0.100
# The "+N" by the score shows this long from the key (the original's rises
# and fades over 600 ms); a move that changes nothing nudges the board for
# SHAKE_SECONDS.
GAIN_SECONDS = 0.600
SHAKE_SECONDS = 0.060
# When each frame of a move is due, from the key; the last is the settled frame.
FRAME_TIMES = (0.0, FRAME_SECONDS, SLIDE_SECONDS - FRAME_SECONDS, SETTLE_SECONDS)


class Phase(Enum):
    SLIDING = "sliding"
    POPPED = "popped"  # a merged tile at its biggest
    APPEARING = "appearing"  # the new tile, half faded in

    # Hashed by identity (members are singletons), as ColorDepth is: a phase
    # is in the key of the cache every tile of a frame of motion looks up.
    __hash__ = object.__hash__


@dataclass(frozen=True)
class Sprite:
    """One tile on one frame: its value and (row, col) on the grid, which
    may be between cells while it slides."""

    value: int
    row: float
    col: float
    phase: Phase = Phase.SLIDING


# Cached: every move asks the same few points (the frames' times are fixed),
# and the bisection is most of what building a move's frames costs.
@lru_cache(maxsize=16)
def ease_in_out(t: float) -> float:
    """CSS's ``ease-in-out`` (cubic-bezier(0.42, 0, 0.58, 1)), solved for
    its x by bisection: slow start, slow end, like the original's slide."""
    if t <= 0:
        return 0.0
    if t >= 1:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(30):
        u = (low + high) / 2
        x = 3 * (1 - u) ** 2 * u * 0.42 + 3 * (1 - u) * u**2 * 0.58 + u**3
        if x < t:
            low = u
        else:
            high = u
    u = (low + high) / 2
    return 3 * (1 - u) * u**2 + u**3


def motion_frames(
    slides: Sequence[Slide], cols: int, spawn: Optional[Tuple[int, int]], spawn_value: int
) -> Tuple[Tuple[float, Tuple[Sprite, ...]], ...]:
    """The frames of a move before the settled one: (time, sprites) each.

    ``slides`` are the tiles' paths (:func:`ansi2048.game.engine.trace_move`);
    ``spawn`` and ``spawn_value`` the tile that appears after the slide."""
    frames = []
    for time in FRAME_TIMES[:2]:
        progress = ease_in_out((time + FRAME_SECONDS) / SLIDE_SECONDS)
        sprites = []
        for slide in slides:
            r0, c0 = divmod(slide.start, cols)
            r1, c1 = divmod(slide.end, cols)
            sprites.append(Sprite(slide.value, r0 + (r1 - r0) * progress, c0 + (c1 - c0) * progress))
        frames.append((time, tuple(sprites)))
    landed = {}
    for slide in slides:
        row, col = divmod(slide.end, cols)
        if slide.merged:
            landed[slide.end] = Sprite(slide.value * 2, row, col, Phase.POPPED)
        else:
            landed[slide.end] = Sprite(slide.value, row, col)
    sprites = [landed[end] for end in sorted(landed)]
    if spawn is not None:
        sprites.append(Sprite(spawn_value, spawn[0], spawn[1], Phase.APPEARING))
    frames.append((FRAME_TIMES[2], tuple(sprites)))
    return tuple(frames)
