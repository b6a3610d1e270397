"""Races over SSH (issue 37): players on asyncssh clients (and one on the
real OpenSSH client) meet in a lobby, count down, race on one deal to a
small goal or to the time limit, and see the same result; a player who
drops comes back; eight players race; the lobby's rules."""

from __future__ import annotations

import asyncio
import re
import sys
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, List, Sequence, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.commands import parse_command  # noqa: E402
from ansi2048.serve.race_hall import Host, RaceHall  # noqa: E402
from ansi2048.serve.requests import RaceRequest, Races  # noqa: E402

from .serve_support import ServerThread, Terminal  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402
from .test_serve_daily import Clock  # noqa: E402

START = 1_800_000_000.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, str(tmp_path / "store.sqlite3")) as server:
        yield server


@pytest.fixture
def clocked(tmp_path: Path) -> Iterator[Tuple[ServerThread, Clock]]:
    clock = Clock(START)
    with ServerThread(tmp_path, str(tmp_path / "store.sqlite3")) as server:
        # The hall keeps the clock it was built with: a new one, on the test's clock.
        context = server.server.context
        hall = RaceHall(Host(context.store, context.daily_secret, context.random_seed, clock, context.log))
        server.server.context = replace(context, now=clock, races=hall)
        yield server, clock


def mini(text: str, name: str, rows: int) -> List[List[int]]:
    """``name``'s board in miniature on a screen: the rows under their card's two lines."""
    lines = text.splitlines()
    at = next((i, line.index(name)) for i, line in enumerate(lines) if re.search(rf"(^|\s){name}( \(|$)", line))
    y, x = at
    return [[int(v) if v != "." else 0 for v in lines[y + 2 + r][x : x + 5 * 3 + 5].split()] for r in range(rows)]


def own_board(terminal: Terminal, rows: int, cols: int) -> List[List[int]]:
    """The player's own board, read at its tiles' places (the medium
    layout, which a 100x30 window gives a 3x3 board), under the frame's two
    first lines."""
    from ansi2048.render.board import MEDIUM

    from .screen import parse_tile

    display = terminal.display()
    board = []
    for r in range(rows):
        row = []
        for c in range(cols):
            y0, x0 = MEDIUM.tile_origin(r, c)
            row.append(parse_tile(display[2 + y0 + MEDIUM.number_line][x0 : x0 + MEDIUM.tile_width].strip("•*")))
        board.append(row)
    return board


async def race_terminal(
    stack: AsyncExitStack, port: int, user: str, command: str, key: Any = "new", size: Tuple[int, int] = (100, 30)
) -> Tuple[Any, Terminal]:
    """``command`` on a terminal of a client of its own (``key``: a new key; None: a guest)."""
    conn = await stack.enter_async_context(await connect(port, client_key() if key == "new" else key, user=user))
    return await open_terminal(conn, command, size=size)


async def press_until_over(players: Sequence[Tuple[Any, Terminal]], limit: int = 2000) -> None:
    """Each player presses the moves in turn until their screen shows the result (bounded)."""
    keys = b"wasdsawd"
    for index in range(limit):
        if all("Race over" in t.text() for _, t in players):
            return
        for chan, terminal in players:
            if "Race over" not in terminal.text() and not terminal.closed.is_set():
                chan.write(keys[index % len(keys) : index % len(keys) + 1])
        await asyncio.sleep(0.01)


# -- the commands ----------------------------------------------------------------


def test_race_options_parse_with_their_defaults_and_bounds() -> None:
    from ansi2048.game.race import RaceSettings
    from ansi2048.serve.requests import CommandError

    assert parse_command("race") == RaceRequest(RaceSettings(4, 4, 2048, 2, 5))
    assert parse_command("race --size 3 --goal 64 --players 8 --minutes 30") == (
        RaceRequest(RaceSettings(3, 3, 64, 8, 30))
    )
    assert parse_command("race --size 3").settings.goal == 256  # type: ignore[union-attr]
    assert parse_command("race alice") == RaceRequest(RaceSettings(), "alice")
    assert parse_command("races --json") == Races(True)
    for bad, said in [
        (["--players", "9"], "race: argument --players: expected a number from 2 to 8, got '9'"),
        (["--players", "1"], "expected a number from 2 to 8, got '1'"),
        (["--minutes", "31"], "expected a number from 1 to 30, got '31'"),
        (["--minutes", "0"], "expected a number from 1 to 30"),
        (["--size", "3", "--goal", "2048"], "race: argument --goal"),
        (["alice", "--size", "3"], "no options with it"),
        (["--bogus"], "unrecognized arguments"),
    ]:
        with pytest.raises(CommandError, match=re.escape(said)):
            parse_command("race " + " ".join(bad))


