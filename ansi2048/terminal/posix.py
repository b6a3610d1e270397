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
from typing import IO, Any, Callable, Iterator, List, Optional, Protocol, Set, Tuple, TypeVar

from ..game.keys import Action, KeyDecoder
from .console import ESC_TIMEOUT, Console, ScreenHooks
from .signals import Hangup, hangup_signals, restore_signals, shield_hangups
from .streams import terminal_gone, terminal_size, write_all

__all__ = [
    "ESC_TIMEOUT",
    "PosixConsole",
    "RawMode",
    "Terminal",
    "open_console",
    "open_terminal_output",
    "quiet_terminal",
    "raw_mode",
    "retry_eintr",
]

_T = TypeVar("_T")

# The longest a suspend waits, once continued, for the handler of the
# SIGCONT that continued it to note it (it comes at once; the bound is for
# a continue that somehow never shows, so that the game still comes back).
CONTINUE_NOTED_SECONDS = 0.5


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


class Terminal(Protocol):
    """The terminal's modes as the console switches them: game mode, and
    back as it was (:class:`RawMode`; a test passes a recorder)."""

    def enter(self) -> None: ...

    def leave(self) -> None: ...


# Which of ``fds`` are ready to read within ``timeout`` seconds (None: as long
# as it takes); ``select.select`` on the real terminal.
Wait = Callable[[List[int], Optional[float]], List[int]]


