"""Races across the servers of one store (issues 37 and 38): a player on
any server meets the lobby, the race or the friend that another server
holds (:class:`FarRaces`).

A race is played where its lobby opened: the room (serve/race_hall.py)
keeps every seat's game in one process, so the rules, the countdown, the
result and its verification are the same code whether the players came
to that server or not. A player whose server does not hold the room they
are after is *relayed* there (serve/relay.py: their keys and window go
over, the screen comes back), and that server runs their ``race`` as its
own player's. Relaying a player costs their server a copy of the bytes;
playing a mirrored room on both servers would need every move agreed
between them, which the one-room design never has to do.

Which room is where: each server writes a row per lobby, race and wait it
holds (store/race_rooms.py) every :data:`PUBLISH_SECONDS`, and at once
when one opens. A ``race`` looks there first (:meth:`FarRaces.where`):
back to a race the player dropped from, to the friend's lobby or wait, to
the public lobby of those settings. A lobby opened here is written before
its player waits in it (:meth:`FarRaces.opened`); the store's unique
index lets one public lobby of given settings stand on all servers, and a
player whose server lost that race is relayed to the one that won it."""

from __future__ import annotations

import asyncio
import json
from contextlib import suppress
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Set, Tuple

from ..game.race import Phase, RaceSettings
from ..render.race import settings_line
from .log import Logs
from .names import folded, printable
from .race_friends import Entrant, Friend
from .race_hall import RaceHall, RaceRoom
from .store.base import Store, StoreError
from .store.links import Statement
from .store.race_rooms import (
    DELETE_NOT_NOW,
    DELETE_STALE,
    INSERT_ROOM,
    SELECT_LOBBY,
    SELECT_ROOMS,
    STALE_SECONDS,
    UPDATE_ROOM,
)

__all__ = ["PUBLISH_SECONDS", "FarRaces", "RoomRow", "choose", "settings_key"]

# How often a server writes its rows again (its heartbeat; a room's phase and players).
PUBLISH_SECONDS = 1.0
LOBBY, RACING, WAITING = "lobby", "racing", "waiting"


def settings_key(settings: RaceSettings) -> str:
    """What a public lobby of ``settings`` is found by."""
    return f"{settings.rows}x{settings.cols}-{settings.goal}-{settings.players}p-{settings.minutes}m"


def players_text(players: Sequence[Optional[int]]) -> str:
    """Player ids as a row holds them (guests are nobody to find)."""
    return "," + "".join(f"{player}," for player in players if player is not None)


@dataclass(frozen=True)
class RoomRow:
    """A row of another server's: where its relay door is, what meets
    there, and what the watch list shows of it."""

    address: str
    phase: str
    settings: str
    players: str
    title: str = ""
    names: Tuple[str, ...] = ()

    def has(self, player: Optional[int]) -> bool:
        return player is not None and f",{player}," in self.players

    @classmethod
    def read(cls, row: Sequence[object]) -> RoomRow:
        """A row as the store gives it (names as JSON: anything else is no names)."""
        try:
            names = json.loads(str(row[5]))
        except ValueError:
            names = []
        listed = tuple(printable(str(name), 40) for name in names) if isinstance(names, list) else ()
        return cls(str(row[0]), str(row[1]), str(row[2]), str(row[3]), printable(str(row[4]), 80), listed)


def choose(
    rows: Sequence[RoomRow],
    entrant: Entrant,
    settings: RaceSettings,
    friend: Optional[Friend],
    waiting: bool = False,
) -> Optional[str]:
    """The address to relay ``entrant`` to, among other servers' ``rows``:
    the race they dropped from; with ``race NAME``, the friend's lobby, or
    the friend's wait for them; else the public lobby of ``settings``.
    ``waiting``: ``entrant`` waits for the friend themselves; two friends
    who began to wait for each other at once on two servers must not each
    go to the other's (and miss again): only the one with the greater id
    goes, the other stays for them."""
    for row in rows:
        if row.phase == RACING and row.has(entrant.player):
            return row.address
    lobby, waits_for_entrant = settings_key(settings), f"for:{entrant.player}"
    to_waits = friend is not None and (not waiting or (entrant.player or 0) > friend.player)
    for row in rows:
        if friend is None:
            if row.phase == LOBBY and row.settings == lobby:
                return row.address
            continue
        # The friend's lobby, whatever its settings; or their wait for this player.
        meets = row.phase == LOBBY or (to_waits and row.phase == WAITING and row.settings == waits_for_entrant)
        if meets and row.has(friend.player):
            return row.address
    return None


def parse_address(text: str) -> Optional[Tuple[str, int]]:
    host, _, port = text.rpartition(":")
    return (host.strip("[]"), int(port)) if port.isdigit() and host else None


