"""Reading the game back off an emulated screen (pyte), for the tests."""

from __future__ import annotations

import re
from typing import List

import pyte

from ansi2048.render import Layout


def emulate(output: bytes, width: int, height: int) -> pyte.Screen:
    """The screen a VT100 shows after ``output``."""
    screen = pyte.Screen(width, height)
    # A real terminal's ONLCR turns "\n" into CR+LF; LNM does that in pyte.
    screen.set_mode(pyte.modes.LNM)
    pyte.ByteStream(screen).feed(output)
    return screen


def dump(screen: pyte.Screen) -> str:
    return "\n".join(line.rstrip() for line in screen.display)


def find_header(screen: pyte.Screen) -> int:
    """The line of the one board's header; fails if there is not exactly one."""
    rows = [y for y, line in enumerate(screen.display) if "Score" in line]
    assert len(rows) == 1, f"expected one board on screen, found headers on lines {rows}:\n" + dump(screen)
    return rows[0]


_NUMBER = re.compile(r"2\^(\d+)|\d+")


def parse_tile(text: str) -> int:
    """The value written in a tile's text: 0 for none, digits or 2^n."""
    found = list(_NUMBER.finditer(text))
    if not found:
        return 0
    assert len(found) == 1, f"more than one number in tile text {text!r}"
    match = found[0]
    return 2 ** int(match.group(1)) if match.group(1) else int(match.group(0))


def read_board(screen: pyte.Screen, layout: Layout, rows: int, cols: int) -> List[List[int]]:
    top = find_header(screen)
    board = []
    for r in range(rows):
        values = []
        for c in range(cols):
            y0, x0 = layout.tile_origin(r, c)
            line = screen.display[top + 1 + y0 + layout.number_line]
            values.append(parse_tile(line[x0 : x0 + layout.tile_width]))
        board.append(values)
    return board