class PosixConsole:
    """The POSIX console's logic: what the read loop does with the keys it
    reads and the signals the handlers noted (resize, Ctrl-Z, continue).

    Everything it touches comes in: the descriptors, ``wait`` (select),
    ``read`` (os.read), ``write`` (whole byte strings to the terminal),
    ``size``, the terminal's modes, ``stop_job`` (what Ctrl-Z does to the
    job) and the clock. :func:`open_console` passes the real ones; a test
    passes its own, so the decisions are tried without a pty.

    Signal handlers only :meth:`note` a signal and wake the loop through
    ``wake_fd`` (``signal.set_wakeup_fd``); the loop acts on what is
    :attr:`pending`, never the handler: redrawing or handing the terminal
    back from a handler could cut a frame in half."""

    def __init__(
        self,
        in_fd: int,
        wake_fd: int,
        terminal: Terminal,
        hooks: ScreenHooks,
        *,
        wait: Wait,
        read: Callable[[int], bytes],
        write: Callable[[bytes], None],
        size: Callable[[], Tuple[int, int]],
        stop_job: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.in_fd = in_fd
        self.wake_fd = wake_fd
        self.terminal = terminal
        self.hooks = hooks
        self._wait = wait
        self._read = read
        self._write = write
        self.size = size
        self._stop_job = stop_job
        self._clock = clock
        self.pending: Set[int] = set()  # signals seen by the handlers, not acted on yet

    def note(self, signum: int, frame: Any = None) -> None:
        """The signal handler: note the signal; the read loop acts on it."""
        self.pending.add(signum)

    def suspend(self) -> None:
        """Ctrl-Z: hand the terminal back as it was, stop the job like the
        terminal would, and take the terminal again on ``fg``."""
        self.hooks.leave()
        self.terminal.leave()
        self._stop_job()  # returns once the job is continued
        self._await_continue()
        self.terminal.enter()
        self.pending.discard(signal.SIGCONT)  # that continue is this one's: dealt with
        self.hooks.redraw()

    def _await_continue(self) -> None:
        """Wait until the SIGCONT that continued the job is noted, so that
        it is taken as this suspend's own. Every thread of the stopped
        process wakes on it and the kernel runs its handler on whichever
        runs first: another thread (the AI loading ahead, under load) may
        get it after the main thread is on its way, and Python notes it
        only when the main thread next looks. Noted after the suspend, it
        would look like someone else's continue and the frame be drawn a
        second time (a help just drawn again, seen as closed and redrawn).
        The handler wakes ``wake_fd`` wherever it runs; Python notes the
        signal before the loop's condition is read again."""
        deadline = self._clock() + CONTINUE_NOTED_SECONDS
        while signal.SIGCONT not in self.pending:
            left = deadline - self._clock()
            if left <= 0:
                return
            if self.wake_fd in self._wait([self.wake_fd], left):
                self.drain_wakeups()

    def handle_signals(self) -> None:
        """Act on the signals noted, in this order: a stop, a continue from
        someone else's stop (take the terminal again), a resize."""
        pending = self.pending
        if signal.SIGTSTP in pending:
            pending.discard(signal.SIGTSTP)
            self.suspend()
        if signal.SIGCONT in pending:
            pending.discard(signal.SIGCONT)
            self.terminal.enter()
            self.hooks.leave()
            self.hooks.redraw()
        if signal.SIGWINCH in pending:
            pending.discard(signal.SIGWINCH)
            self.hooks.redraw()

    def read_actions(self, decoder: KeyDecoder) -> List[Action]:
        """Block until at least one action, or until what ``key_ready``
        announced has been dealt with: a signal (an empty list after a
        resize, as on Windows) or keys that are no action. Autoplay waits
        with ``key_ready`` and must not then block here until a real key."""
        while True:
            if self.pending and not decoder.pending:  # seen by key_ready, which took its wake-up
                self.handle_signals()
                return []
            ready = self._wait([self.in_fd, self.wake_fd], ESC_TIMEOUT if decoder.pending else None)
            if self.wake_fd in ready:
                self.drain_wakeups()
            signalled = bool(self.pending)
            self.handle_signals()
            if self.in_fd in ready:
                actions = self.take_keys(self.read_input(), decoder)
                if actions or not decoder.pending:
                    return actions
            elif not ready:
                decoder.flush()  # the ESC stood alone: no action
                return []
            elif signalled:
                return []

    def read_input(self) -> bytes:
        """What the terminal has: the end of it (a closed window) is a hangup."""
        try:
            data = self._read(self.in_fd)
        except OSError as error:
            if terminal_gone(error):
                raise Hangup(signal.SIGHUP) from None
            raise
        if not data:  # the terminal went away
            raise Hangup(signal.SIGHUP)
        return data

    def take_keys(self, data: bytes, decoder: KeyDecoder) -> List[Action]:
        """The actions in ``data``; a Ctrl-Z among them suspends the game
        right there (ISIG is off: it comes as a byte), and the keys typed
        after it are taken when the game is back."""
        before, ctrl_z, after = data.partition(b"\x1a")
        actions = decoder.feed(before)
        if ctrl_z:
            self.suspend()
            actions += decoder.feed(after)
        return actions

    def drain_wakeups(self) -> None:
        with suppress(BlockingIOError):
            while self._read(self.wake_fd):
                pass

    def key_ready(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for input or a signal to act on. A wake-up
        whose signal was dealt with already (the SIGCONT of fg after a
        Ctrl-Z: ``suspend`` took the terminal back) is nothing to act on:
        the wait goes on, or autoplay, waiting here for its next move, would
        hand over to a read that blocks until a key."""
        deadline = self._clock() + max(0.0, seconds)
        while True:
            ready = self._wait([self.in_fd, self.wake_fd], max(0.0, deadline - self._clock()))
            if self.wake_fd in ready:
                self.drain_wakeups()
            if self.in_fd in ready or self.pending:
                return True
            if not ready:
                return False

    def write(self, text: str) -> None:
        try:
            self._write(text.encode("utf-8", "replace"))
        except OSError as error:
            if terminal_gone(error):  # the window was closed
                raise Hangup(signal.SIGHUP) from None
            raise

    def console(self) -> Console:
        """The :class:`Console` the game is handed."""
        return Console(self.read_actions, self.write, self.size, legacy=False, key_ready=self.key_ready, suspends=True)


def _select(fds: List[int], timeout: Optional[float]) -> List[int]:
    ready, _, _ = select.select(fds, [], [], timeout)
    return ready


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
    noted = (signal.SIGWINCH, signal.SIGTSTP, signal.SIGCONT)  # acted on by the read loop

    def stop_job() -> None:
        # The default action of SIGTSTP stops the whole job, as the terminal's
        # Ctrl-Z would have; the process goes on here once continued.
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.killpg(os.getpgrp(), signal.SIGTSTP)
        signal.signal(signal.SIGTSTP, console.note)

    console = PosixConsole(
        in_fd,
        wake_r,
        terminal,
        hooks,
        wait=_select,
        read=lambda fd: os.read(fd, 4096),
        write=lambda data: write_all(out_fd, data),
        size=lambda: terminal_size(out_fd),
        stop_job=stop_job,
    )
    previous = {signum: signal.getsignal(signum) for signum in noted}
    previous_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    try:
        with hangup_signals():
            try:
                terminal.enter()
                for signum in noted:
                    signal.signal(signum, console.note)
                yield console.console()
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
