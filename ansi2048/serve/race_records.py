"""Finished races kept and listed: a room's result stored once it stands
(:func:`record`), and ``races [--json]`` (:func:`races_command`): the
player's recent races and the server's latest, as lines or as one JSON
document (documented in docs/serving.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from ..options.parser import EXIT_OK
from ..storage.history_file import utc_timestamp
from .commands import Races, Replay
from .race_replay import in_viewer_place, racing_lines, read_race, replay_race
from .secrecy import Refused
from .session_commands import REFUSED, as_viewer
from .store.base import Prefs, Store, StoreError
from .store.races import PlayerRow, race_script, recent_script

if TYPE_CHECKING:
    from .race_hall import RaceRoom  # which imports this module, to keep its result
    from .session import SessionChannel

__all__ = ["LISTED", "MINE", "races_command", "races_document", "record"]

# races lists the player's last MINE races and the server's last LISTED.
MINE, LISTED = 5, 10


async def record(store: Store, room: RaceRoom, log: Callable[[str], None]) -> None:
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


async def races_command(session: SessionChannel, request: Races) -> int:
    """``races [--json]``: no terminal needed."""
    player = await session.player()
    me = player.id if player is not None else None
    races, players = await session.server.store.run_script(recent_script(me, MINE if me is not None else 0, LISTED))
    listed = _listed(races, players)
    if request.json:
        import json

        for line in json.dumps(races_document(listed), indent=1).splitlines():
            session.say(line, stderr=False)
        return EXIT_OK
    width = session.window[0]
    mine = [race for race in listed if any(p["player"] == me for p in race["players"])] if me is not None else []
    lines: List[str] = []
    if mine:
        lines += ["Your last races:", *(_line(race) for race in mine), ""]
    lines += ["The server's latest races:", *(_line(race) for race in listed)] if listed else ["No race yet."]
    lines += racing_lines(session.server.races, width)
    for line in lines:
        session.say(line[:width], stderr=False)
    return EXIT_OK


def _listed(races: List[Tuple[Any, ...]], players: List[Tuple[Any, ...]]) -> List[Dict[str, Any]]:
    by_race: Dict[int, List[Dict[str, Any]]] = {}
    for race, name, score, biggest, moves, rank, player in players:
        by_race.setdefault(int(race), []).append(
            {
                "name": name,
                "score": int(score),
                "biggest": int(biggest),
                "moves": int(moves),
                "rank": None if rank is None else int(rank),
                "verified": rank is not None,
                "player": player,
            }
        )
    return [
        {
            "id": f"r{race_id}",
            "size": size,
            "goal": int(goal),
            "started": utc_timestamp(float(started)),
            "winner": winner,
            "players": by_race.get(int(race_id), []),
        }
        for race_id, size, goal, started, winner in races
    ]


def races_document(listed: List[Dict[str, Any]]) -> Dict[str, Any]:
    """``races --json``: the races, their players without the store's ids."""
    return {
        "races": [
            {**race, "players": [{k: v for k, v in p.items() if k != "player"} for p in race["players"]]}
            for race in listed
        ]
    }


def _line(race: Dict[str, Any]) -> str:
    when = race["started"].replace("T", " ").rstrip("Z")[:16]
    players = "  ".join(_placed(p) for p in race["players"])
    return f"  {race['id']:<6} {when}  {race['size']} to {race['goal']}  {players}"


def _placed(player: Dict[str, Any]) -> str:
    rank: Optional[int] = player["rank"]
    return f"{rank if rank is not None else '-'}. {player['name']} {player['score']}"


async def replay_race_command(session: SessionChannel, request: Replay) -> int:
    """``replay rN``: every board of a finished race, side by side
    (:func:`~.race_replay.replay_race`), taking one of the server's viewer
    places as any replay does."""
    try:
        race = await read_race(session.server.store, request, "replay")
    except Refused as refused:
        return session.refuse(str(refused), REFUSED)

    async def show(prefs: Prefs) -> str:
        depth = session.color_depth(prefs.color, session.client_env())
        return await replay_race(as_viewer(session, prefs), race, depth, prefs.theme)

    return await in_viewer_place(session, show)
