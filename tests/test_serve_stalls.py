"""Work that would stall every player's frames is kept off the event loop
or cut into short steps (issue 34): a long game's resume, the leaderboard,
``stats`` and the SQLite reads. Speed itself is shown by
benchmarks/stalls.py; these tests check the structure that bounds it."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import List, Optional, Tuple, TypeVar

import pytest

from ansi2048 import __version__
from ansi2048.game.engine import Direction, Game
from ansi2048.records.history import Record, board_stats
from ansi2048.records.recording import format_header
from ansi2048.records.replay import Result, Setup, verdict, verdict_steps
from ansi2048.records.tally import BoardStats
from ansi2048.serve.keeping import GuestKeeping, open_game, replay_step
from ansi2048.serve.store.base import DailyEntry, Store, StoreError
from ansi2048.serve.store.daily import machine_timing, times_list
from ansi2048.serve.store.sqlite import MIGRATIONS, SQLiteStore
from ansi2048.storage.save_file import SaveFile, Steps

from .databases import run
from .test_store import opened, running

T = TypeVar("T")
_KEYS = {Direction.UP: "w", Direction.LEFT: "a", Direction.DOWN: "s", Direction.RIGHT: "d"}


def played(rows: int, cols: int, moves: int, restarts: bool = False) -> bytes:
    """A recording of ``moves`` real moves (``r`` when a game is over, and now and then with ``restarts``)."""
    rng = random.Random(1)
    game = Game(rows, cols, 2048, seed=5)
    keys: List[str] = []
    while len(keys) < moves:
        if game.over or (restarts and len(keys) % 997 == 996):
            game.restart()
            keys.append("r")
            continue
        direction = rng.choice(list(_KEYS))
        if game.move(direction):
            keys.append(_KEYS[direction])
    header = format_header(5, rows, cols, 2048, __version__)
    return (header + "".join(keys)).encode("ascii")


def run_counting(steps: Steps[T]) -> Tuple[T, int]:
    """What ``steps`` gives, and how many steps it took."""
    count = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result, count
        count += 1


class _Recorded(GuestKeeping):
    """A keeping that holds one recording (a player's game, as the store gives it)."""

    def __init__(self, recording: bytes) -> None:
        self.recording = recording

    async def load(self) -> Optional[bytes]:
        return self.recording


def test_a_long_resume_is_replayed_in_steps_and_equals_the_whole_replay() -> None:
    recording = played(10, 10, 3000)
    whole = SaveFile("", 10, 10, 2048, recording).load()
    stepped, count = run_counting(SaveFile("", 10, 10, 2048, recording).load_steps(every=100))
    assert count >= 30  # 3,000 moves in steps of 100
    assert whole is not None and stepped is not None
    assert (stepped.game.cells, stepped.game.score, stepped.game.moves) == (
        whole.game.cells,
        whole.game.score,
        whole.game.moves,
    )
    assert stepped.runs == whole.runs and stepped.best_seen == whole.best_seen


def test_resuming_a_long_game_lets_other_sessions_run_between_its_steps() -> None:
    rows = cols = 10
    moves = replay_step(rows, cols) * 20
    recording = played(rows, cols, moves, restarts=True)
    whole = SaveFile("", rows, cols, 2048, recording).load()
    assert whole is not None and whole.restarts_end  # compaction replays the last game again, in steps too

    async def resume_beside_a_bystander() -> int:
        turns = 0
        done = asyncio.Event()

        async def bystander() -> None:
            nonlocal turns
            while not done.is_set():
                turns += 1
                await asyncio.sleep(0)

        other = asyncio.ensure_future(bystander())
        await asyncio.sleep(0)
        started = turns
        session, _, _ = await open_game(_Recorded(recording), rows, cols, 2048, False, lambda: 1, 0.0)
        done.set()
        await other
        assert (session.game.cells, session.game.score) == (whole.game.cells, whole.game.score)
        return turns - started

    # The replay yielded at least once a step (its 20 steps, and the compaction's).
    assert run(resume_beside_a_bystander()) >= 20


# -- the leaderboard: machine timing settled once, the board read without recordings ------------

DAY = "2026-11-26"
NOON = 1_796_040_000.0  # 2026-11-26 12:00 UTC
BOARD = "daily-2026-11-26"
SCRIPTED = "".join(f" {150 * key}" for key in range(1, 151))  # a key every 150 ms: no person's timing
PERSON = "".join(f" {sum([90, 400, 150, 1200, 230, 80, 610][: key % 7]) + key * 700}" for key in range(150))


async def _ranked(store: Store, name: str, times: str, score: int) -> DailyEntry:
    """``name``'s ranked game of DAY, its keys' ``times`` appended with its keys."""
    player = (await store.player(f"SHA256:{name}", name)).id
    begun = await store.daily_start(DAY, player, f"address of {name}", NOON, b"h\n", 1)
    assert begun is not None and await store.claim(player, BOARD, name, 60) is None
    await store.rewrite(player, BOARD, name, b"h\n")
    await store.append(player, BOARD, name, b"w" * len(times.split()), (begun.id, times))
    return replace(begun, score=score)


def test_machine_timing_is_found_when_a_game_settles_and_equals_the_rule_on_its_times(
    store_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            scripted = await _ranked(store, "bot", SCRIPTED, 900)
            person = await _ranked(store, "ann", PERSON, 800)
            for entry in (scripted, person):
                assert (await store.daily_by_id(entry.id)).machine is None  # type: ignore[union-attr]
                await store.daily_result(replace(entry, status="finished"))
            assert machine_timing(times_list(SCRIPTED)) and not machine_timing(times_list(PERSON))
            settled = [await store.daily_by_id(entry.id) for entry in (scripted, person)]
            assert [entry.machine for entry in settled if entry is not None] == [True, False]
            board = await store.daily_board(DAY, None, 10)
            assert [(s.entry.name, s.machine) for s in board.top] == [("bot", True), ("ann", False)]
            # Keys since the game settled: the verdict is not known again until found from the times.
            await store.append(person.player, BOARD, "ann", b"w", (person.id, " 999999"))
            assert (await store.daily_by_id(person.id)).machine is None  # type: ignore[union-attr]
            assert [s.machine for s in (await store.daily_board(DAY, None, 10)).top] == [True, False]

    run(scenario())


def test_an_older_database_upgraded_has_its_board_marked_from_the_stored_times(tmp_path: Path) -> None:
    path = str(tmp_path / "old.sqlite3")

    async def scenario() -> None:
        async with running(SQLiteStore(path, migrations=MIGRATIONS[:5])):
            pass  # a database of version 5, whose ranked games were settled without a verdict
        with closing(sqlite3.connect(path)) as db, db:
            assert "machine" not in [column[1] for column in db.execute("PRAGMA table_info(daily)")]
            player = db.execute("INSERT INTO players (fingerprint, name) VALUES ('SHA256:bot', 'bot')").lastrowid
            db.execute(
                "INSERT INTO daily (day, player, address, started, status, recording, times, score)"
                " VALUES (?, ?, 'a', ?, 'finished', ?, ?, 900)",
                (DAY, player, NOON, b"h\n", SCRIPTED),
            )
        async with running(SQLiteStore(path)) as upgraded:
            (entry,) = await upgraded.daily_entries(DAY)
            assert entry.machine is None
            (standing,) = (await upgraded.daily_board(DAY, player, 10)).top
            assert standing.machine and standing.entry.name == "bot"

    run(scenario())


def test_the_board_asks_the_database_for_no_recording_and_no_times(tmp_path: Path) -> None:
    path = str(tmp_path / "board.sqlite3")
    statements: List[str] = []

    async def scenario() -> None:
        async with running(SQLiteStore(path)) as store:
            for number in range(12):
                entry = await _ranked(store, f"p{number}", SCRIPTED, 100 * number)
                await store.daily_result(replace(entry, status="finished", recording=b"h\n" + b"w" * 5000))
            await store._reader.do(lambda connection: connection.set_trace_callback(statements.append))
            board = await store.daily_board(DAY, entry.player - 11, 10)
            assert board.ranked == 12 and board.mine is not None and board.mine.rank == 12

    run(scenario())
    reads = [statement for statement in statements if statement.lstrip().upper().startswith("SELECT")]
    assert reads and not any("recording" in read or "times" in read for read in reads), reads


# -- SQLite: reads on a connection of their own ----------------------------------------------


def test_sqlite_reads_run_on_a_connection_of_their_own_while_the_writer_waits(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(str(path), busy_timeout=60)

    async def scenario() -> None:
        async with running(store):
            player = (await store.player("SHA256:a", "a")).id
            assert await store.claim(player, "4x4-2048", "s", 60) is None
            await store.rewrite(player, "4x4-2048", "s", b"h\n")
            blocker = sqlite3.connect(path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")  # another writer of the file: the store's waits for it
            try:
                appending = asyncio.ensure_future(store.append(player, "4x4-2048", "s", b"w"))
                await asyncio.sleep(0.05)  # the writer has taken the append and waits for the lock
                # The reader answers meanwhile, from what was committed.
                assert await asyncio.wait_for(store.load(player, "4x4-2048"), 20) == b"h\n"
                assert await asyncio.wait_for(store.daily_board("2026-11-26", player, 10), 20) is not None
                assert not appending.done()
            finally:
                blocker.execute("COMMIT")
                blocker.close()
            await appending
            assert await store.load(player, "4x4-2048") == b"h\nw"  # a read after a write sees it
            pragmas = "PRAGMA journal_mode", "PRAGMA synchronous", "PRAGMA query_only"

            def settings(connection: sqlite3.Connection) -> List[object]:
                return [id(connection), *(connection.execute(pragma).fetchone()[0] for pragma in pragmas)]

            writer, reader = await store._writer.do(settings), await store._reader.do(settings)
            assert writer[0] != reader[0]  # two connections
            assert writer[1:] == ["wal", 2, 0]  # WAL, synchronous=FULL, writes
            assert (reader[1], reader[3]) == ("wal", 1)  # the reader only reads
            with pytest.raises(StoreError):
                await store._reader.do(lambda connection: connection.execute("DELETE FROM items"))

    run(scenario())


# -- stats: aggregated by the database ---------------------------------------------------------

HELD = 7  # the seed held back (today's daily, in the server)


def a_history(count: int, seed: int) -> List[Record]:
    """Made-up records as a server keeps them: two boards, few seeds, scores
    that tie, and games kept again further on (their keys continue, or repeat)."""
    rng = random.Random(seed)
    records: List[Record] = []
    for number in range(count):
        earlier = [record for record in records[-40:] if rng.random() < 0.3]
        if earlier and rng.random() < 0.35:
            base = earlier[-1]
            rows, cols, goal, game_seed = base.rows, base.cols, base.goal, base.seed
            keys = base.keys + "".join(rng.choice("wasdu") for _ in range(rng.randrange(0, 6)))
        else:
            rows, cols, goal = rng.choice([(4, 4, 2048), (3, 3, 256), (5, 5, 2048)])
            game_seed = rng.randrange(1, 12)
            keys = "".join(rng.choice("wasd") for _ in range(rng.randrange(6, 16)))
        ai = rng.random() < 0.2
        records.append(
            Record(
                rows=rows, cols=cols, goal=goal, seed=game_seed, keys=keys, score=rng.randrange(0, 160, 8),
                moves=len(keys), biggest=rng.choice([8, 16, 32]), won=rng.random() < 0.3, over=True,
                undo="u" in keys, ai=ai, date=f"2026-11-{1 + number % 28:02d}T10:00:00Z", daily=None,
            )
        )  # fmt: skip
    return records


def tallied(records: List[Record]) -> Tuple[List[BoardStats], int]:
    """What ``stats`` showed before: the records parsed and tallied, those of HELD left out; and their count."""
    return board_stats([r for r in records if r.seed != HELD]), sum(1 for r in records if r.seed == HELD)


async def _forget_tallies(store: Store) -> None:
    """The history as a database stored before version 4 left it: nothing tallied."""
    sql = "UPDATE history SET seed = NULL, biggest = NULL, won = NULL, ai = NULL, unaided = NULL, counted = NULL"
    if isinstance(store, SQLiteStore):
        await store._writer.do(lambda connection: connection.execute(sql))
    else:
        await store._transaction(lambda connection: connection.execute(sql))  # type: ignore[attr-defined]


def test_stats_from_the_database_equal_the_tally_of_the_parsed_history(store_url: str, tmp_path: Path) -> None:
    records = a_history(400, seed=3)
    others = a_history(60, seed=4)
    expected, held = tallied(records)
    assert held and any(
        later.keys.startswith(earlier.keys) and later.seed == earlier.seed and later.board == earlier.board
        for at, later in enumerate(records)
        for earlier in records[:at]
    )  # the history has games kept again, and games held back

    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:p", "p")).id
            other = (await store.player("SHA256:o", "o")).id
            for record in records[:250]:
                await store.add_to_history(player, record)
            for record in others:
                await store.add_to_history(other, record)
            assert await store.stats(player, HELD) == tallied(records[:250])
            # Records stored before the tallies existed are tallied when first needed, and those kept meanwhile.
            await _forget_tallies(store)
            for record in records[250:]:
                await store.add_to_history(player, record)
            assert await store.stats(player, HELD) == (expected, held)
            for record in a_history(30, seed=5):  # kept once tallied: decided as each is kept
                records.append(record)
                await store.add_to_history(player, record)
            assert await store.stats(player, HELD) == tallied(records)
            assert await store.stats(other, HELD) == tallied(others)
            assert await store.stats(other + 100, HELD) == ([], 0)

    run(scenario())


def test_a_ranked_games_verdict_is_replayed_in_steps_and_equals_the_whole_one() -> None:
    recording = played(4, 4, 300)
    whole = SaveFile("", 4, 4, 2048, recording).load()
    assert whole is not None
    seen, setup = Result.of(whole.game), Setup(whole.seed, 4, 4, 2048)
    (replayed, why), count = run_counting(verdict_steps(recording, setup, seen, every=10))
    assert (replayed, why) == verdict(recording, setup, seen)
    assert why == "" and replayed is not None and replayed.moves == whole.game.moves
    assert count >= 30
