"""Friends meet in a race (``race NAME``, issue 37), over asyncssh clients:
a player names a friend who is in no lobby yet and waits for them; the
friend starts a race (any settings), names them back, or joins another's
lobby, and both are in one lobby; q, the ten minutes, a name nobody has,
oneself, a guest's name, the per-address cap, a narrow window."""

from __future__ import annotations

import re
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Iterator, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, run  # noqa: E402
from .test_serve_daily import Clock  # noqa: E402
from .test_serve_race import clocked, race_terminal  # noqa: E402, F401


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, str(tmp_path / "store.sqlite3")) as server:
        yield server


async def known(port: int, user: str) -> Any:
    """A player the store knows (``user``'s key has run a command once): their key."""
    key = client_key()
    async with await connect(port, key, user=user) as conn:
        assert (await conn.run("races")).exit_status == 0
    return key


async def waiting(stack: AsyncExitStack, port: int, user: str, friend: str, key: Any = "new", **size: Any) -> Any:
    """``user`` runs ``race FRIEND`` and is shown the wait for them: their channel and terminal."""
    player = await race_terminal(stack, port, user, f"race {friend}", key=key, **size)
    await player[1].shows(f"Waiting for {friend} to start or join a race")
    return player


async def refused(port: int, user: str, command: str, key: Any = None) -> str:
    """``command`` on a terminal, refused: its exit status 1 and the one line it said."""
    async with await connect(port, key or client_key(), user=user) as conn:
        result = await conn.run(command, term_type="xterm")
        assert result.exit_status == 1
        return str(bytes(result.stderr).decode())


