"""Resizing the window's height: one board on screen, whatever the terminal
did with the lines above the cursor (issue 8, item 3).

tmux, xterm and VTE keep the cursor on screen when a window gets shorter by
pushing the top lines into their history, and tmux (VTE too) pulls them back
when it grows again. The emulator below does the same on top of pyte, whose
own resize just drops lines; a test in tmux itself checks the real thing."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pyte
import pytest
from hypothesis import example, given, settings, strategies as st

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Session
from ansi2048.render.frame import View, frame_lines, layout_for
from ansi2048.render.repaint import Repainter
from ansi2048.render.style import ColorDepth

from .conftest import process_runs
from .screen import dump, emulate, find_header, read_board


class _ScrollingScreen(pyte.Screen):  # type: ignore[misc]
    """A pyte screen that keeps the lines scrolling off its top."""

    def __init__(self, width: int, height: int, history: List[Dict[int, Any]]) -> None:
        super().__init__(width, height)
        self.history = history

    def index(self) -> None:
        top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0:
            self.history.append(self.buffer[0])
        super().index()


class HistoryTerminal:
    """A pyte screen with tmux's resize: lines pushed into a history on
    shrink (only as many as keep the cursor on screen), pulled back on grow."""

    def __init__(self, width: int, height: int) -> None:
        self.history: List[Dict[int, Any]] = []
        self.screen = _ScrollingScreen(width, height, self.history)
        self.screen.set_mode(pyte.modes.LNM)
        self.stream = pyte.Stream(self.screen)

    def feed(self, text: str) -> None:
        self.stream.feed(text)

    def resize(self, height: int) -> None:
        screen = self.screen
        rows = [screen.buffer[y] for y in range(screen.lines)]
        if height < screen.lines:
            push = max(0, screen.cursor.y - (height - 1))
            self.history.extend(rows[:push])
            rows = rows[push : push + height]
            screen.cursor.y -= push
        else:
            pull = min(len(self.history), height - screen.lines)
            if pull:
                rows = self.history[-pull:] + rows
                del self.history[-pull:]
            screen.cursor.y += pull
        screen.buffer.clear()
        for y, row in enumerate(rows):
            screen.buffer[y] = row
        screen.lines = height
        screen.set_margins()

    def scrollback(self) -> List[str]:
        width = self.screen.columns
        return ["".join(row[x].data for x in range(width)).rstrip() for row in self.history]


def draw(term: HistoryTerminal, repainter: Repainter, session: Session) -> None:
    width, height = term.screen.columns, term.screen.lines
    term.feed(repainter.frame(frame_lines(View.of(session), ColorDepth.TRUE, width, height), width, height))


@pytest.mark.parametrize(
    "heights",
    [
        [35, 12, 35],  # the report: shrink below the board, grow back
        [35, 12, 20, 35],  # grown back in two steps
        [35, 12, 14, 16, 35],  # in steps smaller than what the history holds
        [35, 6, 35],  # through "too small"
        [35, 12, 35, 10, 30, 8, 40],
        [30, 25, 12, 35, 22, 35],
    ],
)
def test_one_board_after_shrinking_and_growing(heights: List[int]) -> None:
    term = HistoryTerminal(100, heights[0])
    shell = [f"$ earlier output {i}" for i in range(40)]
    term.feed("\n".join(shell) + "\n")  # the game starts under a full screen of shell output
    session = Session(Game(seed=1))
    repainter = Repainter()
    draw(term, repainter, session)
    for height in heights[1:]:
        term.resize(height)
        draw(term, repainter, session)
        session.apply(Action.LEFT if len(heights) % 2 else Action.RIGHT)
        draw(term, repainter, session)
        display = term.screen.display
        view = View.of(session)
        layout = layout_for(view, 100, height)
        if layout is None:
            assert "too small" in dump(display) and "Score" not in dump(display)
            continue
        top = find_header(display)  # exactly one header on screen
        assert read_board(display, layout, 4, 4) == [list(row) for row in session.game.board]
        lines = frame_lines(view, ColorDepth.TRUE, 100, height)
        assert all(not line.strip() for line in display[top + len(lines) :]), dump(display)
        # Nothing but the shell's own lines above the board: no stale frame.
        assert all(line.startswith("$ earlier output") for line in display[:top]), dump(display)
    # The shell's output is all still there, in order, above the board.
    shown = [line.rstrip() for line in term.scrollback() + term.screen.display if line.startswith("$")]
    assert shown == shell


def test_frames_drawn_before_the_program_hears_of_a_resize_leave_one_board() -> None:
    """tmux resizes its screen at once but tells the program (TIOCSWINSZ, so
    SIGWINCH) only when its resize timer allows, up to 250 ms later: the
    frames of a move drawn meanwhile are for the old, taller size. Repainted
    into the shorter screen they must not scroll it, or tmux's history holds
    more lines than the repainter counted, a taller window pulls them all
    back, and the next board lands below its place, old rows above it (the
    tmux test failed so, its header on row 6 after 35 -> 8 -> 35)."""
    term = HistoryTerminal(100, 35)
    shell = [f"$ earlier output {i}" for i in range(40)]
    term.feed("\n".join(shell) + "\n")
    session = Session(Game(seed=1))
    repainter = Repainter()
    draw(term, repainter, session)
    for key in (Action.RIGHT, Action.LEFT, Action.RIGHT):
        session.apply(key)
        term.resize(8)  # tmux's screen: 8 rows; the game still reads 35
        for _ in range(3):  # the move's frames (a motion repaints the same frame height)
            term.feed(repainter.frame(frame_lines(View.of(session), ColorDepth.TRUE, 100, 35), 100, 35))
        draw(term, repainter, session)  # the SIGWINCH at last: "too small"
        assert "too small" in dump(term.screen.display)
        term.resize(35)
        draw(term, repainter, session)
        display = term.screen.display
        top = find_header(display)  # exactly one header on screen
        assert top == term.screen.cursor.y, dump(display)
        assert read_board(display, layout_for(View.of(session), 100, 35), 4, 4) == [
            list(row) for row in session.game.board
        ]
        # Nothing but the shell's own lines above the board: no rows of old frames.
        assert all(line.startswith("$ earlier output") for line in display[:top]), dump(display)


def test_no_resize_never_goes_above_the_frame() -> None:
    """The normal case: the cursor waits on the frame's top row, and the
    next frame starts there, never above."""
    repainter = Repainter()
    assert repainter.frame(["a", "b", "c"], 40, 20).endswith("\x1b[J\r\x1b[2A")  # back to the top row
    # Only what changed (the same length: no erasing), the last line whole; back up.
    assert repainter.frame(["d", "e", "f"], 40, 20) == "\rd\r\x1b[1Be\r\x1b[1Bf\x1b[K\x1b[J\r\x1b[2A"
    # Taller than the frame: no history to pull back from.
    repainter.frame(["d", "e", "f"], 40, 30)
    assert repainter.frame(["g"], 40, 30).startswith("\rg")


# -- the real thing: tmux -------------------------------------------------------------


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, encoding="utf-8").stdout


def _wait_for(condition: Callable[[], bool], screen: Callable[[], str] = str) -> None:
    """Poll until ``condition`` holds (the game redraws asynchronously)."""
    deadline = time.monotonic() + 15
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the screen never got there:\n" + screen())
        time.sleep(0.05)


class _TmuxGame:
    """The game alone in a tmux server of its own (no interference with the
    user's tmux), the pane's process the game itself (exec)."""

    def __init__(self, name: str) -> None:
        self.socket = ["-L", name]
        self.name = name

    def run(self, *args: str) -> str:
        return _tmux(*self.socket, *args)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def resize(self, width: int, height: int) -> None:
        self.run("resize-window", "-t", self.name, "-x", str(width), "-y", str(height))


@contextmanager
def _tmux_game(tmp_path: Path, name: str, height: int) -> Iterator[_TmuxGame]:
    """``ansi2048 --seed 1 --new`` in a 100 x ``height`` tmux window."""
    data = tmp_path / "data"
    command = (
        f"exec env ANSI2048_DATA_DIR={shlex.quote(str(data))} {shlex.quote(sys.executable)} -m ansi2048 --seed 1 --new"
    )
    tmux = _TmuxGame(name)
    tmux.run("new-session", "-d", "-s", name, "-x", "100", "-y", str(height), command)
    game = int(tmux.run("display-message", "-p", "-t", name, "#{pane_pid}"))
    try:
        yield tmux
    finally:
        subprocess.run(["tmux", *tmux.socket, "kill-server"], capture_output=True)
        # The server's end hangs the game up, and it saves its game and best
        # score on the way out, after kill-server has returned: the test ends
        # once it has, so that nothing of it outlives the test (a temporary
        # directory removed meanwhile failed with "Directory not empty").
        deadline = time.monotonic() + 30
        while process_runs(game) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not process_runs(game), "the game outlived its tmux server"


@pytest.mark.posix("tmux")
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tmux_shrink_and_grow_leaves_one_board(tmp_path: Path) -> None:
    with _tmux_game(tmp_path, f"ansi2048-test-{os.getpid()}", 35) as tmux:
        screen = tmux.screen
        _wait_for(lambda: "q quit" in screen())
        moves = 0
        for height in (12, 35, 8, 35):
            tmux.resize(100, height)
            if height == 8:  # too small for the board: keys are ignored
                _wait_for(lambda: "too small" in screen(), screen)
                continue
            # Keys are ignored while "too small" is up: wait for the board.
            _wait_for(lambda: "q quit" in screen(), screen)
            tmux.run("send-keys", "-t", tmux.name, "a" if moves % 2 else "d")
            moves += 1
            # The frame for this size shows the move, its keys line last.
            # (tmux may pass the new size on after the key: wait for it.)
            last = len(frame_lines(View.of(Session(Game(seed=1))), ColorDepth.NONE, 100, height)) - 1

            def drawn(moves: int = moves, last: int = last) -> bool:
                lines = screen().splitlines()
                return f"Moves {moves} " in screen() and len(lines) > last and "q quit" in lines[last]

            _wait_for(drawn, screen)
            text = screen()
            assert text.count("Score") == 1, text
            assert text.count("q quit") == 1, text
            assert text.startswith("2048 "), text  # the board's header on the top row


@pytest.mark.posix("tmux")
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tmux_resizes_leave_no_boards_in_its_history(tmp_path: Path) -> None:
    """tmux (3.3 on: scroll-on-clear) takes an erase-down written at the
    top-left corner for a clear screen and pushes the whole window into its
    history: a redraw from the top after a narrowing, or the empty frame of a
    1-row window, must never write one (each left a board there: 150 history
    lines after three narrowings, 29 more after 1 row and back)."""
    with _tmux_game(tmp_path, f"ansi2048-test-h{os.getpid()}", 32) as tmux:
        screen = tmux.screen

        def history() -> int:
            return int(tmux.run("display-message", "-p", "-t", tmux.name, "#{history_size}"))

        _wait_for(lambda: "q quit" in screen(), screen)
        tmux.run("send-keys", "-t", tmux.name, "a")
        _wait_for(lambda: "Moves 1 " in screen(), screen)
        assert history() == 0
        for width, height in ((50, 32), (100, 32)) * 3 + ((100, 1), (100, 32)):
            tmux.resize(width, height)
            time.sleep(0.4)  # tmux tells the game late; its frame follows
            if height > 1:
                _wait_for(lambda: screen().count("Score") == 1 and "q quit" in screen(), screen)
        frame_height = len(frame_lines(View.of(Session(Game(seed=1))), ColorDepth.NONE, 100, 32))
        # What tmux's own reflow pushes up at a narrowing (the wrapped header
        # rows) may stay there; never a whole board.
        assert history() < frame_height, tmux.run("capture-pane", "-p", "-S", "-1000", "-E", "-1", "-t", tmux.name)
        assert screen().count("Score") == 1


# -- any size, and storms of sizes: a terminal that reflows -------------------------


class ReflowTerminal:
    """A pyte screen resized the way tmux resizes (both ways): lines longer
    than a narrower window wrap onto more rows (and join again when it
    widens), rows pushed off the top go into a history, a taller window pulls
    them back; the cursor keeps its place in its line. An LF the program
    writes ends a line: the row it leaves no longer continues onto the next."""

    def __init__(self, width: int, height: int) -> None:
        self._continues: Dict[int, Any] = {}  # id(row) -> row: rows whose line goes on in the next
        self.history: List[Dict[int, Any]] = []
        self._open(width, height)

    def _open(self, width: int, height: int) -> None:
        continues = self._continues

        class Screen(_ScrollingScreen):
            def linefeed(self) -> None:
                continues.pop(id(self.buffer[self.cursor.y]), None)
                super().linefeed()

        self.screen = Screen(width, height, self.history)
        self.screen.set_mode(pyte.modes.LNM)
        self.stream = pyte.Stream(self.screen)

    def feed(self, text: str) -> None:
        self.stream.feed(text)

    def resize(self, width: int, height: int) -> None:
        old = self.screen
        if (width, height) == (old.columns, old.lines):
            return
        rows = self.history + [old.buffer[y] for y in range(old.lines)]
        cursor_row, cursor_x = len(self.history) + old.cursor.y, old.cursor.x
        # Rows into logical lines (cells), and the cursor's place in its line.
        lines: List[List[Any]] = []
        cursor = (0, 0)
        joining = False
        for index, row in enumerate(rows):
            cells = [row[x] for x in range(old.columns)]
            if joining:
                offset = len(lines[-1])
                lines[-1].extend(cells)
            else:
                offset = 0
                lines.append(cells)
            if index == cursor_row:
                cursor = (len(lines) - 1, offset + cursor_x)
            joining = id(row) in self._continues
        # Each line cut to the new width; a line's trailing blanks are not
        # carried (the terminal keeps no text there).
        new_rows: List[Dict[int, Any]] = []
        self._continues.clear()
        cursor_at = (0, 0)
        for number, cells in enumerate(lines):
            while cells and cells[-1].data == " " and cells[-1] == old.default_char:
                cells.pop()
            if number == cursor[0]:  # the cursor's line goes on to the cursor, text or not
                cells += [old.default_char] * (cursor[1] - len(cells))
            pieces = [cells[start : start + width] for start in range(0, len(cells), width)] or [[]]
            first = len(new_rows)
            for index, piece in enumerate(pieces):
                row = pyte.screens.StaticDefaultDict(old.default_char)
                for x, cell in enumerate(piece):
                    row[x] = cell
                if index < len(pieces) - 1:
                    self._continues[id(row)] = row
                new_rows.append(row)
            if number == cursor[0]:
                piece = min(cursor[1] // width, len(pieces) - 1)
                cursor_at = (first + piece, min(cursor[1] - piece * width, width - 1))
        # The screen, as tmux places it: the cursor keeps its row, moved
        # down by what a taller window pulls back from the history (as far
        # as there is any) and up only as far as a shorter one needs.
        cursor_y = min(old.cursor.y + max(0, height - old.lines), cursor_at[0], height - 1)
        top = cursor_at[0] - cursor_y
        del new_rows[top + height :]
        self.history[:] = new_rows[:top]
        self._open(width, height)
        for y, row in enumerate(new_rows[top:]):
            self.screen.buffer[y] = row
        self.screen.cursor.y, self.screen.cursor.x = cursor_at[0] - top, cursor_at[1]

    def texts(self) -> List[str]:
        width = self.screen.columns
        return ["".join(row[x].data for x in range(width)).rstrip() for row in self.history] + [
            line.rstrip() for line in self.screen.display
        ]


SHELL = [f"$ earlier output {i}" for i in range(30)]


def _storm(sizes: List[Tuple[int, int]], depth: ColorDepth, keys: str) -> None:
    """Draw the game through a storm of sizes, a key between some of them;
    after each frame the screen must show exactly that frame and nothing of
    any earlier one (the shell's lines above it stay, in order)."""
    width, height = sizes[0]
    term = ReflowTerminal(width, height)
    term.feed("\n".join(SHELL) + "\n")
    session = Session(Game(seed=3))
    repainter = Repainter()
    for step, (width, height) in enumerate(sizes):
        term.resize(width, height)
        if keys[step % len(keys)] != ".":
            session.apply(Action(keys[step % len(keys)]))
        view = View.of(session)
        lines = frame_lines(view, depth, width, height)
        assert len(lines) <= max(0, height - 1)
        term.feed(repainter.frame(lines, width, height))
        expected = [line.rstrip() for line in emulate("\n".join(lines).encode(), width, height).display]
        display = [line.rstrip() for line in term.screen.display]
        # The frame starts on the cursor's row (it waits on the frame's top
        # row between frames); below the frame: blank.
        top = term.screen.cursor.y
        bottom = top + (len(lines) - 1) if lines else top
        assert top >= 0, (width, height, dump(display))
        if lines:
            assert display[top : bottom + 1] == expected[: len(lines)], (width, height, dump(display))
        assert not any(display[bottom + 1 :]) and not (not lines and display[bottom]), dump(display)
        # Above it on screen, no stale board: no header, no key line. (Rows
        # the window pushed into the history stay there, as in any terminal;
        # in a window too small for the board, wrapped scraps of an old frame
        # may come back, like the shell's own lines.)
        above = "\n".join(display[:top])
        assert "Score" not in above and "quit" not in above, (width, height, dump(display))


@pytest.mark.parametrize("depth", [ColorDepth.NONE, ColorDepth.TRUE])
def test_every_small_size_and_back(depth: ColorDepth) -> None:
    """Sizes from 1x1 to 12x12 after a board, then the board again."""
    for width in (1, 2, 3, 5, 8, 12):
        for height in (1, 2, 3, 5, 8, 12):
            _storm([(100, 35), (width, height), (100, 35), (width, height), (width, height)], depth, "a.d..")


@example(sizes=[(79, 2), (57, 27)], depth=ColorDepth.NONE, keys="a")  # old lines rewrapped in the history
@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 110), st.integers(1, 40)), min_size=1, max_size=12),
    depth=st.sampled_from([ColorDepth.NONE, ColorDepth.BASIC, ColorDepth.TRUE]),
    keys=st.text(alphabet="wasdu.", min_size=1, max_size=8),
)
def test_a_storm_of_sizes_leaves_exactly_the_last_frame(
    sizes: List[Tuple[int, int]], depth: ColorDepth, keys: str
) -> None:
    _storm([(90, 35), *sizes], depth, keys)


