"""The Windows console path, without Windows: a fake ``msvcrt`` feeds
readchar's own Windows reader, and colorama's legacy-console wrapping is
simulated to check that frames then hold only what colorama converts."""

from __future__ import annotations

import importlib
import io
import re
import sys
import types
from collections import deque
from typing import Deque, Iterator, List

import colorama
import pytest
import readchar

from ansi2048.keys import Action, KeyDecoder
from ansi2048.terminal import windows as windows_console
from ansi2048.terminal.console import Console, ScreenHooks

# What colorama's AnsiToWin32 converts on a legacy console (colorama 0.4.6's ansitowin32.py).
_CONVERTIBLE_SGR = {0, 1, 2, 22, 39, 49, *range(30, 38), *range(40, 48), *range(90, 98), *range(100, 108)}
_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


HOOKS = ScreenHooks(redraw=lambda: None, leave=lambda: None)


class FakeMsvcrt(types.ModuleType):
    """The part of msvcrt readchar and ansi2048 use: a queue of wide chars."""

    def __init__(self, keys: str) -> None:
        super().__init__("msvcrt")
        self.pending: Deque[str] = deque(keys)

    def kbhit(self) -> bool:
        return bool(self.pending)

    def getwch(self) -> str:
        return self.pending.popleft()


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMsvcrt]:
    fake = FakeMsvcrt("")
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    win_read = importlib.import_module("readchar._win_read")
    win_read = importlib.reload(win_read)  # bind it to the fake msvcrt
    monkeypatch.setattr(readchar, "readkey", win_read.readkey)
    monkeypatch.setattr(readchar, "key", importlib.import_module("readchar._win_key"))
    yield fake


def read_all(console: Console, fake: FakeMsvcrt) -> List[Action]:
    decoder = KeyDecoder(comments=False)
    actions: List[Action] = []
    while fake.pending:
        actions += console.read_actions(decoder)
    return actions


def test_console_keys_map_to_the_same_actions(windows: FakeMsvcrt) -> None:
    # Arrows come from getwch as a 0x00 or 0xE0 prefix and a scan code.
    windows.pending.extend("\x00H\xe0P\x00K\x00Mwasdhjkl\x00;uRq\x03")
    with windows_console.open_console(io.StringIO(), io.StringIO(), HOOKS) as console:
        actions = read_all(console, windows)
    assert actions == [
        Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT,
        Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT,
        Action.LEFT, Action.DOWN, Action.UP, Action.RIGHT,
        Action.UNDO, Action.RESTART, Action.QUIT, Action.QUIT,
    ]  # fmt: skip


def test_typed_ahead_keys_come_in_one_batch(windows: FakeMsvcrt) -> None:
    windows.pending.extend("wasdwasd")
    with windows_console.open_console(io.StringIO(), io.StringIO(), HOOKS) as console:
        first = console.read_actions(KeyDecoder(comments=False))
    assert len(first) == 8


def test_legacy_console_frames_hold_only_what_colorama_converts(
    windows: FakeMsvcrt, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ansi2048.context import Options
    from ansi2048.engine import Game
    from ansi2048.screen import Screen, color_depth
    from ansi2048.session import Session

    written = io.StringIO()

    def wrap_like_a_legacy_console() -> None:
        # colorama replaces sys.stdout when it has to convert escapes itself;
        # the stand-in keeps what the game writes to it, before conversion.
        sys.stdout = written

    monkeypatch.setattr(colorama, "just_fix_windows_console", wrap_like_a_legacy_console)
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    with windows_console.open_console(io.StringIO(), io.StringIO(), HOOKS) as console:
        assert console.legacy
        depth = color_depth(Options(color="always"), written, {"COLORTERM": "truecolor"}, legacy=True)
        screen = Screen(console.write, lambda: (80, 30), depth, {}, legacy=console.legacy)
        session = Session(Game(seed=4))
        for direction in ("left", "up", "right", "down") * 10:
            session.game.move(direction)
            screen.show(session)
        screen.close()
    output = written.getvalue()
    assert "\x1b[" in output  # it is coloured
    for params, final in _CSI.findall(output):
        assert final in "mABCKJ", f"ESC[{params}{final} is not converted by colorama"
        assert "?" not in params
        if final == "m":
            codes = {int(code or 0) for code in params.split(";")}
            assert codes <= _CONVERTIBLE_SGR, params
