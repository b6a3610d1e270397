"""The Windows console: keys read with ``msvcrt.getwch``, the console's modes
set through kernel32 for the session and put back on every exit, escape codes
written as they are (VT processing) or converted by colorama (the legacy
console). The platform modules are imported inside the functions, so this
module imports anywhere (the tests run it with a fake ``msvcrt`` and a fake
console)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..game.keys import Action, KeyDecoder
from .console import Console, ScreenHooks
from .streams import terminal_size

__all__ = [
    "ENABLE_PROCESSED_INPUT",
    "ENABLE_VIRTUAL_TERMINAL_PROCESSING",
    "ConsoleModes",
    "KeyReader",
    "WindowsConsole",
    "open_console",
    "open_terminal_output",
    "quiet_terminal",
    "under_wine",
]

# How often the console loop wakes to notice a resized window.
_POLL_INTERVAL = 0.05
# How often a wait for a key during an animation looks: well under a frame.
_KEY_POLL = 0.005

# Console input mode: the console itself handles Ctrl-C (it raises
# KeyboardInterrupt wherever the program happens to be) instead of passing it on.
ENABLE_PROCESSED_INPUT = 0x0001
# Console output mode: the console interprets escape codes (Windows 10 and later).
ENABLE_VIRTUAL_TERMINAL_PROCESSING = 0x0004

# The C runtime's getwch gives a key without a character (an arrow) as two
# calls: a prefix, 0x00 or 0xE0, then the key's scan code. Read here rather
# than with readchar.readkey, whose Windows reader takes every 0xE0 for that
# prefix (so AZERTY's à swallowed the next key) and raises KeyboardInterrupt
# for Ctrl-C: both measured in wineconsole (scripts/wine_console_probe.py)
# and tested in tests/test_windows.py. (A lone Esc is not among its faults
# here: on Windows readkey returns it at once; it is readchar's POSIX reader
# that blocks on Esc for a second byte, readchar issue #94.)
_PREFIXES = ("\x00", "\xe0")
_ARROWS = {"H": Action.UP, "P": Action.DOWN, "K": Action.LEFT, "M": Action.RIGHT}


if sys.platform == "win32":

    def _kernel32() -> Any:
        """kernel32, with the signatures of the console calls used here."""
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateFileW.restype = wintypes.HANDLE
        kernel32.CreateFileW.argtypes = [
            wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, wintypes.LPVOID,
            wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE,
        ]  # fmt: skip
        kernel32.GetConsoleMode.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD)]
        kernel32.SetConsoleMode.argtypes = [wintypes.HANDLE, wintypes.DWORD]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
        return kernel32

    def under_wine() -> bool:
        """This Windows is Wine: its ntdll exports ``wine_get_version``."""
        import ctypes

        try:
            return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")
        except OSError:
            return False

else:

    def _kernel32() -> Any:
        raise OSError("no Windows console on this platform")

    def under_wine() -> bool:
        """This Windows is Wine: never, here."""
        return False


class ConsoleModes:
    """The input and output modes of the console (kernel32's Get/SetConsoleMode
    on ``CONIN$`` and ``CONOUT$``), opened for one session.

    ``get(which)`` is None when ``which`` ("input" or "output") is not a
    console; ``set`` says whether the console took the mode (a console older
    than Windows 10 refuses VT processing). ``renders_escapes`` is False
    for Wine's console, which takes VT processing and still shows the
    escape codes as text (Wine 8): it is a legacy console."""

    renders_escapes = True

    _kernel32: Any
    _dword: Any
    _byref: Any
    _handles: Dict[str, Any]

    def __init__(self) -> None:
        import ctypes
        from ctypes import wintypes

        kernel32 = _kernel32()
        self.renders_escapes = not under_wine()
        self._kernel32 = kernel32
        self._dword = wintypes.DWORD
        self._byref = ctypes.byref
        invalid = ctypes.c_void_p(-1).value
        generic_read_write, share_read_write, open_existing = 0xC0000000, 0x3, 3
        self._handles = {}
        for which, name in (("input", "CONIN$"), ("output", "CONOUT$")):
            handle = kernel32.CreateFileW(name, generic_read_write, share_read_write, None, open_existing, 0, None)
            if handle not in (None, invalid):
                self._handles[which] = handle

    def get(self, which: str) -> Optional[int]:
        handle = self._handles.get(which)
        mode = self._dword()
        if handle is None or not self._kernel32.GetConsoleMode(handle, self._byref(mode)):
            return None
        return int(mode.value)

    def set(self, which: str, mode: int) -> bool:
        handle = self._handles.get(which)
        return handle is not None and bool(self._kernel32.SetConsoleMode(handle, mode))

    def close(self) -> None:
        for handle in self._handles.values():
            self._kernel32.CloseHandle(handle)
        self._handles.clear()


class KeyReader:
    """Keys from ``msvcrt`` as the game's actions.

    Each ``getwch`` is one whole key: nothing the console sends is an escape
    sequence, so a lone Esc is flushed at once (Esc then ``[`` is two keys).

    A 0x00 or 0xE0 from ``getwch`` is a prefix only if the C runtime holds
    the scan code that completes it: 0xE0 is also ``à`` (an AZERTY key).
    The runtime keeps that scan code in its one-character push-back, which
    ``kbhit`` does not look at, but ``ungetwch`` refuses to fill a second
    time: so a refused ``ungetwch`` means a prefix, and an accepted one put
    the character back, to be read again as itself."""

    def __init__(self, msvcrt: Any) -> None:
        self._msvcrt = msvcrt

    def _character(self) -> str:
        char: str = self._msvcrt.getwch()
        if "\ud800" <= char <= "\udbff":  # the first half of a UTF-16 surrogate pair
            char = (char + self._msvcrt.getwch()).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return char

    def read(self, decoder: KeyDecoder) -> List[Action]:
        """Read one key (blocking) and decode it."""
        char = self._character()
        if char in _PREFIXES:
            try:
                self._msvcrt.ungetwch(char)
            except OSError:  # the scan code is waiting: a key without a character
                arrow = _ARROWS.get(self._msvcrt.getwch())
                return [arrow] if arrow is not None else []
            char = self._msvcrt.getwch()  # the character itself, put back above
        actions = decoder.feed(char.encode("utf-8", "replace"))
        decoder.flush()  # the key is whole: an Esc waits for nothing
        return actions


@contextmanager
def console_modes(modes: ConsoleModes) -> Iterator[bool]:
    """The console in game mode for the block, and back as it was on every
    exit: Ctrl-C comes as a key (processed input off), escape codes are
    interpreted if the console can (VT processing on). Gives whether the
    console is legacy (it refused VT processing: colorama must convert)."""
    saved_input, saved_output = modes.get("input"), modes.get("output")
    try:
        if saved_input is not None:
            modes.set("input", saved_input & ~ENABLE_PROCESSED_INPUT)
        legacy = saved_output is not None and not (
            modes.renders_escapes
            and (
                saved_output & ENABLE_VIRTUAL_TERMINAL_PROCESSING
                or modes.set("output", saved_output | ENABLE_VIRTUAL_TERMINAL_PROCESSING)
            )
        )
        yield legacy
    finally:
        if saved_output is not None:
            modes.set("output", saved_output)
        if saved_input is not None:
            modes.set("input", saved_input)


def _legacy_writer(stream: IO[str]) -> IO[str]:
    """``stream`` behind colorama's converter: escape codes become console calls."""
    import colorama

    wrapped: IO[str] = colorama.AnsiToWin32(stream, convert=True, strip=True).stream
    return wrapped


class WindowsConsole:
    """The Windows console's logic: keys from ``msvcrt`` (see
    :class:`KeyReader`), a resize noticed by polling the window's size (the
    console sends no signal), frames written to ``out``.

    Everything it touches comes in: ``msvcrt``, ``size``, ``sleep`` and
    the clock; :func:`open_console` passes the real ones, the tests fakes.
    The console's modes are :func:`console_modes`' business, not this."""

    def __init__(
        self,
        msvcrt: Any,
        hooks: ScreenHooks,
        out: IO[str],
        *,
        size: Callable[[], Tuple[int, int]],
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self._msvcrt = msvcrt
        self._keys = KeyReader(msvcrt)
        self._hooks = hooks
        self._out = out
        self.size = size
        self._sleep = sleep
        self._clock = clock
        self._shown = size()
        # Ctrl-C delivered as KeyboardInterrupt after all (the console kept
        # processed input on): noted, and read as the quit key it is.
        self.interrupted = False

    def resized(self) -> bool:
        """Whether the window's size changed since it was last looked at."""
        now = self.size()
        if now == self._shown:
            return False
        self._shown = now
        return True

    def read_actions(self, decoder: KeyDecoder) -> List[Action]:
        """Block until at least one action (or a resize: an empty list), then
        take every key already typed, so the next frame shows them all."""
        actions: List[Action] = []
        kbhit = self._msvcrt.kbhit
        try:
            while not self.interrupted and not kbhit():
                self._sleep(_POLL_INTERVAL)
                if self.resized():
                    self._hooks.redraw()
                    return []
            if not self.interrupted:
                actions += self._keys.read(decoder)
                while kbhit():
                    actions += self._keys.read(decoder)
        except KeyboardInterrupt:
            self.interrupted = True
        if self.interrupted:
            self.interrupted = False
            actions.append(Action.QUIT)
        return actions

    def key_ready(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a key: the console has no select, so poll."""
        deadline = self._clock() + seconds
        try:
            while not self._msvcrt.kbhit():
                left = deadline - self._clock()
                if left <= 0:
                    return False
                self._sleep(min(left, _KEY_POLL))
        except KeyboardInterrupt:
            self.interrupted = True
        return True

    def write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def console(self, legacy: bool) -> Console:
        """The :class:`Console` the game is handed."""
        return Console(self.read_actions, self.write, self.size, legacy=legacy, key_ready=self.key_ready)


@contextmanager
def open_console(
    stdin: IO[Any],
    stdout: IO[Any],
    hooks: ScreenHooks,
    modes: Optional[Callable[[], ConsoleModes]] = None,
) -> Iterator[Console]:
    """Take the console for the session. Keys come from the console itself
    (``msvcrt``), not from ``stdin``; resizes are noticed by polling, since
    the console sends no signal. ``modes`` opens the console's modes (the
    tests pass a fake); the frames go to ``sys.stdout``, where the console is."""
    import msvcrt  # type: ignore[import-not-found,unused-ignore]
    import time

    opened = (modes or ConsoleModes)()
    try:
        with console_modes(opened) as legacy:
            out = _legacy_writer(sys.stdout) if legacy else sys.stdout
            console = WindowsConsole(
                msvcrt, hooks, out, size=lambda: terminal_size(1), sleep=time.sleep, clock=time.monotonic
            )
            yield console.console(legacy)
    finally:
        opened.close()


@contextmanager
def quiet_terminal(fd: int) -> Iterator[None]:
    """Nothing to do: the Windows console does not echo keys that no one reads."""
    yield


def open_terminal_output(stdin: IO[Any]) -> Optional[IO[str]]:
    """None: the console session writes through ``sys.stdout``, so with
    stdout redirected the keys are read as a stream, as before."""
    return None
