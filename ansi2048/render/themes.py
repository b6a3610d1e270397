"""Themes (pure): palettes other than the original, and the registry of all.

A theme is a :class:`~.palette.Palette` value, built on first use. Every
theme gives each colour a 24-bit value, a 256-colour index and a 16-colour
code, so it holds at every depth; the text on each tile is picked per depth
from the colour that depth actually shows (:func:`.color.shown_rgb`).

- ``classic``: the original game's colours, for light and dark terminals.
- ``dark``: for dark terminals: a dark board and empty cells, the original
  tile ramp (the two palest tiles toned down), the tiles beyond 2048 violet
  instead of near-black, which a dark board would swallow.
- ``high-contrast``: every number at 7:1 or more against its tile (WCAG AAA)
  at every depth: black or white text only, and only backgrounds that
  reach 7:1 with one of them (at 16 colours, in xterm's colours: black,
  blue, and the light colours that also read at 3:1 in every common
  terminal palette; the reds, magentas, bright yellow and green are not used).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable, Dict, Mapping, Sequence, Tuple

from .color import basic_contrast, contrast_ratio
from .palette import (
    BASIC_CODES,
    MIN_TEXT_CONTRAST,
    RAMP,
    Palette,
    TilePair,
    banner_colors,
    classic,
    hex_rgb,
    separated_xterm,
)
from .style import Color, Rgb, xterm_rgb

__all__ = ["HIGH_CONTRAST", "THEMES", "TerminalColors", "dark", "high_contrast"]

# WCAG's AAA bar for text, which the high-contrast theme keeps everywhere.
HIGH_CONTRAST = 7.0

Spec = Tuple[int, int]  # (0xRRGGBB, its 16-colour code)


@dataclass(frozen=True)
class TerminalColors:
    """The terminal a theme is meant for: default text and background, as
    0xRRGGBB; written into asciicast headers so a player shows it so."""

    fg: int
    bg: int


def _basic_text_on(background: int, codes: Sequence[int]) -> int:
    """Of the theme's text codes, the one that reads best on ``background``
    on the worst of the common terminal palettes; any of the 16 if none
    reaches MIN_TEXT_CONTRAST there."""
    best = max(codes, key=lambda code: basic_contrast(background, code))
    if basic_contrast(background, best) >= MIN_TEXT_CONTRAST:
        return best
    return max(BASIC_CODES, key=lambda code: basic_contrast(background, code))


def _text_on(background: Color, texts: Sequence[Color]) -> Color:
    """Per depth, the candidate text colour with the most contrast against
    the background that depth shows; at 16 colours, measured on the common
    terminal palettes (:func:`_basic_text_on`)."""

    def best(shown: Callable[[Color], Rgb]) -> Color:
        return max(texts, key=lambda text: contrast_ratio(shown(text), shown(background)))

    return Color(
        best(lambda c: c.rgb).rgb,
        _basic_text_on(background.basic, [text.basic for text in texts]),
        best(lambda c: xterm_rgb(c.xterm)).xterm,
    )


def _theme(
    grid: Spec,
    empty: Spec,
    tiles: Mapping[int, Spec],
    beyond: Spec,
    texts: Tuple[Spec, ...],
    min_contrast: float = 1.0,
) -> Palette:
    """A palette from background specs; the 256-colour indices are chosen
    apart from each other (``separated_xterm``) and, with ``min_contrast``,
    only among those one of ``texts`` reaches that contrast on."""
    text_colors = [Color.of(*spec) for spec in texts]

    def unreadable(rgb: Rgb, index: int) -> bool:
        shown = xterm_rgb(index)
        return max(contrast_ratio(shown, xterm_rgb(text.xterm)) for text in text_colors) < min_contrast

    backgrounds = [grid, empty, *tiles.values(), beyond]
    ramp = [hex_rgb(spec[0]) for value, spec in tiles.items() if value in RAMP]
    xterm = separated_xterm([hex_rgb(spec[0]) for spec in backgrounds], exclude=unreadable, ramp=ramp)

    def background(spec: Spec) -> Color:
        return Color.of(spec[0], spec[1], xterm[hex_rgb(spec[0])])

    def pair(spec: Spec) -> TilePair:
        bg = background(spec)
        return bg, _text_on(bg, text_colors)

    return Palette(
        tiles={value: pair(spec) for value, spec in tiles.items()},
        beyond=pair(beyond),
        empty=pair(empty),
        grid=background(grid),
        # The banners: the goal tile's colours and the 2 tile's, text as on them.
        won=banner_colors(*pair(tiles[max(tiles)])),
        over=banner_colors(*pair(tiles[min(tiles)])),
    )


@cache
def dark() -> Palette:
    """The original ramp on a dark board, for dark terminals."""
    return _theme(
        grid=(0x24211E, 30),
        empty=(0x3D3833, 90),
        tiles={
            2: (0xD8CFC4, 37),
            4: (0xD9CBAF, 97),
            8: (0xF2B179, 33),
            16: (0xF59563, 91),
            32: (0xF67C5F, 31),
            64: (0xF65E3B, 35),
            128: (0xEDCF72, 96),
            256: (0xEDCC61, 36),
            512: (0xEDC850, 32),
            1024: (0xEDC53F, 34),
            2048: (0xEDC22E, 93),
        },
        beyond=(0x7B5CD6, 35),
        texts=((0x2B2620, 30), (0xF9F6F2, 97)),
    )


@cache
def high_contrast() -> Palette:
    """Black or white numbers at 7:1 or more on every tile, at every depth."""
    return _theme(
        grid=(0x000000, 30),
        empty=(0x333333, 90),
        # 16 colours: only backgrounds where black or white reads at 7:1 in
        # xterm and 3:1 on every common palette (no reds, magentas, bright
        # yellow or green): eight of them, so values far apart share one.
        tiles={
            2: (0xF4F1EC, 97),
            4: (0xEFDDB0, 37),
            8: (0xF5B068, 33),
            16: (0xF79A5E, 96),
            32: (0xFA8662, 36),
            64: (0x8A1C00, 34),
            128: (0xF2DA70, 32),
            256: (0xEBCB4C, 97),
            512: (0xE0B930, 37),
            1024: (0xD4A50C, 33),
            2048: (0xFFD84A, 96),
        },
        beyond=(0x1A1F5C, 30),
        texts=((0x000000, 30), (0xFFFFFF, 97)),
        min_contrast=HIGH_CONTRAST,
    )


# The choices of --theme, each a builder of its palette (``options.THEME_CHOICES``
# spells the same names for --help, which must not load this module).
THEMES: Dict[str, Callable[[], Palette]] = {
    "classic": classic,
    "dark": dark,
    "high-contrast": high_contrast,
}

# The terminal each theme suits: the original game's page, a dark terminal, black.
TERMINALS: Dict[str, TerminalColors] = {
    "classic": TerminalColors(fg=0x776E65, bg=0xFAF8EF),
    "dark": TerminalColors(fg=0xE8E2D9, bg=0x1B1917),
    "high-contrast": TerminalColors(fg=0xFFFFFF, bg=0x000000),
}
