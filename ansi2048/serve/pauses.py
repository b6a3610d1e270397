"""Saving paused, as the server sees it (:class:`SavingPauses`): which games
wait for the store now, the operator's two lines an outage gives, and the
writes a game left unfinished when its session ended during a pause.

An outage is logged server-wide, not per game: one line when the first game
pauses ("the store is unavailable", with why), one when the last one is
saving again (how long it lasted, how many games it paused). A database away
under 100 players gives those two lines, not 100 or one a retry: the
operator's question is whether the store is up, and since when; which
players waited is in their connections' own lines.

A game whose keys are stored but whose record is not (its history record or
a best: the store went away between the two) is shown as stored; if its
player leaves during that pause, those writes are not dropped with the
session: they are handed here (:meth:`SavingPauses.keep_trying`) and tried
again, with the games' own backoff, until they land or the server stops
(then they are logged as not kept; a game over's record is kept when its
player next connects: keeping.open_game). The keys need no such care: a frame
waits for its keys, so a session that ends during their pause has shown
nothing they hold.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import Awaitable, Callable, List, Optional

from .log import Logs
from .names import printable
from .store.base import StoreError, StoreUnavailable

__all__ = ["PAUSE_FIRST", "PAUSE_LONGEST", "SavingPauses", "Write", "next_wait"]

# While the database cannot take a write, it is tried again, first this
# soon, then twice as late each time up to the longest: a restarted
# PostgreSQL or a freed disk is seen within seconds, and a long outage
# costs few tries.
PAUSE_FIRST = 0.25
PAUSE_LONGEST = 4.0
# The most of a store's error the log repeats (it is reduced to printable
# ASCII: a database's message may quote what a client sent).
_WHY_CHARS = 160

# A write to the store, tried again as it is (each is idempotent: a best is
# a maximum, a claim a lease, and keys or a record are written once, by the
# one call that lands).
Write = Callable[[], Awaitable[object]]


def next_wait(wait: float) -> float:
    """The wait before the next try, after one that failed after ``wait``."""
    return min(2 * wait, PAUSE_LONGEST)


class SavingPauses:
    """The games whose saving has paused, counted server-wide; ``log``
    writes a line to the server's log (which dates it), ``clock`` is
    monotonic seconds."""

    def __init__(self, log: Logs, clock: Callable[[], float]) -> None:
        self._log = log
        self._clock = clock
        self.paused = 0  # games (and handed-over writes) waiting for the store now
        self.games_paused = 0  # games whose saving paused, since the server started (serve/metrics.py)
        self._since: Optional[float] = None  # when the outage began (the first pause)
        self._games = 0  # pauses in this outage
        self._left: List[Write] = []  # writes of sessions that ended paused, oldest first
        self._retrying: Optional[asyncio.Task[None]] = None
        self._stopping = asyncio.Event()  # set by close: the retries end (a write under way finishes first)

    def paused_by(self, error: StoreUnavailable, game: bool = True) -> None:
        """A game's saving has paused on ``error`` (not ``game``: the writes
        a game handed over, which keep the outage open but are no new game)."""
        if self._since is None:
            self._since = self._clock()
            self._games = 0
            why = _why(error)
            self._log(f"saving paused: the store is unavailable: {why}", "saving_paused", reason=why)
        self.paused += 1
        self._games += int(game)
        self.games_paused += int(game)

    def resumed(self) -> None:
        """A game's pause is over (its write landed, or its play ended)."""
        self.paused -= 1
        if self.paused == 0 and self._since is not None:
            seconds = self._clock() - self._since
            self._since = None
            games = "1 game" if self._games == 1 else f"{self._games} games"
            said = f"saving resumed: the store is back after {seconds:.1f} s ({games} paused)"
            self._log(said, "saving_resumed", seconds=round(seconds, 1), games=self._games)

    def keep_trying(self, writes: List[Write], error: StoreUnavailable, game: bool) -> None:
        """``writes`` (a game's record and bests) outlive their session:
        tried again in order, in the background, until each lands. ``game``:
        their game had not paused (its player left first), so it counts in
        the outage."""
        if not writes:
            return
        self._left += writes
        if self._retrying is None:
            self.paused_by(error, game)  # the outage lasts until these land too
            self._retrying = asyncio.get_running_loop().create_task(self._retry())
        elif game:
            self._games += 1
            self.games_paused += 1

    async def _retry(self) -> None:
        wait = PAUSE_FIRST
        while self._left:
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), wait)
            if self._stopping.is_set():
                return  # close tries what is left
            while self._left and not self._stopping.is_set():
                write = self._left[0]
                try:
                    await write()
                except StoreUnavailable:
                    wait = next_wait(wait)
                    break
                except StoreError as error:  # refused for good, not away: trying again would not help
                    self._log(f"saving: a finished game's write not kept: {_why(error)}")
                if self._left and self._left[0] is write:  # (close may have taken the list meanwhile)
                    self._left.pop(0)
        self._retrying = None
        self.resumed()  # every write landed (close may have begun meanwhile: it finds none left)

    async def close(self, seconds: float) -> None:
        """The server is stopping: the writes left are tried once more, for
        at most ``seconds`` in all (the server must be gone soon), and those
        that did not land are logged as not kept."""
        end = self._clock() + seconds
        self._stopping.set()
        if self._retrying is not None:
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._retrying), seconds)
        left, self._left = self._left, []
        lost = 0
        for write in left:
            try:
                await asyncio.wait_for(write(), max(0.0, end - self._clock()))
            except (StoreUnavailable, asyncio.TimeoutError):
                lost += 1
        if lost:
            self._log(f"saving stopped: {lost} writes of finished games not kept", "saving_stopped", writes=lost)


def _why(error: StoreError) -> str:
    """The store's message as the log may repeat it: one line, printable, short."""
    return printable(" ".join(str(error).split()), _WHY_CHARS) or "no reason given"
