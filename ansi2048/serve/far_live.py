"""The live games of the other servers on the same store (issue 38): the
watch list, ``watch NAME``, the player's "N watching" and a take-over's
end cross servers (:class:`FarLive`).

Every server runs one exchange, a task that, every :data:`TICK_SECONDS`,
writes what its own live games are (store/live.py: the list's standing at
most once a second, and the newest frame of a game that a watcher on
another server follows), and reads the others': each game of another
server becomes a *mirror* in this server's :class:`~.live.LiveGames`, an
ordinary :class:`~.live.LiveGame` that the exchange publishes each frame
of, so that the watch list, ``watch NAME`` and a watcher's drawing are the
same code for a game here and a game there. A mirror's frames are the
player's settled boards (no motion): a frame is a view, sent as JSON
(:func:`view_document`), never the player's bytes.

Why polling the tables, and not PostgreSQL's LISTEN/NOTIFY: the same
mechanism must work for SQLite (several processes on one file, the
``--workers`` case), which has no notification across processes; a read of
two small tables ten times a second costs a server about a millisecond of
CPU a second, and keeps a watcher within :data:`TICK_SECONDS` twice (the
player's server's write, the watcher's server's read) of the player's frame.
The rows are the truth for a moment only: each server rewrites its own and
ignores any not seen for :data:`~.store.live.STALE_SECONDS` (a killed server's)."""

from __future__ import annotations

import asyncio
import json
from contextlib import suppress
from dataclasses import dataclass, fields
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..game.session import Status
from ..render.frame import View
from .live import LiveGame, LiveGames
from .log import Logs
from .names import printable
from .secrecy import Deal, GameFacts
from .store.base import Store
from .store.links import Statement
from .store.live import (
    DELETE_GONE,
    DELETE_STALE,
    DELETE_STALE_TAKEN_OVER,
    DELETE_STALE_WATCHERS,
    DELETE_TAKEN_OVER,
    INSERT_TAKEN_OVER,
    MOST_GAMES_A_STATEMENT,
    SELECT_GAMES,
    SELECT_TAKEN_OVER,
    SELECT_WATCHERS,
    STALE_SECONDS,
    TOUCH_GAMES,
    UPSERT_VIEW,
    UPSERT_WATCHERS,
    upsert_games,
)

__all__ = ["FAR_LISTED_SECONDS", "TICK_SECONDS", "FarLive", "view_document", "view_from"]

# How often the exchange writes and reads (seconds).
TICK_SECONDS = 0.1
# How long a game begun on another server may take to be listed here: its
# server's tick, this one's, and a commit between them.
FAR_LISTED_SECONDS = 4 * TICK_SECONDS
# How often a game's standing (score, biggest tile, watchers) is written at
# most, and every server's rows are touched: the list's pace, not a frame's.
LIST_SECONDS = 1.0
# Ticks a second: each game's list line is looked at in one of them.
SPREAD = round(LIST_SECONDS / TICK_SECONDS)
# How often the rows of servers that are gone are deleted.
SWEEP_SECONDS = 30.0

# The view's fields a watcher's frame is drawn from (watched_view replaces
# the player's own: note, hint, autoplay, ending; the key bindings are never shown).
_SENT = (
    "board",
    "spawned",
    "score",
    "best",
    "moves",
    "goal",
    "seed",
    "status",
    "over",
    "reached",
    "gained",
    "assisted",
    "day",
    "ranked",
    "guest",
    "undo",
)


def view_document(view: View) -> str:
    """``view`` as the JSON a watcher's server draws it from (:func:`view_from`)."""
    document: Dict[str, Any] = {name: getattr(view, name) for name in _SENT}
    document["status"] = view.status.value
    return json.dumps(document, separators=(",", ":"))


def view_from(text: str) -> Optional[View]:
    """The view :func:`view_document` wrote; None if ``text`` is not one
    (a row written by another version of the server: nothing is drawn from it)."""
    try:
        document = json.loads(text)
        board = tuple(tuple(int(cell) for cell in row) for row in document["board"])
        spawned = document["spawned"]
        values = {name: document[name] for name in _SENT}
        values.update(
            board=board,
            spawned=None if spawned is None else (int(spawned[0]), int(spawned[1])),
            status=Status(document["status"]),
        )
        known = {field.name for field in fields(View)}
        return View(**{name: value for name, value in values.items() if name in known})
    except (ValueError, KeyError, TypeError, IndexError):
        return None


