"""The tile colours (pure): the original game's palette, with a hand-picked
16-colour code and a 256-colour index chosen for every colour.

A :class:`Palette` is a value: the frame builder asks it for a tile's
colours and never names a colour itself, so another palette (a theme) is
another value of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable, Dict, FrozenSet, List, Mapping, Sequence, Tuple

from .style import Color, Rgb, nearest_xterm256, rgb_distance, xterm_rgb

__all__ = ["Palette", "TilePair", "classic", "hex_rgb", "separated_xterm"]

TilePair = Tuple[Color, Color]  # (background, text)


@dataclass(frozen=True, eq=False)
class Palette:
    """Colours of the board: ``tiles`` by value, ``beyond`` for every larger
    tile, the empty cell and the grid between tiles. Compared and hashed by
    identity (its mapping is not hashable), so frame caches can key on it."""

    tiles: Mapping[int, TilePair]
    beyond: TilePair
    empty: TilePair
    grid: Color

    def tile(self, value: int) -> TilePair:
        """(background, text) of a tile; 0 is the empty cell."""
        if not value:
            return self.empty
        return self.tiles.get(value, self.beyond)

    @property
    def goal(self) -> TilePair:
        """The colours of the biggest listed tile: the win banner's."""
        return self.tiles[max(self.tiles)]


# Squared RGB distance the board's 256-colour backgrounds keep from each
# other (30): two steps of the grey ramp, so the grid and the empty cells
# never land on neighbouring greys; any two cube colours are further apart.
_MIN_SEPARATION = 30**2


def separated_xterm(
    colors: Sequence[Rgb], exclude: Callable[[Rgb, int], bool] = lambda rgb, index: False
) -> Dict[Rgb, int]:
    """256-colour indices for ``colors``, in order: each the nearest one that
    keeps clear of those already taken. Plain nearest maps 256, 512 and 1024
    (near-identical yellows) to one colour, and the grid and the empty cells
    to greys one step apart; distinct things should look distinct.
    ``exclude(rgb, index)`` rules out more indices for a colour (a theme
    that must keep its text readable on whichever index is picked)."""
    taken: List[int] = []
    table: Dict[Rgb, int] = {}
    for rgb in colors:
        crowded: FrozenSet[int] = frozenset(
            i for i in range(16, 256) if any(rgb_distance(xterm_rgb(i), xterm_rgb(t)) < _MIN_SEPARATION for t in taken)
        )
        ruled_out = frozenset(i for i in range(16, 256) if exclude(rgb, i))
        index = nearest_xterm256(rgb, crowded | frozenset(taken) | ruled_out)
        table[rgb] = index
        taken.append(index)
    return table


def hex_rgb(value: int) -> Rgb:
    """``0xRRGGBB`` as an (r, g, b) triple."""
    return ((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF)


@cache
def classic() -> Palette:
    """The original game's colours (gabrielecirulli/2048). The 16-colour pick
    keeps neighbouring values apart: light backgrounds take black text, dark
    ones bright white. Built on first use: the 256-colour search takes ~10 ms."""
    dark, light = 0x776E65, 0xF9F6F2
    grid: Tuple[int, int] = (0xBBADA0, 90)  # dark grey
    empty: Tuple[int, int] = (0xCDC1B4, 37)  # light grey
    # value: ((background, its 16-colour code), (text, its code))
    tiles: Dict[int, Tuple[Tuple[int, int], Tuple[int, int]]] = {
        2: ((0xEEE4DA, 97), (dark, 30)),
        4: ((0xEDE0C8, 93), (dark, 30)),
        8: ((0xF2B179, 33), (light, 97)),
        16: ((0xF59563, 91), (light, 30)),
        32: ((0xF67C5F, 31), (light, 97)),
        64: ((0xF65E3B, 35), (light, 97)),
        128: ((0xEDCF72, 95), (light, 30)),
        256: ((0xEDCC61, 96), (light, 30)),
        512: ((0xEDC850, 36), (light, 97)),
        1024: ((0xEDC53F, 94), (light, 97)),
        2048: ((0xEDC22E, 92), (light, 30)),
    }
    beyond: Tuple[Tuple[int, int], Tuple[int, int]] = ((0x3C3A32, 30), (light, 97))  # every tile above 2048
    backgrounds = [grid[0], empty[0], *(bg[0] for bg, _ in tiles.values()), beyond[0][0]]
    xterm = separated_xterm([hex_rgb(bg) for bg in backgrounds])

    def background(spec: Tuple[int, int]) -> Color:
        return Color.of(spec[0], spec[1], xterm[hex_rgb(spec[0])])

    def pair(spec: Tuple[Tuple[int, int], Tuple[int, int]]) -> TilePair:
        return background(spec[0]), Color.of(*spec[1])

    return Palette(
        tiles={value: pair(spec) for value, spec in tiles.items()},
        beyond=pair(beyond),
        empty=pair((empty, (dark, 30))),
        grid=background(grid),
    )
