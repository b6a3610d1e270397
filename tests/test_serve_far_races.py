"""Races across the servers of one store (issues 37 and 38): a player on
one server meets the lobby, the race or the friend another server holds,
relayed there (serve/far_races.py, serve/relay.py), on SQLite and on
PostgreSQL; the rules that choose where, and the relay's handshake."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Iterator, Optional, Tuple

import pytest

from ansi2048.game.race import RaceSettings

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.far_races import RoomRow, choose, settings_key  # noqa: E402
from ansi2048.serve.race_friends import Entrant, Friend  # noqa: E402
from ansi2048.serve.relay import Hello, challenge, proof, read_hello  # noqa: E402
from ansi2048.serve.store.links import Statement  # noqa: E402

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, on_server, open_terminal, run  # noqa: E402
from .test_serve_race import mini, own_board, press_until_over, race_terminal  # noqa: E402

SMALL = RaceSettings(3, 3, 32, 2, 5)


@pytest.fixture
def two_servers(tmp_path: Path, store_url: str) -> Iterator[Tuple[ServerThread, ServerThread]]:
    """Two servers on one database."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with ServerThread(tmp_path / "a", store_url) as first, ServerThread(tmp_path / "b", store_url) as second:
        yield first, second


# -- where a player goes ---------------------------------------------------------------


def test_a_player_goes_back_to_their_race_first_then_to_a_friend_or_the_lobby_of_their_settings() -> None:
    ann = Entrant("p1", "ann", 1, "10.0.0.1")
    bob = Friend(2, "bob")
    lobby = RoomRow("h1:1", "lobby", settings_key(SMALL), ",2,")
    other_lobby = RoomRow("h2:2", "lobby", settings_key(RaceSettings()), ",3,")
    racing = RoomRow("h3:3", "racing", settings_key(SMALL), ",1,4,")
    assert choose([lobby, racing], ann, SMALL, None) == "h3:3"  # back in the race they dropped from
    assert choose([other_lobby, lobby], ann, SMALL, None) == "h1:1"  # the lobby of these settings
    assert choose([other_lobby], ann, SMALL, None) is None
    assert choose([other_lobby, lobby], ann, RaceSettings(), bob) == "h1:1"  # bob's lobby, whatever its settings
    assert choose([other_lobby], ann, SMALL, bob) is None
    waits_for_ann = RoomRow("h4:4", "waiting", "for:1", ",2,")
    waits_for_cy = RoomRow("h5:5", "waiting", "for:3", ",2,")
    assert choose([waits_for_cy, waits_for_ann], ann, SMALL, bob) == "h4:4"  # bob waits for ann: they meet there
    assert choose([waits_for_ann], ann, SMALL, None) is None  # only named: a wait is no lobby
    # Two friends who began to wait for each other at once: only one goes to the other.
    waits_for_bob = RoomRow("h7:7", "waiting", "for:2", ",1,")
    assert choose([waits_for_ann], ann, SMALL, bob, waiting=True) is None  # ann (1) stays for bob (2)
    assert choose([waits_for_bob], Entrant("p2", "bob", 2, "x"), SMALL, Friend(1, "ann"), waiting=True) == "h7:7"
    guest = Entrant("guest:1", "guest", None, "10.0.0.1")
    assert choose([RoomRow("h6:6", "racing", "x", ",")], guest, SMALL, None) is None  # a guest has no race to find


def test_the_relays_hello_is_proved_with_the_stores_secret_and_checked_field_by_field() -> None:
    hello = json.dumps(
        {
            "fingerprint": None,
            "name": "ann\x1b[2J",
            "source": "10.0.0.1",
            "term": "xterm",
            "env": {"NO_COLOR": "1", "LD_PRELOAD": "x"},
            "columns": 80,
            "lines": 24,
            "command": "race",
        }
    ).encode()
    asked = challenge()
    assert len(asked) == 33 and asked != challenge()
    assert proof(b"secret", asked, hello) != proof(b"other", asked, hello)
    assert proof(b"secret", asked, hello) != proof(b"secret", challenge(), hello)
    read = read_hello(hello)
    assert read == Hello(None, "ann?[2J", "10.0.0.1", "xterm", {"NO_COLOR": "1"}, 80, 24, "race")
    for bad in (b"not json", b"[]", b'{"name": "ann"}', hello.replace(b"80", b'"80"'), hello.replace(b"null", b"3")):
        assert read_hello(bad) is None, bad


# -- racing across servers ----------------------------------------------------------


