"""Signals that end the game (SIGTERM, SIGHUP) turned into an exception that
unwinds through every ``finally``, and shielding the restore from them."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Any, Iterator, List, Mapping

__all__ = ["Hangup", "hangup_signals", "restore_signals", "shield_hangups"]


class Hangup(BaseException):
    """SIGTERM or SIGHUP arrived: unwind through every ``finally`` and exit.

    A BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


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


@contextmanager
def shield_hangups() -> Iterator[None]:
    """Ignore SIGTERM and SIGHUP for the duration, then put their handlers
    back: wrapped around restoring the terminal, so a second signal cannot
    cut the restore short."""
    previous = {signum: signal.getsignal(signum) for signum in _hangup_signals()}
    try:
        for signum in previous:
            signal.signal(signum, signal.SIG_IGN)
        yield
    finally:
        restore_signals(previous)


def restore_signals(previous: Mapping[Any, Any]) -> None:
    """Put back the handlers ``signal.getsignal`` gave before they were changed."""
    for signum, handler in previous.items():
        signal.signal(signum, handler)