class FarRaces:
    """This server's rows of lobbies, races and waits, written; the other
    servers', read when a player asks to race."""

    def __init__(
        self,
        store: Store,
        hall: RaceHall,
        server: str,
        now: Callable[[], float],
        log: Logs,
        draining: Callable[[], bool] = lambda: False,
    ) -> None:
        self._store = store
        self._draining = draining  # a new server took over: its lobbies are offered no more
        self._hall = hall
        self._server = server
        self._now = now
        self._log = log
        self.address = ""  # the relay door's HOST:PORT, once it listens
        self._public: Set[str] = set()  # the lobbies opened here that stand for their settings everywhere
        self._written: Set[str] = set()  # the rooms whose rows may be written (their opening was)
        self._task: Optional[asyncio.Task[None]] = None
        self._failing = False
        self.others: List[RoomRow] = []  # the other servers' rows, as last read (each publishing tick)

    def start(self, address: Tuple[str, int]) -> None:
        host, port = address
        self.address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """The server stops: its rows go (the others relay nobody here)."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with suppress(StoreError):
            await self._store.run_script([Statement(DELETE_NOT_NOW, (self._server, -1.0))])

    def here(self, entrant: Entrant, settings: RaceSettings, friend: Optional[Friend]) -> bool:
        """This server holds what ``entrant`` is after (its hall decides)."""
        for room in self._hall.rooms():
            seat = room.seat_of(entrant.key) if entrant.player is not None else None
            if seat is not None and not seat.left:
                return True
            in_lobby = room.phase is Phase.LOBBY
            if in_lobby and friend is None and room.settings == settings:
                return True
            if in_lobby and friend is not None and any(s.entrant.player == friend.player for s in room.seats.values()):
                return True
        waits = self._hall.waiters
        return friend is not None and any(
            w.entrant.player == friend.player for w in waits.for_player(entrant.player, 0)
        )

    async def where(
        self, entrant: Entrant, settings: RaceSettings, friend: Optional[Friend], waiting: bool = False
    ) -> Optional[Tuple[str, int]]:
        """The relay door of the server holding what ``entrant`` is after,
        if another server holds it and this one does not (``waiting``: as
        :func:`choose` takes it)."""
        if self._task is None or self.here(entrant, settings, friend):
            return None
        try:
            rows = await self._read()
        except StoreError:
            return None  # the store away: the player races here
        chosen = choose(rows, entrant, settings, friend, waiting)
        return parse_address(chosen) if chosen is not None else None

    async def racing_named(self, name: str) -> Optional[Tuple[str, int]]:
        """The relay door of the server where ``name`` is in a race or a
        lobby (``watch NAME`` is watched there), if another server's."""
        if self._task is None:
            return None
        with suppress(StoreError):
            for row in await self._read():
                if row.phase != WAITING and any(folded(shown) == folded(name) for shown in row.names):
                    return parse_address(row.address)
        return None

    def listed(self) -> List[RoomRow]:
        """The other servers' lobbies and races as last read (the watch list's)."""
        return [row for row in self.others if row.phase != WAITING]

    async def _read(self) -> List[RoomRow]:
        found = await self._store.run_script(
            [Statement(SELECT_ROOMS, (self._server, self._now() - STALE_SECONDS))], read=True
        )
        return [RoomRow.read(row) for row in found[0]]

    async def opened(self, room: RaceRoom, public: bool) -> Optional[Tuple[str, int]]:
        """``room``'s row written as it opens; if it is a public lobby and
        another server's of the same settings stands, that one's relay door
        (its player goes there)."""
        if self._task is None or room.token in self._written:
            return None
        self._written.add(room.token)
        if public:
            self._public.add(room.token)
        script = self._script()
        script.append(Statement(SELECT_LOBBY, (settings_key(room.settings),)))
        try:
            found = await self._store.run_script(script)
        except StoreError:
            return None
        holder = [(str(server), str(address)) for server, address in found[-1]]
        if public and holder and holder[0][0] != self._server:
            self._written.discard(room.token)
            self._public.discard(room.token)
            return parse_address(holder[0][1])
        return None

    async def waiting(self) -> None:
        """A wait began here: written at once (a friend on another server may name them now)."""
        with suppress(StoreError):
            await self._store.run_script(self._script())

    def _rows(self) -> List[Tuple[str, str, str, str, str, str]]:
        """(token, phase, settings, players, title, names) of what this server holds now."""
        rows = []
        for room in self._hall.rooms():
            if room.token not in self._written or room.phase in (Phase.OVER, Phase.EXPIRED):
                continue
            if room.phase is Phase.LOBBY and self._draining():
                continue  # the players of the server that took over meet there, not in a server about to stop
            phase = LOBBY if room.phase is Phase.LOBBY else RACING
            settings = (
                settings_key(room.settings)
                if room.token in self._public
                else f"{settings_key(room.settings)}#{room.token}"
            )
            players = players_text([seat.entrant.player for seat in room.seats.values() if not seat.left])
            names = json.dumps(list(room.race.names))
            rows.append((room.token, phase, settings, players, settings_line(room.settings), names))
        for waiter in self._hall.waiters:
            token = f"wait:{self._server}:{id(waiter)}"
            players = players_text([waiter.entrant.player])
            rows.append((token, WAITING, f"for:{waiter.friend.player}", players, "", "[]"))
        return rows

    def _script(self) -> List[Statement]:
        """Every row of this server written (with one time), the others' stale ones and its own gone ones deleted."""
        now, server, address = self._now(), self._server, self.address
        script = [Statement(DELETE_STALE, (now - STALE_SECONDS,))]
        for token, phase, settings, players, title, names in self._rows():
            script.append(Statement(INSERT_ROOM, (token, server, address, phase, settings, players, title, names, now)))
            script.append(Statement(UPDATE_ROOM, (phase, players, names, now, token, server)))
        script.append(Statement(DELETE_NOT_NOW, (server, now)))
        return script

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(PUBLISH_SECONDS)
            live = {room.token for room in self._hall.rooms()}
            self._written &= live
            self._public &= live
            try:
                await self._store.run_script(self._script())
                self.others = await self._read()
            except StoreError as error:
                if not self._failing:
                    self._log(f"far races: not written: {error}", "far_races", ok=False, reason=str(error))
                self._failing = True
            else:
                if self._failing:
                    self._log("far races: written again", "far_races", ok=True)
                self._failing = False