def test_two_players_on_two_servers_race_on_one_deal_and_see_one_result(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers

    async def scenario() -> None:
        ann_key = client_key()
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 32", key=ann_key)
            await ann[1].shows("waiting for 1 more player")
            bob = await race_terminal(stack, second.port, "bob", "race --size 3 --goal 32")
            for _, terminal in (ann, bob):
                await terminal.shows("Race to 32 · 3x3")
            a, b = ann[1].text(), bob[1].text()
            assert "ann (you)" in a and "bob (you)" in b
            start = own_board(ann[1], 3, 3)
            assert mini(a, "bob", 3) == start == own_board(bob[1], 3, 3) == mini(b, "ann", 3)
            bob[0].write(b"a")
            bob[0].write(b"d")
            await ann[1].wait_for(lambda t: re.search(r"bob\s*\n\s*score \d+  tile \d+  moves [12]", t.text()))
            await press_until_over([ann, bob])
            for _, terminal in (ann, bob):
                await terminal.shows("Race over")
                await terminal.closed.wait()
            assert ann[1].text() == bob[1].text()
            assert re.search(r"Race over \((ann|bob) reached 32\): (ann|bob) wins", ann[1].text())
            assert ann[1].exit_status == bob[1].exit_status == 0
            table = [line.split() for line in ann[1].text().splitlines()[2:4]]
        for server in (first, second):  # the race is one race, kept once, whichever server is asked
            async with await connect(server.port, ann_key, user="ann") as conn:
                document = json.loads(bytes((await conn.run("races --json")).stdout).decode())
            [race] = document["races"]
            shown = [[p["rank"], p["name"], p["score"], p["moves"]] for p in race["players"]]
            assert shown == [[int(row[0]), row[1], int(row[2]), int(row[4])] for row in table]
            assert all(p["verified"] for p in race["players"])

    run(scenario())


def test_a_player_who_drops_comes_back_through_either_server_to_the_same_race(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers

    async def scenario() -> None:
        bob_key = client_key()
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 64")
            async with AsyncExitStack() as dropped:
                bob = await race_terminal(dropped, second.port, "bob", "race --size 3 --goal 64", key=bob_key)
                await bob[1].shows("Race to 64 · 3x3")
                for key in b"adad":
                    bob[0].write(bytes([key]))
                await ann[1].wait_for(lambda t: "moves 4" in t.text())
                before = mini(ann[1].text(), "bob", 3)
            await ann[1].shows("bob (away)")
            bob = await race_terminal(stack, second.port, "bob", "race", key=bob_key)  # any settings: their race
            await bob[1].shows("bob (you)  score")
            assert "moves 4" in bob[1].text() and own_board(bob[1], 3, 3) == before
            await ann[1].wait_for(lambda t: "bob (away)" not in t.text())
            bob[0].write(b"w")
            bob[0].write(b"s")
            await ann[1].wait_for(lambda t: "moves 5" in t.text() or "moves 6" in t.text())
            ann[0].write(b"q")
            await bob[1].shows("Race over (the others left)")

    run(scenario())


def test_race_name_meets_a_friend_whose_lobby_or_wait_is_on_another_server(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers

    async def scenario() -> None:
        ann_key, bob_key = client_key(), client_key()
        async with AsyncExitStack() as stack:
            for port, key, user in ((first.port, ann_key, "ann"), (second.port, bob_key, "bob")):
                async with await connect(port, key, user=user) as conn:
                    await conn.run("stats")  # each is a player of the store
            # ann waits for bob on the first server; bob starts a race on the second: they meet there.
            ann = await race_terminal(stack, first.port, "ann", "race bob", key=ann_key)
            await ann[1].shows("bob")
            bob = await race_terminal(stack, second.port, "bob", "race --size 3 --goal 16", key=bob_key)
            for _, terminal in (ann, bob):
                await terminal.shows("Race to 16 · 3x3")
            ann[0].write(b"q")
            await bob[1].shows("Race over (the others left)")
        async with AsyncExitStack() as stack:
            # Each names the other, on different servers: one lobby for the two.
            ann = await race_terminal(stack, first.port, "ann", "race bob", key=ann_key)
            await ann[1].shows("bob")
            bob = await race_terminal(stack, second.port, "bob", "race ann", key=bob_key)
            for _, terminal in (ann, bob):
                await terminal.shows("Race to 2048 · 4x4")
            bob[0].write(b"q")
            await ann[1].shows("Race over (the others left)")

    run(scenario())


def test_of_two_servers_opening_a_lobby_of_one_settings_at_once_one_lobby_stands(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    # The second server opened its lobby before it could read the first's
    # row (both read "none", then both open): the store keeps the first's,
    # and the second's player is sent there.
    first, second = two_servers
    settings = RaceSettings(3, 3, 32, 2, 5)

    async def open_on_second() -> Tuple[Optional[Tuple[str, int]], str]:
        context = second.server.context
        assert context.races is not None and context.far_races is not None
        room, _ = context.races.join(settings, Entrant("p99", "zed", 99, "10.0.0.9"), asyncio.Queue())
        return await context.far_races.opened(room, public=True), room.token

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 32")
            await ann[1].shows("waiting for 1 more player")
            sent_to, token = await on_server(second, open_on_second())
            far = first.server.context.far_races
            assert far is not None and sent_to is not None and f"{sent_to[0]}:{sent_to[1]}" == far.address
            rows = await on_server(first, first.store.run_script([Statement("SELECT token, server FROM race_rooms")]))  # type: ignore[attr-defined]
            assert token not in [row[0] for row in rows[0]] and len(rows[0]) == 1

    run(scenario())


def test_a_race_on_another_server_is_listed_and_watched_by_a_players_name(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 32")
            bob = await race_terminal(stack, first.port, "bob", "race --size 3 --goal 32")
            await ann[1].shows("Race to 32 · 3x3")
            async with await connect(second.port, client_key(), user="cy") as conn:
                listed_line = "Race to 32 on 3x3, 2 players, 5 min: ann, bob"
                for _ in range(50):  # listed within the servers' next writes and reads (a second each)
                    listing = bytes((await conn.run("races")).stdout).decode()
                    if listed_line in listing:
                        break
                    await asyncio.sleep(0.1)
                assert "Races now (watch NAME shows every board):" in listing and listed_line in listing
                chan, listed = await open_terminal(conn, "watch", size=(100, 30))
                await listed.shows(listed_line)
                chan.write(b"q")
                await listed.closed.wait()
                _, watcher = await open_terminal(conn, "watch bob", size=(100, 30))
                await watcher.shows("Watching a race to 32 · 3x3")
                assert "ann" in watcher.text() and "(you)" not in watcher.text()
                for key in b"adad":
                    bob[0].write(bytes([key]))
                await watcher.wait_for(lambda t: "moves 4" in t.text())
                await press_until_over([ann, bob])
                await watcher.shows("the race you watched is over")
                await watcher.closed.wait()
                assert "Race over" in watcher.text() and watcher.exit_status == 0

    run(scenario())


def test_a_lobby_of_a_server_that_stopped_writing_is_not_where_anyone_is_sent(
    two_servers: Tuple[ServerThread, ServerThread], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server killed leaves its rows: they go stale (here in a second, not
    # five), and the next player opens a lobby where they are.
    monkeypatch.setattr("ansi2048.serve.far_races.STALE_SECONDS", 1.0)
    first, second = two_servers

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 16")
            await ann[1].shows("waiting for 1 more player")
            far = first.server.context.far_races
            assert far is not None and far._task is not None
            far._task.cancel()  # its heartbeat stops, as a killed server's
            await asyncio.sleep(1.5)
            cy = await race_terminal(stack, second.port, "cy", "race --size 3 --goal 16")
            await cy[1].shows("waiting for 1 more player")
            assert "In the lobby: cy" in cy[1].text() and "ann" not in cy[1].text()

    run(scenario())


def test_a_race_and_a_watcher_across_two_server_processes_on_one_sqlite_file(tmp_path: Path) -> None:
    # What --workers and --reuse-port run: processes of their own on one
    # SQLite file (here on two ports, so that each client picks its process).
    from .serve_support import ServeProcess

    db = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    first = ServeProcess(tmp_path / "a", db=db)
    try:
        second = ServeProcess(tmp_path / "b", db=db)
        try:

            async def scenario() -> None:
                async with AsyncExitStack() as stack:
                    ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 16")
                    await ann[1].shows("waiting for 1 more player")
                    bob = await race_terminal(stack, second.port, "bob", "race --size 3 --goal 16")
                    for _, terminal in (ann, bob):
                        await terminal.shows("Race to 16 · 3x3")
                    await press_until_over([ann, bob])
                    for _, terminal in (ann, bob):
                        await terminal.closed.wait()
                    assert ann[1].text() == bob[1].text() and "Race over" in ann[1].text()
                async with await connect(first.port, client_key(), user="cy") as player_conn:
                    chan, player = await open_terminal(player_conn, "play --no-animation")
                    await player.shows("Score")
                    async with await connect(second.port, client_key(), user="dee") as watcher_conn:
                        _, watcher = await open_terminal(watcher_conn, "watch cy", size=(100, 30))
                        await watcher.shows("watching cy")
                        await player.shows("1 watching")
                        chan.write(b"q")
                        await watcher.shows("the game you watched has ended")

            run(scenario())
        finally:
            second.kill()
    finally:
        first.kill()


def test_a_draining_server_offers_its_lobby_no_more(two_servers: Tuple[ServerThread, ServerThread]) -> None:
    # A new server took over from the first (serve/takeover.py): players
    # meet on the servers that stay, not in a lobby about to stop.
    first, second = two_servers

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, first.port, "ann", "race --size 3 --goal 16")
            await ann[1].shows("waiting for 1 more player")
            first.server.context.sessions.draining = True
            await asyncio.sleep(1.5)  # the first server's next write of its rows
            cy = await race_terminal(stack, second.port, "cy", "race --size 3 --goal 16")
            await cy[1].shows("waiting for 1 more player")
            assert "In the lobby: cy" in cy[1].text() and "ann" not in cy[1].text()

    run(scenario())