def test_a_friend_in_no_lobby_is_waited_for_and_their_race_joined(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        bob_key = await known(port, "bob")
        async with AsyncExitStack() as stack:
            ann = await waiting(stack, port, "ann", "bob")
            assert "the wait ends in 10:00" in ann[1].text() or "the wait ends in 9:5" in ann[1].text()
            assert "q stops waiting" in ann[1].text()
            bob = await race_terminal(stack, port, "bob", "race --size 5 --goal 64 --players 3", key=bob_key)
            for _, terminal in (ann, bob):  # one lobby, bob's settings
                await terminal.shows("Race to 64 on 5x5, 3 players")
                await terminal.shows("In the lobby: bob, ann")
                await terminal.shows("waiting for 1 more player")
            assert "Waiting for" not in ann[1].text()
            assert len(served.server.races.rooms()) == 1

    run(scenario())


def test_two_friends_naming_each_other_meet_in_one_lobby(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        ann_key, bob_key = await known(port, "ann"), await known(port, "bob")
        async with AsyncExitStack() as stack:
            ann = await waiting(stack, port, "ann", "bob", key=ann_key)
            bob = await race_terminal(stack, port, "bob", "race ann", key=bob_key)
            # One lobby of race NAME's settings (2 players): full with the two, it starts.
            for (_, terminal), other in ((ann, "bob"), (bob, "ann")):
                await terminal.shows("Race to 2048 · 4x4")
                assert re.search(rf"^\s+{other}$", terminal.text(), re.MULTILINE)
            assert len(served.server.races.rooms()) == 1

    run(scenario())


def test_whoever_waits_for_a_player_follows_them_into_the_lobby_they_join(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        ann_key, bob_key = await known(port, "ann"), await known(port, "bob")
        async with AsyncExitStack() as stack:
            cy = await waiting(stack, port, "cy", "ann")  # cy waits for ann, who waits for bob
            ann = await waiting(stack, port, "ann", "bob", key=ann_key)
            dee = await race_terminal(stack, port, "dee", "race --players 4 --size 3 --goal 32")
            await dee[1].shows("waiting for 3 more players")
            bob = await race_terminal(stack, port, "bob", "race --players 4 --size 3 --goal 32", key=bob_key)
            for _, terminal in (ann, bob, cy, dee):
                await terminal.shows("Racing: dee, bob, ann, cy")

    run(scenario())


def test_q_stops_waiting_and_the_friend_then_races_alone(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        bob_key = await known(port, "bob")
        async with AsyncExitStack() as stack:
            ann = await waiting(stack, port, "ann", "bob")
            ann[0].write(b"q")
            await ann[1].shows("you stopped waiting")
            await ann[1].closed.wait()
            assert ann[1].exit_status == 0
            bob = await race_terminal(stack, port, "bob", "race", key=bob_key)
            await bob[1].shows("waiting for 1 more player")
            assert "In the lobby: bob\n" in bob[1].text() + "\n"

    run(scenario())


def test_a_wait_nobody_ends_is_over_after_ten_minutes_saying_so(clocked: Tuple[ServerThread, Clock]) -> None:  # noqa: F811
    served, clock = clocked

    async def scenario() -> None:
        port = served.server.port
        await known(port, "bob")
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race bob")
            await ann[1].shows("the wait ends in 10:00")
            cy = await waiting(stack, port, "cy", "bob", size=(40, 12))  # a narrow window: the same, in whole words
            clock.now += 599
            await ann[1].shows("the wait ends in 0:01")
            clock.now += 1
            await ann[1].shows("bob did not start or join a race in 10 minutes: the wait is over.")
            await cy[1].shows("bob did not start or join a race in 10\nminutes: the wait is over.")
            for _, terminal in (ann, cy):
                await terminal.closed.wait()
                assert terminal.exit_status == 0
            assert list(served.server.races.waiters) == []

    run(scenario())


def test_a_name_no_player_has_oneself_and_a_guest_are_refused_in_one_line(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        ann_key = await known(port, "ann")
        said = await refused(port, "bob", "race nobody")
        assert said == "ansi2048: race: no player is called nobody\r\n"
        long_name = "x\x1b[31m" + "y" * 100
        said = await refused(port, "bob", f"race '{long_name}'")
        line = said.removeprefix("ansi2048: race: no player is called ").rstrip("\r\n")
        assert "\x1b" not in said and len(line) <= 40 and line.startswith("x?[31my")
        said = await refused(port, "ann", "race ANN", key=ann_key)  # names are one whatever their case
        assert said == "ansi2048: race: you cannot race yourself (race alone opens a lobby)\r\n"
        async with AsyncExitStack() as stack:
            guest = await race_terminal(stack, port, "x", "race", key=None)
            await guest[1].shows("In the lobby: guest-1")
            said = await refused(port, "bob", "race guest-1")  # a guest's name is its race's only
            assert said == "ansi2048: race: no player is called guest-1\r\n"

    run(scenario())


def test_a_wait_counts_as_a_race_of_its_address(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        served.server.races.per_address = 1
        await known(port, "bob")
        async with AsyncExitStack() as stack:
            await waiting(stack, port, "ann", "bob")
            for command in ("race", "race bob"):
                said = await refused(port, "cy", command)
                assert said == "ansi2048: race: too many races from your address at once (at most 1)\r\n"

    run(scenario())


def test_the_same_player_waits_once(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        ann_key = await known(port, "ann")
        await known(port, "bob")
        async with AsyncExitStack() as stack:
            await waiting(stack, port, "ann", "bob", key=ann_key)
            for command in ("race", "race bob"):
                said = await refused(port, "ann", command, key=ann_key)
                assert said == "ansi2048: race: you wait for a friend already (in another session)\r\n"

    run(scenario())


def test_the_waiting_screen_keeps_whole_words_in_a_narrow_window(served: ServerThread) -> None:
    async def scenario() -> None:
        port = served.server.port
        await known(port, "bob")
        async with AsyncExitStack() as stack:
            ann = await race_terminal(stack, port, "ann", "race bob", size=(20, 10))
            await ann[1].shows("q stops waiting")
            lines = [line for line in ann[1].text().splitlines() if line]
            assert lines[:4] == [
                "Waiting for bob to",
                "start or join a race",
                "(you meet in their",
                "lobby; the wait ends",
            ]
            assert re.fullmatch(r"in (10:00|9:5\d)\)", lines[4]) and lines[5:] == ["q stops waiting"]

    run(scenario())


def test_a_server_stopping_ends_a_wait_saying_so(tmp_path: Path) -> None:
    import asyncio

    served = ServerThread(tmp_path, str(tmp_path / "store.sqlite3"))

    async def scenario() -> None:
        port = served.server.port
        await known(port, "bob")
        async with AsyncExitStack() as stack:
            ann = await waiting(stack, port, "ann", "bob")
            await asyncio.get_running_loop().run_in_executor(None, served.stop)
            await ann[1].closed.wait()
            said = [line for line in ann[1].text().splitlines() if line]
            assert said[-1] == "the server is stopping"  # a wait keeps nothing: the plain words
            assert list(served.server.races.waiters) == []

    try:
        run(scenario())
    finally:
        served.stop()
