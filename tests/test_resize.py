"""Resizing the window's height: one board on screen, whatever the terminal
did with the lines above the cursor (issue 8, item 3).

tmux, xterm and VTE keep the cursor on screen when a window gets shorter by
pushing the top lines into their history, and tmux (VTE too) pulls them back
when it grows again. The emulator below does the same on top of pyte, whose
own resize just drops lines; a test in tmux itself checks the real thing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

import pyte
import pytest

from ansi2048.engine import Game
from ansi2048.keys import Action
from ansi2048.render.frame import View, frame_lines, layout_for
from ansi2048.render.repaint import Repainter
from ansi2048.render.style import ColorDepth
from ansi2048.session import Session

from .screen import dump, find_header, read_board


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


def test_no_resize_never_goes_above_the_frame() -> None:
    """The normal case: going up exactly the frame's height, never more."""
    repainter = Repainter()
    repainter.frame(["a", "b", "c"], 40, 20)
    # Up exactly two lines; then only what changed (the same length: no erasing), the last line whole.
    assert repainter.frame(["d", "e", "f"], 40, 20) == "\r\x1b[2Ad\ne\nf\x1b[K\x1b[J"
    # Shorter, then taller than the frame: no history to pull back from.
    repainter.frame(["d", "e", "f"], 40, 30)
    assert repainter.frame(["g"], 40, 30).startswith("\r\x1b[2A")


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


@pytest.mark.posix
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tmux_shrink_and_grow_leaves_one_board() -> None:
    name = f"ansi2048-test-{os.getpid()}"
    socket = ["-L", name]  # a server of its own: no interference with the user's tmux
    with tempfile.TemporaryDirectory() as data:
        command = f"ANSI2048_DATA_DIR={data} {sys.executable} -m ansi2048 --seed 1 --new"
        _tmux(*socket, "new-session", "-d", "-s", name, "-x", "100", "-y", "35", command)
        try:

            def screen() -> str:
                return _tmux(*socket, "capture-pane", "-p", "-t", name)

            _wait_for(lambda: "q quit" in screen())
            moves = 0
            for height in (12, 35, 8, 35):
                _tmux(*socket, "resize-window", "-t", name, "-x", "100", "-y", str(height))
                if height == 8:  # too small for the board: keys are ignored
                    _wait_for(lambda: "too small" in screen(), screen)
                    continue
                # Keys are ignored while "too small" is up: wait for the board.
                _wait_for(lambda: "q quit" in screen(), screen)
                _tmux(*socket, "send-keys", "-t", name, "a" if moves % 2 else "d")
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
        finally:
            subprocess.run(["tmux", *socket, "kill-server"], capture_output=True)
