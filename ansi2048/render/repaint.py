"""Repainting in place (pure): the :class:`Repainter`, which wraps
successive frames in the control codes (:mod:`.codes`, named here too) that
redraw them in place, writing only what changed."""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple, Union

from .codes import (
    CSI,
    CURSOR_HOME,
    ERASE_DOWN,
    ERASE_LINE,
    FRAME_END,
    HIDE_CURSOR,
    SGR_RESET,
    SHOW_CURSOR,
    SYNC_BEGIN,
    SYNC_END,
    cursor_down,
    cursor_forward,
    cursor_up,
    sgr,
    visible_width,
)
from .lines import Frame, Line, changed_part, line_width, painted
from .style import ColorDepth

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
    "Repainter",
    "cursor_down",
    "cursor_forward",
    "cursor_up",
    "sgr",
    "visible_width",
]


class Repainter:
    """Builds what to write so each frame replaces the last one in place.

    Inline, like rich's live display: no alternate screen and no clearing, so
    the final board stays in the scrollback. It only remembers the height of
    the frame on screen; the caller writes each returned string in one write
    and flushes.
    """

    def __init__(self, hide_cursor: bool = True, in_place: bool = True, sync: bool = False) -> None:
        # hide_cursor is False on the legacy Windows console, where colorama
        # prints ESC[?25l literally instead of hiding the cursor. in_place is
        # False for TERM=dumb, which cannot move the cursor: frames then
        # follow each other down the screen, with no escape codes at all.
        # sync wraps each frame in synchronized output (SYNC_BEGIN/SYNC_END):
        # the caller knows whether the terminal may get it (see Screen).
        self._in_place = in_place
        self._hide_cursor = hide_cursor and in_place
        self._sync = sync and in_place
        self._hidden = False
        self._height = 0  # lines of the frame on screen; 0: none
        self._rows: Optional[int] = None  # the terminal's height when it was drawn
        # The frame on screen, for repainting only what changed: values,
        # compared as values (most lines are the very objects of the last frame).
        self._shown = _NOTHING
        self._columns: Optional[int] = None  # the terminal's width when it was drawn
        # The terminal wrapped a frame once: from then on every resize
        # clears the window (see _cleared).
        self._wrapped = False

    @property
    def shown(self) -> Frame:
        """The frame on screen (empty before the first)."""
        return self._shown

    def _widths(self) -> List[int]:
        """The visible widths of the frame's lines on screen (only a resize asks)."""
        raw = self._shown.raw
        return [line_width(line, raw) for line in self._shown.lines] or [0]

    def _reflowed(self, width: Optional[int]) -> bool:
        """Whether the terminal may have wrapped the frame on screen: the
        window is now too narrow for one of its lines. Terminals that reflow
        (tmux, VTE, iTerm2, Windows Terminal) then show it on more rows, push
        some into their history and, when the window widens or grows again,
        join and pull them back, each in its own way; those that do not
        reflow cut the lines instead."""
        return width is not None and any(w >= width for w in self._widths())

    def _cleared(self, width: Optional[int], height: Optional[int]) -> bool:
        """Whether to clear the window and draw from its top: the terminal
        may have wrapped the frame on screen or old frame lines in its
        history (which a taller window pulls back), or did once and the window has
        changed since (it may have joined and pulled back wrapped rows of an
        old frame from its history: where they land is anyone's guess)."""
        resized = (width, height) != (self._columns, self._rows)
        return self._reflowed(width) or (self._wrapped and resized)

    def frame(
        self, lines: Union[Frame, Sequence[str]], width: Optional[int] = None, height: Optional[int] = None
    ) -> str:
        """Draw ``lines`` (a :class:`~.lines.Frame`, or lines already painted);
        the cursor is then taken back to the frame's top row (:func:`_park`),
        where the next frame starts.

        Moves are relative (``\\r``, ``ESC[nA``), so they still work after the
        first frame scrolled the screen; each line erases the rest of the old
        line under it, and ``ESC[J`` what a taller frame left below. Lines
        are joined by ``\\n``: the terminal's output processing (ONLCR) makes
        that a carriage return too. ``width`` and ``height`` are the
        terminal's size, to follow what a resize did to the old frame; the
        normal case never touches the scrollback."""
        frame = lines if isinstance(lines, Frame) else Frame.of_text(lines)
        if not self._in_place:
            self._height = len(frame.lines)
            return ("\n" if self._height else "") + "\n".join(frame.text()) + "\n"
        if (
            self._height == len(frame.lines)
            and (width, height) == (self._columns, self._rows)
            and (frame.depth, frame.raw) == (self._shown.depth, self._shown.raw)
        ):
            return self._synced(self._changes(frame))
        out: List[str] = []
        if self._height and self._cleared(width, height):
            # Where the old frame's rows are now is each terminal's own
            # business: draw from the window's top (each line erases the rest
            # of its row, and FRAME_END what lies below), the one way to leave
            # exactly one board on every terminal. Never an erase-down from
            # the top-left corner: tmux (3.3 on, scroll-on-clear) takes that
            # for a clear screen and pushes the whole window into its
            # history, a board more there at every resize. The history may
            # hold rows of old frames that a taller window pulls back: later
            # resizes go up as far as the window reaches.
            out.append(CURSOR_HOME)
            self._wrapped = True
        elif self._height:
            # From the frame's top row, where the cursor waits (_park): a
            # shorter window cut the frame's bottom rows, a taller one pulled
            # rows back above it from its history; the frame starts here.
            out.append("\r")
        elif self._hide_cursor:
            out.append(HIDE_CURSOR)
            self._hidden = True
        # An empty frame (a window too small for any line) erases its row
        # first: the erase-down after it may start at the top-left corner,
        # which tmux takes for a clear screen unless the row is empty.
        out.append("\n".join(_closed(line) + ERASE_LINE for line in frame.text()) or ERASE_LINE)
        # Also clears what a taller frame left below.
        out.append(FRAME_END)
        out.append(_park(len(frame.lines)))
        # A window too small for any line (1 row, 1 column) gets an empty
        # frame: the cursor stays on the blank line where the next frame
        # starts, counted as a frame's one (empty) line so that a resize
        # still finds its way back up from it.
        self._height = max(1, len(frame.lines))
        self._shown = frame
        self._columns = width
        if height is not None:
            self._rows = height
        return self._synced("".join(out))

    def _synced(self, text: str) -> str:
        return SYNC_BEGIN + text + SYNC_END if self._sync else text

    def _changes(self, frame: Frame) -> str:
        """Repaint only the lines that differ from the frame on screen (same
        height, same terminal size): an animation frame moves a few tiles, and
        rewriting the whole board each time would triple what a move writes.
        The last line is always written, so the cursor ends where a full
        frame leaves it, before FRAME_END."""
        depth = frame.depth
        lines = frame.lines
        shown = self._shown.lines
        last = len(lines) - 1
        changed = [i for i, (was, now) in enumerate(zip(shown[:last], lines)) if was is not now and was != now]
        changed.append(last)
        out = [_next_line(changed[0])]  # from the frame's top row, where the cursor waits
        at = changed[0]
        # What turns a line into another, by the pair: a tile's blank lines
        # are one object (board.py), and their change is found once. Keyed by
        # identity: both frames hold their lines meanwhile.
        found: Dict[Tuple[int, int], str] = {}
        for index in changed:
            # Down to the next changed line by a cursor-down, never a "\n":
            # every line of the frame is already on screen, and a cursor-down
            # stops at the bottom row where "\n" would scroll. tmux resizes its
            # screen at once but tells the program (SIGWINCH) up to 250 ms
            # later: a move's frames drawn for the taller old size would scroll
            # the shorter screen, and rows of them go into tmux's history,
            # which a taller window later pulls back above the board (the
            # board would land below its place).
            if index != at:
                out.append(_next_line(index - at))
            at = index
            old, new = shown[index], lines[index]
            if index == last:
                out.append(_closed(painted(new, depth)) + ERASE_LINE)
                continue
            pair = (id(old), id(new))
            text = found.get(pair)
            if text is None:
                text = found[pair] = _line_change(old, new, depth, frame.raw)
            out.append(text)
        out.append(FRAME_END)
        out.append(_park(len(lines)))
        self._shown = frame
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
            out.append(_next_line(self._height - 1) + "\n")  # from the top row, below the frame
        self.reset()
        return "".join(out)

    def reset(self) -> None:
        """Forget the frame on screen (something else was printed after it):
        the next frame is drawn from the cursor, as the first one was."""
        self._height = 0
        self._shown = _NOTHING
        self._rows = None
        self._wrapped = False


