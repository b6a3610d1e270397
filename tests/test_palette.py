"""The palette as a player sees it: numbers readable on their tiles at every
colour depth (measured from the SGR codes a frame really contains), and 256
colours that stay close to the original, warm, and distinct."""

from __future__ import annotations

import itertools
import math
import re

import pytest

from ansi2048.game.session import Status
from ansi2048.render.board import dimmed
from ansi2048.render.color import TERMINAL_PALETTES, contrast_ratio, delta_e, lab
from ansi2048.render.frame import View, frame_lines
from ansi2048.render.palette import MIN_TEXT_CONTRAST, classic, separated_xterm
from ansi2048.render.style import ColorDepth, xterm_rgb
from ansi2048.render.themes import THEMES

from .screen import emitted_colours

VALUES = [2**n for n in range(1, 17)]  # 2 .. 65536: every listed tile and beyond


def board_of(values: list[int]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(values[r * 4 : r * 4 + 4]) for r in range(4))


@pytest.mark.parametrize("depth", [ColorDepth.TRUE, ColorDepth.EXTENDED, ColorDepth.BASIC])
@pytest.mark.parametrize("spawned", [None, (0, 0)])
def test_every_number_reads_at_3_to_1_or_more_on_its_tile(depth: ColorDepth, spawned: object) -> None:
    view = View(board_of(VALUES), spawned, 0, 0, 0, 2048, 1, Status.PLAYING)  # type: ignore[arg-type]
    lines = frame_lines(view, depth, 100, 40)
    digits = [(char, fg, bg) for line in lines[1:-3] for char, fg, bg in emitted_colours(line) if char.isdigit()]
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


def test_classic_at_256_colours_stays_close_to_the_original() -> None:
    """The board's greyish beiges have no close warm stand-in in xterm's
    cube (its nearest warm one for the grid, #af875f, is a saturated brown
    at 15 where a light grey is at 8): they take the nearest; the coloured
    tiles keep their hue (the cream 4 does not turn olive)."""
    palette = classic()
    for color in (palette.grid, palette.empty[0], palette.tiles[2][0]):
        assert delta_e(lab(color.rgb), lab(xterm_rgb(color.xterm))) < 9, color
    four = palette.tiles[4][0]
    shown = xterm_rgb(four.xterm)
    assert abs(hue(shown) - hue(four.rgb)) <= 18 and math.hypot(*lab(shown)[1:]) > 10, shown
    empty, grid = lab(xterm_rgb(palette.empty[0].xterm)), lab(xterm_rgb(palette.grid.xterm))
    assert empty[0] > grid[0]  # empty cells lighter than the grid, as in the original
    assert xterm_rgb(palette.grid.xterm) != (0xAF, 0x87, 0x5F)


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_16_colour_numbers_read_on_every_common_terminal_palette(theme: str) -> None:
    """The 16 colours are the terminal's own: every tile's pair, and the
    faded board's under a message, reads at 3:1 on xterm's, Tango's,
    Campbell's, Terminal.app's and Solarized's (not only xterm's)."""
    palette = THEMES[theme]()
    faded = dimmed(palette)
    for source in (palette, faded):
        pairs = [*source.tiles.values(), source.beyond, source.won, source.over]
        for bg, text in pairs:
            for name, table in TERMINAL_PALETTES.items():
                ratio = contrast_ratio(table[bg.basic], table[text.basic])
                assert ratio >= MIN_TEXT_CONTRAST, (theme, name, bg.basic, text.basic, round(ratio, 2))


def _hue(rgb: tuple[int, int, int]) -> tuple[float, float]:
    """(chroma, hue angle in degrees) in CIELAB."""
    _lightness, a, b = lab(rgb)
    return math.hypot(a, b), math.degrees(math.atan2(b, a))


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_the_faded_tiles_keep_their_hue_at_256_colours(theme: str) -> None:
    """Under a banner the tiles fade toward the grid; at 256 colours each
    faded colour takes a stand-in of its own hue, as the tiles do (the plain
    nearest turned classic's faded 4, a beige, pink, and dark's faded 8, a
    brown, mauve)."""
    faded = dimmed(THEMES[theme]())
    for value, (bg, _text) in [*faded.tiles.items(), (0, faded.empty), (-1, faded.beyond)]:
        chroma, hue = _hue(bg.rgb)
        if chroma < 10:  # a grey: its nearest grey will do
            continue
        shown_chroma, shown_hue = _hue(xterm_rgb(bg.xterm))
        shift = abs(shown_hue - hue) % 360
        assert min(shift, 360 - shift) <= 18 and shown_chroma >= chroma / 2, (theme, value, bg.rgb, bg.xterm)


