"""Colour depths, colours and text styles (pure).

A :class:`Color` knows how to be drawn at every depth: its 24-bit value, the
xterm 256-colour index the palette chose for it, and a 16-colour SGR code.
Text is built as spans, ``(text, Style)`` pairs, and painted into one string
with SGR codes only where the style changes.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache
from itertools import groupby
from operator import itemgetter
from typing import FrozenSet, List, Mapping, Optional, Sequence, Tuple

from .codes import SGR_RESET, sgr

__all__ = [
    "BOLD",
    "PLAIN",
    "Color",
    "ColorDepth",
    "Rgb",
    "Span",
    "Style",
    "choose_depth",
    "fit",
    "fit_text",
    "merge_spans",
    "nearest_xterm256",
    "paint",
    "printable",
    "rgb_distance",
    "shorter_wordings",
    "span_width",
    "style",
    "xterm_rgb",
]

Rgb = Tuple[int, int, int]


class ColorDepth(Enum):
    """How many colours the terminal shows. Values order the depths, so a
    depth can be capped (the legacy Windows console takes at most BASIC)."""

    NONE = 0  # no escape codes at all
    BASIC = 1  # SGR 30-37, 40-47, 90-97, 100-107: what colorama converts
    EXTENDED = 2  # xterm 256 colours (38;5;n)
    TRUE = 3  # 24-bit (38;2;r;g;b)

    # Hashed by identity (members are singletons): Enum's own __hash__ is
    # Python code, and a depth is in the key of every cache a frame looks up.
    __hash__ = object.__hash__


_MODES = ("auto", "always", "never")


def choose_depth(mode: str, is_tty: bool, env: Mapping[str, str], legacy_console: bool = False) -> ColorDepth:
    """The colour depth for ``--color mode`` on a stream.

    ``auto`` gives colour only to a terminal, and honours ``NO_COLOR`` (any
    non-empty value) and ``TERM=dumb``. ``always`` is the user asking
    explicitly, so it overrides those, still taking the depth from the hints:
    ``COLORTERM=truecolor|24bit`` (or Windows Terminal's ``WT_SESSION``) ->
    TRUE, ``TERM=*256color*`` -> EXTENDED,
    otherwise BASIC, the depth every ANSI terminal has. ``legacy_console``
    (colorama had to wrap the stream) caps the depth at BASIC, because
    colorama garbles 256-colour and 24-bit codes there.
    """
    if mode not in _MODES:
        raise ValueError(f"color mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if mode == "never":
        return ColorDepth.NONE
    term = env.get("TERM", "")
    if mode == "auto" and (not is_tty or env.get("NO_COLOR") or term == "dumb"):
        return ColorDepth.NONE
    # Windows Terminal sets WT_SESSION, not COLORTERM, and has 24-bit colour.
    if env.get("COLORTERM", "").lower() in ("truecolor", "24bit") or env.get("WT_SESSION"):
        depth = ColorDepth.TRUE
    elif "256color" in term:
        depth = ColorDepth.EXTENDED
    else:
        depth = ColorDepth.BASIC
    if legacy_console and depth.value > ColorDepth.BASIC.value:
        depth = ColorDepth.BASIC
    return depth


# -- 256 colours ----------------------------------------------------------------

# The xterm 256-colour palette beyond the 16 system colours (whose actual
# colours vary by terminal, so they are never chosen): a 6x6x6 cube at these
# channel levels (index 16 + 36r + 6g + b), then a 24-step grey ramp (index
# 232 + i, level 8 + 10i).
_CUBE_LEVELS = (0, 95, 135, 175, 215, 255)
_GREY_LEVELS = tuple(8 + 10 * i for i in range(24))


def xterm_rgb(index: int) -> Rgb:
    """The colour of xterm 256-colour ``index`` (16-255)."""
    if index >= 232:
        level = 8 + 10 * (index - 232)
        return (level, level, level)
    r, rest = divmod(index - 16, 36)
    g, b = divmod(rest, 6)
    return (_CUBE_LEVELS[r], _CUBE_LEVELS[g], _CUBE_LEVELS[b])


def rgb_distance(a: Rgb, b: Rgb) -> int:
    """Squared distance in RGB space."""
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2


def _nearest_level(value: int, levels: Sequence[int]) -> int:
    # The first of equally near levels: the lower one, which keeps ties on the
    # lowest palette index, like a brute-force min over the indices would.
    return min(range(len(levels)), key=lambda i: abs(levels[i] - value))


def nearest_xterm256(rgb: Rgb, exclude: FrozenSet[int] = frozenset()) -> int:
    """The xterm colour index (16-255) nearest to ``rgb`` in RGB space,
    skipping the indices in ``exclude``; ties go to the lowest index.

    Without exclusions it is computed, not searched: squared distance is a sum
    over channels, so the nearest cube colour takes the nearest level per
    channel, and the nearest grey is the ramp level nearest the channel mean.
    """
    if exclude:
        candidates = [i for i in range(16, 256) if i not in exclude]
        if not candidates:
            raise ValueError("every colour is excluded")
        return min(candidates, key=lambda i: rgb_distance(rgb, xterm_rgb(i)))
    r, g, b = (_nearest_level(channel, _CUBE_LEVELS) for channel in rgb)
    cube = 16 + 36 * r + 6 * g + b
    # sum((c - g)^2) over the channels is (3g - sum(c))^2 / 3 + a constant.
    total = sum(rgb)
    grey = 232 + min(range(len(_GREY_LEVELS)), key=lambda i: abs(3 * _GREY_LEVELS[i] - total))
    return cube if rgb_distance(rgb, xterm_rgb(cube)) <= rgb_distance(rgb, xterm_rgb(grey)) else grey


# -- colours and styles -----------------------------------------------------------


@dataclass(frozen=True)
class Color:
    """One colour at every depth: ``rgb`` for 24-bit, ``xterm`` (16-255) for
    256 colours, ``basic`` the 16-colour SGR foreground code (30-37, 90-97;
    +10 as a background). The palette picks ``xterm`` and ``basic``: plain
    "nearest" would turn distinct tiles into one colour."""

    rgb: Rgb
    basic: int
    xterm: int

    @classmethod
    def of(cls, hex_rgb: int, basic: int, xterm: Optional[int] = None) -> Color:
        """From ``0xRRGGBB``; ``xterm`` defaults to the nearest 256-colour index."""
        rgb = ((hex_rgb >> 16) & 0xFF, (hex_rgb >> 8) & 0xFF, hex_rgb & 0xFF)
        return cls(rgb, basic, nearest_xterm256(rgb) if xterm is None else xterm)


@dataclass(frozen=True, eq=False)
class Style:
    """A text style. Made only through :func:`style`, which returns one object
    per distinct style, so styles compare and hash by identity: a field-wise
    dataclass ``__eq__`` per span was most of a frame's cost."""

    fg: Optional[Color] = None
    bg: Optional[Color] = None
    bold: bool = False
    underline: bool = False


def style(fg: Optional[Color] = None, bg: Optional[Color] = None, bold: bool = False, underline: bool = False) -> Style:
    """The one :class:`Style` object with these attributes."""
    # Positional into the cache, so every spelling of a style is one entry.
    return _interned_style(fg, bg, bold, underline)


@cache
def _interned_style(fg: Optional[Color], bg: Optional[Color], bold: bool, underline: bool) -> Style:
    return Style(fg, bg, bold, underline)


PLAIN = style()
BOLD = style(bold=True)

# SGR sequences of a few palettes' styles (bounded, as .lines says why);
# the styles themselves are interned for good: identity is their equality.
_SGR_CACHED = 4096


@lru_cache(maxsize=_SGR_CACHED)
def _sgr(style: Style, depth: ColorDepth) -> str:
    """One complete SGR sequence for ``style``: it starts from a reset, so
    no attribute leaks from the span before it."""
    codes = ["0"]
    if style.bold:
        codes.append("1")
    # Underline (4) is not among what colorama converts: BASIC goes without.
    if style.underline and depth is not ColorDepth.BASIC:
        codes.append("4")
    for color, base in ((style.fg, 38), (style.bg, 48)):
        if color is not None:
            codes.append(_color_code(color, base, depth))
    return sgr(codes)


def _color_code(color: Color, base: int, depth: ColorDepth) -> str:
    """The SGR parameters for ``color`` as text (``base`` 38) or background (48)."""
    if depth is ColorDepth.TRUE:
        return "{};2;{};{};{}".format(base, *color.rgb)
    if depth is ColorDepth.EXTENDED:
        return f"{base};5;{color.xterm}"
    return str(color.basic + (10 if base == 48 else 0))


@lru_cache(maxsize=_SGR_CACHED)
def _change(before: Style, after: Style, depth: ColorDepth) -> str:
    """The shortest SGR from ``before`` to ``after``: only what differs when
    nothing needs turning off, else the complete sequence from a reset. A
    24-bit colour code is ~20 bytes, and a frame changes style ~100 times:
    repeating what did not change was a third of what a frame wrote."""
    turned_off = (before.bold and not after.bold) or (before.underline and not after.underline)
    if before is PLAIN or turned_off or (before.fg and not after.fg) or (before.bg and not after.bg):
        return _sgr(after, depth)
    codes = []
    if after.bold and not before.bold:
        codes.append("1")
    if after.underline and not before.underline and depth is not ColorDepth.BASIC:
        codes.append("4")
    for old, new, base in ((before.fg, after.fg, 38), (before.bg, after.bg, 48)):
        if new is not None and new != old:
            codes.append(_color_code(new, base, depth))
    return sgr(codes) if codes else ""


# -- spans ------------------------------------------------------------------------

Span = Tuple[str, Style]


def paint(spans: Sequence[Span], depth: ColorDepth) -> str:
    """Spans as text: SGR only where the style changes, and a reset at the end
    so ERASE_LINE after the line clears with the default background."""
    if depth is ColorDepth.NONE:
        return "".join(text for text, _ in spans)
    out: List[str] = []
    current = PLAIN
    for text, span_style in spans:
        if not text:
            continue
        if span_style is not current:  # styles are interned: identity is equality
            out.append(_change(current, span_style, depth))
            current = span_style
        out.append(text)
    if current is not PLAIN:
        out.append(SGR_RESET)
    return "".join(out)


# Controls, formats, surrogates, combining marks, line and paragraph separators.
_ZERO_WIDTH = frozenset(("Cc", "Cf", "Cs", "Mn", "Me", "Zl", "Zp"))


def _unprintable(char: str) -> bool:
    return unicodedata.category(char) in _ZERO_WIDTH or unicodedata.east_asian_width(char) in ("W", "F")


def printable(text: str) -> str:
    """``text`` with anything that is not one printing, single-width column
    (control codes, combining marks, wide characters) replaced by '?', so a
    note cannot break the line-width arithmetic."""
    return "".join("?" if _unprintable(char) else char for char in text)


def span_width(spans: Sequence[Span]) -> int:
    return sum(len(text) for text, _ in spans)


def fit(variants: Sequence[Sequence[Span]], limit: int) -> List[Span]:
    """The first variant (longest first) that fits in ``limit`` columns, else
    the last one cut to fit: at a space, so no word is ever cut in two (what
    does not fit is left off whole)."""
    for spans in variants:
        if span_width(spans) <= limit:
            return list(spans)
    text = "".join(part for part, _ in variants[-1])
    cut = text[: limit + 1].rfind(" ") if limit > 0 else -1
    keep = len(text[:cut].rstrip()) if cut > 0 else 0
    out: List[Span] = []
    for part, span_style in variants[-1]:
        if keep <= 0:
            break
        out.append((part[:keep], span_style))
        keep -= len(part[:keep])
    return out


def fit_text(variants: Sequence[str], limit: int) -> str:
    """:func:`fit` for plain words: the first of ``variants`` that fits in
    ``limit`` columns, else the last cut at a space."""
    return "".join(text for text, _ in fit([[(text, PLAIN)] for text in variants], limit))


def shorter_wordings(text: str) -> List[str]:
    """``text``, then shorter wordings of it that still say whole things:
    its last aside in parentheses left off, then its clauses after "; " one
    by one from the end. A narrow window gets the longest that fits rather
    than a line cut mid-clause ("…; b: the" said nothing)."""
    wordings = [text]
    while True:
        last = wordings[-1]
        if last.endswith(")") and " (" in last:
            shorter = last[: last.rindex(" (")]
        elif "; " in last:
            shorter = last[: last.rindex("; ")]
        else:
            return wordings
        wordings.append(shorter)


def merge_spans(cells: Sequence[Span]) -> List[Span]:
    """Neighbouring spans of one style joined into one (styles are
    interned: equal is identical)."""
    return [("".join(text for text, _ in run), span_style) for span_style, run in groupby(cells, key=itemgetter(1))]
