"""Repainting in place (pure): the control codes, named once, and the
:class:`Repainter` that wraps successive frames in them."""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

__all__ = [
    "CSI",
    "CURSOR_HOME",
    "ERASE_DOWN",
    "ERASE_LINE",
    "FRAME_END",
    "HIDE_CURSOR",
    "SGR_RESET",
    "SHOW_CURSOR",
    "Repainter",
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


def cursor_up(rows: int) -> str:
    """Move the cursor ``rows`` lines up (nothing for 0)."""
    return f"{CSI}{rows}A" if rows > 0 else ""


def cursor_forward(columns: int) -> str:
    """Move the cursor ``columns`` to the right (nothing for 0)."""
    return f"{CSI}{columns}C" if columns > 0 else ""


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


class Repainter:
    """Builds what to write so each frame replaces the last one in place.

    Inline, like rich's live display: no alternate screen and no clearing, so
    the final board stays in the scrollback. It only remembers the height of
    the frame on screen; the caller writes each returned string in one write
    and flushes.
    """

    def __init__(self, hide_cursor: bool = True, in_place: bool = True) -> None:
        # hide_cursor is False on the legacy Windows console, where colorama
        # prints ESC[?25l literally instead of hiding the cursor. in_place is
        # False for TERM=dumb, which cannot move the cursor: frames then
        # follow each other down the screen, with no escape codes at all.
        self._in_place = in_place
        self._hide_cursor = hide_cursor and in_place
        self._hidden = False
        self._height = 0  # lines of the frame on screen; 0: none
        self._widths: List[int] = []  # their visible widths, for a resize
        self._rows: Optional[int] = None  # the terminal's height when it was drawn
        # Lines of earlier frames that a shorter window pushed into the
        # terminal's history (at most; see _rows_up): a taller window brings
        # them back above the frame on screen.
        self._stale = 0
        self._lines: List[str] = []  # the frame on screen, for repainting only what changed
        self._columns: Optional[int] = None  # the terminal's width when it was drawn
        self._stale_width = 0  # the widest line of those stale frames
        # The terminal wrapped a frame once: from then on every resize
        # clears the window (see _cleared).
        self._wrapped = False

    def _rows_up(self, width: Optional[int], height: Optional[int]) -> int:
        """How far up to go from the frame's last line to erase it, on a
        terminal now ``width`` x ``height``.

        When the window gets shorter than the frame on screen, the terminal
        (tmux, xterm, VTE) keeps the cursor on screen by pushing the lines
        at the top into its history: the frame's top lines go there, the
        cursor-up stops at the top row, and the new frame is drawn from it.
        When the window grows again, the terminal pulls lines back from its
        history, the most recent first: those stale frame lines come back
        above the frame, so the way up must cover them too. A terminal that
        pulls nothing back just stops the cursor-up at the top row."""
        up = self._height - 1
        if height is not None and self._rows is not None:
            if height > self._rows:
                back = min(self._stale, height - self._rows)
                self._stale -= back
                up += back
            # Rows that no longer fit above the cursor went into the history.
            pushed = max(0, up + 1 - height)
            if pushed:
                self._stale += pushed
                self._stale_width = max(self._stale_width, *self._widths)
        return up

    def _reflowed(self, width: Optional[int]) -> bool:
        """Whether the terminal may have wrapped the frame on screen: the
        window is now too narrow for one of its lines. Terminals that reflow
        (tmux, VTE, iTerm2, Windows Terminal) then show it on more rows, push
        some into their history and, when the window widens or grows again,
        join and pull them back, each in its own way; those that do not
        reflow cut the lines instead."""
        return width is not None and any(w >= width for w in self._widths)

    def _cleared(self, width: Optional[int], height: Optional[int]) -> bool:
        """Whether to clear the window and draw from its top: the terminal
        may have wrapped the frame on screen or old frame lines in its
        history (which a taller window pulls back), or did once and the window has
        changed since (it may have joined and pulled back wrapped rows of an
        old frame from its history: where they land is anyone's guess)."""
        resized = (width, height) != (self._columns, self._rows)
        # Old frame lines the window pushed into the history wrap there too.
        history_wraps = bool(self._stale) and width is not None and self._stale_width >= width
        return self._reflowed(width) or history_wraps or (self._wrapped and resized)

    def frame(self, lines: Sequence[str], width: Optional[int] = None, height: Optional[int] = None) -> str:
        """Draw ``lines``; the cursor is left at the end of the last one.

        Going back up is relative (``\\r`` then ``ESC[nA``), so it still works
        after the first frame scrolled the screen; each line then erases the
        rest of the old line under it, and ``ESC[J`` what a taller frame left
        below. Lines are joined by ``\\n``: the terminal's output processing
        (ONLCR) makes that a carriage return too. ``width`` and ``height``
        are the terminal's size, to follow what a resize did to the old frame
        (see ``_rows_up``); the normal case never touches the scrollback."""
        if not self._in_place:
            self._height = len(lines)
            return ("\n" if self._height else "") + "\n".join(lines) + "\n"
        if self._height == len(lines) and (width, height) == (self._columns, self._rows):
            return self._changes(lines)
        out: List[str] = []
        if self._height and self._cleared(width, height):
            # Where the old frame's rows are now is each terminal's own
            # business: clear the window (not its history) and draw from its
            # top, the one way to leave exactly one board on every terminal.
            # The history may hold rows of old frames that a taller window
            # pulls back: later resizes go up as far as the window reaches.
            out.append(CURSOR_HOME + ERASE_DOWN)
            self._wrapped = True
        elif self._height:
            out.append("\r")
            up = self._rows_up(width, height)
            out.append(cursor_up(up))
        elif self._hide_cursor:
            out.append(HIDE_CURSOR)
            self._hidden = True
        out.append("\n".join(_closed(line) + ERASE_LINE for line in lines))
        # Also clears what a taller frame left below.
        out.append(FRAME_END)
        # A window too small for any line (1 row, 1 column) gets an empty
        # frame: the cursor stays on the blank line where the next frame
        # starts, counted as a frame's one (empty) line so that a resize
        # still finds its way back up from it.
        self._height = max(1, len(lines))
        self._widths = [visible_width(line) for line in lines] or [0]
        self._lines = list(lines)
        self._columns = width
        if height is not None:
            self._rows = height
        return "".join(out)

    def _changes(self, lines: Sequence[str]) -> str:
        """Repaint only the lines that differ from the frame on screen (same
        height, same terminal size): an animation frame moves a few tiles, and
        rewriting the whole board each time would triple what a move writes.
        The last line is always written, so the cursor ends where a full
        frame leaves it, before FRAME_END."""
        last = len(lines) - 1
        changed = [i for i, (old, new) in enumerate(zip(self._lines, lines)) if old != new and i != last]
        changed.append(last)
        out = ["\r", cursor_up(last - changed[0])]
        at = changed[0]
        for index in changed:
            if index == at + 1:
                out.append("\n")  # the next line, as a full frame goes (ONLCR)
            elif index != at:
                out.append("\r" + cursor_down(index - at))
            at = index
            if index == last:
                out.append(_closed(lines[index]) + ERASE_LINE)
            else:
                out.append(_changed_part(self._lines[index], lines[index]))
        out.append(FRAME_END)
        self._lines = list(lines)
        self._widths = [visible_width(line) for line in lines]
        return "".join(out)

    def close(self) -> str:
        """What to write at exit: reset colours, show the cursor again, and
        end the frame's last line so the shell prompt comes below the board."""
        if not self._in_place:
            self.reset()
            return ""
        out = [SGR_RESET]
        if self._hidden:
            out.append(SHOW_CURSOR)
            self._hidden = False
        if self._height:
            out.append("\n")
        self.reset()
        return "".join(out)

    def reset(self) -> None:
        """Forget the frame on screen (something else was printed after it):
        the next frame is drawn from the cursor, as the first one was."""
        self._height = 0
        self._widths = []
        self._lines = []
        self._rows = None
        self._stale = 0
        self._stale_width = 0
        self._wrapped = False


# One SGR sequence, its parameters captured.
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_Pen = Tuple[bool, bool, Optional[str], Optional[str]]  # bold, underline, text colour, background
_PLAIN_PEN: _Pen = (False, False, None, None)


def _pens(line: str) -> List[Tuple[_Pen, str]]:
    """Each visible column of a painted line: the style it is drawn in (as
    the SGR codes set it) and its character. Only SGR sequences occur in
    frame lines."""
    cells: List[Tuple[_Pen, str]] = []
    bold, underline, fg, bg = _PLAIN_PEN
    at = 0
    for match in _SGR.finditer(line):
        cells += [((bold, underline, fg, bg), char) for char in line[at : match.start()]]
        at = match.end()
        codes = match.group(1).split(";")
        i = 0
        while i < len(codes):
            code = int(codes[i] or 0)
            if code in (38, 48):
                size = 5 if codes[i + 1] == "2" else 3
                value = ";".join(codes[i : i + size])
                fg, bg = (value, bg) if code == 38 else (fg, value)
                i += size
                continue
            if code == 0:
                bold, underline, fg, bg = _PLAIN_PEN
            elif code == 1:
                bold = True
            elif code == 4:
                underline = True
            elif 30 <= code <= 37 or 90 <= code <= 97:
                fg = str(code)
            elif 40 <= code <= 47 or 100 <= code <= 107:
                bg = str(code)
            i += 1
    cells += [((bold, underline, fg, bg), char) for char in line[at:]]
    return cells


def _pen_sgr(pen: _Pen) -> str:
    bold, underline, fg, bg = pen
    codes = ["0"] + (["1"] if bold else []) + (["4"] if underline else []) + [c for c in (fg, bg) if c]
    return sgr(codes)


def _changed_part(old: str, new: str) -> str:
    """What turns line ``old`` on screen into ``new``, the cursor at its
    start: the columns from the first that differs to the last, the cursor
    moved over the rest. A frame of motion changes a few tiles of a line,
    and the whole line costs ~300 bytes at 24-bit colour."""
    before, after = _pens(old), _pens(new)
    if len(before) != len(after):
        return _closed(new) + ERASE_LINE
    differ = [x for x, (a, b) in enumerate(zip(before, after)) if a != b]
    if not differ:
        return ""
    first, last = differ[0], differ[-1]
    out = [cursor_forward(first)]
    pen = _PLAIN_PEN  # every line written is left with its colours reset
    for style_now, char in after[first : last + 1]:
        if style_now != pen:
            out.append(_pen_sgr(style_now))
            pen = style_now
        out.append(char)
    if pen != _PLAIN_PEN:
        out.append(SGR_RESET)
    return "".join(out)


def _closed(line: str) -> str:
    # ERASE_LINE fills with the current background: a line that leaves a
    # colour on would paint the rest of the row.
    if CSI in line and not line.endswith(SGR_RESET):
        return line + SGR_RESET
    return line
