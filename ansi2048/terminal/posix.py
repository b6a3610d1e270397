"""The POSIX terminal: raw mode for the whole session, keys read with
``select`` + ``os.read``, Ctrl-Z, resizes and hangups handled in the read loop."""

from __future__ import annotations

import errno
import os
import select
import signal
import termios
import time
from contextlib import contextmanager, suppress
from typing import IO, Any, Callable, Iterator, List, Optional, TypeVar

from ..keys import Action, KeyDecoder
from .console import ESC_TIMEOUT, Console, ScreenHooks
from .signals import Hangup, hangup_signals, restore_signals, shield_hangups
from .streams import terminal_gone, terminal_size, write_all

__all__ = [
    "ESC_TIMEOUT",
    "RawMode",
    "open_console",
    "open_terminal_output",
    "quiet_terminal",
    "raw_mode",
    "retry_eintr",
]

_T = TypeVar("_T")


def retry_eintr(call: Callable[..., _T], *args: Any) -> _T:
    """``call(*args)``, again for as long as a signal interrupts it. Python
    retries ``os.read``, ``os.write`` and ``select`` itself (PEP 475) but not
    the termios calls, which fail with errno 4 when Ctrl-Z, ``bg``, ``fg`` or
    a resize lands while they wait (``tcsetattr`` with TCSADRAIN waits for
    the output to drain; from the background it is stopped by SIGTTOU)."""
    while True:
        try:
            return call(*args)
        except termios.error as error:
            if not error.args or error.args[0] != errno.EINTR:
                raise
        except InterruptedError:
            pass


def _game_attributes(saved: List[Any]) -> List[Any]:
    """cbreak without signals: no line buffering, no echo, and Ctrl-C arrives
    as a byte the decoder maps to quit (Ctrl-Z as one the loop handles).
    Output processing (ONLCR) stays on, so "\\n" still starts a new line."""
    iflag, oflag, cflag, lflag, ispeed, ospeed, control = saved
    iflag &= ~(termios.IXON | termios.ICRNL)
    lflag &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
    control = list(control)
    control[termios.VMIN] = 1
    control[termios.VTIME] = 0
    return [iflag, oflag, cflag, lflag, ispeed, ospeed, control]


