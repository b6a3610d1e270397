"""The daily leaderboard's storage, the same on both databases (pure: SQL
text and row conversion; the stores run it).

One row per player and day (``UNIQUE (day, player)``: a player's first daily
game of the day is the ranked one, and only one). The game in progress is a
game like any other (the ``games`` and ``items`` tables, board
:func:`ansi2048.serve.daily.daily_board`, under a claim); this row holds
what the leaderboard shows and what was verified: the recording as it was
last replayed, the result that replay gave, and the time each key arrived.
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

from .base import DailyEntry

__all__ = [
    "ADD_TIMES",
    "COUNT_ADDRESS",
    "INSERT",
    "RESULT",
    "SCHEMA_STEP",
    "SELECT_ALL",
    "SELECT_BY_ID",
    "SELECT_DAY",
    "SELECT_ENTRY",
    "entry_of",
    "question_marks",
    "result_row",
]

# Version 2 of the schema: the daily rankings.
SCHEMA_STEP: Tuple[str, ...] = (
    """CREATE TABLE daily (
        id {serial},
        day TEXT NOT NULL,
        player {integer} NOT NULL REFERENCES players(id),
        address TEXT NOT NULL,
        started {real} NOT NULL,
        status TEXT NOT NULL,
        recording {blob} NOT NULL,
        times TEXT NOT NULL DEFAULT '',
        score {integer} NOT NULL DEFAULT 0,
        biggest {integer} NOT NULL DEFAULT 0,
        moves {integer} NOT NULL DEFAULT 0,
        seconds {real} NOT NULL DEFAULT 0,
        cells TEXT NOT NULL DEFAULT '',
        UNIQUE (day, player)
    )""",
    "CREATE INDEX daily_of_address ON daily (day, address)",
)

# The columns an entry is read from, in :func:`entry_of`'s order (``name`` from players).
COLUMNS = (
    "daily.id, daily.day, daily.player, players.name, daily.address, daily.started, daily.status,"
    " daily.recording, daily.times, daily.score, daily.biggest, daily.moves, daily.seconds, daily.cells"
)
FROM = "daily JOIN players ON players.id = daily.player"


def entry_of(row: Sequence[Any]) -> DailyEntry:
    return DailyEntry(
        id=int(row[0]),
        day=str(row[1]),
        player=int(row[2]),
        name=str(row[3]),
        address=str(row[4]),
        started=float(row[5]),
        status=str(row[6]),
        # A hand-edited SQLite row may hold text where bytes were written.
        recording=row[7].encode("utf-8") if isinstance(row[7], str) else bytes(row[7]),
        times=str(row[8]),
        score=int(row[9]),
        biggest=int(row[10]),
        moves=int(row[11]),
        seconds=float(row[12]),
        cells=str(row[13]),
    )


def question_marks(sql: str) -> str:
    """The psycopg placeholders of ``sql`` as SQLite's."""
    return sql.replace("%s", "?")


# The statements, with psycopg's placeholders (SQLite's: question_marks).
SELECT_ENTRY = f"SELECT {COLUMNS} FROM {FROM} WHERE daily.day = %s AND daily.player = %s"
SELECT_BY_ID = f"SELECT {COLUMNS} FROM {FROM} WHERE daily.id = %s"
SELECT_DAY = f"SELECT {COLUMNS} FROM {FROM} WHERE daily.day = %s ORDER BY daily.id"
SELECT_ALL = f"SELECT {COLUMNS} FROM {FROM} ORDER BY daily.id"
# Other players this address entered in the day's ranking.
COUNT_ADDRESS = "SELECT COUNT(*) FROM daily WHERE day = %s AND address = %s AND player <> %s"
INSERT = "INSERT INTO daily (day, player, address, started, status, recording) VALUES (%s, %s, %s, %s, %s, %s)"
ADD_TIMES = "UPDATE daily SET times = times || %s WHERE id = %s"
RESULT = (
    "UPDATE daily SET status = %s, recording = %s, score = %s, biggest = %s, moves = %s, seconds = %s, cells = %s"
    " WHERE id = %s"
)


def result_row(entry: DailyEntry) -> Tuple[Any, ...]:
    """RESULT's parameters for ``entry``."""
    return (
        entry.status,
        entry.recording,
        entry.score,
        entry.biggest,
        entry.moves,
        entry.seconds,
        entry.cells,
        entry.id,
    )
