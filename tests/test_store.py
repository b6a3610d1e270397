"""The server's storage (ansi2048.serve.store): every rule of the interface,
on every database (tests/databases.py runs each test once per database)."""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator, List, TypeVar

import pytest

from ansi2048.records.history import Record
from ansi2048.serve.store import open_store
from ansi2048.serve.store.base import Claim, ClaimLost, Prefs, SchemaTooNew, Store, StoreError, StoreUnavailable
from ansi2048.serve.store.links import Statement

from .databases import run

S = TypeVar("S", bound=Store)
BOARD = "4x4-2048"
HEADER = b'{"v":1,"seed":7}\n'


@asynccontextmanager
async def running(store: S) -> AsyncIterator[S]:
    """``store`` opened, and closed at the end."""
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def opened(url: str, data_dir: Path) -> AsyncIterator[Store]:
    async with running(open_store(url, str(data_dir))) as store:
        yield store


async def new_game(store: Store, fingerprint: str = "SHA256:alice", holder: str = "s1") -> int:
    """A player holding a game on BOARD whose recording is HEADER."""
    player = (await store.player(fingerprint, "alice")).id
    assert await store.claim(player, BOARD, holder, ttl=60) is None
    await store.rewrite(player, BOARD, holder, HEADER)
    return player


async def held_game(store: Store, n: int = 0) -> int:
    """Player ``n``'s game on BOARD, held by session ``s{n}``, its recording ``h\\n``."""
    player = (await store.player(f"SHA256:{n}", "p")).id
    assert await store.claim(player, BOARD, f"s{n}", ttl=600) is None
    await store.rewrite(player, BOARD, f"s{n}", b"h\n")
    return player


def a_record(score: int, date: str = "2026-11-26T10:00:00Z", daily: str | None = None, seed: int = 7) -> Record:
    return Record(
        rows=4, cols=4, goal=2048, seed=seed, keys="wasd", score=score, moves=4, biggest=8,
        won=False, over=True, undo=False, ai=False, date=date, daily=daily,
    )  # fmt: skip


# -- identities -------------------------------------------------------------------


