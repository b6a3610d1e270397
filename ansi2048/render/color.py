"""Colour science for the palette (pure): perceptual distance and contrast.

- CIELAB and CIEDE2000 (Sharma, Wu, Dalal 2005): how different two colours
  look, used to pick the 256-colour index nearest to each original colour.
- WCAG 2 relative luminance and contrast ratio: whether text is readable on
  its tile, computed from the colour each depth actually puts on screen.

Written out rather than taken from a library: the formulas are short, fixed
by their standards, and the project takes no run-time dependency for them.
"""

from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

from .style import Color, ColorDepth, Rgb, nearest_xterm256, xterm_rgb

__all__ = [
    "BASIC_RGB",
    "TERMINAL_PALETTES",
    "Lab",
    "basic_contrast",
    "contrast_ratio",
    "delta_e",
    "lab",
    "mix",
    "relative_luminance",
    "shown_rgb",
]

Lab = Tuple[float, float, float]

# The 16 basic colours as xterm shows them by default, keyed by their SGR
# foreground code. Terminals differ here (it is their theme); xterm's
# defaults stand for "a typical terminal" in the contrast figures.
BASIC_RGB = {
    30: (0, 0, 0),
    31: (205, 0, 0),
    32: (0, 205, 0),
    33: (205, 205, 0),
    34: (0, 0, 238),
    35: (205, 0, 205),
    36: (0, 205, 205),
    37: (229, 229, 229),
    90: (127, 127, 127),
    91: (255, 0, 0),
    92: (0, 255, 0),
    93: (255, 255, 0),
    94: (92, 92, 255),
    95: (255, 0, 255),
    96: (0, 255, 255),
    97: (255, 255, 255),
}


# The 16 colours as the common terminals show them by default, keyed by SGR
# foreground code: the 16-colour picks must read on each (a terminal's theme
# decides these, and they differ a lot: Solarized's "bright" colours are its
# greys). Published defaults of each terminal or scheme.
_CODES = (30, 31, 32, 33, 34, 35, 36, 37, 90, 91, 92, 93, 94, 95, 96, 97)


def _table(*hex_values: int) -> Dict[int, Rgb]:
    return {code: ((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF) for code, value in zip(_CODES, hex_values)}


TERMINAL_PALETTES: Dict[str, Dict[int, Rgb]] = {
    "xterm": dict(BASIC_RGB),
    "Tango (GNOME)": _table(
        0x2E3436, 0xCC0000, 0x4E9A06, 0xC4A000, 0x3465A4, 0x75507B, 0x06989A, 0xD3D7CF,
        0x555753, 0xEF2929, 0x8AE234, 0xFCE94F, 0x729FCF, 0xAD7FA8, 0x34E2E2, 0xEEEEEC,
    ),
    "Windows Campbell": _table(
        0x0C0C0C, 0xC50F1F, 0x13A10E, 0xC19C00, 0x0037DA, 0x881798, 0x3A96DD, 0xCCCCCC,
        0x767676, 0xE74856, 0x16C60C, 0xF9F1A5, 0x3B78FF, 0xB4009E, 0x61D6D6, 0xF2F2F2,
    ),
    "macOS Terminal.app": _table(
        0x000000, 0x990000, 0x00A600, 0x999900, 0x0000B2, 0xB200B2, 0x00A6B2, 0xBFBFBF,
        0x666666, 0xE50000, 0x00D900, 0xE5E500, 0x0000FF, 0xE500E5, 0x00E5E5, 0xE5E5E5,
    ),
    "Solarized": _table(
        0x073642, 0xDC322F, 0x859900, 0xB58900, 0x268BD2, 0xD33682, 0x2AA198, 0xEEE8D5,
        0x002B36, 0xCB4B16, 0x586E75, 0x657B83, 0x839496, 0x6C71C4, 0x93A1A1, 0xFDF6E3,
    ),
}  # fmt: skip


def basic_contrast(background: int, text: int) -> float:
    """The lowest contrast of 16-colour ``text`` on ``background`` (SGR
    foreground codes) over the common terminals' palettes."""
    return min(contrast_ratio(table[background], table[text]) for table in TERMINAL_PALETTES.values())


def shown_rgb(color: Color, depth: ColorDepth) -> Optional[Rgb]:
    """The colour ``depth`` puts on screen for ``color`` (None: no colour)."""
    if depth is ColorDepth.TRUE:
        return color.rgb
    if depth is ColorDepth.EXTENDED:
        return xterm_rgb(color.xterm)
    if depth is ColorDepth.BASIC:
        return BASIC_RGB[color.basic]
    return None


def _linear(channel: int) -> float:
    value = channel / 255
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def relative_luminance(rgb: Rgb) -> float:
    """WCAG 2: the luminance of an sRGB colour, 0 (black) to 1 (white)."""
    r, g, b = (_linear(channel) for channel in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: Rgb, b: Rgb) -> float:
    """WCAG 2 contrast ratio, 1 to 21; 4.5 is its bar for body text, 3 for large."""
    la, lb = relative_luminance(a), relative_luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def lab(rgb: Rgb) -> Lab:
    """CIELAB (D65 white) of an sRGB colour."""
    r, g, b = (_linear(channel) for channel in rgb)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = f(x), f(y), f(z)
    return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))


def delta_e(first: Lab, second: Lab) -> float:
    """CIEDE2000 colour difference: about 1 is just noticeable, above 10 is
    clearly another colour."""
    l1, a1, b1 = first
    l2, a2, b2 = second
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl = l2 - l1
    dc = c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    elif abs(h2p - h1p) <= 180:
        dh = h2p - h1p
    elif h2p - h1p > 180:
        dh = h2p - h1p - 360
    else:
        dh = h2p - h1p + 360
    dhh = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_mean = (l1 + l2) / 2
    cp_mean = (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        h_mean = (h1p + h2p + 360) / 2
    else:
        h_mean = (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_mean - 30))
        + 0.24 * math.cos(math.radians(2 * h_mean))
        + 0.32 * math.cos(math.radians(3 * h_mean + 6))
        - 0.20 * math.cos(math.radians(4 * h_mean - 63))
    )
    d_theta = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    rc = 2 * math.sqrt(cp_mean**7 / (cp_mean**7 + 25**7))
    sl = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    sc = 1 + 0.045 * cp_mean
    sh = 1 + 0.015 * cp_mean * t
    rt = -math.sin(math.radians(2 * d_theta)) * rc
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))


def mix(first: Color, second: Color, amount: float) -> Color:
    """``first`` moved ``amount`` (0 to 1) of the way to ``second``: the
    24-bit colour blended, its nearest 256-colour stand-in, and the 16-colour
    code of whichever end it is nearer (16 colours cannot blend)."""
    rgb = (
        round(first.rgb[0] + (second.rgb[0] - first.rgb[0]) * amount),
        round(first.rgb[1] + (second.rgb[1] - first.rgb[1]) * amount),
        round(first.rgb[2] + (second.rgb[2] - first.rgb[2]) * amount),
    )
    return Color(rgb, first.basic if amount < 0.5 else second.basic, nearest_xterm256(rgb))