_NOTHING = Frame((), ColorDepth.NONE)


@lru_cache(maxsize=64)
def _park(lines: int) -> str:
    """From the end of a frame of ``lines`` lines back to its top row, where
    the cursor waits for the next: a window made shorter (tmux, xterm, VTE
    keep the cursor on screen) then deletes rows below it, the frame's
    bottom ones, where with the cursor on the last row it pushed the top
    ones (the header) into the terminal's history, stray lines above the
    board for good (issue 40, item 16)."""
    return "\r" + cursor_up(lines - 1) if lines > 1 else ""


def _next_line(rows: int) -> str:
    """From a line's end to the start of the line ``rows`` below."""
    return "\r" + cursor_down(rows)


def _line_change(old: Line, new: Line, depth: ColorDepth, raw: bool) -> str:
    """What turns line ``old`` on screen into ``new``, from the line's start."""
    if raw:
        # One piece whose width is not its length: written whole, the rest
        # of the line erased only if it was wider.
        whole = _closed(painted(new, depth))
        return whole if line_width(old, True) == line_width(new, True) else whole + ERASE_LINE
    part = changed_part(old, new, depth)
    if part is None:
        return _closed(painted(new, depth)) + ERASE_LINE
    return cursor_forward(part[0]) + part[1]


def _closed(line: str) -> str:
    # ERASE_LINE fills with the current background: a line that leaves a
    # colour on would paint the rest of the row.
    if CSI in line and not line.endswith(SGR_RESET):
        return line + SGR_RESET
    return line