@pytest.mark.posix("tmux")
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tmux_made_smaller_keeps_no_header_in_its_history(tmp_path: Path) -> None:
    """160x50 to 100x30 (issue 40, item 16): tmux keeps the cursor on screen
    by pushing the rows above it into its history. The cursor waits on the
    frame's top row, so the frame's bottom rows go instead of its header,
    which stayed in the scrollback above the board for good. A storm of
    sizes after it leaves none there either."""
    with _tmux_game(tmp_path, f"ansi2048-test-s{os.getpid()}", 30) as tmux:
        screen = tmux.screen

        def scrollback() -> str:
            held = int(tmux.run("display-message", "-p", "-t", tmux.name, "#{history_size}"))
            # (-E -1 with an empty history would show the screen's first row.)
            return tmux.run("capture-pane", "-p", "-S", f"-{held}", "-E", "-1", "-t", tmux.name) if held else ""

        _wait_for(lambda: "q quit" in screen(), screen)
        tmux.resize(160, 50)
        time.sleep(0.4)  # tmux tells the game late; its frame follows
        tmux.run("send-keys", "-t", tmux.name, "a")
        _wait_for(lambda: "Moves 1 " in screen() and screen().count("Score") == 1, screen)
        for width, height in ((100, 30), (140, 44), (90, 26), (120, 40), (100, 30)):
            tmux.resize(width, height)
            time.sleep(0.4)
            _wait_for(lambda: screen().count("Score") == 1 and "q quit" in screen(), screen)
        assert "Score" not in scrollback(), scrollback()
        assert screen().count("Score") == 1
