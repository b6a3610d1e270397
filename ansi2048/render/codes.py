"""The control codes a frame is written with, named once (pure): SGR,
cursor moves, erasing, private modes. Here, apart from the repainter, so
that styles (which write SGR) and the repainter (which writes frames of
styled lines) can both use them."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

__all__ = [
    "CSI",
    "CURSOR_HOME",
    "ERASE_DOWN",
    "ERASE_LINE",
    "FRAME_END",
    "HIDE_CURSOR",
    "SGR_RESET",
    "SHOW_CURSOR",
    "SYNC_BEGIN",
    "SYNC_END",
    "cursor_down",
    "cursor_forward",
    "cursor_up",
    "sgr",
    "visible_width",
]

CSI = "\x1b["  # Control Sequence Introducer: every code below starts with it
SGR_RESET = CSI + "0m"
ERASE_LINE = CSI + "K"  # from the cursor to the end of the line
ERASE_DOWN = CSI + "J"  # from the cursor to the end of the screen
HIDE_CURSOR = CSI + "?25l"
SHOW_CURSOR = CSI + "?25h"
CURSOR_HOME = CSI + "H"  # the window's top-left corner
# Every frame drawn in place ends with this (its lines end with ERASE_LINE),
# so a reader of the output (the pty tests, the benchmarks) can tell that a
# frame is complete without depending on what its last line says.
FRAME_END = ERASE_DOWN
# Synchronized output (DEC private mode 2026): a terminal that knows it holds
# back what comes between the two and shows it at once, so a frame that
# reaches it in two reads (or two SSH packets) is never shown half drawn.
SYNC_BEGIN = CSI + "?2026h"
SYNC_END = CSI + "?2026l"


@lru_cache(maxsize=256)  # a repaint moves the cursor a few times a line
def cursor_up(rows: int) -> str:
    """Move the cursor ``rows`` lines up (nothing for 0)."""
    return f"{CSI}{rows}A" if rows > 0 else ""


@lru_cache(maxsize=256)  # a repaint moves the cursor a few times a line
def cursor_forward(columns: int) -> str:
    """Move the cursor ``columns`` to the right (nothing for 0)."""
    return f"{CSI}{columns}C" if columns > 0 else ""


@lru_cache(maxsize=256)  # a repaint moves the cursor a few times a line
def cursor_down(rows: int) -> str:
    """Move the cursor ``rows`` lines down, never scrolling (nothing for 0)."""
    return f"{CSI}{rows}B" if rows > 0 else ""


def sgr(codes: Sequence[str]) -> str:
    """Select Graphic Rendition: one sequence setting all of ``codes``."""
    return CSI + ";".join(codes) + "m"


# CSI sequences (SGR, cursor moves, private modes) and two-byte escapes.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def visible_width(text: str) -> int:
    """Columns ``text`` takes on screen: its length without escape sequences.

    Exact because the renderer only emits single-width glyphs."""
    return len(_ESCAPE.sub("", text))
