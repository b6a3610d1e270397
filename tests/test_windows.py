"""The Windows console path, without Windows: a fake ``msvcrt`` and a fake
console model what the C runtime and the console do (checked against a real
Windows CPython under Wine, ``scripts/wine_console_probe.py``), and
colorama's legacy-console conversion is checked to receive only what it
converts."""

from __future__ import annotations

import io
import re
import sys
import types
from collections import deque
from typing import ContextManager, Deque, Dict, Iterator, List, Optional, Tuple, Union

import pytest

from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.terminal import windows as windows_console
from ansi2048.terminal.console import Console, ScreenHooks
from ansi2048.terminal.windows import ENABLE_PROCESSED_INPUT, ENABLE_VIRTUAL_TERMINAL_PROCESSING

# What colorama's AnsiToWin32 converts on a legacy console (colorama 0.4.6's ansitowin32.py).
_CONVERTIBLE_SGR = {0, 1, 2, 22, 39, 49, *range(30, 38), *range(40, 48), *range(90, 98), *range(100, 108)}
_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")

# The console's own defaults (conhost): processed, line and echo input, and more.
DEFAULT_INPUT_MODE = 0x1F7
DEFAULT_OUTPUT_MODE = 0x3
# A key without a character: getwch's prefix and the scan code.
Extended = Tuple[str, str]
UP, DOWN, LEFT, RIGHT = ("\xe0", "H"), ("\xe0", "P"), ("\xe0", "K"), ("\xe0", "M")
F1 = ("\x00", ";")


class FakeConsole(windows_console.ConsoleModes):
    """The console's modes. A legacy console (before Windows 10) refuses VT processing."""

    def __init__(self, legacy: bool = False) -> None:
        self.legacy = legacy
        self.modes: Dict[str, int] = {"input": DEFAULT_INPUT_MODE, "output": DEFAULT_OUTPUT_MODE}
        self.opened = 0
        self.closed = 0

    def __call__(self) -> FakeConsole:  # opening it, as open_console does
        self.opened += 1
        return self

    def get(self, which: str) -> Optional[int]:
        return self.modes[which]

    def set(self, which: str, mode: int) -> bool:
        if which == "output" and self.legacy and mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING:
            return False
        self.modes[which] = mode
        return True

    def close(self) -> None:
        self.closed += 1


class FakeMsvcrt(types.ModuleType):
    """The C runtime's console keys, as the UCRT (and Wine's) implement them.

    The console holds key presses: a character, or a key without one.
    ``getwch`` returns a character, or for a key without one a prefix now and
    its scan code on the next call, kept meanwhile in a one-character
    push-back that ``ungetwch`` fills too (and refuses to fill twice) and that
    ``kbhit`` does not look at. With processed input on (the console's
    default), Ctrl-C is no key: it raises KeyboardInterrupt in whatever the
    program is doing, here the ``kbhit`` poll. ``wine`` models Wine's
    ``kbhit``, which does not see keys without a character."""

    def __init__(self, console: FakeConsole, wine: bool = False) -> None:
        super().__init__("msvcrt")
        self.console = console
        self.wine = wine
        self.pending: Deque[Union[str, Extended]] = deque()
        self.pushed_back: Optional[str] = None

    def type(self, *keys: Union[str, Extended]) -> None:
        """Keys pressed: each str is characters, each tuple a key without one."""
        for key in keys:
            self.pending.extend([key] if isinstance(key, tuple) else list(key))

    def _interrupt(self) -> None:
        if self.pending and self.pending[0] == "\x03" and self.console.modes["input"] & ENABLE_PROCESSED_INPUT:
            self.pending.popleft()
            raise KeyboardInterrupt

    def kbhit(self) -> bool:
        self._interrupt()
        return any(isinstance(key, str) or not self.wine for key in self.pending)

    def getwch(self) -> str:
        if self.pushed_back is not None:
            char, self.pushed_back = self.pushed_back, None
            return char
        self._interrupt()
        if not self.pending:
            raise AssertionError("getwch would block: no key is waiting")
        key = self.pending.popleft()
        if isinstance(key, tuple):
            prefix, self.pushed_back = key
            return prefix
        return key

    def ungetwch(self, char: str) -> None:
        if self.pushed_back is not None:
            raise OSError(0, "the push-back is full")
        self.pushed_back = char

    @property
    def idle(self) -> bool:
        return not self.pending and self.pushed_back is None


