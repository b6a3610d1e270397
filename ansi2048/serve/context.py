"""What every handler is given (:class:`ServeContext`): the server's
services, built once by the server (:mod:`.server`) and passed down to each
connection, channel and command. A handler never reaches through another
object for them: what it uses is a field here, or its :class:`~.link.Client`.

Also the registry of the sessions running (:class:`Sessions`): the claim
holders' names and who holds what, for taking a game over and the stop."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from itertools import count
from typing import Any, Callable, Optional, Protocol, Set

from .far_live import FarLive
from .far_races import FarRaces
from .limits import DEFAULT_LIMITS, Admission, Limits
from .link import Ended, Identity, Incoming
from .live import LiveGames
from .log import Logs
from .metrics import ServerMetrics
from .names import key_name
from .pauses import SavingPauses
from .pool import AIPool
from .race_hall import RaceHall
from .settings import ServeOptions
from .store.base import Player, Store

__all__ = ["RunningSession", "ServeContext", "Sessions"]


class RunningSession(Protocol):
    """What the server's stop, its drain and a take-over use of a session."""

    @property
    def holders(self) -> Set[str]:
        """The claims it took."""

    @property
    def incoming(self) -> asyncio.Queue[Incoming]: ...

    def stopping(self) -> Optional[asyncio.Task[None]]:
        """The server is stopping: end, saying so; the session's task."""

    def connection(self) -> Any:
        """Its client's connection (asyncssh's, or a page's socket), or None."""

    @property
    def command(self) -> Optional[str]:
        """The command its client asked for (None: a shell, the game)."""

    @property
    def task(self) -> Optional[asyncio.Task[None]]:
        """What it runs, once started (it ends after its client has gone: saving)."""

    def gone(self) -> bool:
        """Its client has left."""


class Sessions:
    """The sessions running on this server (``all``), and the names of the
    claims they take: a claim names this server (host, process, start) and
    a session's number, so that a claim left by a server that was killed is
    known for one (:meth:`gone`)."""

    def __init__(self) -> None:
        self.all: Set[RunningSession] = set()
        self.draining = False  # a new server took over: sessions end at their natural point (serve/takeover.py)
        self._numbers = count(1)
        self._host = _hostname()
        self._id = f"{self._host}:{os.getpid()}:{time.time_ns()}"
        _SERVERS_HERE.add(self._id)

    def started(self, session: RunningSession) -> None:
        self.all.add(session)

    def ended(self, session: RunningSession) -> None:
        self.all.discard(session)

    def holder(self) -> str:
        """A claim holder's name: this server's, and a session's number."""
        return f"{self._id}:{next(self._numbers)}"

    @property
    def server(self) -> str:
        """This server's id: every claim holder's name here begins with it and ":"."""
        return self._id

    def taken_over(self, holder: str, said: str) -> bool:
        """Another session took over the game ``holder`` had: if ``holder``
        is a session of this server, its play ends now (not at its next key
        or renewal), writing nothing more, saying ``said``; whether it was.
        A session of another server is told by the exchange
        (serve/far_live.py), or learns it at its next write or renewal."""
        found = False
        for session in self.all:
            if holder in session.holders:
                session.incoming.put_nowait(Ended(said, lost=True))
                found = True
        return found

    def leaving(self, holder: str) -> Optional[asyncio.Task[None]]:
        """The task of this server's session holding ``holder`` if its client
        has left: it is writing what its player saw, then lets the claim go
        (a player coming back at once after a dropped connection waits for
        that, not for an answer to "take it over?"); None otherwise."""
        for session in self.all:
            if holder in session.holders and session.gone() and session.task is not None:
                return session.task
        return None

    def gone(self, holder: str) -> bool:
        """``holder`` was a session of a server on this machine that is no
        longer running (it was killed): its claim need not be waited out,
        nor its player asked to take the game over."""
        host, _, rest = holder.partition(":")
        pid = rest.partition(":")[0]
        if host != self._host or not pid.isdigit():
            return False  # another machine's server: its claim expires by itself
        if int(pid) == os.getpid():  # this process: one of its servers (tests run two), or the pid's earlier life
            return not any(holder.startswith(server + ":") for server in _SERVERS_HERE)
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False  # running, as another user
        return False


# The ids of the servers this process has run (one, but for a test's two on one store).
_SERVERS_HERE: Set[str] = set()


def _hostname() -> str:
    import socket

    return socket.gethostname().replace(":", "_")


@dataclass(frozen=True)
class ServeContext:
    """The server's services, as every handler sees them. Immutable: the
    objects it holds keep their own state (the store, the live games, the
    admission's counts); which objects they are never changes while the
    server runs (the port is set once, when it listens)."""

    store: Store
    pool: AIPool  # the AI's processes (hints, autoplay)
    random_seed: Callable[[], int]  # a new game's seed
    clock: Callable[[], float]  # monotonic seconds: timeouts and limits
    now: Callable[[], float]  # the wall clock: days, dates
    log: Logs  # one line (an event) on the server's log
    pauses: SavingPauses  # the games whose saving paused
    live: LiveGames = field(default_factory=LiveGames)  # the games that may be watched
    limits: Limits = DEFAULT_LIMITS
    admission: Admission = field(default_factory=lambda: Admission(DEFAULT_LIMITS))
    sessions: Sessions = field(default_factory=Sessions)
    connections: Set[Any] = field(default_factory=set)  # the clients' connections open (asyncssh's)
    daily_secret: bytes = b""  # the days' seeds derive from it (ranked.daily_secret)
    daily_per_address: int = ServeOptions.daily_per_address  # players one address may enter in a day's ranking
    watch_stall: float = ServeOptions.watcher_stall  # seconds a watcher may not read before it is dropped
    port: int = 0  # the SSH port, once listening (what help says to connect to)
    races: Optional[RaceHall] = None  # the lobbies and races (the server's; None: no races run here)
    metrics: ServerMetrics = field(default_factory=ServerMetrics)  # counted always (cheap); --metrics serves them
    far: Optional[FarLive] = None  # the live games of the store's other servers (None: this server's only)
    far_races: Optional[FarRaces] = None  # the lobbies, races and waits of the store's other servers

    async def player(self, identity: Identity) -> Optional[Player]:
        """The player ``identity``'s key names; None for a guest."""
        if identity.fingerprint is None:
            return None
        player = await self.store.player(identity.fingerprint, key_name(identity.name))
        identity.named(player.name)
        return player
