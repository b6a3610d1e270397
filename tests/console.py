"""One console for the keyboard game's tests: keys typed at given times on a
fake clock, frames kept in memory, a window that can be resized.

It is the game's own console over byte streams
(:func:`ansi2048.terminal.console.stream_console`), given an in-memory
reader: so every loop test also plays over streams that are no terminal."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import IO, Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

from ansi2048.terminal.console import Console, ScreenHooks, stream_console

from .screen import emulate

WIDTH, HEIGHT = 80, 30


class FakeClock:
    """Seconds that pass only when the test (or a wait) says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Resize:
    """The window becomes ``width`` x ``height`` (at its time in a script)."""

    width: int
    height: int


# What is typed (one read's bytes) or done to the window, and when: seconds
# after the console was made; bare bytes are typed at once (ahead of time).
Entry = Union[bytes, Tuple[float, Union[bytes, Resize]]]


class PlayConsole:
    """Plays ``script`` to the game: each entry of bytes is what one read
    returns, when the clock has reached its time (a wait for a key moves the
    clock up to it, or by the time waited). ``waits=False`` makes a console
    that cannot wait for a key (no motion, no autoplay), like the legacy
    Windows console. ``on_read`` runs before each read; ``on_write`` after
    each write."""

    def __init__(
        self,
        script: Sequence[Entry],
        clock: Optional[FakeClock] = None,
        size: Tuple[int, int] = (WIDTH, HEIGHT),
        waits: bool = True,
        on_read: Callable[[], None] = lambda: None,
    ) -> None:
        self.clock = clock or FakeClock()
        started = self.clock.now
        self.script: List[Tuple[float, Union[bytes, Resize]]] = [
            (started, entry) if isinstance(entry, bytes) else (started + entry[0], entry[1]) for entry in script
        ]
        self.size = size
        self.waits = waits
        self.on_read = on_read
        self.on_write: Callable[[str], None] = lambda text: None
        self.output: List[str] = []
        self.frames: List[Tuple[float, str]] = []  # (time, text) of every write
        self.timed_out: List[float] = []  # the waits no key cut short, in seconds
        self.restored = False

    @property
    def batches(self) -> List[bytes]:
        """The keys still to be typed, one read each."""
        return [entry for _, entry in self.script if isinstance(entry, bytes)]

    def read(self, timeout: Optional[float]) -> Optional[bytes]:
        self.on_read()
        if not self.script:
            assert timeout is not None, "the game read past the end of the script: it did not quit"
            self._idle(timeout)
            return None
        at, entry = self.script[0]
        if timeout is not None and at > self.clock.now + timeout:
            self._idle(timeout)
            return None
        self.script.pop(0)
        self.clock.now = max(self.clock.now, at)
        if isinstance(entry, Resize):
            self.size = (entry.width, entry.height)
            return None  # look at the window again
        return entry

    def _idle(self, seconds: float) -> None:
        self.timed_out.append(seconds)
        self.clock.now += seconds

    def write(self, data: bytes) -> None:
        text = data.decode("utf-8")
        self.output.append(text)
        self.frames.append((self.clock.now, text))
        self.on_write(text)

    @contextmanager
    def open(self, stdin: IO[Any], stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
        console = stream_console(self.read, self.write, lambda: self.size, hooks)
        try:
            yield console if self.waits else replace(console, key_ready=None)
        finally:
            self.restored = True

    @property
    def screen_bytes(self) -> bytes:
        return "".join(self.output).encode()

    @property
    def display(self) -> List[str]:
        """The screen now, as an emulated terminal of the window's size shows it."""
        return list(emulate(self.screen_bytes, *self.size).display)


def screens(console: PlayConsole, width: int = WIDTH, height: int = HEIGHT) -> List[Tuple[float, List[str]]]:
    """(time, emulated screen) after each complete frame."""
    from ansi2048.render.repaint import FRAME_END

    out, sent = [], ""
    for time, text in console.frames:
        sent += text
        if FRAME_END in text:
            out.append((time, list(emulate(sent.encode(), width, height).display)))
    return out


def scripted(batches: Sequence[bytes], on_read: Callable[[], None] = lambda: None) -> PlayConsole:
    """A console that cannot wait for a key, whose reads return ``batches``
    one by one: the keyboard game without motion or timers."""
    return PlayConsole(batches, waits=False, on_read=on_read)