HOOKS = ScreenHooks(redraw=lambda: None, leave=lambda: None)


@pytest.fixture
def console() -> FakeConsole:
    return FakeConsole()


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch, console: FakeConsole) -> Iterator[FakeMsvcrt]:
    fake = FakeMsvcrt(console)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    yield fake


def session(console: FakeConsole, hooks: ScreenHooks = HOOKS) -> ContextManager[Console]:
    return windows_console.open_console(io.StringIO(), io.StringIO(), hooks, modes=console)


def read_all(console: Console, fake: FakeMsvcrt) -> List[Action]:
    decoder = KeyDecoder(comments=False)
    actions: List[Action] = []
    while not fake.idle:
        actions += console.read_actions(decoder)
    return actions


def test_console_keys_map_to_the_same_actions(windows: FakeMsvcrt, console: FakeConsole) -> None:
    windows.type(UP, DOWN, ("\x00", "K"), ("\x00", "M"), "wasdhjkl", F1, "uRq\x03")
    with session(console) as game:
        actions = read_all(game, windows)
    assert actions == [
        Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT,
        Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT,
        Action.LEFT, Action.DOWN, Action.UP, Action.RIGHT,
        Action.UNDO, Action.RESTART, Action.QUIT, Action.QUIT,
    ]  # fmt: skip


def test_typed_ahead_keys_come_in_one_batch(windows: FakeMsvcrt, console: FakeConsole) -> None:
    windows.type("wasd", LEFT, "wasd")
    with session(console) as game:
        first = game.read_actions(KeyDecoder(comments=False))
    assert len(first) == 9


def test_a_typed_a_grave_is_a_key_and_takes_nothing_with_it(windows: FakeMsvcrt, console: FakeConsole) -> None:
    # On AZERTY, à is a key of its own: getwch gives 0xE0, as it does for an
    # arrow's prefix. It must not swallow the key after it.
    windows.type("à", "w", "à")
    with session(console) as game:
        actions = read_all(game, windows)
    assert actions == [Action.UP]
    assert windows.idle


def test_a_grave_then_a_letter_that_is_also_a_scan_code_is_two_keys(windows: FakeMsvcrt, console: FakeConsole) -> None:
    windows.type("àK", LEFT)  # K is the left arrow's scan code, and vim's up key
    with session(console) as game:
        assert read_all(game, windows) == [Action.UP, Action.LEFT]


def test_the_arrow_scan_code_is_read_even_when_kbhit_does_not_see_it(windows: FakeMsvcrt, console: FakeConsole) -> None:
    windows.type(RIGHT)
    with session(console) as game:
        assert game.read_actions(KeyDecoder(comments=False)) == [Action.RIGHT]
    assert windows.idle


def test_a_lone_esc_does_not_eat_the_next_key(windows: FakeMsvcrt, console: FakeConsole) -> None:
    # The console sends no escape sequences: Esc, then "[" and "A" typed, are
    # three keys (A is a's capital: left), not the up arrow's ESC [ A.
    windows.type("\x1b", "[", "w", "\x1b", "O", "a", "\x1b", "[A", "d")
    with session(console) as game:
        assert read_all(game, windows) == [Action.UP, Action.LEFT, Action.LEFT, Action.RIGHT]


def test_ctrl_c_is_a_key_that_quits_and_the_input_mode_comes_back(windows: FakeMsvcrt, console: FakeConsole) -> None:
    windows.type("w\x03")
    with session(console) as game:
        assert not console.modes["input"] & ENABLE_PROCESSED_INPUT
        assert read_all(game, windows) == [Action.UP, Action.QUIT]
    assert console.modes == {"input": DEFAULT_INPUT_MODE, "output": DEFAULT_OUTPUT_MODE}
    assert console.closed == 1


def test_the_console_modes_come_back_when_the_session_fails(windows: FakeMsvcrt, console: FakeConsole) -> None:
    with pytest.raises(RuntimeError), session(console):
        assert console.modes["output"] & ENABLE_VIRTUAL_TERMINAL_PROCESSING
        raise RuntimeError("the game failed")
    assert console.modes == {"input": DEFAULT_INPUT_MODE, "output": DEFAULT_OUTPUT_MODE}
    assert console.closed == 1


