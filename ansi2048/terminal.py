"""The imperative shell around the terminal: modes, reading, writing, size,
signals. Platform modules are imported inside the functions that use them, so
importing this module costs nothing and works everywhere."""

from __future__ import annotations

import errno
import os
import queue
import signal
import sys
import threading
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from .keys import Action, KeyDecoder

__all__ = [
    "ChunkReader",
    "Console",
    "Hangup",
    "ScreenHooks",
    "hangup_signals",
    "open_console",
    "quiet_terminal",
    "shield_hangups",
    "terminal_size",
    "write_all",
]

# How long a lone ESC waits for the rest of an arrow key before it counts as
# just ESC. Terminals send a whole sequence in one write; 50 ms is what vim's
# 'ttimeoutlen' defaults to in many setups and feels instant.
ESC_TIMEOUT = 0.05
# How often the Windows console loop wakes to notice a resized window.
_POLL_INTERVAL = 0.05


class Hangup(BaseException):
    """SIGTERM or SIGHUP arrived: unwind through every ``finally`` and exit.

    A BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def write_all(fd: int, data: bytes) -> None:
    """One frame, one ``write`` call where the OS allows it (loops on short writes)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def terminal_size(fd: int) -> Tuple[int, int]:
    """(columns, lines); a conservative 80x24 when the size cannot be read."""
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return 80, 24
    return size.columns or 80, size.lines or 24


