"""A player's session in a race (``race``): their seat taken in the hall
(:mod:`.race_hall`; with ``race NAME``, first a wait until NAME is in a
lobby, if they are in none: :mod:`.race_friends`), then their screen drawn
from the room as it is now (the lobby, the countdown, the race, the
result: :mod:`ansi2048.render.race`) each time the room wakes it or its
clock's second turns, and their keys played: moves, and q to leave. No
undo, hint or autoplay: a race decodes none of them. A dropped connection
keeps the seat while the race lasts (:data:`~.race_hall.RECONNECT_SECONDS`):
the same key connecting again with ``race`` continues it."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Awaitable, Callable, List, Optional, Tuple, Union

from ..game.keys import Action, KeyDecoder
from ..game.race import LOBBY_SECONDS, Phase, race_actions
from ..options.parser import EXIT_ERROR, EXIT_OK
from ..render.race import (
    Racer,
    RaceScreen,
    countdown_lines,
    expired_line,
    lobby_lines,
    race_lines,
    result_lines,
    waited_line,
    waiting_lines,
    words,
)
from ..render.repaint import Repainter
from ..render.themes import THEMES
from .context import ServeContext
from .game import SAID_STOPPING, SAID_STOPPING_VIEWER
from .link import Client, Ended, Typed, for_terminal, next_incoming
from .names import display_name, printable
from .play_commands import color_depth
from .race_friends import Entrant, Friend, Waiter
from .race_hall import RaceHall, RaceRefused, RaceRoom, Seat
from .race_replay import in_viewer_place
from .relay import relay_session
from .requests import NEEDS_TERMINAL, NO_TERMINAL, RaceRequest
from .store.base import Prefs
from .store.races import player_named_script

__all__ = [
    "SAID_LEFT_LOBBY",
    "SAID_LEFT_RACE",
    "SAID_RACE_OVER",
    "SAID_STOPPED_WAITING",
    "SAID_STOPPING_RACE",
    "race",
    "watch_race",
]

# A screen is drawn again at least this often (its clock), and whenever the room wakes it.
DRAW_SECONDS = 0.5
SAID_LEFT_LOBBY = "you left the lobby"
SAID_STOPPED_WAITING = "you stopped waiting"
SAID_LEFT_RACE = "you left the race; it goes on without you (its result: races)"
SAID_STOPPING_RACE = "the server is stopping: the race ends here, unfinished"
SAID_RACE_OVER = "the race you watched is over"
SAID_NOT_REACHED = "race: the server holding that race cannot be reached (or went away); try again"


async def race(context: ServeContext, client: Client, request: RaceRequest) -> int:
    """``race``: a seat in a lobby (or back in the race the player dropped
    from; or, ``race NAME``, in NAME's lobby, once they are in one), played
    to the result; the exit status."""
    if not client.has_terminal:
        return client.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    player = await context.player(client.identity)
    if player is not None:
        entrant = Entrant(f"p{player.id}", display_name(player.name), player.id, client.source)
    else:
        entrant = Entrant(f"guest:{id(client)}", "guest", None, client.source)
    hall = context.races
    if hall is None:
        return client.refuse("race: this server runs no races", "refused", EXIT_ERROR)
    friend = await _friend(context, request.friend) if request.friend is not None else None
    prefs = player.prefs if player is not None else Prefs()
    far = context.far_races
    try:
        if request.friend is not None and friend is None:
            raise RaceRefused(f"race: no player is called {printable(request.friend)}")
        # Another server holds what the player is after: they play it there (serve/far_races.py).
        elsewhere = await far.where(entrant, request.settings, friend) if far is not None else None
        if elsewhere is not None:
            return await _relayed(context, client, elsewhere, request)
        if friend is None:
            joined: Union[Tuple[RaceRoom, Seat], Waiter] = hall.join(request.settings, entrant, client.incoming)
        else:
            joined = hall.meet(friend, request.settings, entrant, client.incoming)
    except RaceRefused as refused:
        return client.refuse(str(refused), "refused", EXIT_ERROR)
    repainter = _repainter(client)
    if isinstance(joined, Waiter):
        seek = partial(far.where, entrant, request.settings, friend, True) if far is not None else None
        if far is not None:
            await far.waiting()
        met = await _wait(client, hall, joined, repainter, seek)
        if isinstance(met, tuple) and isinstance(met[0], str):
            return await _relayed(context, client, met, request)  # NAME is in a lobby on another server
        if isinstance(met, str):
            client.ended(met)
            return EXIT_OK
        joined = met
    room, seat = joined
    elsewhere = await far.opened(room, public=friend is None) if far is not None else None
    if elsewhere is not None:  # another server's lobby of these settings opened first: the player goes there
        room.leave(seat)
        return await _relayed(context, client, elsewhere, request)
    said = await _RaceScreen(client, room, seat, prefs, repainter).run()
    client.ended(said or "done")
    return EXIT_OK


async def _relayed(context: ServeContext, client: Client, address: Tuple[str, int], request: RaceRequest) -> int:
    """The player's ``race`` played on the server at ``address`` (serve/relay.py); the exit status."""
    status = await relay_session(client, address, context.daily_secret, request.line())
    if status is None:
        if client.gone():
            client.ended("relayed: disconnected")
            return EXIT_OK
        return client.refuse(SAID_NOT_REACHED, "relay failed", EXIT_ERROR)
    client.ended("relayed")
    return status


async def _wait(
    client: Client,
    hall: RaceHall,
    waiter: Waiter,
    repainter: Repainter,
    seek: Optional[Callable[[], Awaitable[Optional[Tuple[str, int]]]]] = None,
) -> Union[Tuple[RaceRoom, Seat], Tuple[str, int], str]:
    """``race NAME`` while NAME is in no lobby: the waiting screen until the
    hall seats the player (their seat), ``seek`` finds NAME's lobby (or
    wait) on another server (its relay door: the player is relayed there),
    or the wait ends (what ended it, for the log)."""
    friend, incoming, decoder = waiter.friend.name, client.incoming, KeyDecoder(comments=False)
    said: Optional[str] = None
    how = ""
    while not waiter.wake.is_set():
        found = await seek() if seek is not None else None
        if found is not None:
            met = hall.stop_waiting(waiter)
            if met is not None:  # seated here meanwhile: that stands
                return met
            _close(client, repainter, "")
            return found
        width, height = client.window
        left = waiter.since + LOBBY_SECONDS - hall.now()
        if left <= 0:
            said, how = waited_line(friend, int(LOBBY_SECONDS // 60)), "wait expired"
            break
        _write(client, repainter.frame(waiting_lines(friend, left, width, height), width, height))
        got = await next_incoming(incoming, waiter.wake, DRAW_SECONDS)
        if isinstance(got, Ended):
            stopping = got.said == SAID_STOPPING  # nothing is kept of a wait: the plain words
            said, how = (SAID_STOPPING_VIEWER, "server stopping") if stopping else (got.said, "disconnected")
            break
        if isinstance(got, Typed) and Action.QUIT in decoder.feed(got.data):
            said, how = SAID_STOPPED_WAITING, "left"
            break
    met = hall.stop_waiting(waiter)
    if said is None and met is not None:
        return met
    if met is not None:  # seated as the wait ended: the lobby is left at once
        met[0].leave(met[1])
    _close(client, repainter, said or "")
    return how


def _repainter(client: Client) -> Repainter:
    in_place = client.client_env()["TERM"] != "dumb"
    return Repainter(hide_cursor=in_place, in_place=in_place, sync=in_place)


def _write(client: Client, text: str) -> None:
    client.link.write(for_terminal(text).encode("utf-8", "replace"))


def _close(client: Client, repainter: Repainter, said: str) -> None:
    """The screen closed, and ``said`` under it in whole words (the window's width)."""
    lines = words(said, client.window[0]) if said else []
    _write(client, repainter.close() + "".join(f"{line}\n" for line in lines))


async def _friend(context: ServeContext, name: str) -> Optional[Friend]:
    """The player ``race NAME`` names, if the store knows one so called."""
    found = await context.store.run_script(player_named_script(name))
    return Friend(int(found[0][0][0]), display_name(str(found[0][0][1]))) if found[0] else None


async def watch_race(context: ServeContext, client: Client, room: RaceRoom) -> int:
    """``watch NAME`` of a player in a race: every board of it, live; one of
    the server's viewer places, as any watch takes."""
    return await in_viewer_place(context, client, lambda prefs: _RaceScreen(client, room, None, prefs).watch())


class _RaceScreen:
    """One player's screen of a room, and their keys; or (no ``seat``) a watcher's."""

    def __init__(
        self, client: Client, room: RaceRoom, seat: Optional[Seat], prefs: Prefs, repainter: Optional[Repainter] = None
    ) -> None:
        self._client = client
        self._room = room
        self._seat = seat
        self._depth = color_depth(prefs.color, client.client_env())
        self._palette = THEMES[prefs.theme or "classic"]()
        self._repainter = repainter or _repainter(client)  # a waiting screen's goes on
        self._decoder = KeyDecoder(comments=False)  # no assist: hint and autoplay are never decoded

    async def run(self) -> str:
        """Until the result (or the lobby closes, or the player leaves);
        what ended it, for the log."""
        room, seat, incoming = self._room, self._seat, self._client.incoming
        assert seat is not None
        said = ""
        while True:
            seat.wake.clear()
            if room.stopped:  # the server stops: no result will come
                return self._close(SAID_STOPPING_RACE, "server stopping")
            if room.settled or room.phase is Phase.EXPIRED:
                self._draw()
                break
            self._draw()
            got = await next_incoming(incoming, seat.wake, DRAW_SECONDS)
            if isinstance(got, Ended):
                if not got.lost:
                    room.drop(seat, incoming)
                stopping = got.said == SAID_STOPPING  # the server's stop closes every room (RaceHall.close)
                how = "taken over" if got.lost else "server stopping" if stopping else "disconnected"
                return self._close(SAID_STOPPING_RACE if stopping else got.said, how)
            if isinstance(got, Typed):
                for action in race_actions(self._decoder.feed(got.data)):
                    if action is Action.QUIT:
                        in_race = room.phase is Phase.RUNNING
                        room.leave(seat)
                        return self._close(SAID_LEFT_RACE if in_race else SAID_LEFT_LOBBY, "left")
                    assert action.direction is not None
                    room.move(seat, action.direction)
        if room.phase is Phase.EXPIRED:
            said = expired_line(int(LOBBY_SECONDS // 60))
            return self._close(said, "lobby expired")
        return self._close("", "done")

    def _close(self, said: str, how: str) -> str:
        _close(self._client, self._repainter, said)
        return how

    def _draw(self) -> None:
        width, height = self._client.window
        _write(self._client, self._repainter.frame(self._lines(width, height), width, height))

    def _lines(self, width: int, height: int) -> List[str]:
        room, race = self._room, self._room.race
        now = room.now()
        names = list(race.names)
        if room.settled:
            kept = f"kept as r{room.stored_id}: races lists it" if room.stored_id is not None else ""
            return result_lines(room.placed, room.winner, room.how, width, height, kept)
        if race.phase is Phase.LOBBY:
            left = race.opened + LOBBY_SECONDS - now
            return lobby_lines(room.settings, names, race.waiting_for, left, width, height)
        if race.phase is Phase.COUNTDOWN and race.starts is not None:
            return countdown_lines(room.settings, names, race.starts - now, width, height)
        if race.phase is Phase.EXPIRED:
            return []
        ends = race.ends if race.ends is not None else now
        left = max(0.0, (race.ended or now) - now) if race.phase is Phase.OVER else ends - now
        me = self._seat if self._seat is not None else next(iter(room.seats.values()))  # a watcher's: the first
        others = tuple(self._racer(seat) for seat in room.seats.values() if seat is not me)
        s, game = room.settings, me.game
        spawned = game.spawned if game is not None and self._seat is not None else None
        title, note = "", ""
        if self._seat is None:
            title, note = "Watching a race", "q leaves"
        screen = RaceScreen(s.rows, s.cols, s.goal, self._racer(me), others, left, note, spawned, title)
        return race_lines(screen, width, height, self._depth, self._palette)

    async def watch(self) -> str:
        """A watcher's screen until the result, q, or the connection goes; the line to say."""
        room, incoming, wake = self._room, self._client.incoming, asyncio.Event()
        room.watchers.add(wake)
        try:
            while not room.settled and room.phase is not Phase.EXPIRED:
                wake.clear()
                self._draw()
                got = await next_incoming(incoming, wake, DRAW_SECONDS)
                if isinstance(got, Ended):  # a watcher has no game the server keeps: the plain words
                    return self._close(SAID_STOPPING_VIEWER if got.said == SAID_STOPPING else got.said, "")
                if isinstance(got, Typed) and Action.QUIT in KeyDecoder(comments=False).feed(got.data):
                    return self._close("", "")
            if room.stopped:  # the server stops: no result will come
                return self._close(SAID_STOPPING_VIEWER, "")
            self._draw()
            return self._close(SAID_RACE_OVER if room.settled else "the lobby closed unfilled", "")
        finally:
            room.watchers.discard(wake)

    def _racer(self, seat: Seat) -> Racer:
        game, away = seat.game, seat.away_since is not None
        if game is None:
            return Racer(seat.name, away=away, left=seat.left)
        stuck = game.over  # no move left: waits for the end
        return Racer(
            seat.name, game.score, game.biggest, game.moves, game.cells, away=away, left=seat.left, stuck=stuck
        )
