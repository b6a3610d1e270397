"""The palette as a player sees it: numbers readable on their tiles at every
colour depth (measured from the SGR codes a frame really contains), and 256
colours that stay close to the original, warm, and distinct."""

from __future__ import annotations

import itertools
import math

import pytest

from ansi2048.render.color import contrast_ratio, delta_e, lab
from ansi2048.render.frame import View, frame_lines
from ansi2048.render.palette import MIN_TEXT_CONTRAST, classic, separated_xterm
from ansi2048.render.style import ColorDepth, xterm_rgb
from ansi2048.session import Status

from .screen import emitted_colours

VALUES = [2**n for n in range(1, 17)]  # 2 .. 65536: every listed tile and beyond


def board_of(values: list[int]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(values[r * 4 : r * 4 + 4]) for r in range(4))


@pytest.mark.parametrize("depth", [ColorDepth.TRUE, ColorDepth.EXTENDED, ColorDepth.BASIC])
@pytest.mark.parametrize("spawned", [None, (0, 0)])
def test_every_number_reads_at_3_to_1_or_more_on_its_tile(depth: ColorDepth, spawned: object) -> None:
    view = View(board_of(VALUES), spawned, 0, 0, 0, 2048, 1, Status.PLAYING)  # type: ignore[arg-type]
    lines = frame_lines(view, depth, 100, 40)
    digits = [(char, fg, bg) for line in lines[1:-2] for char, fg, bg in emitted_colours(line) if char.isdigit()]
    assert len(digits) >= sum(len(str(v)) for v in VALUES[:11])  # the numbers are on screen
    worst = min(contrast_ratio(fg, bg) for _, fg, bg in digits)
    assert worst >= MIN_TEXT_CONTRAST, worst


def test_256_colour_tiles_are_distinct_and_close_to_the_original() -> None:
    palette = classic()
    backgrounds = [palette.grid, palette.empty[0], *(bg for bg, _ in palette.tiles.values()), palette.beyond[0]]
    shown = [lab(xterm_rgb(color.xterm)) for color in backgrounds]
    assert min(delta_e(a, b) for a, b in itertools.combinations(shown, 2)) >= 5
    for color, stand_in in zip(backgrounds, shown):
        # xterm's cube has no light greyish brown: the grid's warm stand-in, the
        # farthest, is a darker brown at 15.1.
        assert delta_e(lab(color.rgb), stand_in) < 16


def hue(rgb: tuple[int, int, int]) -> float:
    _, a, b = lab(rgb)
    return math.degrees(math.atan2(b, a)) % 360


def test_the_board_stays_warm_beige_at_256_colours() -> None:
    palette = classic()
    for color in (palette.grid, palette.empty[0], palette.tiles[4][0]):
        shown = xterm_rgb(color.xterm)
        _, a, b = lab(shown)
        assert math.hypot(a, b) > 4, f"{color.rgb} became grey {shown}"
        assert abs(hue(shown) - hue(color.rgb)) <= 30, (color.rgb, shown)
    empty, grid = lab(xterm_rgb(palette.empty[0].xterm)), lab(xterm_rgb(palette.grid.xterm))
    assert empty[0] > grid[0]  # empty cells lighter than the grid, as in the original


def test_the_shortlist_picks_what_a_full_search_picks() -> None:
    palette = classic()
    colors = [palette.empty[0].rgb, palette.grid.rgb, *(bg.rgb for bg, _ in palette.tiles.values())]
    assert separated_xterm(colors) == separated_xterm(colors, shortlist=240)