def test_a_player_is_created_once_and_found_again_by_fingerprint(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            first = await store.player("SHA256:aaa", "bob")
            again = await store.player("SHA256:aaa", "robert")  # the name given later changes nothing
            assert (again.id, again.name, again.fingerprint) == (first.id, "bob", "SHA256:aaa")
            other = await store.player("SHA256:bbb", "carol")
            assert other.id != first.id
        async with opened(store_url, tmp_path) as store:
            assert (await store.player("SHA256:aaa", "x")).id == first.id

    run(scenario())


def test_a_name_held_by_another_key_gets_a_distinct_suffix(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            names = [(await store.player(f"SHA256:{n}", "bob")).name for n in range(4)]
            assert names == ["bob", "bob2", "bob3", "bob4"]
            # Names that only start alike are no conflict, and LIKE's wildcards are plain characters here.
            assert (await store.player("SHA256:x", "bo")).name == "bo"
            assert (await store.player("SHA256:y", "b_b")).name == "b_b"
            assert (await store.player("SHA256:z", "b%")).name == "b%"
            assert (await store.player("SHA256:w", "bobby")).name == "bobby"

    run(scenario())


def test_names_are_unique_without_regard_to_case(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            assert (await store.player("SHA256:1", "dana")).name == "dana"
            impostor = (await store.player("SHA256:2", "Dana")).name
            again = (await store.player("SHA256:3", "DANA2")).name
            names = ["dana", impostor, again]
            assert len({name.lower() for name in names}) == 3, names
            assert impostor.lower().startswith("dana") and again.lower().startswith("dana2")
            assert (await store.player("SHA256:2", "dana")).name == impostor  # a key keeps its name

    run(scenario())


def test_a_store_with_names_equal_but_for_case_is_upgraded_keeping_every_player(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        # Names as ansi2048 before version 5 of the schema gave them: told apart by case.
        with monkeypatch.context() as before:
            for store_module in ("sqlite", "postgres"):
                before.setattr(f"ansi2048.serve.store.{store_module}.distinct_name", lambda name, taken: name)
            await older_names(store_url, tmp_path)
        new = open_store(store_url, str(tmp_path))
        notes = await new.open()
        try:
            names = [(await new.player(f"SHA256:{n}", "unused")).name for n in range(4)]
            assert names[0] == "dana" and names[3] == "Dana2"  # the first of each name keeps it
            assert len({name.lower() for name in names}) == 4, names
            ids = [(await new.player(f"SHA256:{n}", "x")).id for n in range(4)]
            assert len(set(ids)) == 4  # every player kept
            assert await new.load(ids[1], BOARD) == HEADER  # with their games
            assert len(notes) == 2 and all("renamed" in note for note in notes)
            assert "'Dana'" in notes[0] and repr(names[1]) in notes[0]
            assert "'DANA'" in notes[1] and repr(names[2]) in notes[1]
            assert (await new.player("SHA256:new", "dAnA")).name.lower() not in {name.lower() for name in names}
        finally:
            await new.close()
        again = open_store(store_url, str(tmp_path))
        assert await again.open() == []  # upgraded once
        await again.close()

    run(scenario())


async def older_names(store_url: str, tmp_path: Path) -> None:
    """A database of schema version 3 holding dana, Dana, DANA and Dana2, Dana's game on BOARD."""
    old = open_store(store_url, str(tmp_path))
    old.migrations = old.migrations[:3]  # type: ignore[attr-defined]
    await old.open()
    ids = [(await old.player(f"SHA256:{n}", name)).id for n, name in enumerate(["dana", "Dana", "DANA", "Dana2"])]
    assert [(await old.player(f"SHA256:{n}", "x")).name for n in range(4)] == ["dana", "Dana", "DANA", "Dana2"]
    assert await old.claim(ids[1], BOARD, "s", 60) is None
    # As that version wrote a game (this one's rewrite drops a snapshot, a column version 3 has not).
    game = Statement("UPDATE games SET recording = %s WHERE player = %s AND board = %s", (HEADER, ids[1], BOARD))
    await old.run_script([game])
    await old.close()


def test_two_servers_racing_for_one_name_get_distinct_names(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as one, opened(store_url, tmp_path) as two:
            players = await asyncio.gather(
                *(
                    server.player(f"SHA256:{n}-{i}", "eve" if n % 2 else "Eve")
                    for n in range(10)
                    for i, server in enumerate((one, two))
                )
            )
        names = sorted(player.name.lower() for player in players)
        assert names == sorted(["eve", *(f"eve{n}" for n in range(2, 21))])

    run(scenario())


def test_prefs_are_kept(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await store.player("SHA256:p", "pat")
            assert player.prefs == Prefs()
            chosen = Prefs(theme="dark", color="256", animation=False, private=True)
            await store.set_prefs(player.id, chosen)
        async with opened(store_url, tmp_path) as store:
            assert (await store.player("SHA256:p", "pat")).prefs == chosen
            await store.set_prefs(player.id, Prefs(animation=True))
            assert (await store.player("SHA256:p", "pat")).prefs == Prefs(animation=True)

    run(scenario())


# -- claims -----------------------------------------------------------------------


def test_a_claim_is_ours_until_another_takes_it_over(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await new_game(store, holder="s1")
            before = time.time()
            other = await store.claim(player, BOARD, "s2", ttl=60)
            assert isinstance(other, Claim) and other.holder == "s1"
            assert before + 50 < other.until < time.time() + 70
            assert await store.claim(player, BOARD, "s1", ttl=60) is None  # renewed
            await store.append(player, BOARD, "s1", b"w")
            assert await store.claim(player, BOARD, "s2", ttl=60, take_over=True) is None
            with pytest.raises(ClaimLost):
                await store.append(player, BOARD, "s1", b"a")
            with pytest.raises(ClaimLost):
                await store.rewrite(player, BOARD, "s1", HEADER)
            with pytest.raises(ClaimLost):
                await store.discard(player, BOARD, "s1")
            await store.append(player, BOARD, "s2", b"s")
            assert await store.load(player, BOARD) == HEADER + b"ws"
            other = await store.claim(player, BOARD, "s1", ttl=60)
            assert other is not None and other.holder == "s2"

    run(scenario())


def test_a_crashed_holders_claim_expires(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:c", "cat")).id
            assert await store.claim(player, BOARD, "crashed", ttl=0.2) is None
            assert await store.claim(player, BOARD, "s2", ttl=60) is not None
            await asyncio.sleep(0.4)
            assert await store.claim(player, BOARD, "s2", ttl=60) is None
            with pytest.raises(ClaimLost):
                await store.append(player, BOARD, "crashed", b"w")

    run(scenario())


def test_a_released_claim_is_free_and_no_longer_writes(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await new_game(store, holder="s1")
            await store.release(player, BOARD, "s2")  # not its claim: nothing happens
            assert await store.claim(player, BOARD, "s2", ttl=60) is not None
            await store.release(player, BOARD, "s1")
            with pytest.raises(ClaimLost):
                await store.append(player, BOARD, "s1", b"w")
            assert await store.claim(player, BOARD, "s2", ttl=60) is None
            assert await store.load(player, BOARD) == HEADER  # releasing keeps the game

    run(scenario())


def test_claims_are_per_board(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await new_game(store, holder="s1")
            assert await store.claim(player, "5x5-2048", "s2", ttl=60) is None
            await store.rewrite(player, "5x5-2048", "s2", b"five\n")
            assert await store.load(player, BOARD) == HEADER
            assert await store.load(player, "5x5-2048") == b"five\n"

    run(scenario())


# -- games ------------------------------------------------------------------------


def test_a_game_is_its_header_and_its_appended_items(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            assert await store.load(1, BOARD) is None
            player = await new_game(store)
            assert await store.load(player, BOARD) == HEADER
            for items in (b"w", b"as", b"\x00\xff"):
                await store.append(player, BOARD, "s1", items)
        async with opened(store_url, tmp_path) as store:
            assert await store.load(player, BOARD) == HEADER + b"was\x00\xff"

    run(scenario())


def test_rewrite_replaces_the_whole_recording(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await new_game(store)
            await store.append(player, BOARD, "s1", b"wasd")
            await store.rewrite(player, BOARD, "s1", b"new\nww")
            assert await store.load(player, BOARD) == b"new\nww"
            await store.append(player, BOARD, "s1", b"d")
            assert await store.load(player, BOARD) == b"new\nwwd"

    run(scenario())


def test_a_discarded_game_is_gone(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await new_game(store)
            await store.append(player, BOARD, "s1", b"wasd")
            await store.discard(player, BOARD, "s1")
            assert await store.load(player, BOARD) is None
            await store.rewrite(player, BOARD, "s1", HEADER)  # the claim outlives the game
            assert await store.load(player, BOARD) == HEADER

    run(scenario())


def test_a_player_that_does_not_exist_has_no_game_to_claim(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            with pytest.raises(StoreError) as refused:
                await store.claim(404, BOARD, "s1", ttl=60)
            assert not isinstance(refused.value, StoreUnavailable) and "\n" not in str(refused.value)
            player = await new_game(store)  # the store goes on
            assert await store.load(player, BOARD) == HEADER

    run(scenario())


def test_appending_without_a_claim_is_refused(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:n", "nobody")).id
            with pytest.raises(ClaimLost):
                await store.append(player, BOARD, "s1", b"w")
            with pytest.raises(ClaimLost):
                await store.rewrite(player, BOARD, "s1", HEADER)
            assert await store.load(player, BOARD) is None

    run(scenario())


def test_many_sessions_appending_at_once_share_commits(store_url: str, tmp_path: Path) -> None:
    sessions = 100

    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            players = [await new_game(store, f"SHA256:{n}", f"s{n}") for n in range(sessions)]
            before = store.commits  # type: ignore[attr-defined]
            await asyncio.gather(*(store.append(p, BOARD, f"s{n}", b"w") for n, p in enumerate(players)))
            commits = store.commits - before  # type: ignore[attr-defined]
            # One commit per append would be 100; the writer takes every append
            # queued while it committed the last batch.
            assert 1 <= commits <= 10, commits
            for player in players:
                assert await store.load(player, BOARD) == HEADER + b"w"

    run(scenario())


def test_a_claim_lost_by_one_append_does_not_fail_the_others_in_its_commit(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            players = [await new_game(store, f"SHA256:{n}", f"s{n}") for n in range(20)]
            results = await asyncio.gather(
                *(store.append(p, BOARD, f"s{n}" if n % 2 else "stranger", b"w") for n, p in enumerate(players)),
                return_exceptions=True,
            )
            assert [isinstance(result, ClaimLost) for result in results] == [n % 2 == 0 for n in range(20)]
            loaded = [await store.load(p, BOARD) for p in players]
            assert loaded == [HEADER + b"w" if n % 2 else HEADER for n in range(20)]

    run(scenario())


# -- bests and history ------------------------------------------------------------


def test_a_best_is_the_highest_score_kept(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:b", "bea")).id
            other = (await store.player("SHA256:o", "oli")).id
            assert await store.best(player, BOARD) == 0
            assert await store.record_best(player, BOARD, 120) == 120
            assert await store.record_best(player, BOARD, 80) == 120
            assert await store.record_best(player, f"{BOARD}-unaided", 80) == 80
            assert await store.record_best(player, BOARD, 300) == 300
            assert await store.best(player, BOARD) == 300
            assert await store.best(player, f"{BOARD}-unaided") == 80
            assert await store.best(other, BOARD) == 0

    run(scenario())


def test_history_keeps_records_oldest_first(store_url: str, tmp_path: Path) -> None:
    records = [a_record(score, f"2026-11-26T10:00:0{score % 10}Z") for score in (4, 8, 16, 32)]
    daily = a_record(64, daily="2026-11-26", seed=20261126)

    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:h", "hal")).id
            other = (await store.player("SHA256:i", "ida")).id
            assert await store.history(player) == []
            for record in records:
                await store.add_to_history(player, record)
            await store.add_to_history(other, daily)
        async with opened(store_url, tmp_path) as store:
            kept = await store.history(player)
            assert [finished.record for finished in kept] == records
            assert await store.history(player, limit=2) == kept[2:]
            assert await store.history(player, limit=0) == []
            (others,) = await store.history(other)
            assert others.record == daily

    run(scenario())


def test_a_finished_game_is_found_by_its_id_for_its_player_only(store_url: str, tmp_path: Path) -> None:
    records = [a_record(score, f"2026-11-26T10:00:0{score % 10}Z") for score in (4, 8, 16)]

    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:h", "hal")).id
            other = (await store.player("SHA256:i", "ida")).id
            await store.add_to_history(player, records[0])
            await store.add_to_history(other, records[1])
            await store.add_to_history(player, records[2])
        async with opened(store_url, tmp_path) as store:
            ids = [finished.id for finished in await store.history(player)]
            (others,) = [finished.id for finished in await store.history(other)]
            assert len({*ids, others}) == 3 and ids == sorted(ids)  # one namespace, in the order kept
            assert [await store.finished(player, game) for game in ids] == [records[0], records[2]]
            assert await store.finished(other, others) == records[1]
            assert await store.finished(player, others) is None  # another player's game is not theirs
            assert await store.finished(other, ids[0]) is None
            assert await store.finished(player, max(ids) + 1000) is None

    run(scenario())


# -- opening ----------------------------------------------------------------------


def test_open_store_chooses_by_url(tmp_path: Path) -> None:
    from ansi2048.serve.store.sqlite import SQLiteStore

    default = open_store("", str(tmp_path))
    assert isinstance(default, SQLiteStore) and Path(default.path) == tmp_path / "serve.sqlite3"
    url = open_store(f"sqlite:///{tmp_path.as_posix().lstrip('/')}/a.db", "unused")
    assert isinstance(url, SQLiteStore) and Path(url.path) == tmp_path / "a.db"
    plain = open_store(str(tmp_path / "b.db"), "unused")
    assert isinstance(plain, SQLiteStore) and Path(plain.path) == tmp_path / "b.db"
    for bad in ("mysql://host/db", "sqlite://"):
        with pytest.raises(StoreError) as raised:
            open_store(bad, str(tmp_path))
        assert "\n" not in str(raised.value)


def test_the_default_file_is_made_in_the_data_directory(tmp_path: Path) -> None:
    async def scenario() -> List[str]:
        async with opened("", tmp_path / "not" / "yet") as store:
            await store.player("SHA256:d", "dan")
        return sorted(path.name for path in (tmp_path / "not" / "yet").iterdir())

    assert "serve.sqlite3" in run(scenario())


# -- secrets shared by the servers on one database ---------------------------------


def test_the_first_secret_proposed_is_kept_for_every_server(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path / "a") as first, opened(store_url, tmp_path / "b") as second:
            assert await first.shared_secret("daily", b"first server's.") == b"first server's."
            assert await second.shared_secret("daily", b"second server's") == b"first server's."
            assert await first.shared_secret("other", b"another name...") == b"another name..."
        async with opened(store_url, tmp_path / "a") as again:  # kept across restarts
            assert await again.shared_secret("daily", b"a third one....") == b"first server's."

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    run(scenario())


# -- the schema -------------------------------------------------------------------

# A later version's step, as a newer ansi2048 would add one: valid SQL on every database.
LATER_STEP = ("CREATE TABLE later (players INTEGER NOT NULL)", "INSERT INTO later SELECT count(*) FROM players")


def with_steps(url: str, data_dir: Path, extra: int) -> Store:
    """The store at ``url`` with ``extra`` more schema steps than this version has."""
    store = open_store(url, str(data_dir))
    store.migrations = (*store.migrations, *[LATER_STEP] * extra)  # type: ignore[attr-defined]
    return store


def test_an_older_schema_is_upgraded_once_and_a_newer_one_refused(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = await new_game(store)
        newer = with_steps(store_url, tmp_path, 1)
        await newer.open()  # upgraded: the step ran on the data there
        await newer.close()
        newer = with_steps(store_url, tmp_path, 1)
        await newer.open()  # already upgraded: the step does not run again (its CREATE TABLE would fail)
        try:
            assert await newer.load(player, BOARD) == HEADER
        finally:
            await newer.close()
        older = open_store(store_url, str(tmp_path))
        with pytest.raises(SchemaTooNew) as refused:
            await older.open()
        assert str(refused.value) == (
            "the database's schema is version 12, newer than this ansi2048's 11: upgrade ansi2048 to serve it"
        )
        await older.close()  # closing a store that failed to open is harmless

    run(scenario())


# -- durability -------------------------------------------------------------------

# A server in miniature: SESSIONS players each append numbered items one at a
# time and print "session item" once each append has returned, until killed.
APPENDER = """
import asyncio, sys
from ansi2048.serve.store import open_store

async def main(url, data_dir, sessions):
    store = open_store(url, data_dir)
    await store.open()
    players = []
    for n in range(sessions):
        player = (await store.player(f"SHA256:{n}", "p")).id
        assert await store.claim(player, "4x4-2048", f"s{n}", ttl=600) is None
        await store.rewrite(player, "4x4-2048", f"s{n}", b"header\\n")
        players.append(player)
    print("ready", *players, flush=True)

    async def play(n, player):
        for item in range(100_000):
            await store.append(player, "4x4-2048", f"s{n}", f"{item};".encode())
            print(n, item, flush=True)

    await asyncio.gather(*(play(n, player) for n, player in enumerate(players)))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


@pytest.mark.posix("SIGKILL")
def test_every_append_that_returned_survives_sigkill(store_url: str, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    import ansi2048

    from .conftest import child_env

    sessions, enough = 8, 400
    child = subprocess.Popen(
        [sys.executable, "-c", APPENDER, store_url, str(tmp_path), str(sessions)],
        stdout=subprocess.PIPE,
        env=child_env(),
        # "python -c" imports from its working directory first: the one that
        # holds the ansi2048 under test, not whatever checkout pytest ran from.
        cwd=Path(ansi2048.__file__).resolve().parent.parent,
    )
    assert child.stdout is not None
    try:
        ready = child.stdout.readline().split()
        assert ready[:1] == [b"ready"], ready
        players = [int(player) for player in ready[1:]]
        acked: List[List[int]] = [[] for _ in range(sessions)]
        deadline = time.monotonic() + 60
        count = 0
        while count < enough and time.monotonic() < deadline:
            session, item = child.stdout.readline().split()
            acked[int(session)].append(int(item))
            count += 1
    finally:
        child.send_signal(signal.SIGKILL)
        # The rest read from child.stdout itself, to its end (the child is
        # dead: the end comes): readline() read ahead into that stream's
        # buffer, and communicate(timeout=...) reads the pipe's descriptor
        # directly, so the lines waiting in the buffer were lost, leaving a
        # gap in what was acknowledged.
        rest = child.stdout.read()
        child.stdout.close()
        child.wait(timeout=30)
    for line in rest.splitlines():  # printed before the kill: those appends had returned too
        session, item = line.split()
        acked[int(session)].append(int(item))
    assert count == enough

    async def stored() -> List[bytes]:
        async with opened(store_url, tmp_path) as store:
            return [await store.load(player, BOARD) or b"" for player in players]

    for session, recording in enumerate(run(stored())):
        header, items = recording.split(b"\n")
        assert header == b"header"
        kept = [int(item) for item in items.split(b";")[:-1]]
        # In order, none twice, none skipped; and every acknowledged one is there.
        assert kept == list(range(len(kept)))
        assert acked[session] == list(range(len(acked[session])))
        assert len(kept) >= len(acked[session])


def test_two_servers_on_one_database_hand_a_game_over(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as one, opened(store_url, tmp_path) as two:
            player = await new_game(one, holder="one/1")
            await one.append(player, BOARD, "one/1", b"wa")
            other = await two.claim(player, BOARD, "two/1", ttl=60)
            assert other is not None and other.holder == "one/1"
            assert await two.claim(player, BOARD, "two/1", ttl=60, take_over=True) is None
            assert await two.load(player, BOARD) == HEADER + b"wa"  # resumed exactly where it was
            with pytest.raises(ClaimLost):
                await one.append(player, BOARD, "one/1", b"s")
            await two.append(player, BOARD, "two/1", b"d")
            assert await one.load(player, BOARD) == HEADER + b"wad"
            assert await one.record_best(player, BOARD, 40) == 40
            assert await two.record_best(player, BOARD, 20) == 40

    run(scenario())


def test_racing_take_overs_leave_exactly_one_writer(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as one, opened(store_url, tmp_path) as two:
            player = await new_game(one, holder="first")

            async def take_and_write(store: Store, holder: str) -> bool:
                await store.claim(player, BOARD, holder, ttl=60, take_over=True)
                try:
                    await store.append(player, BOARD, holder, holder.encode() + b";")
                except ClaimLost:
                    return False
                return True

            holders = [f"{server}-{n}" for n in range(10) for server in ("one", "two")]
            stores = [one, two] * 10
            wrote = await asyncio.gather(*(take_and_write(store, h) for store, h in zip(stores, holders)))
            recording = await one.load(player, BOARD)
            assert recording is not None
            # Every append that returned is there, once; none that raised ClaimLost is.
            written = recording[len(HEADER) :].split(b";")[:-1]
            assert sorted(written) == sorted(h.encode() for h, ok in zip(holders, wrote) if ok)
            assert any(wrote)

    run(scenario())
