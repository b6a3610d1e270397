"""A connection's lines in the server's log (:class:`ConnectionLine`): one
when it is admitted (who is in), and its last: when, from where, who, in
which terminal, how long, how many keys, how each of its sessions ended.
Every connection has them (an SSH client's, a browser's); the last is
filled in by its channels as they run, and written once the client has gone
and none of its sessions still runs."""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from .limits import short_fingerprint, source_of
from .log import Logs

__all__ = ["ConnectionLine"]


class ConnectionLine:
    """One connection's line, filled in as it runs; logged once (:meth:`lost`, :meth:`session_done`)."""

    def __init__(self, address: str, log: Logs, clock: Callable[[], float]) -> None:
        self.address = address
        self.source = source_of(address)  # what the per-address caps count it as
        self._log = log
        self._clock = clock
        self._started = clock()
        self.fingerprint: Optional[str] = None
        self.name = "-"
        self.term = ""
        self.window: Optional[Tuple[int, int]] = None
        self.keys = 0
        self.endings: List[str] = []
        self.running = 0  # its sessions still running: the line waits for them to say how they ended
        self._lost = False

    def connected(self) -> None:
        """The connection's first line: who is in (its last says how it ended)."""
        said = f"{self.address} {short_fingerprint(self.fingerprint)} {self.name} connected"
        self._log(said, "connected", address=self.address, fingerprint=self.fingerprint, name=self.name)

    def named(self, name: str) -> None:
        """The player's name as the server knows it (not the one asked for): the line's."""
        self.name = name

    def session_started(self) -> None:
        self.running += 1

    def session_done(self) -> None:
        """One of its sessions has ended (and said how): once the client
        has gone and none runs, the line is logged."""
        self.running -= 1
        if self._lost and not self.running:
            self._log_ended()

    def lost(self) -> None:
        """The client has gone: the line is logged once no session runs."""
        self._lost = True
        if not self.running:
            self._log_ended()

    def _log_ended(self) -> None:
        """The last line. Nothing the client sent is in it as it came (TERM
        is made printable and bounded), and no key."""
        window = f"{self.window[0]}x{self.window[1]}" if self.window else "-"
        seconds = self._clock() - self._started
        ended = "; ".join(self.endings) or "closed"
        line = (
            f"{self.address} {short_fingerprint(self.fingerprint)} {self.name} TERM={self.term or '-'} {window}"
            f" {seconds:.1f} s, {self.keys} keys, {ended}"
        )
        who = {"address": self.address, "fingerprint": self.fingerprint, "name": self.name}
        facts = {"term": self.term or None, "window": window if self.window else None, "seconds": round(seconds, 1)}
        self._log(line, "ended", **who, **facts, keys=self.keys, endings=self.endings or ["closed"])