def test_a_console_with_vt_processing_is_not_legacy(windows: FakeMsvcrt, console: FakeConsole) -> None:
    with session(console) as game:
        assert not game.legacy


@pytest.mark.parametrize("legacy", [False, True])
def test_every_console_opened_in_one_process_says_truly_whether_it_is_legacy(windows: FakeMsvcrt, legacy: bool) -> None:
    console = FakeConsole(legacy=legacy)
    for _ in range(3):
        with session(console) as game:
            assert game.legacy is legacy
        assert console.modes == {"input": DEFAULT_INPUT_MODE, "output": DEFAULT_OUTPUT_MODE}


def test_a_resize_redraws_and_returns_to_the_loop(
    windows: FakeMsvcrt, console: FakeConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = deque([(80, 24), (80, 24), (100, 30)])  # the window is resized at the second poll
    monkeypatch.setattr(windows_console, "terminal_size", lambda fd: sizes.popleft() if len(sizes) > 1 else sizes[0])
    monkeypatch.setattr(windows_console, "_POLL_INTERVAL", 0.001)
    redraws: List[Tuple[int, int]] = []
    hooks = ScreenHooks(redraw=lambda: redraws.append(sizes[0]), leave=lambda: None)
    with session(console, hooks) as game:
        assert game.read_actions(KeyDecoder(comments=False)) == []
        assert redraws == [(100, 30)]
        windows.type("a")
        assert game.read_actions(KeyDecoder(comments=False)) == [Action.LEFT]
    assert redraws == [(100, 30)]


def test_key_ready_waits_for_a_key_and_says_whether_one_came(
    windows: FakeMsvcrt, console: FakeConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [0.0]
    slept: List[float] = []
    typed: List[str] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds
        if now[0] >= 0.02 and not typed:
            typed.append("s")
            windows.type("s")  # typed 20 ms into the wait

    import time

    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "sleep", sleep)
    with session(console) as game:
        assert game.key_ready is not None
        assert game.key_ready(0.05)
        assert 0.02 <= now[0] < 0.05
        assert game.read_actions(KeyDecoder(comments=False)) == [Action.DOWN]
        slept.clear()
        assert not game.key_ready(0.012)
        assert now[0] >= 0.032 and sum(slept) == pytest.approx(0.012)


def test_legacy_console_frames_hold_only_what_colorama_converts(
    windows: FakeMsvcrt, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ansi2048.game.engine import Game
    from ansi2048.game.session import Session
    from ansi2048.options.context import Options
    from ansi2048.play.screen import Screen, color_depth
    from ansi2048.render.frame import View

    written = io.StringIO()
    wrapped: List[object] = []

    def converter(stream: object) -> io.StringIO:
        # colorama converts the escapes to console calls; the stand-in keeps
        # what the game writes to it, before conversion.
        wrapped.append(stream)
        return written

    monkeypatch.setattr(windows_console, "_legacy_writer", converter)
    legacy_console = FakeConsole(legacy=True)
    with session(legacy_console) as game:
        assert game.legacy and wrapped == [sys.stdout]
        depth = color_depth(Options(color="always"), written, {"COLORTERM": "truecolor"}, legacy=True)
        screen = Screen(game.write, lambda: (80, 30), depth, {}, legacy=game.legacy)
        play = Session(Game(seed=4))
        for direction in ("left", "up", "right", "down") * 10:
            play.game.move(direction)
            screen.paint(View.of(play))
        screen.close()
    output = written.getvalue()
    assert "\x1b[" in output  # it is coloured
    for params, final in _CSI.findall(output):
        assert final in "mABCKJ", f"ESC[{params}{final} is not converted by colorama"
        assert "?" not in params
        if final == "m":
            codes = {int(code or 0) for code in params.split(";")}
            assert codes <= _CONVERTIBLE_SGR, params


def test_the_fake_console_interrupts_like_the_real_one_with_processed_input(console: FakeConsole) -> None:
    # The old console session's bug, as the fake models it: with processed
    # input on, Ctrl-C never reaches getwch.
    fake = FakeMsvcrt(console)
    fake.type("\x03")
    with pytest.raises(KeyboardInterrupt):
        fake.kbhit()
    assert fake.idle


def test_wines_console_is_legacy_though_it_takes_vt_processing(windows: FakeMsvcrt) -> None:
    # Wine 8's console accepts VT processing and still shows escape codes as text.
    wine = FakeConsole()
    wine.renders_escapes = False
    with session(wine) as game:
        assert game.legacy
        assert not wine.modes["output"] & ENABLE_VIRTUAL_TERMINAL_PROCESSING
    assert wine.modes == {"input": DEFAULT_INPUT_MODE, "output": DEFAULT_OUTPUT_MODE}


class StubbornConsole(FakeConsole):
    """A console that keeps its input mode: Ctrl-C stays a signal."""

    def set(self, which: str, mode: int) -> bool:
        return which != "input" and super().set(which, mode)


def test_ctrl_c_still_quits_where_the_console_keeps_processed_input(monkeypatch: pytest.MonkeyPatch) -> None:
    console = StubbornConsole()
    fake = FakeMsvcrt(console)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    decoder = KeyDecoder(comments=False)
    with session(console) as game:
        fake.type("w\x03")
        assert game.read_actions(decoder) == [Action.UP, Action.QUIT]
        fake.type("\x03")
        assert game.key_ready is not None and game.key_ready(1.0)  # the interrupt is something to read
        assert game.read_actions(decoder) == [Action.QUIT]
    assert console.modes["input"] == DEFAULT_INPUT_MODE


def test_under_wines_kbhit_an_arrow_is_read_when_another_key_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    console = FakeConsole()
    fake = FakeMsvcrt(console, wine=True)  # Wine's kbhit does not see keys without a character
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    fake.type(LEFT)
    assert not fake.kbhit()
    fake.type("s")
    with session(console) as game:
        assert game.read_actions(KeyDecoder(comments=False)) == [Action.LEFT, Action.DOWN]


# -- the console's logic on its own: everything it touches passed in ----------------


class Clock:
    """Time that passes only by sleeping, and keys typed at given times."""

    def __init__(self, fake: FakeMsvcrt, typed_at: Dict[float, str]) -> None:
        self.now = 0.0
        self.fake = fake
        self.typed_at = dict(typed_at)
        self.slept: List[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        for when in [when for when in self.typed_at if when <= self.now]:
            self.fake.type(self.typed_at.pop(when))


def bare_console(
    fake: FakeMsvcrt, clock: Clock, sizes: List[Tuple[int, int]], redraws: List[str]
) -> windows_console.WindowsConsole:
    hooks = ScreenHooks(redraw=lambda: redraws.append("redraw"), leave=lambda: None)
    return windows_console.WindowsConsole(
        fake, hooks, io.StringIO(), size=lambda: sizes[0], sleep=clock.sleep, clock=lambda: clock.now
    )


def test_the_console_polls_for_keys_and_a_resized_window_between_them(console: FakeConsole) -> None:
    fake = FakeMsvcrt(console)
    clock = Clock(fake, {0.2: "w"})
    sizes: List[Tuple[int, int]] = [(80, 24)]
    redraws: List[str] = []
    game = bare_console(fake, clock, sizes, redraws)
    decoder = KeyDecoder(comments=False)
    assert game.read_actions(decoder) == [Action.UP]  # polled until the key came
    assert redraws == [] and clock.now == pytest.approx(0.2)
    sizes[0] = (120, 40)
    assert game.read_actions(decoder) == [] and redraws == ["redraw"]  # the next poll saw the new size
    assert not game.resized()  # and only once
    fake.type("sd")
    assert game.read_actions(decoder) == [Action.DOWN, Action.RIGHT]  # every key typed ahead, at once


def test_key_ready_polls_well_under_a_frame_and_a_ctrl_c_there_is_read_as_quit() -> None:
    console = StubbornConsole()  # processed input stays on: Ctrl-C raises KeyboardInterrupt
    fake = FakeMsvcrt(console)
    clock = Clock(fake, {0.03: "\x03"})
    game = bare_console(fake, clock, [(80, 24)], [])
    assert not game.key_ready(0.02)
    assert max(clock.slept) <= 0.005 and sum(clock.slept) == pytest.approx(0.02)
    assert game.key_ready(1.0)  # the interrupt came in the wait: something to read
    assert game.interrupted and clock.now < 0.05
    assert game.read_actions(KeyDecoder(comments=False)) == [Action.QUIT]
    assert not game.interrupted
