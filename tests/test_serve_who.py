"""Who am I (issue 40 item 8): a session's first screen says the player's
name (or that they are a guest) and what else the server offers, ``?``
lists those; a key keeps its first name, and a player who asked for
another is told so; ``guest`` is no key's name; the log names the player
as the server knows them; a refusal repeats a name asked for only short
and printable."""

from __future__ import annotations

import asyncio
import io
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from ansi2048.render.style import shorter_wordings
from ansi2048.serve.names import NAMELESS, key_name
from ansi2048.serve.play_commands import first_note, who_note

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

OFFERED = ("daily", "race", "watch", "leaderboard", "stats")


@pytest.fixture
def logged(tmp_path: Path, store_url: str) -> Iterator[Tuple[ServerThread, io.StringIO]]:
    """A server on a real database, and its log."""
    log = io.StringIO()
    with ServerThread(tmp_path, store_url, seeds=[7, 8, 9, 10], log=log) as server:
        yield server, log


async def first_screen(port: int, key: Any, user: str, keys: bytes = b"", size: Tuple[int, int] = (100, 30)) -> str:
    """The first screen ``ssh USER@HOST`` shows with ``key`` (after ``keys``, if any); then q."""
    async with await connect(port, key, user=user) as conn:
        chan, terminal = await open_terminal(conn, size=size)
        await terminal.shows("Score")
        await asyncio.sleep(0.3)  # the first frame's motion over
        chan.write(keys)
        if keys:
            await asyncio.sleep(0.5)
        shown = terminal.text()
        if keys:  # any key closes the help, if it is up
            chan.write(b" ")
            await asyncio.sleep(0.3)
        chan.write(b"q")
        await terminal.closed.wait()
        return shown


def connection_lines(log: io.StringIO, count: int) -> List[str]:
    """The log's connection lines (`` TERM=``), once ``count`` are there (bounded wait)."""
    end = time.monotonic() + 10
    while True:
        lines = [line for line in log.getvalue().splitlines() if " TERM=" in line]
        if len(lines) >= count or time.monotonic() > end:
            return lines
        time.sleep(0.05)


# -- the wording (pure) ---------------------------------------------------------


def test_who_note_says_the_name_and_why_it_is_not_the_one_asked_for() -> None:
    assert who_note("carol", "carol") == "you are carol"
    assert who_note("Carol", "carol") == "you are carol"  # one name in any case
    assert who_note("alice", "carol") == "you are carol (this key's name, not alice)"
    assert who_note("bob", "bob2") == "you are bob2 (bob is another player)"
    assert who_note("GUEST", "player") == "you are player (GUEST is for players without a key)"


def test_the_first_note_puts_a_surprise_first_and_what_else_is_offered_last() -> None:
    plain = first_note("resumed your game: 3 moves", "you are carol")
    assert plain.startswith("resumed your game: 3 moves; you are carol; also here: ")
    assert all(command in plain for command in OFFERED)
    surprise = first_note("resumed your game: 3 moves", who_note("alice", "carol"))
    assert surprise.startswith("you are carol (this key's name, not alice); resumed")
    # A narrow window leaves off from the end: the name stays longest.
    assert shorter_wordings(surprise)[-1] == "you are carol"
    assert first_note("", "you are carol").startswith("you are carol; also here: daily")


def test_guest_in_any_case_is_no_name_a_key_asks_the_store_for() -> None:
    for asked in ("guest", "Guest", "GUEST", "gUeSt"):
        assert key_name(asked) == NAMELESS
    assert key_name("guesthouse") == "guesthouse" and key_name("bob") == "bob"


# -- served ---------------------------------------------------------------------


def test_the_first_screen_says_who_you_are_and_what_else_there_is(logged: Tuple[ServerThread, io.StringIO]) -> None:
    server, _ = logged
    carol = client_key()

    async def scenario() -> Tuple[str, str, str]:
        first = await first_screen(server.port, carol, "carol")
        helped = await first_screen(server.port, carol, "carol", b"?")
        guest = await first_screen(server.port, None, "mallory")
        return first, helped, guest

    first, helped, guest = run(scenario())
    note = next(line for line in first.splitlines() if "you are" in line)
    assert note.startswith("you are carol; also here:"), first
    assert all(command in note for command in OFFERED), note
    # ? over SSH lists them, and who the player is.
    assert "on this server: ssh HOST COMMAND" in helped, helped
    assert "carol: your games are kept under this key" in helped
    for command in OFFERED:
        assert any(line.split()[:1] == [command] for line in helped.splitlines()), (command, helped)
    # A guest is told so (its own note), and what else there is too.
    assert "guest: nothing is kept" in guest and "also here: daily" in guest, guest
    assert "you are" not in guest


def test_a_key_keeps_its_name_and_a_player_asking_another_is_told(logged: Tuple[ServerThread, io.StringIO]) -> None:
    server, log = logged
    carol, bob, newcomer = client_key(), client_key(), client_key()

    async def scenario() -> Tuple[str, str, str]:
        await first_screen(server.port, carol, "carol")
        await first_screen(server.port, bob, "bob")
        as_alice = await first_screen(server.port, carol, "alice")  # carol's key, asking for alice
        as_bob = await first_screen(server.port, newcomer, "bob")  # a new key asking for a taken name
        again = await first_screen(server.port, newcomer, "bob", size=(80, 24))  # told every time, at 80 columns too
        return as_alice, as_bob, again

    as_alice, as_bob, again = run(scenario())
    assert "you are carol (this key's name, not alice)" in as_alice, as_alice
    assert "you are bob2 (bob is another player)" in as_bob, as_bob
    assert "you are bob2 (bob is another player)" in again, again
    # The operator's log names the player as the server knows them.
    lines = connection_lines(log, 5)
    assert len(lines) == 5, lines
    assert [line.split()[3] for line in lines] == ["carol", "bob", "carol", "bob2", "bob2"], lines


def test_guest_is_no_name_a_key_can_take(logged: Tuple[ServerThread, io.StringIO]) -> None:
    server, _ = logged
    key = client_key()

    shown = run(first_screen(server.port, key, "GUEST"))
    assert f"you are {NAMELESS} (GUEST is for players without a key)" in shown, shown
    player = server.call(server.store.player(key.get_fingerprint("sha256"), "ignored"))  # type: ignore[attr-defined]
    assert player.name == NAMELESS


@pytest.mark.parametrize("line", ["watch {name}", "race {name}"])
def test_a_refusal_repeats_a_name_asked_for_short_and_printable(
    logged: Tuple[ServerThread, io.StringIO], line: str
) -> None:
    server, _ = logged
    name = "x" * 30 + "\x1b[31m" + "y" * 200

    async def scenario() -> Tuple[int, str, str]:
        async with await connect(server.port, client_key(), user="carol") as conn:
            _, terminal = await open_terminal(conn, line.format(name=name), pty=True)
            await terminal.closed.wait()
            return terminal.exit_status, terminal.output.decode(), terminal.stderr.decode()

    status, out, err = run(scenario())
    said = out + err
    assert status != 0 and said.strip(), (status, said)
    assert "\x1b[31m" not in said and "y" * 11 not in said, said
    assert "x" * 30 in said, said  # the name is said, its first 40 characters at most
