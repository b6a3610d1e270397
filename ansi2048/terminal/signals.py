"""Signals that would end the game turned into an exception that unwinds
through every ``finally``, and shielding the restore from a second signal."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Any, Iterator, List, Mapping, Optional

__all__ = [
    "Hangup",
    "ending_signals",
    "hangup_signals",
    "ignore_ending_signals",
    "restore_signals",
    "shield_hangups",
]


class Hangup(BaseException):
    """A signal that ends the game arrived (SIGTERM, SIGHUP, SIGQUIT, ...):
    unwind through every ``finally`` and exit with 128 + ``signum``.

    A BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# Every signal whose default action kills the process and that can be caught
# without harm. Left out: SIGINT (Python raises KeyboardInterrupt for it), the
# faults a program raises on itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
# SIGTRAP: no Python code can go on after them), and SIGPIPE and SIGXFSZ, which
# Python ignores so that a failed write raises an error instead (a standard
# error nobody reads must not end the game).
_ENDING = (
    "SIGHUP",
    "SIGTERM",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGALRM",
    "SIGVTALRM",
    "SIGPROF",
    "SIGXCPU",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
    "SIGSTKFLT",
    "SIGBREAK",  # Windows: Ctrl-Break
)


def ending_signals() -> List[int]:
    """The signals that end the game on this platform (real-time ones too)."""
    found = {int(getattr(signal, name)) for name in _ENDING if hasattr(signal, name)}
    if hasattr(signal, "SIGRTMIN") and hasattr(signal, "SIGRTMAX"):
        found.update(range(int(signal.SIGRTMIN), int(signal.SIGRTMAX) + 1))
    return sorted(found)


def _shielded() -> List[int]:
    # SIGINT too: `kill -INT` (or Ctrl-C during a replay) during a restore.
    return [*ending_signals(), int(signal.SIGINT)]


class _Ending:
    """What the handlers know: whether a signal is already unwinding the game
    or a restore is shielded. A flag the handlers read, not SIG_IGN, so a
    second signal that arrives before the first one's handler has run is
    still caught (and dropped) rather than reported as a race."""

    signum: Optional[int] = None
    shields = 0


@contextmanager
def hangup_signals() -> Iterator[None]:
    """For the duration, each ending signal raises :class:`Hangup` (SIGINT
    KeyboardInterrupt), so every ``finally`` runs and the terminal is
    restored. Only the first one raises: a second signal, or one during a
    shielded restore, is dropped. Signals already ignored (``nohup``) stay
    ignored."""

    def hang_up(signum: int, frame: Any) -> None:
        if _Ending.signum is not None or _Ending.shields:
            return
        _Ending.signum = signum
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Hangup(signum)

    previous = {signum: signal.getsignal(signum) for signum in _shielded()}
    _Ending.signum = None
    try:
        for signum, handler in previous.items():
            if handler is signal.SIG_DFL or (signum == signal.SIGINT and handler is signal.default_int_handler):
                signal.signal(signum, hang_up)
        yield
    finally:
        restore_signals(previous)
        _Ending.signum = None


@contextmanager
def shield_hangups() -> Iterator[None]:
    """No ending signal and no SIGINT interrupts the block: wrapped around
    restoring the terminal, so a second signal cannot cut the restore short.
    Inside :func:`hangup_signals` such signals are dropped; elsewhere those
    that would kill are ignored for the duration."""
    previous = {
        signum: handler
        for signum, handler in ((s, signal.getsignal(s)) for s in _shielded())
        if handler is signal.SIG_DFL or handler is signal.default_int_handler
    }
    _Ending.shields += 1
    try:
        for signum in previous:
            signal.signal(signum, signal.SIG_IGN)
        yield
    finally:
        restore_signals(previous)
        _Ending.shields -= 1


def restore_signals(previous: Mapping[Any, Any]) -> None:
    """Put back the handlers ``signal.getsignal`` gave before they were changed."""
    for signum, handler in previous.items():
        if handler is not None:  # None: set outside Python, cannot be put back
            signal.signal(signum, handler)


def ignore_ending_signals() -> None:
    """A signal has ended the game and the process is on its way out: from
    now on no other signal (SIGINT included) may interrupt it. Cleaning up
    and the interpreter's own shutdown run Python code (``threading`` waits
    for its threads there), where a KeyboardInterrupt would print a
    traceback. For the entry point only: the handlers are not put back."""
    for signum in _shielded():
        handler = signal.getsignal(signum)
        if handler is signal.SIG_DFL or handler is signal.default_int_handler:
            signal.signal(signum, signal.SIG_IGN)
