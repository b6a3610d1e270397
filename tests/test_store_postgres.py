"""The PostgreSQL store's own faults: the database stopped under load."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, List

import pytest

from ansi2048.serve.store.base import StoreUnavailable

from .databases import Cluster, run
from .test_store import held_game, running

BOARD = "4x4-2048"


def test_a_database_stopped_under_appends_pauses_saving_and_loses_nothing(postgres_cluster: Cluster) -> None:
    from ansi2048.serve.store.postgres import PostgresStore

    url = postgres_cluster.new_schema()
    sessions, items = 6, 60
    paused: List[StoreUnavailable] = []

    async def scenario() -> List[bytes]:
        async with running(PostgresStore(url, timeout=0.5)) as store:
            players = []
            for n in range(sessions):
                players.append(await held_game(store, n))
            halfway = asyncio.Event()

            async def play(n: int, player: int) -> None:
                # As a session does: a key is kept until it is stored, then the next one.
                for item in range(items):
                    for _ in range(400):  # bounded: 400 tries at 50 ms, 20 s
                        try:
                            await store.append(player, BOARD, f"s{n}", b"%d;" % item)
                            break
                        except StoreUnavailable as error:
                            paused.append(error)
                            await asyncio.sleep(0.05)
                    else:
                        raise AssertionError("saving never resumed")
                    if item == items // 3:
                        halfway.set()
                    await asyncio.sleep(0.01)

            async def restart() -> None:
                await halfway.wait()
                await asyncio.to_thread(postgres_cluster.stop)
                await asyncio.sleep(0.5)
                await asyncio.to_thread(postgres_cluster.start)

            await asyncio.gather(restart(), *(play(n, player) for n, player in enumerate(players)))
            return [await store.load(player, BOARD) or b"" for player in players]

    try:
        recordings = run(scenario())
    finally:
        postgres_cluster.start_if_stopped()
    assert paused, "the stop was not noticed"
    assert all("\n" not in str(error) for error in paused)
    expected = b"h\n" + b"".join(b"%d;" % item for item in range(items))
    assert recordings == [expected] * sessions


def test_appends_queued_behind_a_busy_commit_share_the_next_one(postgres_cluster: Cluster) -> None:
    import psycopg

    from ansi2048.serve.store.postgres import PostgresStore

    url = postgres_cluster.new_schema()

    async def scenario() -> None:
        async with running(PostgresStore(url)) as store:
            players = []
            for n in range(50):
                players.append(await held_game(store, n))
            # Another server rewriting the first game holds its row: the batch holding its append waits.
            async with await psycopg.AsyncConnection.connect(url) as blocker:
                await blocker.execute("SELECT 1 FROM games WHERE player = %s FOR UPDATE", (players[0],))
                before = store.commits
                first = asyncio.ensure_future(store.append(players[0], BOARD, "s0", b"w"))
                await asyncio.sleep(0.2)
                rest = [
                    asyncio.ensure_future(store.append(p, BOARD, f"s{n}", b"w")) for n, p in enumerate(players) if n > 0
                ]
                await asyncio.sleep(0.3)
                assert not first.done() and not any(append.done() for append in rest)
                await blocker.rollback()
            await asyncio.gather(first, *rest)
            assert store.commits - before == 2  # the waiting batch, then all 49 queued behind it
            for player in players:
                assert await store.load(player, BOARD) == b"h\nw"

    run(scenario())


def test_an_unreachable_database_is_unavailable_in_one_line(tmp_path: Path) -> None:
    from ansi2048.serve.store.postgres import PostgresStore

    store = PostgresStore(f"postgresql://someone:secret@/games?host={tmp_path}", timeout=0.5)

    async def scenario() -> None:
        with pytest.raises(StoreUnavailable) as raised:
            await store.open()
        assert str(raised.value) == "cannot connect to the database at someone@" + str(tmp_path) + "/games"

    run(scenario())


def test_keys_whose_commit_got_no_answer_are_stored_once_when_tried_again(postgres_cluster: Cluster) -> None:
    from ansi2048.serve.store.postgres import PostgresStore

    class AnswerLost(PostgresStore):
        """The first batch of appends commits, then its connection is lost before the answer."""

        lost = False

        async def _transaction(self, work: Any) -> Any:
            result = await super()._transaction(work)
            if getattr(work, "func", None) == self._appends._commit and not self.lost:
                self.lost = True
                raise StoreUnavailable("the database cannot be reached now: the answer to COMMIT was lost")
            return result

    url = postgres_cluster.new_schema()

    async def scenario() -> None:
        async with running(AnswerLost(url)) as store:
            player = await held_game(store)
            with pytest.raises(StoreUnavailable):
                await store.append(player, BOARD, "s0", b"w")  # stored, but the session cannot know
            await store.append(player, BOARD, "s0", b"w")  # kept and tried again, as a session does
            await store.append(player, BOARD, "s0", b"a")
            assert await store.load(player, BOARD) == b"h\nwa"  # once

    run(scenario())


def test_keys_whose_commit_failed_are_stored_when_tried_again(postgres_cluster: Cluster) -> None:
    from ansi2048.serve.store.postgres import PostgresStore
    from ansi2048.serve.store.postgres_appends import Appends

    class CommitFails(Appends):
        """The first batch of appends is rolled back where it would commit, and its connection lost."""

        failed = False

        async def _commit(self, connection: Any, batch: Any, attempt: Any) -> Any:
            errors = await super()._commit(connection, batch, attempt)
            if not self.failed:
                self.failed = True
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return errors

    import psycopg

    url = postgres_cluster.new_schema()

    async def scenario() -> None:
        failing = PostgresStore(url)
        failing._appends = CommitFails(failing._transaction)
        async with running(failing) as store:
            player = await held_game(store)
            with pytest.raises(StoreUnavailable):
                await store.append(player, BOARD, "s0", b"w")
            assert await store.load(player, BOARD) == b"h\n"
            await store.append(player, BOARD, "s0", b"w")
            assert await store.load(player, BOARD) == b"h\nw"

    run(scenario())


def test_a_statement_waiting_too_long_pauses_saving_and_loses_nothing(postgres_cluster: Cluster) -> None:
    import psycopg

    from ansi2048.serve.store.postgres import PostgresStore

    url = postgres_cluster.new_schema()

    async def scenario() -> None:
        async with running(PostgresStore(url, statement_timeout=0.3)) as store:
            player = await held_game(store)
            async with await psycopg.AsyncConnection.connect(url) as blocker:
                # Held elsewhere (a stalled server of the same database): the append cannot take its turn.
                await blocker.execute("SELECT 1 FROM games WHERE player = %s FOR UPDATE", (player,))
                with pytest.raises(StoreUnavailable) as raised:
                    await store.append(player, BOARD, "s0", b"w")
                assert "statement timeout" in str(raised.value)
                await blocker.rollback()
            await store.append(player, BOARD, "s0", b"w")
            assert await store.load(player, BOARD) == b"h\nw"

    run(scenario())


def test_a_silent_database_is_given_up_on_over_tcp_unless_the_url_says_otherwise() -> None:
    from ansi2048.serve.store.postgres import SILENCE, PostgresStore

    assert PostgresStore("postgresql://u@db.example/games")._silence() == SILENCE
    mine = PostgresStore("postgresql://u@db.example/games?keepalives_idle=60")._silence()
    assert mine == {name: value for name, value in SILENCE.items() if name != "keepalives_idle"}
    assert PostgresStore("postgresql:///games?host=/var/run/postgresql")._silence() == {}
    assert PostgresStore("postgresql:///games")._silence() == {}
