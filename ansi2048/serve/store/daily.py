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

import statistics
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Tuple

from .base import DailyBoard, DailyEntry, Removed, Standing
from .moderation import NOT_REMOVED, SELECT_REMOVED

__all__ = [
    "ADD_TIMES",
    "COUNT_ADDRESS",
    "COUNT_BEFORE",
    "COUNT_RANKED",
    "INSERT",
    "MACHINE_STEP",
    "RESULT",
    "SCHEMA_STEP",
    "SELECT_ALL",
    "SELECT_BY_ID",
    "SELECT_DAY",
    "SELECT_ENTRY",
    "SELECT_MINE",
    "SELECT_TIMES",
    "SELECT_TOP",
    "Fetch",
    "entry_of",
    "machine_timing",
    "question_marks",
    "read_board",
    "settled_row",
    "standing_of",
    "times_list",
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

# Version 4: whether a game's key timing is no person's, found once when it
# is settled, not at every read of the board; and the board's order indexed.
MACHINE_STEP: Tuple[str, ...] = (
    "ALTER TABLE daily ADD COLUMN machine {integer}",  # 1, 0, or NULL: not known (DailyEntry.machine)
    "CREATE INDEX daily_ranking ON daily (day, score, moves)",
)

PLAYING, FINISHED = "playing", "finished"
RANKED = (PLAYING, FINISHED)  # the statuses the board shows

# Key timing no person types: at least this many keys whose gaps have a
# median under MACHINE_GAP seconds and vary by less than MACHINE_SPREAD
# (their standard deviation over their mean). A person's gaps wander (a
# thought, a glance, a burst); a script's, or a held-down key's repeat, do
# not. Such games are marked on the board, not hidden.
MACHINE_KEYS = 100
MACHINE_GAP = 0.25
MACHINE_SPREAD = 0.2


def machine_timing(times: Sequence[int]) -> bool:
    """Key arrival times (ms) no person types (the rule above)."""
    if len(times) < MACHINE_KEYS:
        return False
    gaps = [(later - earlier) / 1000 for earlier, later in zip(times, times[1:])]
    mean = statistics.fmean(gaps)
    if statistics.median(gaps) >= MACHINE_GAP or mean <= 0:
        return mean <= 0  # every key in one burst: pasted
    return statistics.pstdev(gaps) / mean < MACHINE_SPREAD


def times_list(times: str) -> List[int]:
    """An entry's stored key times (DailyEntry.times) as numbers."""
    return [int(word) for word in times.split() if word.isdigit()]


# The columns an entry is read from, in :func:`entry_of`'s order (``name`` from players).
COLUMNS = (
    "daily.id, daily.day, daily.player, players.name, daily.address, daily.started, daily.status,"
    " daily.recording, daily.times, daily.score, daily.biggest, daily.moves, daily.seconds, daily.cells,"
    " daily.machine"
)
# The same columns for the board: no recording, no times (empty), whatever their size.
BOARD_COLUMNS = COLUMNS.replace("daily.recording, daily.times", "'', ''")
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
        machine=None if row[14] is None else bool(row[14]),
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
# New keys' times: the timing's verdict is not known again until the game is settled.
ADD_TIMES = "UPDATE daily SET times = times || %s, machine = NULL WHERE id = %s"
SELECT_TIMES = "SELECT times FROM daily WHERE id = %s"
RESULT = (
    "UPDATE daily SET status = %s, recording = %s, score = %s, biggest = %s, moves = %s, seconds = %s, cells = %s,"
    " machine = %s WHERE id = %s"
)
# The board (store.daily_board): its size, its best games, a player's own and
# how many rank before it (the order of SELECT_TOP).
_RANKED_WHERE = f"daily.day = %s AND daily.status IN ('playing', 'finished') AND {NOT_REMOVED}"  # RANKED
COUNT_RANKED = f"SELECT COUNT(*) FROM daily WHERE {_RANKED_WHERE}"
SELECT_TOP = (
    f"SELECT {BOARD_COLUMNS} FROM {FROM} WHERE {_RANKED_WHERE}"
    " ORDER BY daily.score DESC, daily.moves, daily.started, daily.id LIMIT %s"
)
SELECT_MINE = f"SELECT {BOARD_COLUMNS} FROM {FROM} WHERE {_RANKED_WHERE} AND daily.player = %s"
COUNT_BEFORE = (
    f"SELECT COUNT(*) FROM daily WHERE {_RANKED_WHERE} AND (daily.score > %s OR (daily.score = %s AND"
    " (daily.moves < %s OR (daily.moves = %s AND (daily.started < %s OR (daily.started = %s AND daily.id < %s))))))"
)


def before_row(entry: DailyEntry) -> Tuple[Any, ...]:
    """COUNT_BEFORE's parameters: the ranked games before ``entry``."""
    return (entry.day, entry.score, entry.score, entry.moves, entry.moves, entry.started, entry.started, entry.id)


def standing_of(rank: int, entry: DailyEntry, times: Optional[str]) -> Standing:
    """``entry`` at ``rank``; its timing's verdict as settled, else found
    from ``times`` (SELECT_TIMES; None when it was settled)."""
    machine = entry.machine if entry.machine is not None else machine_timing(times_list(times or ""))
    return Standing(rank, entry, machine)


def settled_row(entry: DailyEntry, times: str) -> Tuple[Any, ...]:
    """RESULT's parameters for ``entry``, whose stored key times are ``times``."""
    return (
        entry.status,
        entry.recording,
        entry.score,
        entry.biggest,
        entry.moves,
        entry.seconds,
        entry.cells,
        int(machine_timing(times_list(times))),
        entry.id,
    )


# A query run on the store's connection (psycopg placeholders): its rows.
Fetch = Callable[[str, Tuple[Any, ...]], Awaitable[List[Sequence[Any]]]]


async def read_board(fetch: Fetch, day: str, me: Optional[int], top: int) -> DailyBoard:
    """Store.daily_board on either database: a few small queries, no
    recording read, the key times read only of a shown game not settled
    since its last keys."""

    async def standing(rank: int, row: Sequence[Any]) -> Standing:
        entry = entry_of(row)
        times = None if entry.machine is not None else (await fetch(SELECT_TIMES, (entry.id,)))[0][0]
        return standing_of(rank, entry, times)

    ((ranked,),) = await fetch(COUNT_RANKED, (day,))
    best = [await standing(rank, row) for rank, row in enumerate(await fetch(SELECT_TOP, (day, top)), 1)]
    mine = next((shown for shown in best if shown.entry.player == me), None)
    if me is not None and mine is None:
        rows = await fetch(SELECT_MINE, (day, me))
        if rows:
            ((before,),) = await fetch(COUNT_BEFORE, before_row(entry_of(rows[0])))
            mine = await standing(int(before) + 1, rows[0])
    removed = [
        Removed(int(row[0]), str(row[1]), int(row[2]), str(row[3])) for row in await fetch(SELECT_REMOVED, (day,))
    ]
    return DailyBoard(int(ranked), tuple(best), mine, tuple(removed))
