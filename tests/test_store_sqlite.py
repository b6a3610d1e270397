"""The SQLite store's own rules: its file's settings, one writer's group
commit, and the faults of a file (locked by another process, disk full)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from ansi2048.serve.store.base import StoreUnavailable
from ansi2048.serve.store.sqlite import SQLiteStore

from .databases import run
from .test_store import held_game, running

BOARD = "4x4-2048"


def test_the_file_is_in_wal_mode_with_its_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    async def scenario() -> None:
        store = SQLiteStore(str(path))
        await store.open()
        await store.close()

    run(scenario())
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("SELECT version FROM schema_version").fetchall() == [(11,)]
    connection.close()


def test_appends_queued_behind_a_busy_writer_share_one_commit(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    async def scenario() -> None:
        async with running(SQLiteStore(str(path))) as store:
            players = [await held_game(store, n) for n in range(50)]
            blocker = sqlite3.connect(path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")  # another process writing: the writer waits (busy_timeout)
            before = store.commits
            appends = [asyncio.ensure_future(store.append(p, BOARD, f"s{n}", b"w")) for n, p in enumerate(players)]
            await asyncio.sleep(0.3)
            assert not any(append.done() for append in appends)  # none returned before its commit
            blocker.execute("COMMIT")
            blocker.close()
            await asyncio.gather(*appends)
            # The first append's batch waited for the lock; every later one queued meanwhile: one more commit.
            assert store.commits - before <= 2

    run(scenario())


def test_a_file_locked_too_long_pauses_saving_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    async def scenario() -> None:
        async with running(SQLiteStore(str(path), busy_timeout=0.2)) as store:
            player = await held_game(store)
            blocker = sqlite3.connect(path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreUnavailable) as raised:
                await store.append(player, BOARD, "s0", b"w")
            assert "locked" in str(raised.value) and "\n" not in str(raised.value)
            blocker.execute("ROLLBACK")
            blocker.close()
            await store.append(player, BOARD, "s0", b"w")  # the caller kept the items and tries again
            assert await store.load(player, BOARD) == b"h\nw"

    run(scenario())


def test_a_full_disk_pauses_saving_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    async def scenario() -> None:
        async with running(SQLiteStore(str(path))) as store:
            player = await held_game(store)
            other = await held_game(store, 1)
            await store.append(player, BOARD, "s0", b"a")

            def fill(connection: sqlite3.Connection) -> None:
                # The file may not grow: as if the disk were full.
                pages = connection.execute("PRAGMA page_count").fetchone()[0]
                connection.execute(f"PRAGMA max_page_count = {pages}")

            await store._writer.do(fill)
            big = b"x" * 100_000
            results = await asyncio.gather(
                store.append(player, BOARD, "s0", big), store.append(other, BOARD, "s1", b"o"), return_exceptions=True
            )
            assert all(isinstance(result, StoreUnavailable) for result in results), results
            assert "full" in str(results[0])
            assert await store.load(player, BOARD) == b"h\na"  # the failed commit left nothing half-written
            await store._writer.do(lambda connection: connection.execute("PRAGMA max_page_count = 1000000"))
            await store.append(player, BOARD, "s0", big)
            await store.append(other, BOARD, "s1", b"o")
            assert await store.load(player, BOARD) == b"h\na" + big
            assert await store.load(other, BOARD) == b"h\no"

    run(scenario())


def test_an_unreachable_file_is_unavailable_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")

    async def scenario() -> None:
        store = SQLiteStore(str(tmp_path / "file" / "s.db"))  # its directory is a file
        with pytest.raises(StoreUnavailable):
            await store.open()

    run(scenario())


def test_the_writer_outlives_an_event_loop_that_ended_before_its_answer(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(str(path))

    async def start() -> int:
        await store.open()
        return await held_game(store)

    player = run(start())
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer waits here with the append below
    with pytest.raises(asyncio.TimeoutError):
        run(store.append(player, BOARD, "s0", b"w"), timeout=0.2)  # its loop ends, the append still queued
    blocker.execute("COMMIT")
    blocker.close()

    # Stored, answered to nobody, and the writer still serves (a write queued
    # after it returns, so the append is in when the reader looks).
    assert run(store.record_best(player, "4x4-2048", 8), timeout=10) == 8
    assert run(store.load(player, BOARD), timeout=10) == b"h\nw"
    run(store.close(), timeout=10)


@pytest.mark.posix("file modes")
def test_the_file_and_its_wal_and_shm_are_created_for_the_servers_user_alone(tmp_path: Path) -> None:
    """They hold the daily secret (issue 40, item 21): 0600 under the usual
    umask, not SQLite's 0644, whatever the folder around them allows."""
    import os
    import stat

    path = tmp_path / "serve.sqlite3"

    async def scenario() -> None:
        async with running(SQLiteStore(str(path))) as store:
            await held_game(store)
            modes = {name: stat.S_IMODE(os.stat(tmp_path / name).st_mode) for name in os.listdir(tmp_path)}
            assert set(modes) >= {"serve.sqlite3", "serve.sqlite3-wal", "serve.sqlite3-shm"}, modes
            assert all(mode == 0o600 for mode in modes.values()), {name: oct(mode) for name, mode in modes.items()}

    before = os.umask(0o022)
    try:
        run(scenario())
    finally:
        os.umask(before)