class RawMode:
    """The terminal on ``fd`` in game mode, and back as it was.

    ``enter`` switches with TCSANOW, never TCSAFLUSH, so keys typed ahead of
    the switch are kept; ``leave`` restores with TCSADRAIN, after the last
    frame is out. As a context manager it enters, and leaves on every exit;
    a terminal that hung up has nothing left to restore."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.saved = retry_eintr(termios.tcgetattr, fd)
        self.mode = _game_attributes(self.saved)

    def enter(self) -> None:
        retry_eintr(termios.tcsetattr, self.fd, termios.TCSANOW, self.mode)

    def leave(self) -> None:
        retry_eintr(termios.tcsetattr, self.fd, termios.TCSADRAIN, self.saved)

    def __enter__(self) -> RawMode:
        self.enter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with suppress(termios.error, OSError):
            self.leave()


def raw_mode(fd: int) -> RawMode:
    """``with raw_mode(fd):`` game mode for the block (see :class:`RawMode`)."""
    return RawMode(fd)


@contextmanager
def open_console(stdin: IO[Any], stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
    """Take the terminal for the session: raw mode, signals noted for the read
    loop (resize, Ctrl-Z, continue), hangups raised as :class:`Hangup`."""
    in_fd = stdin.fileno()
    out_fd = stdout.fileno()
    terminal = RawMode(in_fd)

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
        terminal.leave()
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.killpg(os.getpgrp(), signal.SIGTSTP)  # stops here until SIGCONT
        signal.signal(signal.SIGTSTP, note)
        terminal.enter()
        pending.discard(signal.SIGCONT)
        hooks.redraw()

    def handle_signals() -> None:
        if signal.SIGTSTP in pending:
            pending.discard(signal.SIGTSTP)
            suspend()
        if signal.SIGCONT in pending:  # stopped by someone else: take the terminal again
            pending.discard(signal.SIGCONT)
            terminal.enter()
            hooks.leave()
            hooks.redraw()
        if signal.SIGWINCH in pending:
            pending.discard(signal.SIGWINCH)
            hooks.redraw()

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        """Block until at least one action, or until what ``key_ready``
        announced has been dealt with: a signal (an empty list after a
        resize, as on Windows) or keys that are no action. Autoplay waits
        with ``key_ready`` and must not then block here until a real key."""
        while True:
            if pending and not decoder.pending:  # seen by key_ready, which took its wake-up
                handle_signals()
                return []
            timeout = ESC_TIMEOUT if decoder.pending else None
            ready, _, _ = select.select([in_fd, wake_r], [], [], timeout)
            if wake_r in ready:
                drain_wakeups()
            signalled = bool(pending)
            handle_signals()
            if in_fd in ready:
                try:
                    data = os.read(in_fd, 4096)
                except OSError as error:
                    if terminal_gone(error):
                        raise Hangup(signal.SIGHUP) from None
                    raise
                if not data:  # the terminal went away
                    raise Hangup(signal.SIGHUP)
                before, ctrl_z, after = data.partition(b"\x1a")
                actions = decoder.feed(before)
                if ctrl_z:
                    suspend()
                    actions += decoder.feed(after)
                if actions or not decoder.pending:
                    return actions
            elif not ready:
                decoder.flush()  # the ESC stood alone: no action
                return []
            elif signalled:
                return []

    def drain_wakeups() -> None:
        with suppress(BlockingIOError):
            while os.read(wake_r, 512):
                pass

    def key_ready(seconds: float) -> bool:
        """Wait up to ``seconds`` for input or a signal to act on. A wake-up
        whose signal was dealt with already (the SIGCONT of fg after a
        Ctrl-Z: ``suspend`` took the terminal back) is nothing to act on:
        the wait goes on, or autoplay, waiting here for its next move, would
        hand over to a read that blocks until a key."""
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            ready, _, _ = select.select([in_fd, wake_r], [], [], max(0.0, deadline - time.monotonic()))
            if wake_r in ready:
                drain_wakeups()
            if in_fd in ready or pending:
                return True
            if not ready:
                return False

    def write(text: str) -> None:
        try:
            write_all(out_fd, text.encode("utf-8", "replace"))
        except OSError as error:
            if terminal_gone(error):  # the window was closed
                raise Hangup(signal.SIGHUP) from None
            raise

    try:
        with hangup_signals():
            try:
                terminal.enter()
                for signum in noted:
                    signal.signal(signum, note)
                yield Console(read_actions, write, lambda: terminal_size(out_fd), legacy=False, key_ready=key_ready)
            finally:
                with shield_hangups():
                    for signum in noted:
                        signal.signal(signum, signal.SIG_IGN if signum != signal.SIGCONT else signal.SIG_DFL)
                    terminal.__exit__()
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        restore_signals(previous)
        os.close(wake_r)
        os.close(wake_w)


@contextmanager
def quiet_terminal(fd: int) -> Iterator[None]:
    """While a replay is drawn on the terminal ``fd``, keys typed there are
    not echoed into the frames; what was typed is dropped at the end (it was
    typed at the replay, not at the shell)."""
    try:
        saved = retry_eintr(termios.tcgetattr, fd)
    except (termios.error, OSError):
        yield
        return
    quiet = retry_eintr(termios.tcgetattr, fd)
    quiet[3] &= ~termios.ECHO
    try:
        retry_eintr(termios.tcsetattr, fd, termios.TCSANOW, quiet)
        yield
    finally:
        with suppress(termios.error, OSError):
            retry_eintr(termios.tcflush, fd, termios.TCIFLUSH)
            retry_eintr(termios.tcsetattr, fd, termios.TCSADRAIN, saved)


def open_terminal_output(stdin: IO[Any]) -> Optional[IO[str]]:
    """A text stream onto the terminal ``stdin`` reads, for the frames when
    stdout is a pipe or a file: the keys and the board then share one
    terminal. None if it cannot be opened for writing."""
    try:
        return open(os.ttyname(stdin.fileno()), "w", encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
