"""Reading the game back off an emulated screen (pyte), for the tests."""

from __future__ import annotations

import re
from typing import List, Sequence, Tuple

import pyte

from ansi2048.render.color import BASIC_RGB
from ansi2048.render.frame import Layout
from ansi2048.render.repaint import FRAME_END
from ansi2048.render.style import xterm_rgb

# What ends every frame drawn in place, as a pattern for pexpect and re.
FRAME_END_PATTERN = re.escape(FRAME_END)


def terminal(width: int, height: int) -> Tuple[pyte.Screen, pyte.Stream]:
    """An emulated terminal to feed text into, piece by piece."""
    screen = pyte.Screen(width, height)
    # A real terminal's ONLCR turns "\n" into CR+LF; LNM does that in pyte.
    screen.set_mode(pyte.modes.LNM)
    return screen, pyte.Stream(screen)


def emulate(output: bytes, width: int, height: int) -> pyte.Screen:
    """The screen a VT100 shows after ``output`` (the bytes a program wrote)."""
    screen, _ = terminal(width, height)
    pyte.ByteStream(screen).feed(output)
    return screen


def dump(display: Sequence[str]) -> str:
    return "\n".join(line.rstrip() for line in display)


def find_header(display: Sequence[str]) -> int:
    """The line of the one board's header; fails if there is not exactly one."""
    rows = [y for y, line in enumerate(display) if "Score" in line]
    assert len(rows) == 1, f"expected one board on screen, found headers on lines {rows}:\n" + dump(display)
    return rows[0]


NUMBER = re.compile(r"2\^(\d+)|\d+")


def parse_tile(text: str) -> int:
    """The value written in a tile's text: 0 for none, digits or 2^n."""
    found = list(NUMBER.finditer(text))
    if not found:
        return 0
    assert len(found) == 1, f"more than one number in tile text {text!r}"
    match = found[0]
    return 2 ** int(match.group(1)) if match.group(1) else int(match.group(0))


def read_board(display: Sequence[str], layout: Layout, rows: int, cols: int) -> List[List[int]]:
    """The tiles of the one board on screen, read back as numbers."""
    top = find_header(display)
    board = []
    for r in range(rows):
        values = []
        for c in range(cols):
            y0, x0 = layout.tile_origin(r, c)
            line = display[top + 1 + y0 + layout.number_line]
            values.append(parse_tile(line[x0 : x0 + layout.tile_width]))
        board.append(values)
    return board


def emitted_colours(line: str) -> List[Tuple[str, Tuple[int, int, int], Tuple[int, int, int]]]:
    """(character, text RGB, background RGB) of each visible character of a
    painted line, from the SGR codes actually in it."""
    out = []
    fg = bg = (-1, -1, -1)  # the terminal's default: never expected in a banner
    for match in re.finditer(r"\x1b\[([0-9;]*)m|([^\x1b])", line):
        if match.group(2) is not None:
            out.append((match.group(2), fg, bg))
            continue
        codes = [int(c) for c in match.group(1).split(";") if c]
        while codes:
            code = codes.pop(0)
            if code == 0:
                fg = bg = (-1, -1, -1)
            elif code in (38, 48):
                kind = codes.pop(0)
                if kind == 5:
                    index = codes.pop(0)
                    assert index >= 16  # the palette never picks the terminal-defined 16
                    rgb = xterm_rgb(index)
                else:
                    rgb = (codes.pop(0), codes.pop(0), codes.pop(0))
                if code == 38:
                    fg = rgb
                else:
                    bg = rgb
            elif code in BASIC_RGB:
                fg = BASIC_RGB[code]
            elif code - 10 in BASIC_RGB:
                bg = BASIC_RGB[code - 10]
    return out
