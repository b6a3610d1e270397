"""The server's numbers (:class:`ServerMetrics`), in Prometheus's text
format, and whether its store is reachable (:func:`health`): what
``--metrics HOST:PORT``'s pages say (:mod:`.metrics_page`).

Each server has a registry of its own (not prometheus-client's global one:
two servers in one process, a test's, do not add up each other's numbers).
What the game's hot path touches is kept cheap: a key's and a frame's count
is an integer added to; only the two latencies are observed as they happen
(a histogram's observe, about a microsecond). Everything else (sessions and
players by kind, saving paused, refusals, the AI's pool) is read from the
server's state when the page is asked for, by :class:`_ServerState`.

"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Counter, Dict, Iterable, Iterator, Optional, Protocol, Tuple

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .limits import Admission
from .names import printable
from .pauses import SavingPauses
from .pool import AIPool
from .store.base import Store, StoreError

__all__ = ["HEALTH_SECONDS", "LATENCY_BUCKETS", "GameKind", "Played", "ServerMetrics", "ServerState", "health"]

# Seconds: a frame within 10 ms feels instant, past 100 ms it lags; a commit
# is grouped with others (serve/store), tens of ms under load.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# How long /health waits for the store before it says it is unreachable.
HEALTH_SECONDS = 2.0
# What /health reads: a best no player has (any read that reaches the database does).
_HEALTH_PLAYER, _HEALTH_BOARD = 0, "health"
# A session's kind, by its command's first word; any other command is "command"
# (a client's word never becomes a label: the labels are these, whatever is sent).
SESSION_KINDS = ("play", "daily", "watch", "replay", "cast", "race")


class GameKind(Enum):
    """What a game being played is: a player's game on a board, the day's
    ranked game, or a guest's (not kept)."""

    REGULAR = "regular"
    DAILY = "daily"
    GUEST = "guest"


class Played(Protocol):
    """A game being played, as the numbers count it: its keys so far."""

    @property
    def keys(self) -> int: ...


@dataclass(frozen=True)
class ServerState:
    """Where the page reads the rest of the server's numbers when it is
    asked for: the commands of the sessions running (None: a shell, the
    game), the connections open, the paused games, the admission's
    refusals, the AI's pool."""

    session_commands: Callable[[], Iterable[Optional[str]]]
    connections: Callable[[], int]
    pauses: SavingPauses
    admission: Admission
    pool: AIPool


class ServerMetrics:
    """One server's numbers: what the hot path adds to (:meth:`frame_sent`,
    the two histograms, :meth:`playing`), and its registry, which reads the
    rest from the server's state (:meth:`reads`, :meth:`page`)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.key_to_frame = Histogram(
            "ansi2048_key_to_frame_seconds",
            "From a client's keys reaching the server to the frame that shows them written (or, if they show"
            " nothing new, to their step done)",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.store_append = Histogram(
            "ansi2048_store_append_seconds",
            "How long a game's keys took to be committed by the store, as the game waited for them",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.frames = 0  # writes of frames to players
        self.keys_ended = 0  # keys of games no longer played (those being played are counted live)
        self.games: Dict[Played, GameKind] = {}

    def reads(self, state: ServerState) -> None:
        """The page reads the rest of its numbers from ``state`` (once, as the server starts)."""
        self.registry.register(_StateCollector(state, self))

    def frame_sent(self) -> None:
        self.frames += 1

    @contextmanager
    def playing(self, game: Played, kind: GameKind) -> Iterator[None]:
        """While the ``with`` block plays ``game``, it counts among the
        players, and its keys as it plays them."""
        self.games[game] = kind
        try:
            yield
        finally:
            del self.games[game]
            self.keys_ended += game.keys

    def keys(self) -> int:
        return self.keys_ended + sum(game.keys for game in self.games)

    def page(self) -> bytes:
        """The numbers in Prometheus's text format."""
        return bytes(generate_latest(self.registry))


class _StateCollector(Collector):
    """What the page reads from the server's state when it is asked for."""

    def __init__(self, state: ServerState, metrics: ServerMetrics) -> None:
        self._state = state
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        state, metrics = self._state, self._metrics
        sessions = GaugeMetricFamily("ansi2048_sessions", "Sessions running, by what they run", labels=["kind"])
        kinds = Counter[str]({kind: 0 for kind in (*SESSION_KINDS, "command")})
        kinds.update(_kind(command) for command in state.session_commands())
        for kind, count in sorted(kinds.items()):
            sessions.add_metric([kind], count)
        yield sessions
        players = GaugeMetricFamily("ansi2048_players", "Games being played, by kind", labels=["kind"])
        played = Counter[GameKind]({kind: 0 for kind in GameKind})
        played.update(metrics.games.values())
        for game_kind, count in played.items():
            players.add_metric([game_kind.value], count)
        yield players
        yield GaugeMetricFamily("ansi2048_connections", "SSH connections open", value=state.connections())
        yield CounterMetricFamily("ansi2048_keys", "Keys played", value=metrics.keys())
        yield CounterMetricFamily("ansi2048_frames", "Writes of frames to players", value=metrics.frames)
        pauses = state.pauses
        yield GaugeMetricFamily(
            "ansi2048_saving_paused", "Games (and ended games' writes) waiting for the store now", value=pauses.paused
        )
        yield CounterMetricFamily(
            "ansi2048_saving_pauses", "Games whose saving paused, the store away", value=pauses.games_paused
        )
        refusals = CounterMetricFamily(
            "ansi2048_refusals", "Connections and sessions refused, by limit", labels=["limit"]
        )
        for limit, count in sorted(state.admission.refused.items()):
            refusals.add_metric([limit], count)
        yield refusals
        pool = state.pool
        yield GaugeMetricFamily("ansi2048_ai_queue", "AI questions asked and not yet answered", value=pool.in_flight)
        yield CounterMetricFamily("ansi2048_ai_restarts", "AI pools started again after a worker died", pool.rebuilt)


def _kind(command: Optional[str]) -> str:
    """A session's kind: its command's first word if it is one of
    :data:`SESSION_KINDS`, "play" for a shell, else "command"."""
    if command is None:
        return "play"
    word = command.split(None, 1)[0] if command.strip() else ""
    return word if word in SESSION_KINDS else "command"


async def health(store: Store, pauses: SavingPauses) -> Tuple[bool, str]:
    """Whether the store is reachable now, and the line that says so: a read
    answered within :data:`HEALTH_SECONDS`, and no game's saving paused."""
    try:
        await asyncio.wait_for(store.best(_HEALTH_PLAYER, _HEALTH_BOARD), HEALTH_SECONDS)
    except asyncio.TimeoutError:
        return False, f"store unreachable: no answer in {HEALTH_SECONDS:g} s"
    except StoreError as error:
        return False, f"store unreachable: {printable(' '.join(str(error).split()), 200) or type(error).__name__}"
    if pauses.paused:
        return False, f"saving paused: {pauses.paused} games wait for the store"
    return True, "ok"
