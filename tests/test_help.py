"""The help screen on '?', and the short key line that offers it."""

from __future__ import annotations

from pathlib import Path

from ansi2048.engine import Game
from ansi2048.render.frame import BIG, View, frame_lines, help_lines
from ansi2048.render.style import ColorDepth
from ansi2048.session import Status

from .conftest import json_lines, run_cli
from .screen import emulate, read_board
from .test_animation import run, screens


def test_question_mark_shows_help_and_any_key_closes_it_unplayed(tmp_path: Path) -> None:
    console = run(tmp_path, [(1.0, b"?"), (2.0, b"a"), (3.0, b"q")], animation=False)
    shown = screens(console)
    helped = [display for time, display in shown if 101.0 <= time < 102.0]
    assert helped and any("any key closes this help" in line for line in helped[-1])
    assert any("undo" in line for line in helped[-1]) and any("Make the 2048 tile" in line for line in helped[-1])
    # The key that closed it was not played: the board is the starting one.
    after = [display for time, display in shown if 102.0 <= time < 103.0][-1]
    assert not any("closes this help" in line for line in after)
    assert read_board(after, BIG, 4, 4) == [list(row) for row in Game(seed=21).board]


def test_help_fits_any_terminal_and_always_says_how_to_close() -> None:
    for width, height in [(80, 30), (60, 20), (40, 10), (20, 4), (10, 3)]:
        for depth in ColorDepth:
            lines = help_lines(2048, depth, width, height)
            screen = emulate("\n".join(lines).encode(), width, height)
            assert len(lines) <= height - 1
            text = "\n".join(screen.display)
            assert "any key closes" in text or width < 25, (width, height)
    assert len(help_lines(2048, ColorDepth.NONE, 80, 30)) > 15  # room: every section


def test_the_key_line_offers_help() -> None:
    view = View(Game(seed=1).board, None, 0, 0, 0, 2048, 1, Status.PLAYING)
    for width in (100, 60, 45, 30):
        keys = frame_lines(view, ColorDepth.NONE, width, 40)[-1]
        assert "? help" in keys or width < 30, (width, keys)


def test_piped_keys_never_open_help() -> None:
    events = json_lines(run_cli(["--json", "--seed", "5"], b"?a?").stdout)
    assert [event["action"] for event in events] == ["start", "left"]
