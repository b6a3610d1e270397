"""Finished races listed: ``races [--json]``'s lines and its JSON document
(documented in docs/serving.md), pure; the command is
:func:`~.race_commands.races_command`, the storing :mod:`.race_hall`'s."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..storage.history_file import utc_timestamp

__all__ = ["LISTED", "MINE", "listed_races", "race_line", "races_document"]

# races lists the player's last MINE races and the server's last LISTED.
MINE, LISTED = 5, 10


def listed_races(races: List[Tuple[Any, ...]], players: List[Tuple[Any, ...]]) -> List[Dict[str, Any]]:
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


def race_line(race: Dict[str, Any]) -> str:
    when = race["started"].replace("T", " ").rstrip("Z")[:16]
    players = "  ".join(_placed(p) for p in race["players"])
    return f"  {race['id']:<6} {when}  {race['size']} to {race['goal']}  {players}"


def _placed(player: Dict[str, Any]) -> str:
    rank: Optional[int] = player["rank"]
    return f"{rank if rank is not None else '-'}. {player['name']} {player['score']}"