class ChunkReader:
    """Reads a pipe or file in chunks on a helper thread.

    A thread rather than ``select`` because Windows cannot select on pipes;
    the bounded queue keeps memory flat however long the input is, and a
    timeout on ``read`` lets the caller decide whether a header is coming."""

    def __init__(self, fd: int, chunk_size: int = 1 << 16) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue(maxsize=4)
        self._fd = fd
        self._chunk_size = chunk_size
        self._eof = False
        threading.Thread(target=self._pump, name="ansi2048-stdin", daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self._fd, self._chunk_size)
            except OSError:
                data = b""
            self._queue.put(data)
            if not data:
                return

    def read(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next chunk; b"" at end of input; None if ``timeout`` passed first."""
        if self._eof:
            return b""
        try:
            data = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if not data:
            self._eof = True
        return data


@dataclass
class Console:
    """An interactive terminal session: keys in, frames out, size."""

    read_actions: Callable[[KeyDecoder], List[Action]]
    write: Callable[[str], None]
    size: Callable[[], Tuple[int, int]]
    legacy: bool  # colorama wraps stdout (old Windows console): 16 colours, no private modes


@dataclass(frozen=True)
class ScreenHooks:
    """What the console asks of the screen, from its read loop (never from a
    signal handler): ``redraw`` after a resize or on coming back from a
    suspend; ``leave`` before the terminal is handed back (Ctrl-Z)."""

    redraw: Callable[[], None]
    leave: Callable[[], None]


@contextmanager
def open_console(stdin: IO[Any], stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
    """Enter the terminal for the whole session and restore it on every exit.
    The platform is chosen once, here."""
    if sys.platform == "win32":
        with _windows_console(stdout, hooks) as console:
            yield console
    else:
        with _posix_console(stdin, stdout, hooks) as console:
            yield console


def _hangup_signals() -> List[int]:
    return [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]


@contextmanager
def hangup_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Hangup` for the duration, so every
    ``finally`` runs and the terminal is restored."""

    def hang_up(signum: int, frame: Any) -> None:
        raise Hangup(signum)

    previous = {signum: signal.getsignal(signum) for signum in _hangup_signals()}
    try:
        for signum in previous:
            signal.signal(signum, hang_up)
        yield
    finally:
        restore_signals(previous)


def shield_hangups() -> None:
    """Ignore SIGTERM and SIGHUP from here on (until ``hangup_signals`` ends):
    called first thing when restoring, so a second signal cannot cut it short."""
    for signum in _hangup_signals():
        signal.signal(signum, signal.SIG_IGN)


def restore_signals(previous: Mapping[Any, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def _terminal_gone(error: OSError) -> bool:
    return error.errno in (errno.EIO, errno.ENXIO, errno.EPIPE)


@contextmanager
def _posix_console(stdin: IO[Any], stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
    import select
    import termios

    in_fd = stdin.fileno()
    out_fd = stdout.fileno()
    saved = termios.tcgetattr(in_fd)
    mode = termios.tcgetattr(in_fd)
    # cbreak without signals: no line buffering, no echo, and Ctrl-C arrives
    # as a byte the decoder maps to quit (Ctrl-Z as one we handle here).
    # Output processing (ONLCR) stays on.
    mode[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
    mode[0] &= ~(termios.IXON | termios.ICRNL)
    mode[6][termios.VMIN] = 1
    mode[6][termios.VTIME] = 0

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    pending = set()  # signals seen by the handlers, acted on by the read loop

    def note(signum: int, frame: Any) -> None:
        pending.add(signum)

    noted = (signal.SIGWINCH, signal.SIGTSTP, signal.SIGCONT)
    previous = {signum: signal.getsignal(signum) for signum in noted}
    previous_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)

    def suspend() -> None:
        """Ctrl-Z: hand the terminal back as it was, stop the job like the
        terminal would, and take the terminal again on ``fg``."""
        hooks.leave()
        termios.tcsetattr(in_fd, termios.TCSADRAIN, saved)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.killpg(os.getpgrp(), signal.SIGTSTP)  # stops here until SIGCONT
        signal.signal(signal.SIGTSTP, note)
        termios.tcsetattr(in_fd, termios.TCSANOW, mode)
        pending.discard(signal.SIGCONT)
        hooks.redraw()

    def handle_signals() -> None:
        if signal.SIGTSTP in pending:
            pending.discard(signal.SIGTSTP)
            suspend()
        if signal.SIGCONT in pending:  # stopped by someone else: take the terminal again
            pending.discard(signal.SIGCONT)
            termios.tcsetattr(in_fd, termios.TCSANOW, mode)
            hooks.leave()
            hooks.redraw()
        if signal.SIGWINCH in pending:
            pending.discard(signal.SIGWINCH)
            hooks.redraw()

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        """Block until at least one action."""
        while True:
            timeout = ESC_TIMEOUT if decoder.pending else None
            ready, _, _ = select.select([in_fd, wake_r], [], [], timeout)
            if wake_r in ready:
                with suppress(BlockingIOError):
                    while os.read(wake_r, 512):
                        pass
            handle_signals()
            if in_fd in ready:
                try:
                    data = os.read(in_fd, 4096)
                except OSError as error:
                    if _terminal_gone(error):
                        raise Hangup(signal.SIGHUP) from None
                    raise
                if not data:  # the terminal went away
                    raise Hangup(signal.SIGHUP)
                before, ctrl_z, after = data.partition(b"\x1a")
                actions = decoder.feed(before)
                if ctrl_z:
                    suspend()
                    actions += decoder.feed(after)
                if actions:
                    return actions
            elif not ready:
                decoder.flush()  # the ESC stood alone

    def write(text: str) -> None:
        try:
            write_all(out_fd, text.encode("utf-8", "replace"))
        except OSError as error:
            if _terminal_gone(error):  # the window was closed
                raise Hangup(signal.SIGHUP) from None
            raise

    try:
        with hangup_signals():
            try:
                # TCSANOW, never TCSAFLUSH: keys typed ahead of the switch are kept.
                termios.tcsetattr(in_fd, termios.TCSANOW, mode)
                for signum in noted:
                    signal.signal(signum, note)
                yield Console(read_actions, write, lambda: terminal_size(out_fd), legacy=False)
            finally:
                shield_hangups()
                for signum in noted:
                    signal.signal(signum, signal.SIG_IGN if signum != signal.SIGCONT else signal.SIG_DFL)
                # If the terminal hung up there is nothing left to restore.
                with suppress(termios.error, OSError):
                    termios.tcsetattr(in_fd, termios.TCSADRAIN, saved)
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        restore_signals(previous)
        os.close(wake_r)
        os.close(wake_w)


@contextmanager
def quiet_terminal(fd: int) -> Iterator[None]:
    """While a replay is drawn on the terminal ``fd``, keys typed there are
    not echoed into the frames; what was typed is dropped at the end (it was
    typed at the replay, not at the shell). POSIX only; elsewhere a no-op."""
    if sys.platform == "win32":
        yield
        return
    import termios

    try:
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError):
        yield
        return
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~termios.ECHO
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        with suppress(termios.error, OSError):
            termios.tcflush(fd, termios.TCIFLUSH)
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


@contextmanager
def _windows_console(stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
    import msvcrt  # type: ignore[import-not-found,unused-ignore]
    import time

    import colorama
    import readchar

    before = sys.stdout
    colorama.just_fix_windows_console()
    # On Windows 10+ colorama switches on native VT processing and leaves
    # stdout alone; on a legacy console it wraps stdout to convert escapes.
    legacy = sys.stdout is not before
    out = sys.stdout
    keys = windows_key_table(readchar.key)
    size = [terminal_size(1)]

    def read_key(decoder: KeyDecoder) -> List[Action]:
        try:
            key = readchar.readkey()
        except KeyboardInterrupt:  # readchar raises it for Ctrl-C
            return [Action.QUIT]
        action = keys.get(key)
        if action is not None:
            return [action]
        return decoder.feed(key.encode("utf-8", "replace"))

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        """Block until at least one action (or a resize: an empty list), then
        take every key already typed, so the next frame shows them all."""
        while not msvcrt.kbhit():  # type: ignore[attr-defined,unused-ignore]
            time.sleep(_POLL_INTERVAL)
            now = terminal_size(1)
            if now != size[0]:
                size[0] = now
                hooks.redraw()
        actions = read_key(decoder)
        while msvcrt.kbhit():  # type: ignore[attr-defined,unused-ignore]
            actions += read_key(decoder)
        return actions

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    yield Console(read_actions, write, lambda: terminal_size(1), legacy=legacy)


def windows_key_table(key: Any) -> Dict[str, Action]:
    """readchar's Windows key names for the arrows -> actions. ``key`` is the
    ``readchar.key`` module (passed in so tests can hand over a stand-in)."""
    return {key.UP: Action.UP, key.DOWN: Action.DOWN, key.LEFT: Action.LEFT, key.RIGHT: Action.RIGHT}
