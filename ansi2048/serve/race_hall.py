"""The server's races, on its event loop: lobbies that fill (and the
players waiting for a friend: :mod:`.race_friends`), races that run, and
their results, verified (:class:`RaceHall`, :class:`RaceRoom`).

A room holds a race's rules (:class:`~ansi2048.game.race.Race`, a value
given each event) and each player's :class:`Seat`: their game, played here
from the race's one seed, and every key it played. A move wakes every
seat's screen at once (:meth:`RaceRoom.notify`: an event set, no await).
A ticker of the room's own reads the clock (the countdown, the time limit,
a lobby nobody fills, a dropped player who did not come back).

When the race is over, each player's keys are replayed from its seed
through :func:`~ansi2048.records.replay.verdict_steps`, in steps, as a
ranked daily game's are: a player whose replay differs from what they were
shown is not ranked, and the log says so. The seed is an HMAC under the
server's secret of the race's number and a fresh random draw, shown to
nobody (only the boards as they play) until the race is over."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from dataclasses import dataclass
from itertools import count
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

from .. import __version__
from ..game.engine import Direction, Game
from ..game.keys import move_action
from ..game.race import Phase, Race, RaceSettings
from ..records.recording import format_header
from ..records.replay import Result, Setup, cells_text, verdict_steps
from ..render.race import Placed
from .keeping import replay_step, stepped
from .link import Ended, Incoming
from .names import folded, guest_name
from .race_friends import Entrant, Friend, Waiter, Waiters
from .store.base import Store, StoreError
from .store.races import PlayerRow, race_script

__all__ = [
    "RACES_PER_ADDRESS",
    "RECONNECT_SECONDS",
    "RaceHall",
    "RaceRefused",
    "RaceRoom",
    "Seat",
    "race_seed",
]

# Races (lobbies and races running) that players from one address may be in at once.
RACES_PER_ADDRESS = 4
# A player whose connection dropped may come back this long; then they have left.
RECONNECT_SECONDS = 60.0
# How often a room reads the clock.
TICK_SECONDS = 0.25
SAID_RACE_TAKEN_OVER = "your race goes on in another session"


class RaceRefused(Exception):
    """A player cannot join the race asked for: one line."""


@dataclass(frozen=True)
class Host:
    """What the hall needs of its server (the server's context's own)."""

    store: Store
    daily_secret: bytes
    random_seed: Callable[[], int]
    now: Callable[[], float]
    log: Callable[[str], None]


def race_seed(secret: bytes, number: int, draw: int) -> int:
    """A race's deal: 64 bits of HMAC-SHA256 under the server's secret."""
    digest = hmac.new(secret, f"ansi2048 race {number} {draw}".encode("ascii"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


class Seat:
    """A player's place in a room: their game and keys, and their screen's wake-up."""

    def __init__(self, entrant: Entrant, name: str, incoming: asyncio.Queue[Incoming]) -> None:
        self.entrant = entrant
        self.name = name  # as the race shows it (a guest's: guest-N)
        self.incoming = incoming  # the session's, told if another session takes the seat
        self.wake = asyncio.Event()
        self.game: Optional[Game] = None
        self.keys = bytearray()  # each move key played, as a recording's body
        self.away_since: Optional[float] = None  # dropped: may come back until RECONNECT_SECONDS have passed
        self.left = False


class RaceRoom:
    """One race, from its lobby to its verified result."""

    def __init__(self, number: int, settings: RaceSettings, seed: int, token: str, hall: RaceHall) -> None:
        self.number = number  # the server's own, for its log
        self.token = token  # unique in the store (its number and a random draw)
        self.settings = settings
        self._seed = seed  # secret until the race is over
        self._hall = hall
        self.race = Race(settings, hall.now())
        self.seats: Dict[str, Seat] = {}
        self.placed: Tuple[Placed, ...] = ()
        self.winner: Optional[str] = None
        self.how = ""  # how it ended
        self.settled = False  # over and verified: the result stands
        self.stopped = False  # ended unfinished: no result
        self.stored_id: Optional[int] = None
        self._ticker: Optional[asyncio.Task[None]] = None
        self.watchers: Set[asyncio.Event] = set()  # each watcher's wake-up (race_session.watch_race)

    @property
    def phase(self) -> Phase:
        return self.race.phase

    def now(self) -> float:
        return self._hall.now()

    def start(self) -> None:
        self._ticker = asyncio.get_running_loop().create_task(self._run())

    def cancel(self) -> None:
        """The race ends unfinished (the server stops, or its lobby emptied)."""
        self.stopped = True
        if self._ticker is not None:
            self._ticker.cancel()

    def notify(self) -> None:
        for seat in self.seats.values():
            seat.wake.set()
        for wake in self.watchers:
            wake.set()

    def sources(self) -> List[str]:
        return [seat.entrant.source for seat in self.seats.values()]

    def seat_of(self, key: str) -> Optional[Seat]:
        return next((seat for seat in self.seats.values() if seat.entrant.key == key), None)

    def has_name(self, name: str) -> bool:
        return any(folded(seat.name) == folded(name) for seat in self.seats.values())

    def sit(self, entrant: Entrant, incoming: asyncio.Queue[Incoming]) -> Seat:
        """``entrant`` joins the lobby: a guest as guest-N, a player by
        their name (name-2 if another player's shows the same)."""
        if entrant.player is None:
            name = guest_name(self.has_name)
        else:
            names = (entrant.name if n == 1 else f"{entrant.name}-{n}" for n in count(1))
            name = next(name for name in names if not self.has_name(name))
        seat = Seat(entrant, name, incoming)
        self.seats[name] = seat
        self.race = self.race.join(name, self._hall.now())
        self.notify()
        return seat

    def back(self, seat: Seat, incoming: asyncio.Queue[Incoming]) -> None:
        """The seat's player is here again (a dropped connection, or
        another session of theirs: that one is told it goes on here)."""
        if seat.away_since is None:
            seat.incoming.put_nowait(Ended(SAID_RACE_TAKEN_OVER, lost=True))
        seat.incoming, seat.away_since = incoming, None
        self.race = self.race.back(seat.name)
        self.notify()

    def move(self, seat: Seat, direction: Direction) -> None:
        """The seat's player's move, if the race runs and they are in it."""
        self.tick()
        if self.race.phase is not Phase.RUNNING or seat.left or seat.game is None:
            return
        game = seat.game
        seat.keys += move_action(direction).value.encode("ascii")
        if game.move(direction):
            self.race = self.race.moved(seat.name, game.score, game.biggest, game.moves, self._hall.now(), game.over)
            self.notify()

    def leave(self, seat: Seat) -> None:
        """The seat's player left (``q``): gone from a lobby; from a race,
        they keep their place by what they had."""
        if self.race.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            del self.seats[seat.name]
            if not self.seats:
                self._hall.closed(self)
        seat.left = True
        self.race = self.race.leave(seat.name, self._hall.now())
        self.notify()

    def drop(self, seat: Seat, incoming: asyncio.Queue[Incoming]) -> None:
        """The seat's connection went (not another session's that took it)."""
        if seat.incoming is not incoming:
            return
        if self.race.phase is Phase.RUNNING:
            seat.away_since = self._hall.now()
            self.notify()
        elif self.race.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            self.leave(seat)

    def tick(self) -> None:
        """The clock read: the countdown ends (every player gets the
        race's deal), the time runs out, the dropped who did not come back leave."""
        now, race = self._hall.now(), self.race
        before = race.phase
        if race.phase is Phase.RUNNING:
            for seat in self.seats.values():
                if seat.away_since is not None and not seat.left and now - seat.away_since >= RECONNECT_SECONDS:
                    seat.left = True
                    race = race.leave(seat.name, now)
        race = race.tick(now)
        if before is not Phase.RUNNING and race.phase is Phase.RUNNING:
            settings = self.settings
            for seat in self.seats.values():
                seat.game = Game(settings.rows, settings.cols, settings.goal, self._seed)
        if race != self.race:
            self.race = race
            self.notify()

    async def _run(self) -> None:
        try:
            while self.race.phase not in (Phase.OVER, Phase.EXPIRED):
                await asyncio.sleep(TICK_SECONDS)
                self.tick()
            if self.race.phase is Phase.OVER:
                await self._settle()
            else:
                self._hall.log(f"race {self.number}: the lobby closed unfilled ({len(self.seats)} waited)")
        finally:  # whatever happened, no screen waits for a result that will not come
            self.settled = True
            self._hall.closed(self)
            self.notify()

    async def _settle(self) -> None:
        """The result verified: each player's keys replayed from the seed."""
        race, settings = self.race, self.settings
        header = format_header(self._seed, settings.rows, settings.cols, settings.goal, __version__)
        placed: List[Placed] = []
        rank = 0
        for progress in race.result():
            seat = self.seats[progress.name]
            cells = seat.game.cells if seat.game is not None else ()
            # As a ranked daily game's is checked, in steps: other sessions' work runs between them.
            recording, every = header.encode("ascii") + bytes(seat.keys), replay_step(settings.rows, settings.cols)
            claimed = Result(progress.score, progress.moves, cells_text(cells))
            setup = Setup(self._seed, settings.rows, settings.cols, settings.goal)
            _, why = await stepped(verdict_steps(recording, setup, claimed, every))
            if why:
                self._hall.log(f"race {self.number}: {seat.name}'s keys are not ranked: {why}")
            else:
                rank += 1
            placed.append(Placed(0 if why else rank, progress, not why))
        self.placed = tuple(placed)
        first = next((place.progress for place in placed if place.verified), None)
        self.winner = first.name if first is not None and race.winner() is not None else None
        self.how = _how(race)
        self._hall.log(
            f"race {self.number}: over ({self.how}), "
            + ", ".join(f"{p.progress.name} {p.progress.score}" for p in placed)
        )
        try:
            await self._hall.record(self)
        except Exception as error:  # a bug in keeping it: the result stands on the screens all the same
            self._hall.log(f"race {self.number}: not stored: {type(error).__name__}: {error}")

    @property
    def seed(self) -> int:
        """The race's deal, once it is over (before, it is nobody's to see)."""
        assert self.race.phase is Phase.OVER
        return self._seed

    def recording(self, seat: Seat) -> bytes:
        """The seat's keys as a recording from the race's seed (once it is over: it holds the seed)."""
        assert self.race.phase is Phase.OVER
        s = self.settings
        return format_header(self._seed, s.rows, s.cols, s.goal, __version__).encode("ascii") + bytes(seat.keys)


def _how(race: Race) -> str:
    reached = [p for p in race.players if p.reached is not None]
    if reached:
        return f"{min(reached, key=lambda p: p.reached or 0.0).name} reached {race.settings.goal}"
    if race.ends is not None and race.ended is not None and race.ended >= race.ends:
        return "time is up"
    return "no board can move" if sum(not p.left for p in race.players) > 1 else "the others left"


class RaceHall:
    """The server's lobbies and races."""

    def __init__(self, host: Host, per_address: int = RACES_PER_ADDRESS) -> None:
        self._host = host
        self._rooms: Dict[int, RaceRoom] = {}
        self._numbers = count(1)
        self.per_address = per_address
        self.waiters = Waiters()
        self._met: Dict[int, Tuple[RaceRoom, Seat]] = {}  # a waiter seated (by id()), until their session reads it

    def now(self) -> float:
        return self._host.now()

    def log(self, line: str) -> None:
        self._host.log(line)

    async def record(self, room: RaceRoom) -> None:
        await _record(self._host.store, room, self.log)

    def closed(self, room: RaceRoom) -> None:
        self._rooms.pop(room.number, None)
        if not room.settled:
            room.cancel()

    def close(self) -> None:
        """The server stops: no race goes on."""
        for room in list(self._rooms.values()):
            room.cancel()
        self._rooms.clear()

    def rooms(self) -> List[RaceRoom]:
        return list(self._rooms.values())

    def racing(self, name: str) -> Optional[RaceRoom]:
        """The race (or lobby) ``name`` is in now, if any."""
        return next((room for room in self._rooms.values() if room.has_name(name)), None)

    def join(
        self, settings: RaceSettings, entrant: Entrant, incoming: asyncio.Queue[Incoming]
    ) -> Tuple[RaceRoom, Seat]:
        """The seat of ``entrant``: back in their race if they dropped from
        one (or race in another session now), else in the first lobby of
        ``settings`` (a new one if none); :class:`RaceRefused` if they may not."""
        back = self._back(entrant, incoming)
        return back or self._sit(self._lobby(lambda r: r.settings == settings), settings, entrant, incoming)

    def meet(
        self, friend: Friend, settings: RaceSettings, entrant: Entrant, incoming: asyncio.Queue[Incoming]
    ) -> Union[Tuple[RaceRoom, Seat], Waiter]:
        """``race NAME``: as :meth:`join`, but in the lobby ``friend`` sits in
        (or one opened for the two, with its settings, if ``friend`` waits
        for ``entrant``); if there is none yet, ``entrant``'s wait for them."""
        if friend.player == entrant.player:
            raise RaceRefused("race: you cannot race yourself (race alone opens a lobby)")
        back = self._back(entrant, incoming)
        room = self._lobby(lambda r: any(seat.entrant.player == friend.player for seat in r.seats.values()))
        if back is not None or room is not None:
            return back or self._sit(room, settings, entrant, incoming)
        self._allowed(None, entrant.source)
        named = [w for w in self.waiters.for_player(entrant.player, self.now()) if w.entrant.player == friend.player]
        if named:  # the friend waits for this player: one lobby for the two
            room = self._open(named[0].settings)
            self._seat_waiter(room, named[0])
            return self._sit(room, settings, entrant, incoming)
        waiter = Waiter(entrant, friend, settings, incoming, self.now())
        self.waiters.add(waiter)
        return waiter

    def _back(self, entrant: Entrant, incoming: asyncio.Queue[Incoming]) -> Optional[Tuple[RaceRoom, Seat]]:
        """``entrant``'s seat in the race they dropped from; RaceRefused if they wait in another session."""
        for room in self._rooms.values():
            seat = room.seat_of(entrant.key) if entrant.player is not None else None
            if seat is None or seat.left:
                continue
            if room.phase is Phase.RUNNING:
                room.back(seat, incoming)
                return room, seat
            if room.phase in (Phase.LOBBY, Phase.COUNTDOWN):
                raise RaceRefused("race: you wait in a lobby already (in another session)")
        if self.waiters.of(entrant.key) is not None:
            raise RaceRefused("race: you wait for a friend already (in another session)")
        return None

    def stop_waiting(self, waiter: Waiter) -> Optional[Tuple[RaceRoom, Seat]]:
        """``waiter``'s wait is over: their seat if the hall has seated them (it stands), else None."""
        return None if self.waiters.remove(waiter) else self._met.pop(id(waiter), None)

    def _lobby(self, wanted: Callable[[RaceRoom], bool]) -> Optional[RaceRoom]:
        return next((r for r in self._rooms.values() if r.phase is Phase.LOBBY and wanted(r)), None)

    def _allowed(self, room: Optional[RaceRoom], source: str) -> None:
        """RaceRefused if ``source`` may not take one race (or wait) more."""
        if room is not None and source in room.sources():
            return
        held = sum(source in r.sources() for r in self._rooms.values()) + self.waiters.from_source(source)
        if held >= self.per_address:
            raise RaceRefused(f"race: too many races from your address at once (at most {self.per_address})")

    def _open(self, settings: RaceSettings) -> RaceRoom:
        number, draw = next(self._numbers), self._host.random_seed()
        seed = race_seed(self._host.daily_secret, number, draw)
        room = RaceRoom(number, settings, seed, f"{number}:{draw}:{self.now()}", self)
        self._rooms[number] = room
        room.start()
        return room

    def _sit(
        self, room: Optional[RaceRoom], settings: RaceSettings, entrant: Entrant, incoming: asyncio.Queue[Incoming]
    ) -> Tuple[RaceRoom, Seat]:
        self._allowed(room, entrant.source)
        room = room if room is not None else self._open(settings)
        seat = room.sit(entrant, incoming)
        self._gather(room)
        return room, seat

    def _gather(self, room: RaceRoom) -> None:
        """Those waiting for a player in ``room``'s lobby sit in it (then those waiting for them), while it has room."""
        while room.phase is Phase.LOBBY:
            seats, now = room.seats.values(), self.now()
            waiting = [w for seat in seats for w in self.waiters.for_player(seat.entrant.player, now)]
            if not waiting:
                return
            self._seat_waiter(room, min(waiting, key=lambda w: w.since))

    def _seat_waiter(self, room: RaceRoom, waiter: Waiter) -> None:
        self.waiters.remove(waiter)
        self._met[id(waiter)] = room, room.sit(waiter.entrant, waiter.incoming)
        waiter.wake.set()


async def _record(store: Store, room: RaceRoom, log: Callable[[str], None]) -> None:
    """``room``'s result, stored (with each player's keys); a store that
    cannot take it is logged, and the result stands on the screens."""
    s, race = room.settings, room.race
    assert race.starts is not None and race.ended is not None
    rows: List[PlayerRow] = []
    for place, placed in enumerate(room.placed, 1):
        seat = room.seats[placed.progress.name]
        p = placed.progress
        rank = placed.rank if placed.verified else None
        rows.append(
            (place, seat.entrant.player, p.name, p.score, p.biggest, p.moves, rank, int(p.left), room.recording(seat))
        )
    race_row = (
        room.token,
        f"{s.rows}x{s.cols}",
        s.goal,
        s.players,
        s.minutes,
        str(room.seed),
        race.starts,
        race.ended,
        room.how,
        room.winner,
    )
    try:
        found = await store.run_script(race_script(race_row, rows))
    except StoreError as error:
        log(f"race {room.number}: not stored: {error}")
        return
    room.stored_id = int(found[-1][0][0])
