"""A player's statistics (``stats``) aggregated by the database, the same on
both (pure: SQL text, and the plans that run it; the stores run them).

The local game tallies its history by reading every record
(:class:`~ansi2048.records.tally.Tally`); a server's player may have tens of
thousands, so the store keeps beside each record the fields the statistics
need, and whether it counts: a game kept again further on (undo after a
game over, then play on) supersedes its earlier record, by the tally's own
rule (the same board and seed, keys that continue the earlier ones, within
the board's last WINDOW records). That is decided when a record is kept
(:func:`keep_plan`); records stored before the columns existed are tallied
once, the first time they are needed (:func:`tally_plan`).

A plan is a generator: it yields each statement (psycopg's placeholders) and
is sent the rows it gave, so that one plan runs on SQLite's thread and on
PostgreSQL's async connection alike (:func:`run_plan`, :func:`run_plan_async`)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Generator, List, Optional, Sequence, Tuple, TypeVar

from ...records.history import Record, config_key
from ...records.tally import RECENT, TOP, WINDOW, BoardStats, Tally, median

__all__ = ["TALLY_STEP", "Plan", "keep_plan", "run_plan", "run_plan_async", "stats_plan", "tally_plan"]

T = TypeVar("T")
Rows = List[Sequence[Any]]
Query = Tuple[str, Tuple[Any, ...]]
Plan = Generator[Query, Rows, T]

# Part of schema version 4: what the statistics need of a record, beside it.
# ``counted``: 1 it counts, 0 a later record supersedes it, NULL not tallied yet.
TALLY_STEP: Tuple[str, ...] = (
    "ALTER TABLE history ADD COLUMN seed TEXT",
    "ALTER TABLE history ADD COLUMN biggest {integer}",
    "ALTER TABLE history ADD COLUMN won {integer}",
    "ALTER TABLE history ADD COLUMN ai {integer}",
    "ALTER TABLE history ADD COLUMN unaided {integer}",
    "ALTER TABLE history ADD COLUMN counted {integer}",
    "CREATE INDEX history_counted ON history (player, counted, board, score)",
)

_UNTALLIED = "SELECT 1 FROM history WHERE player = %s AND counted IS NULL LIMIT 1"
_INSERT = (
    "INSERT INTO history (player, board, score, daily, record, seed, biggest, won, ai, unaided, counted)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
# The counting records of the same game among the board's last WINDOW records.
_OPEN_OF_GAME = (
    "SELECT id, record FROM history WHERE id IN"
    " (SELECT id FROM history WHERE player = %s AND board = %s ORDER BY id DESC LIMIT %s)"
    " AND seed = %s AND counted = 1"
)
_SUPERSEDED = "UPDATE history SET counted = 0 WHERE id = %s"
_ALL = "SELECT id, record FROM history WHERE player = %s ORDER BY id"
_TALLIED = "UPDATE history SET seed = %s, biggest = %s, won = %s, ai = %s, unaided = %s, counted = %s WHERE id = %s"
# The statistics: of the records that count, but those of the seed held back.
_COUNTING = "player = %s AND counted = 1 AND seed <> %s"
_TOTALS = (
    "SELECT board, COUNT(*), SUM(won), MAX(CASE WHEN ai = 0 THEN score ELSE 0 END),"
    " MAX(CASE WHEN unaided = 1 THEN score ELSE 0 END), SUM(CASE WHEN ai = 0 THEN 0 ELSE 1 END)"
    f" FROM history WHERE {_COUNTING} GROUP BY board"
)
_SCORES = f"SELECT board, score, COUNT(*) FROM history WHERE {_COUNTING} GROUP BY board, score"
_TILES = f"SELECT board, biggest, COUNT(*) FROM history WHERE {_COUNTING} GROUP BY board, biggest"
_RECENT = f"SELECT score FROM history WHERE {_COUNTING} AND board = %s ORDER BY id DESC LIMIT %s"
_TOP = f"SELECT record FROM history WHERE {_COUNTING} AND board = %s ORDER BY score DESC, id LIMIT %s"
_HELD = "SELECT COUNT(*) FROM history WHERE player = %s AND seed = %s"


def _fields(record: Record) -> Tuple[str, int, int, int, int]:
    return str(record.seed), record.biggest, int(record.won), int(record.ai), int(record.unaided)


def keep_plan(player: int, record: Record) -> Plan[None]:
    """Store.add_to_history: ``record`` added, and the earlier records of its game that
    it continues no longer counted (Tally's rule)."""
    board = config_key(record.rows, record.cols, record.goal)
    counted: Optional[int] = None
    if not (yield (_UNTALLIED, (player,))):  # else the records are tallied all at once, later
        counted = 1
        for earlier, line in (yield (_OPEN_OF_GAME, (player, board, WINDOW, str(record.seed)))):
            if record.keys.startswith(Record.from_json(str(line)).keys):
                yield (_SUPERSEDED, (earlier,))
    # The board, score and day beside the record's line: rankings query them without parsing it.
    line = record.to_json()
    yield (_INSERT, (player, board, record.score, record.daily, line, *_fields(record), counted))


def tally_plan(player: int) -> Plan[None]:
    """The player's records stored before they were tallied: tallied now, all of them."""
    if not (yield (_UNTALLIED, (player,))):
        return
    rows = yield (_ALL, (player,))
    tally = Tally(listing=True)
    records: List[Optional[Record]] = []
    for index, (_, line) in enumerate(rows):
        try:
            record: Optional[Record] = Record.from_json(str(line))
        except ValueError:
            record = None  # a damaged line: never counted
        records.append(record)
        if record is not None:
            tally.add(record, index)
    counting = set(tally.latest())
    for index, (game, _) in enumerate(rows):
        record = records[index]
        fields = _fields(record) if record is not None else (None, None, None, None, None)
        yield (_TALLIED, (*fields, int(index in counting), game))


def _board(key: str) -> Tuple[int, int, int]:
    size, goal = key.split("-")
    rows, cols = size.split("x")
    return int(rows), int(cols), int(goal)


def stats_plan(player: int, held_seed: int) -> Plan[Tuple[List[BoardStats], int]]:
    """The player's statistics per board (as ``board_stats`` of their records
    gives them, those of ``held_seed`` left out), and how many records of
    ``held_seed`` there are. The records must be tallied (:func:`tally_plan`)."""
    counting = (player, str(held_seed))
    scores: Dict[str, Dict[int, int]] = {}
    for board, score, count in (yield (_SCORES, counting)):
        scores.setdefault(str(board), {})[int(score)] = int(count)
    tiles: Dict[str, List[Tuple[int, int]]] = {}
    for board, biggest, count in (yield (_TILES, counting)):
        tiles.setdefault(str(board), []).append((int(biggest), int(count)))
    out: List[BoardStats] = []
    for board, played, won, best, best_unaided, assisted in (yield (_TOTALS, counting)):
        key = str(board)
        recent = [int(score) for (score,) in (yield (_RECENT, (*counting, key, RECENT)))]
        top = [Record.from_json(str(line)) for (line,) in (yield (_TOP, (*counting, key, TOP)))]
        rows, cols, goal = _board(key)
        out.append(
            BoardStats(
                rows=rows,
                cols=cols,
                goal=goal,
                played=int(played),
                won=int(won),
                best=int(best),
                best_unaided=int(best_unaided),
                assisted=int(assisted),
                median=median(scores[key], int(played)),
                tiles=tuple(sorted(tiles[key], reverse=True)),
                recent=tuple(reversed(recent)),
                top=tuple(top),
            )
        )
    out.sort(key=lambda stats: (-stats.played, stats.rows, stats.cols, stats.goal))
    ((held,),) = yield (_HELD, counting)
    return out, int(held)


def run_plan(plan: Plan[T], execute: Callable[[str, Tuple[Any, ...]], Rows]) -> T:
    """``plan`` run by ``execute`` (a statement and its parameters: its rows)."""
    try:
        query = next(plan)
        while True:
            query = plan.send(execute(*query))
    except StopIteration as done:
        result: T = done.value
        return result


async def run_plan_async(plan: Plan[T], execute: Callable[[str, Tuple[Any, ...]], Awaitable[Rows]]) -> T:
    """``plan`` run by an async ``execute``."""
    try:
        query = next(plan)
        while True:
            query = plan.send(await execute(*query))
    except StopIteration as done:
        result: T = done.value
        return result
