"""The tile colours (pure): the original game's palette, with a hand-picked
16-colour code and a 256-colour index chosen for every colour.

A :class:`Palette` is a value: the frame builder asks it for a tile's
colours and never names a colour itself, so another palette (a theme) is
another value of the same shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from typing import Callable, Dict, List, Mapping, Sequence, Tuple

from .color import BASIC_RGB, Lab, basic_contrast, contrast_ratio, delta_e, lab, shown_rgb
from .style import Color, ColorDepth, Rgb, xterm_rgb

__all__ = [
    "BANNER_CONTRAST",
    "BASIC_CODES",
    "MIN_TEXT_CONTRAST",
    "RAMP",
    "Palette",
    "TilePair",
    "banner_colors",
    "basic_text",
    "classic",
    "hex_rgb",
    "hotter",
    "readable_text",
    "separated_xterm",
]

TilePair = Tuple[Color, Color]  # (background, text)
BASIC_CODES = tuple(BASIC_RGB)  # the 16 colours' SGR foreground codes


@dataclass(frozen=True, eq=False)
class Palette:
    """Colours of the board: ``tiles`` by value, ``beyond`` for every larger
    tile, the empty cell and the grid between tiles. Compared and hashed by
    identity (its mapping is not hashable), so frame caches can key on it."""

    tiles: Mapping[int, TilePair]
    beyond: TilePair
    empty: TilePair
    grid: Color
    won: TilePair  # the win banner's (background, text)
    over: TilePair  # the game-over banner's

    def tile(self, value: int) -> TilePair:
        """(background, text) of a tile; 0 is the empty cell."""
        if not value:
            return self.empty
        return self.tiles.get(value, self.beyond)


# How different (CIEDE2000) the board's 256-colour backgrounds stay from
# each other: well past "just noticeable" (about 1), so that 256, 512 and
# 1024, near-identical yellows, do not collapse into one colour.
_MIN_DELTA_E = 5.0
# A colour with this much chroma is "a colour", not a grey: its stand-in must
# keep its hue (within _MAX_HUE_SHIFT degrees) and half its chroma, so the
# cream 4 does not turn olive and the oranges do not turn pink. Below it
# (the original's grid, empty cells and 2 tile are greyish beiges, which the
# 256 colours do not have) the nearest wins: a light grey is much closer to
# #bbada0 than the cube's saturated browns.
_CHROMATIC = 10.0
_MAX_HUE_SHIFT = 18.0
# The WCAG contrast every tile's number keeps against its tile, at every depth.
MIN_TEXT_CONTRAST = 3.0
# The tiles that get hotter as they grow, orange to red, in every theme at
# 24 bits and 256 colours (16 colours have too few to choose from): see
# separated_xterm's ramp. The yellows after them cannot keep that at 256
# colours and stay apart (xterm's cube has too few yellows), nor can the
# near-grey 2 and 4 (they take the nearest greys and creams).
RAMP = (8, 16, 32, 64)


def _hue_shift(first: Lab, second: Lab) -> float:
    shift = abs(math.degrees(math.atan2(first[2], first[1]) - math.atan2(second[2], second[1]))) % 360
    return min(shift, 360 - shift)


@cache
def _xterm_labs() -> Dict[int, Lab]:
    return {index: lab(xterm_rgb(index)) for index in range(16, 256)}


def _allowed(candidate: Lab, target: Lab, chroma: float) -> bool:
    """Whether ``candidate`` may stand in for ``target`` (of ``chroma``)."""
    if chroma < _CHROMATIC:
        return True
    if math.hypot(candidate[1], candidate[2]) < chroma / 2:
        return False
    return _hue_shift(candidate, target) <= _MAX_HUE_SHIFT


# CIEDE2000 is costly in Python (a full search took 280 ms): the plain Lab
# distance (CIE76) ranks the candidates, and CIEDE2000 re-ranks the nearest
# this many; the palette tests check that this picks what a full search does.
_SHORTLIST = 24


def _nothing_excluded(rgb: Rgb, index: int) -> bool:
    return False


# What the search below finds for the classic board's backgrounds, so that no
# start-up pays for it (~6 ms, more than the rest of the palette): the search
# is the rule, this its answer written down. tests/test_startup.py checks
# every entry against the search, so a change to the colours or to the search
# that leaves one stale fails there; colours not listed are searched.
# Keyed by the colours and their ramp.
_FOUND: Dict[Tuple[Tuple[Rgb, ...], Tuple[Rgb, ...]], Tuple[int, ...]] = {
    (
        (
            (205, 193, 180), (187, 173, 160), (238, 228, 218), (237, 224, 200), (242, 177, 121), (245, 149, 99),
            (246, 124, 95), (246, 94, 59), (237, 207, 114), (237, 204, 97), (237, 200, 80), (237, 197, 63),
            (237, 194, 46), (60, 58, 50),
        ),
        ((242, 177, 121), (245, 149, 99), (246, 124, 95), (246, 94, 59)),
    ): (251, 145, 254, 223, 215, 209, 203, 202, 221, 222, 220, 178, 179, 237),
}  # fmt: skip


@cache
def hue_keeping_xterm(rgb: Rgb) -> int:
    """The 256-colour stand-in for ``rgb`` by the board's rule (the nearest
    in CIEDE2000 that keeps a colour's hue, as :func:`separated_xterm` picks
    them), alone: for colours made from the palette's (a faded tile), which
    the plain nearest turns from beige to pink and from brown to mauve."""
    return separated_xterm([rgb], found={})[rgb]


def separated_xterm(
    colors: Sequence[Rgb],
    exclude: Callable[[Rgb, int], bool] = _nothing_excluded,
    shortlist: int = _SHORTLIST,
    found: Mapping[Tuple[Tuple[Rgb, ...], Tuple[Rgb, ...]], Tuple[int, ...]] = _FOUND,
    ramp: Sequence[Rgb] = (),
) -> Dict[Rgb, int]:
    """256-colour indices for ``colors``, in order: each the one nearest in
    CIEDE2000 that keeps its hue (for a chromatic colour) and stays clearly
    apart from those already taken. Plain nearest maps 256, 512 and 1024 to
    one yellow and the beige board to greys; distinct things should look
    distinct, and warm things warm. ``exclude(rgb, index)`` rules out more
    indices for a colour (a theme that must keep its text readable on
    whichever index is picked). ``ramp``: colours of ``colors``, in order,
    that get hotter as the tiles grow (cream to red): each one's stand-in is
    no lighter and no greyer than the one before it (:func:`hotter`), as
    their originals are. ``found``: answers known already (``{}`` searches
    whatever the colours)."""
    searched_as_written = exclude is _nothing_excluded and shortlist == _SHORTLIST
    known = found.get((tuple(colors), tuple(ramp))) if searched_as_written else None
    if known is not None:
        return dict(zip(colors, known))
    labs = _xterm_labs()
    taken: List[int] = []
    table: Dict[Rgb, int] = {}
    cooler = dict(zip(ramp[1:], ramp))  # the colour before each in the ramp
    for rgb in colors:
        target = lab(rgb)
        chroma = math.hypot(target[1], target[2])
        before = labs[table[cooler[rgb]]] if cooler.get(rgb) in table else None
        allowed = sorted(
            (
                i
                for i in labs
                if _allowed(labs[i], target, chroma)
                and not exclude(rgb, i)
                and (before is None or hotter(labs[i], before))
            ),
            key=lambda i: math.dist(target, labs[i]),
        )
        ranked = sorted(allowed[:shortlist], key=lambda i: delta_e(target, labs[i])) + allowed[shortlist:]
        for index in ranked:
            if all(delta_e(labs[index], labs[other]) >= _MIN_DELTA_E for other in taken):
                break
        else:
            raise ValueError(f"no 256-colour stand-in for {rgb} keeps clear of the others")
        table[rgb] = index
        taken.append(index)
    return table


def hotter(color: Lab, than: Lab) -> bool:
    """Whether ``color`` is at least as hot as ``than``: no lighter and no
    less colourful (CIELAB lightness and chroma)."""
    return color[0] <= than[0] and math.hypot(color[1], color[2]) >= math.hypot(than[1], than[2])


def _min_contrast(background: Color, text: Color) -> float:
    """The lowest contrast of ``text`` on ``background`` at 24 bits and 256
    colours (16 colours are chosen apart: :func:`basic_text`)."""
    ratios = []
    for depth in (ColorDepth.TRUE, ColorDepth.EXTENDED):
        bg, fg = shown_rgb(background, depth), shown_rgb(text, depth)
        assert bg is not None and fg is not None
        ratios.append(contrast_ratio(bg, fg))
    return min(ratios)


def basic_text(background: int, preferred: int) -> int:
    """The 16-colour text code for a ``background`` code: ``preferred`` if
    it reads at MIN_TEXT_CONTRAST on every common terminal palette, else the
    code that reads best on the worst of them."""
    if basic_contrast(background, preferred) >= MIN_TEXT_CONTRAST:
        return preferred
    return max(BASIC_CODES, key=lambda code: basic_contrast(background, code))


def readable_text(background: Color, preferred: Color, candidates: Sequence[Color]) -> Color:
    """``preferred`` if it reaches MIN_TEXT_CONTRAST on ``background`` at 24
    bits and 256 colours, else the candidate that reads best at the worse of
    them; its 16-colour code is chosen on its own (:func:`basic_text`)."""
    if _min_contrast(background, preferred) < MIN_TEXT_CONTRAST:
        preferred = max(candidates, key=lambda text: _min_contrast(background, text))
    return replace(preferred, basic=basic_text(background.basic, preferred.basic))


# The WCAG contrast of the win and game-over banners' text (AA for body
# text), at 24 bits, 256 colours, and at 16 on every common terminal palette.
BANNER_CONTRAST = 4.5
_INKS = (Color.of(0x000000, 30), Color.of(0xFFFFFF, 97))


def banner_colors(background: Color, text: Color) -> TilePair:
    """A banner's (background, text) from a tile's colour and the text
    wanted on it, reaching BANNER_CONTRAST at every depth: per depth the
    wanted text if it does, else black or white, whichever reads better.
    At 16 colours the background too: the tile's code if some text code
    reads on it at BANNER_CONTRAST on every common terminal palette, else
    the nearest code (by xterm's colours) that has one."""

    def at(depth: ColorDepth, color: Color) -> Rgb:
        shown = shown_rgb(color, depth)
        assert shown is not None
        return shown

    def best(depth: ColorDepth) -> Color:
        if contrast_ratio(at(depth, background), at(depth, text)) >= BANNER_CONTRAST:
            return text
        return max((text, *_INKS), key=lambda ink: contrast_ratio(at(depth, background), at(depth, ink)))

    def readable_on(code: int) -> float:
        return max(basic_contrast(code, other) for other in BASIC_CODES)

    code = background.basic
    if readable_on(code) < BANNER_CONTRAST:
        target = lab(background.rgb)
        code = min(
            (other for other in BASIC_CODES if readable_on(other) >= BANNER_CONTRAST),
            key=lambda other: delta_e(target, lab(BASIC_RGB[other])),
        )
    text_code = text.basic
    if basic_contrast(code, text_code) < BANNER_CONTRAST:
        text_code = max(BASIC_CODES, key=lambda other: basic_contrast(code, other))
    shown_text = Color(best(ColorDepth.TRUE).rgb, text_code, best(ColorDepth.EXTENDED).xterm)
    return replace(background, basic=code), shown_text


def hex_rgb(value: int) -> Rgb:
    """``0xRRGGBB`` as an (r, g, b) triple."""
    return ((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF)


@cache
def classic() -> Palette:
    """The original game's colours (gabrielecirulli/2048), exact at 24 bits.
    At 256 colours each is the nearest by CIEDE2000 that keeps its hue and
    stays distinct (:func:`separated_xterm`); the 16-colour pick is by hand,
    keeping neighbouring values apart. Every number reads at 3:1 or more at
    every depth (:func:`readable_text`). Built on first use, cached."""
    dark, light = 0x776E65, 0xF9F6F2
    # At 16 colours the empty cells grey and the 2 white: apart by colour,
    # not by the digit only (light grey and white differ by 1.2:1, grey and
    # white by 3.9:1 or more on every common terminal palette). The grid
    # takes the light grey left over: black is 2048's and beyond's.
    grid: Tuple[int, int] = (0xBBADA0, 37)  # light grey
    empty: Tuple[int, int] = (0xCDC1B4, 90)  # dark grey
    # value: ((background, its 16-colour code), (text, its code))
    # The 16-colour backgrounds: the 13 of the 16 on which some text reads
    # at 3:1 on every common terminal palette (not 92, 94, 95), neighbours
    # apart; 2048 is as dark as the tiles beyond it (there are not enough).
    tiles: Dict[int, Tuple[Tuple[int, int], Tuple[int, int]]] = {
        2: ((0xEEE4DA, 97), (dark, 30)),
        4: ((0xEDE0C8, 93), (dark, 90)),
        8: ((0xF2B179, 33), (light, 30)),
        16: ((0xF59563, 91), (light, 97)),
        32: ((0xF67C5F, 31), (light, 97)),
        64: ((0xF65E3B, 35), (light, 97)),
        128: ((0xEDCF72, 96), (light, 30)),
        256: ((0xEDCC61, 36), (light, 30)),
        512: ((0xEDC850, 32), (light, 30)),
        1024: ((0xEDC53F, 34), (light, 97)),
        2048: ((0xEDC22E, 30), (light, 97)),
    }
    beyond: Tuple[Tuple[int, int], Tuple[int, int]] = ((0x3C3A32, 30), (light, 97))  # every tile above 2048
    # The empty cells first: they are most of the board early on.
    backgrounds = [empty[0], grid[0], *(bg[0] for bg, _ in tiles.values()), beyond[0][0]]
    ramp = [hex_rgb(bg[0]) for value, (bg, _) in tiles.items() if value in RAMP]
    xterm = separated_xterm([hex_rgb(bg) for bg in backgrounds], ramp=ramp)
    # Text that reads on every tile: the original's where it reaches 3:1,
    # else the game's own darkest or lightest colour, whichever reads best.
    inks = [Color.of(light, 97), Color.of(0xFFFFFF, 97), Color.of(dark, 30), Color.of(0x3C3A32, 30)]

    def background(spec: Tuple[int, int]) -> Color:
        return Color.of(spec[0], spec[1], xterm[hex_rgb(spec[0])])

    def pair(spec: Tuple[Tuple[int, int], Tuple[int, int]]) -> TilePair:
        tile = background(spec[0])
        return tile, readable_text(tile, Color.of(*spec[1]), inks)

    # Banners: the goal tile's gold and the 2 tile's cream, with the darkest
    # colour of the game as text (contrast 6.6:1 and 11:1; the tiles' own
    # text colours give 1.6:1 and 4.0:1), no bold (see _tile_line).
    ink = (0x3C3A32, 30)
    return Palette(
        tiles={value: pair(spec) for value, spec in tiles.items()},
        beyond=pair(beyond),
        empty=pair((empty, (dark, 30))),
        grid=background(grid),
        won=banner_colors(*pair((tiles[2048][0], ink))),
        over=banner_colors(*pair((tiles[2][0], ink))),
    )