@pytest.mark.parametrize("theme", sorted(THEMES))
@pytest.mark.parametrize("depth", [ColorDepth.TRUE, ColorDepth.EXTENDED, ColorDepth.BASIC])
def test_the_faded_board_under_a_message_stays_readable(theme: str, depth: ColorDepth) -> None:
    view = View(board_of(VALUES), None, 0, 0, 0, 2048, 1, Status.OVER, over=True)
    lines = frame_lines(view, depth, 100, 40, palette=THEMES[theme]())
    digits = [(char, fg, bg) for line in lines[1:-3] for char, fg, bg in emitted_colours(line) if char.isdigit()]
    assert digits
    for char, fg, bg in digits:
        assert fg != bg and contrast_ratio(fg, bg) >= MIN_TEXT_CONTRAST, (char, fg, bg)


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 3), (4, 4), (2, 10), (6, 6)])
@pytest.mark.parametrize("depth", [ColorDepth.NONE, ColorDepth.TRUE])
def test_every_number_shows_under_the_message_on_any_board(shape: tuple[int, int], depth: ColorDepth) -> None:
    rows, cols = shape
    values = [2 ** (1 + (i % 11)) for i in range(rows * cols)]
    board = tuple(tuple(values[r * cols : (r + 1) * cols]) for r in range(rows))
    for status, over in ((Status.OVER, True), (Status.WON, False)):
        view = View(board, None, 0, 0, 0, 2048, 1, status, over=over)
        for width, height in ((120, 50), (60, 30), (45, 20), (34, 12)):
            playing = frame_lines(View(board, None, 0, 0, 0, 2048, 1, Status.PLAYING), ColorDepth.NONE, width, height)
            if not any("Score" in line for line in playing):
                continue
            text = "\n".join(frame_lines(view, ColorDepth.NONE, width, height))
            board_lines = text.split("\n")[1:-2]
            # The message's own "2048" aside: the box leaves the rest of its line alone.
            cleaned = [re.sub(r"You reached \d+", "", line) for line in board_lines]
            shown = [int(n) for line in cleaned for n in re.findall(r"\b\d+\b", line)]
            assert sorted(shown) == sorted(values), (shape, width, height, text)
            assert "Game over" in text or "You reached" in text or "won" in text.lower()


def test_the_shortlist_picks_what_a_full_search_picks() -> None:
    palette = classic()
    colors = [palette.empty[0].rgb, palette.grid.rgb, *(bg.rgb for bg, _ in palette.tiles.values())]
    assert separated_xterm(colors) == separated_xterm(colors, shortlist=240)


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_at_16_colours_an_empty_cell_and_a_2_differ_by_colour(theme: str) -> None:
    """Not by the digit only (issue 40, item 14: classic's light grey and
    white were 1.2:1 apart): 2:1 or more on every common terminal palette."""
    palette = THEMES[theme]()
    empty, two = palette.empty[0].basic, palette.tiles[2][0].basic
    for name, table in TERMINAL_PALETTES.items():
        assert contrast_ratio(table[empty], table[two]) >= 2.0, (theme, name, empty, two)


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_the_faded_tiles_are_told_apart_at_256_colours(theme: str) -> None:
    """Under a banner each tile keeps a colour of its own (issue 40, item 14:
    classic's faded 4, 8 and 16 shared one, 128 to 2048 another): every two
    stand-ins at least a just noticeable difference apart (CIEDE2000 5)."""
    faded = dimmed(THEMES[theme]())
    shown = {value: bg.xterm for value, (bg, _text) in [*faded.tiles.items(), (0, faded.empty), (-1, faded.beyond)]}
    for (first, a), (second, b) in itertools.combinations(shown.items(), 2):
        assert delta_e(lab(xterm_rgb(a)), lab(xterm_rgb(b))) >= 5.0, (theme, first, second, a, b)
