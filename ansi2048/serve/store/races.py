"""Finished races, stored the same way on both databases (pure: SQL text;
the stores run it with :meth:`~.base.Store.run_script`, as
:mod:`.links`'s).

A race is a row of ``races`` (its settings, its deal's seed, when it
started and ended, how, its winner) and a row of ``race_players`` per
player, in the result's order: their name as the race showed it, their
numbers, their rank (NULL: their keys did not replay to what they showed,
so not ranked) and their keys as a recording from the race's seed. Both
go in one transaction: a race is found by the token its server gave it
(its number and a random draw), so its players' rows need no id read back."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from ..names import folded
from .links import Statement

__all__ = ["SCHEMA_STEP", "one_race_script", "player_named_script", "race_script", "recent_script"]

# The schema's step for races (version 8: after the snapshot's 7; renumbered when the bans' step lands).
SCHEMA_STEP: Tuple[str, ...] = (
    """CREATE TABLE races (
        id {serial},
        token TEXT NOT NULL UNIQUE,
        size TEXT NOT NULL, goal {integer} NOT NULL, players {integer} NOT NULL, minutes {integer} NOT NULL,
        seed TEXT NOT NULL,
        started {real} NOT NULL, ended {real} NOT NULL,
        how TEXT NOT NULL, winner TEXT
    )""",
    """CREATE TABLE race_players (
        race {integer} NOT NULL REFERENCES races(id),
        place {integer} NOT NULL,
        player {integer} REFERENCES players(id),
        name TEXT NOT NULL,
        score {integer} NOT NULL, biggest {integer} NOT NULL, moves {integer} NOT NULL,
        rank {integer},
        left_race {integer} NOT NULL,
        recording {blob} NOT NULL,
        PRIMARY KEY (race, place)
    )""",
    "CREATE INDEX race_players_of_player ON race_players (player, race)",
)

_INSERT_RACE = (
    "INSERT INTO races (token, size, goal, players, minutes, seed, started, ended, how, winner)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_INSERT_PLAYER = (
    "INSERT INTO race_players (race, place, player, name, score, biggest, moves, rank, left_race, recording)"
    " SELECT id, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM races WHERE token = %s"
)
# The races listed: the player's last ones and the server's (%s: the player, the count, the count).
_LISTED = (
    "SELECT race FROM (SELECT race FROM race_players WHERE player = %s ORDER BY race DESC LIMIT %s) AS mine"
    " UNION SELECT id FROM (SELECT id FROM races ORDER BY id DESC LIMIT %s) AS latest"
)
_SELECT_RACES = f"SELECT id, size, goal, started, winner FROM races WHERE id IN ({_LISTED}) ORDER BY id DESC"
_SELECT_PLAYERS = (
    "SELECT race, name, score, biggest, moves, rank, player FROM race_players"
    f" WHERE race IN ({_LISTED}) ORDER BY race DESC, place"
)

# A stored player's row: place, player (None: a guest), name, score,
# biggest, moves, rank (None: not ranked), left, recording.
PlayerRow = Tuple[int, Any, str, int, int, int, Any, int, bytes]


def race_script(race: Tuple[Any, ...], players: Sequence[PlayerRow]) -> List[Statement]:
    """The statements that store a finished race: ``race`` is its row
    (token, size, goal, players, minutes, seed, started, ended, how,
    winner), ``players`` its players' rows in the result's order; the last
    one reads the id the database gave it."""
    token = race[0]
    inserts = [Statement(_INSERT_RACE, race), *(Statement(_INSERT_PLAYER, (*row, token)) for row in players)]
    return [*inserts, Statement("SELECT id FROM races WHERE token = %s", (token,))]


def recent_script(player: Any, mine: int, latest: int) -> List[Statement]:
    """The statements that read the races listed: the ``mine`` last of
    ``player`` (None: a guest, who has none) and the server's ``latest``."""
    listed = (player, mine, latest)
    return [Statement(_SELECT_RACES, listed), Statement(_SELECT_PLAYERS, listed)]


def one_race_script(race: int) -> List[Statement]:
    """The statements that read race ``race`` to replay it: its row (size,
    goal, started, how, winner) and its players' (name, score, rank,
    recording) in the result's order."""
    return [
        Statement("SELECT size, goal, started, how, winner FROM races WHERE id = %s", (race,)),
        Statement("SELECT name, score, rank, recording FROM race_players WHERE race = %s ORDER BY place", (race,)),
    ]


def player_named_script(name: str) -> List[Statement]:
    """The statement that reads the player called ``name`` (id, name; no
    row: none is), names being one without regard to case (:func:`folded`)."""
    return [Statement("SELECT id, name FROM players WHERE lower(name) = %s", (folded(name),))]