def test_a_bad_option_is_one_line_and_status_2(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.server.port, client_key()) as conn:
            result = await conn.run("race --players 12")
            assert result.exit_status == 2
            lines = bytes(result.stderr).decode().splitlines()
            assert lines == ["ansi2048: race: argument --players: expected a number from 2 to 8, got '12'"]
            result = await conn.run("race")  # no terminal
            assert result.exit_status == 2 and "this is a game for a terminal" in bytes(result.stderr).decode()

    run(scenario())


# -- racing ------------------------------------------------------------------------


def test_two_players_race_to_a_small_goal_and_see_the_same_start_and_result(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race --size 3 --goal 32")
            await ann[1].shows("waiting for 1 more player")
            assert "In the lobby: ann" in ann[1].text()
            bob = await race_terminal(stack, port, "bob", "race --size 3 --goal 32")
            for _, terminal in (ann, bob):
                await terminal.shows("Race to 32 · 3x3")
            a, b = ann[1].text(), bob[1].text()
            assert "ann (you)" in a and "bob (you)" in b
            # One deal: each sees the other's board at the start as their own.
            start = own_board(ann[1], 3, 3)
            assert mini(a, "bob", 3) == start == own_board(bob[1], 3, 3) == mini(b, "ann", 3)
            assert sum(v != 0 for row in start for v in row) == 2
            ann[0].write(b"a")
            ann[0].write(b"d")
            await bob[1].wait_for(lambda t: re.search(r"ann\s*\n\s*score \d+  tile \d+  moves [12]", t.text()))
            await press_until_over([ann, bob])
            for _, terminal in (ann, bob):
                await terminal.shows("Race over")
                await terminal.closed.wait()
            result_a, result_b = ann[1].text(), bob[1].text()
            assert result_a == result_b
            assert re.search(r"Race over \((ann|bob) reached 32\): (ann|bob) wins", result_a)
            assert ann[1].exit_status == bob[1].exit_status == 0

    run(scenario())


def test_at_the_time_limit_the_best_score_wins_on_every_screen(clocked: Tuple[ServerThread, Clock]) -> None:
    served, clock = clocked

    async def scenario() -> None:
        port = served.server.port
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race --minutes 1")
            bob = await race_terminal(stack, port, "bob", "race --minutes 1")
            await ann[1].shows("Starting in 3")
            clock.now += 3  # the countdown is over
            await ann[1].shows("1:00 left")
            await bob[1].shows("1:00 left")
            for key in b"adad":  # ann moves; bob does not
                ann[0].write(bytes([key]))
            await bob[1].wait_for(lambda t: re.search(r"ann\s*\n\s*score \d+  tile \d+  moves 4", t.text()) is not None)
            clock.now += 30
            await ann[1].shows("0:30 left")
            clock.now += 30
            for _, terminal in (ann, bob):
                await terminal.shows("Race over (time is up): ann wins")
                await terminal.closed.wait()
            assert ann[1].text() == bob[1].text()
            lines = ann[1].text().splitlines()
            assert lines[2].split()[:2] == ["1", "ann"] and lines[2].split()[4] == "4"
            assert lines[3].split()[:3] == ["2", "bob", "0"] and lines[3].split()[4] == "0"

    run(scenario())


def test_a_player_who_drops_comes_back_to_the_same_race(served: ServerThread) -> None:
    async def scenario() -> None:
        port, key = served.server.port, client_key()
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race --size 3 --goal 64")
            async with AsyncExitStack() as first:
                bob = await race_terminal(first, port, "bob", "race --size 3 --goal 64", key=key)
                await bob[1].shows("Race to 64 · 3x3")
                for k in b"adad":
                    bob[0].write(bytes([k]))
                await ann[1].wait_for(lambda t: "moves 4" in t.text())
                before = mini(ann[1].text(), "bob", 3)
            await ann[1].shows("bob (away)")
            bob = await race_terminal(stack, port, "bob", "race", key=key)  # the same key: the same race
            await bob[1].shows("bob (you)  score")
            assert "moves 4" in bob[1].text() and own_board(bob[1], 3, 3) == before
            await ann[1].wait_for(lambda t: "bob (away)" not in t.text())
            bob[0].write(b"w")
            bob[0].write(b"s")
            await ann[1].wait_for(lambda t: "moves 5" in t.text() or "moves 6" in t.text())
            ann[0].write(b"q")  # ann leaves: bob, the only one left, has won
            await ann[1].shows("you left the race")
            await bob[1].shows("Race over (the others left): bob wins")

    run(scenario())


def test_eight_players_race_and_all_see_one_result(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        names = [f"p{n}" for n in range(1, 9)]
        async with AsyncExitStack() as stack:
            players = [
                await race_terminal(stack, port, name, "race --size 3 --goal 16 --players 8", size=(120, 40))
                for name in names
            ]
            for _, terminal in players:
                await terminal.shows("Race to 16 · 3x3")
            text = players[0][1].text()
            assert all(name in text for name in names[1:])
            await press_until_over(players)
            results = []
            for _, terminal in players:
                await terminal.shows("Race over")
                await terminal.closed.wait()
                results.append(terminal.text())
            assert all(result == results[0] for result in results)
            assert sorted(line.split()[1] for line in results[0].splitlines()[2:10]) == names

    run(scenario())


def test_the_lobby_q_leaves_and_a_named_friend_is_joined(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race --size 5 --goal 64 --players 3")
            await ann[1].shows("waiting for 2 more players")
            cy = await race_terminal(stack, port, "cy", "race")  # other settings: a lobby of its own
            await cy[1].shows("Race to 2048 on 4x4, 2 players")
            cy[0].write(b"q")
            await cy[1].shows("you left the lobby")
            await cy[1].closed.wait()
            bob = await race_terminal(stack, port, "bob", "race ann")
            await bob[1].shows("Race to 64 on 5x5, 3 players")
            await ann[1].shows("In the lobby: ann, bob")
            await ann[1].shows("waiting for 1 more player")
            async with await connect(port, client_key(), user="dee") as conn:
                result = await conn.run("race nobody", term_type="xterm")
                assert result.exit_status == 1
                assert bytes(result.stderr).decode() == "ansi2048: race: no player is called nobody\r\n"

    run(scenario())


def test_guests_race_as_guest_n(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        async with AsyncExitStack() as stack:
            one = await race_terminal(stack, port, "x", "race --size 3 --goal 8", key=None)
            two = await race_terminal(stack, port, "y", "race --size 3 --goal 8", key=None)
            await one[1].shows("guest-1 (you)")
            await two[1].shows("guest-2 (you)")
            assert "guest-2" in one[1].text()

    run(scenario())


def test_a_lobby_nobody_fills_closes_after_ten_minutes_saying_so(clocked: Tuple[ServerThread, Clock]) -> None:
    served, clock = clocked

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, served.server.port, "ann", "race")
            await ann[1].shows("the lobby closes in 10:00")
            clock.now += 600
            await ann[1].shows("Nobody else came in 10 minutes: the lobby is closed.")
            await ann[1].closed.wait()

    run(scenario())


def test_races_from_one_address_are_limited(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        served.server.races.per_address = 2
        async with AsyncExitStack() as stack:
            for players, name in ((2, "ann"), (3, "bob")):
                _, terminal = await race_terminal(stack, port, name, f"race --players {players}")
                await terminal.shows("waiting for")
            async with await connect(port, client_key(), user="cy") as conn:
                result = await conn.run("race --players 4", term_type="xterm")
                assert result.exit_status == 1
                assert bytes(result.stderr).decode() == (
                    "ansi2048: race: too many races from your address at once (at most 2)\r\n"
                )
            _, terminal = await race_terminal(stack, port, "dee", "race --players 3")  # a race the address is in
            await terminal.shows("In the lobby: bob, dee")

    run(scenario())


def test_races_json_gives_the_scores_the_screens_showed(tmp_path: Path, store_url: str) -> None:
    import json

    async def scenario(served: ServerThread) -> None:
        port, ann_key = served.server.port, client_key()
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race --size 3 --goal 16", key=ann_key)
            bob = await race_terminal(stack, port, "bob", "race --size 3 --goal 16")
            await ann[1].shows("Race to 16 · 3x3")
            await press_until_over([ann, bob])
            for _, terminal in (ann, bob):
                await terminal.closed.wait()
            table = [line.split() for line in ann[1].text().splitlines()[2:4]]
        async with await connect(port, ann_key, user="ann") as conn:
            result = await conn.run("races --json")
            document = json.loads(bytes(result.stdout).decode())
            listing = bytes((await conn.run("races")).stdout).decode()
        async with await connect(port, None, user="guest") as conn:  # a guest sees the server's latest
            as_guest = json.loads(bytes((await conn.run("races --json")).stdout).decode())
        assert as_guest == document
        assert list(document) == ["races"] and len(document["races"]) == 1
        race = document["races"][0]
        assert set(race) == {"id", "size", "goal", "started", "winner", "players"}
        assert (race["size"], race["goal"]) == ("3x3", 16) and re.fullmatch(r"r\d+", race["id"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", race["started"])
        shown = [[p["rank"], p["name"], p["score"], p["biggest"], p["moves"]] for p in race["players"]]
        assert shown == [[int(row[0]), row[1], int(row[2]), int(row[3]), int(row[4])] for row in table]
        assert race["winner"] == table[0][1] and all(p["verified"] for p in race["players"])
        assert set(race["players"][0]) == {"name", "score", "biggest", "moves", "rank", "verified"}
        assert listing.splitlines()[0] == "Your last races:"
        assert f"{race['id']}" in listing.splitlines()[1] and f"1. {table[0][1]} {table[0][2]}" in listing

    with ServerThread(tmp_path, store_url) as served:
        run(scenario(served))


def test_two_players_race_through_the_real_openssh_client(served: ServerThread, tmp_path: Path) -> None:
    import shutil

    if shutil.which("ssh") is None:
        pytest.skip("no OpenSSH client")
    from .serve_support import make_key
    from .test_serve_ssh import SshPlayer

    port = served.server.port
    ann = SshPlayer(port, make_key(tmp_path / "ann"), "race", "--size", "3", "--goal", "16", user="ann", size=(90, 30))
    bob = SshPlayer(port, make_key(tmp_path / "bob"), "race", "--size", "3", "--goal", "16", user="bob", size=(90, 30))
    try:
        for me, other in ((ann, "bob"), (bob, "ann")):
            me.shows("Race to 16 · 3x3")
            assert re.search(rf"(^|\s){other}\s*$", me.text(), re.MULTILINE)
        for index in range(600):  # bounded: a 3x3 board reaches 16 in a few dozen moves
            if "Race over" in ann.text() and "Race over" in bob.text():
                break
            key = b"wasd"[index % 4 : index % 4 + 1]
            ann.type(key, pause=0.01)
            bob.type(key, pause=0.01)
        results = [player.shows("Race over") for player in (ann, bob)]
        assert [player.ended() for player in (ann, bob)] == [0, 0]
        tables = [text[text.index("Race over") :].split("\n\n")[0].splitlines()[:4] for text in results]
        assert tables[0] == tables[1] and re.search(r"reached 16\): (ann|bob) wins", tables[0][0])
    finally:
        for player in (ann, bob):
            if player.child.isalive():
                player.child.terminate(force=True)


def test_help_names_race_and_races_in_80_columns() -> None:
    from ansi2048.serve.commands import help_text

    text = help_text(2048)
    # help's layout (issue 40 item 11): race under the terminal's ssh line, races under the plain one.
    terminal, plain = text.index("ssh -t -p 2048 HOST COMMAND"), text.index("ssh -p 2048 HOST COMMAND")
    assert terminal < text.index("\n  race [OPTIONS] ") < plain < text.index("\n  races [--json] ")
    assert "--players 2-8" in text and "--minutes 1-30" in text and "race NAME" in text and "no undo" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_a_server_stopping_ends_the_race_saying_so(tmp_path: Path) -> None:
    served = ServerThread(tmp_path, str(tmp_path / "store.sqlite3"))

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            players = [await race_terminal(stack, served.server.port, name, "race") for name in ("ann", "bob")]
            for _, terminal in players:
                await terminal.shows("Race to 2048 · 4x4")
            await asyncio.get_running_loop().run_in_executor(None, served.stop)
            for _, terminal in players:
                await terminal.shows("the server is stopping: the race ends here, unfinished")
                await terminal.closed.wait()
            assert served.server.races.rooms() == []

    try:
        run(scenario())
    finally:
        served.stop()


def test_a_finished_race_replays_every_board_or_one_and_casts(served: ServerThread) -> None:
    import json

    async def scenario() -> None:
        port = served.server.port
        async with AsyncExitStack() as stack:
            players = [await race_terminal(stack, port, name, "race --size 3 --goal 16") for name in ("ann", "bob")]
            await players[0][1].shows("Race to 16 · 3x3")
            await press_until_over(players)
            for _, terminal in players:
                await terminal.closed.wait()
            result = players[0][1].text().splitlines()
            number = re.search(r"kept as r(\d+)", players[0][1].text())
            assert number is not None
            race = f"r{number.group(1)}"
            scores = {line.split()[1]: line.split()[2] for line in result[2:4]}
        async with await connect(port, client_key(), user="cy") as conn:
            chan, terminal = await open_terminal(conn, f"replay {race}", size=(100, 30))
            await terminal.shows(f"Replay of race {race} to 16 · 3x3")
            chan.write(b"+++++")  # the fastest
            await terminal.shows("end of replay")
            text = terminal.text()
            for name, score in scores.items():
                assert re.search(rf"{name}\s*(\n\s*)?score {score}\b", text), text
            chan, terminal = await open_terminal(conn, f"replay {race} bob", size=(80, 24))
            await terminal.shows("bob in race")
            chan.write(b"q")
            await terminal.closed.wait()
            cast = await conn.run(f"cast {race} ann")
            assert cast.exit_status == 0
            assert json.loads(bytes(cast.stdout).decode().splitlines()[0])["version"] == 2
            for command, said in [
                ("replay r999", "replay: no race r999 (races lists them)"),
                (f"cast {race} nobody", f"cast: race {race} has no player 'nobody' (its players: "),
            ]:
                refused = await conn.run(command, term_type="xterm")
                assert refused.exit_status == 2 and said in bytes(refused.stderr).decode()

    run(scenario())


def test_a_race_is_watched_by_a_players_name_every_board_live(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race --size 3 --goal 32")
            bob = await race_terminal(stack, port, "bob", "race --size 3 --goal 32")
            await ann[1].shows("Race to 32 · 3x3")
            async with await connect(port, client_key(), user="cy") as conn:
                listing = bytes((await conn.run("races")).stdout).decode()
                assert "Races now (watch NAME shows every board):" in listing
                assert "Race to 32 on 3x3, 2 players, 5 min: ann, bob" in listing
                chan, listed = await open_terminal(conn, "watch", size=(100, 30))  # the watch list says them too
                await listed.shows("Races now (watch NAME shows every board):")
                await listed.shows("Race to 32 on 3x3, 2 players, 5 min: ann, bob")
                chan.write(b"q")
                await listed.closed.wait()
                _, watcher = await open_terminal(conn, "watch bob", size=(100, 30))
                await watcher.shows("Watching a race to 32 · 3x3")
                assert "ann" in watcher.text() and "bob" in watcher.text() and "(you)" not in watcher.text()
                for key in b"adad":
                    bob[0].write(bytes([key]))
                await watcher.wait_for(lambda t: "moves 4" in t.text())
                await press_until_over([ann, bob])
                await watcher.shows("the race you watched is over")
                await watcher.closed.wait()
                assert "Race over" in watcher.text() and watcher.exit_status == 0

    run(scenario())


def test_races_closed_under_their_screens_say_so_and_show_no_result(served: ServerThread) -> None:
    async def close() -> None:
        served.server.races.close()

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            players = [await race_terminal(stack, served.server.port, name, "race") for name in ("ann", "bob")]
            for _, terminal in players:
                await terminal.shows("Race to 2048 · 4x4")
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(close(), served.loop))
            for _, terminal in players:
                await terminal.shows("the server is stopping: the race ends here, unfinished")
                assert "Race over" not in terminal.text()

    run(scenario())
