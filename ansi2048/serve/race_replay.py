"""Finished races played back: ``replay rN NAME`` and ``cast rN [NAME]``
are one player's board, as any game's replay (:func:`race_playback` gives
:mod:`.viewer_commands` its :class:`~.replay.Playback`); ``replay rN``
plays every board side by side, move by move, on the race's own screen
(:func:`replay_race`): + and - change the speed, space pauses, q leaves.

A race is stored once it is over: its seed and every player's keys may
then be shown to anyone (the secrecy rule's regular deal:
:mod:`.secrecy`); a race still running is in no list and replays nothing."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, List, Optional, Tuple

from ..game.engine import Direction
from ..game.keys import Action
from ..options.parser import EXIT_ERROR, EXIT_OK
from ..records.recording import BodyDecoder
from ..render.race import Racer, RaceScreen, race_lines, settings_line
from ..render.repaint import Repainter
from ..render.style import ColorDepth
from ..render.themes import THEMES
from .context import ServeContext
from .link import Client, Ended, Typed, Viewer, next_incoming
from .live import WatchFull
from .names import folded, printable
from .replay import Playback
from .requests import NEEDS_TERMINAL, NO_TERMINAL, Replay
from .secrecy import Refused
from .store.base import Prefs, Store
from .store.races import one_race_script

__all__ = ["SAID_END", "StoredRace", "in_viewer_place", "race_playback", "racing_lines", "read_race", "replay_race"]

if TYPE_CHECKING:
    from .far_races import FarRaces
    from .race_hall import RaceHall

SAID_END = "end of replay"
# Seconds between two moves of a race's replay at normal speed, and the speeds + and - step through.
STEP_SECONDS = 0.25
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass(frozen=True)
class StoredRace:
    """A finished race as it replays: its players in the result's order."""

    number: int
    goal: int
    how: str
    winner: Optional[str]
    names: Tuple[str, ...]
    playbacks: Tuple[Playback, ...]


async def read_race(store: Store, request: Replay, command: str) -> StoredRace:
    """Race ``request.game`` from the store, or :class:`Refused` (one line)."""
    assert request.game is not None
    races, players = await store.run_script(one_race_script(request.game))
    if not races:
        raise Refused(f"{command}: no race r{request.game} (races lists them)")
    _size, goal, _started, how, winner = races[0]
    names, playbacks = [], []
    for name, _score, _rank, recording in players:
        playback = Playback.of_recording(bytes(recording))
        if playback is None:
            raise Refused(f"{command}: race r{request.game} has no recording that replays")
        names.append(str(name))
        playbacks.append(playback)
    return StoredRace(request.game, int(goal), str(how), winner, tuple(names), tuple(playbacks))


async def race_playback(store: Store, request: Replay, command: str) -> Tuple[Playback, str]:
    """One player's board of a race (``request.player``; none named: the
    first of its result) and the replay's title."""
    race = await read_race(store, request, command)
    wanted = request.player if request.player is not None else race.names[0]
    for name, playback in zip(race.names, race.playbacks):
        if folded(name) == folded(wanted):
            return playback, f"{name} in race r{race.number}"
    players = ", ".join(race.names)
    raise Refused(f"{command}: race r{race.number} has no player {printable(wanted)!r} (its players: {players})")


def _directions(playback: Playback) -> List[Direction]:
    """A recording's moves, in order (a race has nothing else)."""
    decoder = BodyDecoder()
    items = decoder.feed(playback.keys) + decoder.finish()
    return [item.direction for item in items if isinstance(item, Action) and item.direction is not None]


async def replay_race(viewer: Viewer, race: StoredRace, depth: ColorDepth, theme: Optional[str]) -> str:
    """Every board of ``race``, side by side, a move of each at a time; the line to say at the end."""
    first = race.playbacks[0]
    games = [playback.game() for playback in race.playbacks]
    moves = [_directions(playback) for playback in race.playbacks]
    palette = THEMES[theme or "classic"]()
    repainter = Repainter()
    speed, paused, step, wake = 2, False, 0, asyncio.Event()  # nothing wakes it: the keys, or the next step
    caption = "+ - speed, space pauses, q leaves"
    title = f"Replay of race r{race.number}"
    while True:
        racers = [Racer(n, g.score, g.biggest, g.moves, g.cells) for n, g in zip(race.names, games)]
        done = step >= max((len(m) for m in moves), default=0)
        note = f"{race.how}: {race.winner} wins" if done and race.winner else race.how if done else caption
        screen = RaceScreen(
            first.rows, first.cols, first.goal, racers[0], tuple(racers[1:]), None, note=note, title=title
        )
        width, height = viewer.window()
        viewer.write(repainter.frame(race_lines(screen, width, height, depth, palette), width, height))
        if done:
            viewer.write(repainter.close())
            return SAID_END
        incoming = await next_incoming(viewer.incoming, wake, STEP_SECONDS / SPEEDS[speed])
        if isinstance(incoming, Ended):
            return incoming.said
        if isinstance(incoming, Typed):
            for key in incoming.data.decode("latin-1"):
                if key in "qQ\x03":
                    viewer.write(repainter.close())
                    return ""
                if key in "+=":
                    speed = min(len(SPEEDS) - 1, speed + 1)
                elif key == "-":
                    speed = max(0, speed - 1)
                elif key == " ":
                    paused = not paused
            continue
        if incoming is None and not paused:
            for game, keys in zip(games, moves):
                if step < len(keys):
                    game.move(keys[step])
            step += 1


async def in_viewer_place(context: ServeContext, client: Client, show: Callable[[Prefs], Awaitable[str]]) -> int:
    """A race shown to a viewer (``watch NAME``, ``replay rN``): on a
    terminal only, in one of the server's viewer places (``--max-watchers``)
    as any watch or replay; ``show``'s last line said under it."""
    if not client.has_terminal:
        return client.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    player = await context.player(client.identity)
    live = context.live
    try:
        live.take()
    except WatchFull as full:
        return client.refuse(str(full), "too many viewers", EXIT_ERROR)
    try:
        said = await show(player.prefs if player is not None else Prefs())
    finally:
        live.give_back()
    if said:
        client.say(said, stderr=False)
    return EXIT_OK


def racing_lines(hall: Optional[RaceHall], far: Optional[FarRaces], width: int) -> List[str]:
    """The races being run, here and on the store's other servers, as
    lines for the watch list and ``races`` (watched by a player's name:
    ``watch NAME`` shows every board)."""
    rooms = [room for room in hall.rooms() if not room.settled] if hall is not None else []
    listed = [(settings_line(room.settings), room.race.names) for room in rooms]
    listed += [(row.title, row.names) for row in far.listed()] if far is not None else []
    if not listed:
        return []
    lines = ["", "Races now (watch NAME shows every board):"]
    lines += [f"  {title}: {', '.join(names)}" for title, names in listed]
    return [line[:width] for line in lines]