@dataclass
class _Sent:
    """What the exchange last wrote of one of its own games."""

    standing: Tuple[int, int, int] = (-1, -1, -1)  # score, biggest, watchers
    at: float = 0.0  # when (the wall clock)
    frame: object = None  # the frame (LiveGame.latest) last written, for far watchers
    version: int = 0


@dataclass
class _Mirror:
    """A game of another server, mirrored here."""

    game: LiveGame
    version: int = -1  # the frame's version last published
    reported: int = 0  # this server's watchers of it, as last written


class FarLive:
    """This server's exchange of live games with the other servers on
    ``store`` (``server``: this server's id, the claims' prefix; ``taken_over``:
    ends this server's session of a claim another server took over)."""

    def __init__(
        self,
        store: Store,
        live: LiveGames,
        server: str,
        now: Callable[[], float],
        log: Logs,
        taken_over: Callable[[str], object],
    ) -> None:
        self._store = store
        self._live = live
        self._server = server
        self._now = now
        self._log = log
        self._taken_over = taken_over
        self._sent: Dict[int, _Sent] = {}  # own games' numbers -> what was written of them
        self._mirrors: Dict[Tuple[str, int], _Mirror] = {}
        self._touched = 0.0
        self._swept = 0.0
        self._ticks = 0
        self._takeovers: List[str] = []  # claims of other servers taken over here, to tell them
        self._failing = False  # the store is away: said once in the log
        self._task: Optional[asyncio.Task[None]] = None
        self._stop = asyncio.Event()

    def tell_taken_over(self, holder: str) -> None:
        """A session here took over the claim of ``holder``, another
        server's session: that server ends it at its next tick."""
        self._takeovers.append(holder)

    def start(self) -> None:
        """Begin the exchange, on the running loop (once the server listens)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self, seconds: float) -> None:
        """End it, its games' rows deleted, within ``seconds`` (the store may be away)."""
        self._stop.set()
        if self._task is not None:
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._task), max(0.1, seconds))

    async def _run(self) -> None:
        """Tick until :meth:`close`; the rows of this server's games are deleted then."""
        stop = self._stop
        while not stop.is_set():
            try:
                await self.tick()
                if self._failing:
                    self._failing = False
                    self._log("live games of other servers: the store is back", "far_live", ok=True)
            except Exception as error:  # the store away (or a bug): the games here go on, said once
                for sent in self._sent.values():  # what this tick meant to write is written again once it is back
                    sent.standing, sent.at, sent.frame = _Sent().standing, 0.0, None
                if not self._failing:
                    self._failing = True
                    why = printable(" ".join(f"{type(error).__name__}: {error}".split()), 160)
                    said = f"live games of other servers: not seen while the store is away: {why}"
                    self._log(said, "far_live", ok=False, reason=why)
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), TICK_SECONDS)
        with suppress(Exception):  # the store away at the stop (or a bug): the rows go stale by themselves
            await self._store.run_script([Statement(DELETE_GONE, (self._server, number)) for number in self._sent])

    async def tick(self) -> None:
        """One exchange: this server's news written, the others' read."""
        now = self._now()
        told = len(self._takeovers)
        script = self._writes(now)
        if script:
            await self._store.run_script(script)
        del self._takeovers[:told]  # written (a failed write leaves them to the next tick)
        since = now - STALE_SECONDS
        games, watchers, takeovers = await self._store.run_script(
            [
                Statement(SELECT_GAMES, (self._server, since)),
                Statement(SELECT_WATCHERS, (self._server, self._server, since)),
                Statement(SELECT_TAKEN_OVER, (len(self._server) + 1, self._server + ":")),
            ],
            read=True,
        )
        self._mirror(games)
        counts = {int(number): int(count) for number, count in watchers}
        for game in self._own():
            game.far_watched(counts.get(game.number, 0))
        if takeovers:
            held = [str(holder) for (holder,) in takeovers]
            for holder in held:
                self._taken_over(holder)
            await self._store.run_script([Statement(DELETE_TAKEN_OVER, (holder,)) for holder in held])

    def _own(self) -> List[LiveGame]:
        return [game for game in self._live.games() if not game.far]

    def _writes(self, now: float) -> List[Statement]:
        """What this tick writes: its games' standings (changed, at most
        once a second each), the newest frame of each a far watcher follows,
        the games gone, its watchers of far games, the heartbeat."""
        script: List[Statement] = []
        own = {game.number: game for game in self._own()}
        for number in [number for number in self._sent if number not in own]:
            del self._sent[number]
            script.append(Statement(DELETE_GONE, (self._server, number)))
        self._ticks += 1
        rows: List[Tuple[Any, ...]] = []
        for number, game in own.items():
            sent = self._sent.setdefault(number, _Sent())
            # A game's line once a second at most, the games spread over the
            # ticks (a tenth of them each), a new one's at once.
            if sent.at and (number + self._ticks) % SPREAD:
                continue
            standing = (*game.standing(), game.watching)
            if standing != sent.standing and now - sent.at >= LIST_SECONDS - TICK_SECONDS / 2:
                facts = game.facts
                where = (self._server, number, game.name, game.rows, game.cols)
                rows.append((*where, facts.deal.value, facts.day, facts.owner, *standing, now))
                sent.standing, sent.at = standing, now
        for first in range(0, len(rows), MOST_GAMES_A_STATEMENT):
            chunk = rows[first : first + MOST_GAMES_A_STATEMENT]
            script.append(Statement(upsert_games(len(chunk)), tuple(value for row in chunk for value in row)))
        for number, game in own.items():
            sent = self._sent[number]
            if game.far_watchers and game.latest is not None and game.latest is not sent.frame:
                sent.frame, sent.version = game.latest, sent.version + 1
                document = view_document(game.latest[0])
                script.append(Statement(UPSERT_VIEW, (document, sent.version, now, self._server, number)))
            elif not game.far_watchers:
                sent.frame = None  # a far watcher who comes gets the frame at once
        for (server, number), mirror in self._mirrors.items():
            watchers = mirror.game.watchers
            if watchers != mirror.reported or (watchers and now - self._touched >= LIST_SECONDS):
                script.append(Statement(UPSERT_WATCHERS, (self._server, server, number, watchers, now)))
                mirror.reported = watchers
        script += [Statement(INSERT_TAKEN_OVER, (holder, now)) for holder in self._takeovers]
        if now - self._touched >= LIST_SECONDS:
            self._touched = now
            script.append(Statement(TOUCH_GAMES, (now, self._server)))
        if now - self._swept >= SWEEP_SECONDS:
            self._swept = now
            script += [Statement(DELETE_STALE, (now - STALE_SECONDS * 3,))]
            script += [Statement(DELETE_STALE_WATCHERS, (now - STALE_SECONDS,))]
            script += [Statement(DELETE_STALE_TAKEN_OVER, (now - STALE_SECONDS * 3,))]
        return script

    def _mirror(self, rows: Sequence[Tuple[Any, ...]]) -> None:
        """The other servers' games as read: new ones mirrored, the others
        brought up to date, those gone ended."""
        seen: Set[Tuple[str, int]] = set()
        for row in rows:
            server, number, name, rows_, cols, deal, day, owner, score, biggest, watchers, version, view = row
            key = (str(server), int(number))
            seen.add(key)
            mirror = self._mirrors.get(key)
            if mirror is None:
                try:
                    facts = GameFacts(Deal(deal), str(day), None if owner is None else int(owner))
                except ValueError:
                    continue  # a deal this version does not know: not listed
                game = self._live.mirror(printable(str(name), 40), int(rows_), int(cols), facts)
                mirror = self._mirrors[key] = _Mirror(game)
            game = mirror.game
            game.far_watched(max(0, int(watchers) - game.watchers))
            game.set_standing(int(score), int(biggest))
            if view is not None and int(version) > mirror.version:
                drawn = view_from(str(view))
                if drawn is not None:
                    mirror.version = int(version)
                    game.publish((drawn, None, 0))
        for key in [key for key in self._mirrors if key not in seen]:
            self._mirrors.pop(key).game.end()
