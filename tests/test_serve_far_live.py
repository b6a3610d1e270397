"""Live views across the servers of one store (issue 38): the watch list,
``watch NAME``, the player's "N watching" and a take-over's end, with the
player on one server and the watcher (or the second session) on another,
on SQLite and on PostgreSQL; and the frame's JSON a server sends another."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from ansi2048.game.engine import Game
from ansi2048.game.keys import Direction
from ansi2048.game.session import Session, Status
from ansi2048.render.frame import View

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.far_live import view_document, view_from  # noqa: E402
from ansi2048.serve.game_parts import Timings  # noqa: E402
from ansi2048.serve.play_commands import take_over_prompt  # noqa: E402
from ansi2048.serve.saving import SAID_TAKEN_OVER  # noqa: E402

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402
from .test_serve_watch import board_on, moves_shown, played  # noqa: E402

# -- the frame sent between servers ----------------------------------------------


def test_a_frame_crosses_as_json_and_comes_back_the_same_view() -> None:
    game = Game(4, 4, 2048, 7)
    session = Session(game)
    for direction in (Direction.LEFT, Direction.UP, Direction.RIGHT):
        session.game.move(direction)
    view = View.of(session, day="2026-11-28", ranked=True)
    back = view_from(view_document(view))
    assert back is not None
    assert (back.board, back.spawned, back.score, back.moves, back.seed) == (
        game.board,
        game.spawned,
        game.score,
        game.moves,
        7,
    )
    assert (back.status, back.day, back.ranked, back.over) == (Status.PLAYING, "2026-11-28", True, False)
    # What is the player's own is not sent: a watcher never sees it.
    assert back.note == "" and back.hint is None and back.bindings == ()


@pytest.mark.parametrize("text", ["", "{}", "[1]", '{"board": "x"}', "\x1b[2J", '{"status": "lost"}'])
def test_a_frame_that_is_not_one_draws_nothing(text: str) -> None:
    assert view_from(text) is None


# -- two servers on one store -----------------------------------------------------


@pytest.fixture
def two_servers(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Tuple[ServerThread, ServerThread]]:
    """Two servers on one database; no claim renewal comes during a test
    (only the exchange between the servers can end a session taken over)."""
    monkeypatch.setattr("ansi2048.serve.game.DEFAULT_TIMINGS", Timings(renew=3600.0))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with ServerThread(tmp_path / "a", store_url, seeds=[7]) as first, ServerThread(tmp_path / "b", store_url) as second:
        yield first, second


def test_a_watcher_on_another_server_lists_watches_and_is_counted(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers

    async def scenario() -> None:
        conn = await connect(first.port, client_key(), user="alice")
        chan, player = await open_terminal(conn, "play --no-animation", size=(80, 24))
        await player.shows("Score")
        chan.write(b"a")
        viewer = await connect(second.port, client_key(), user="bob")
        _, listed = await open_terminal(viewer, "watch", size=(80, 24))
        await listed.wait_for(lambda t: any(line.split()[:1] == ["alice"] for line in _rows(t)))
        _, watcher = await open_terminal(viewer, "watch alice", size=(100, 30))
        await watcher.shows("watching alice")
        await player.shows("1 watching")  # the watcher is on the other server
        typed = "a"
        for key in "sdwa":
            chan.write(key.encode())
            typed += key
            game = played(7, typed)
            await watcher.wait_for(lambda t, moves=game.moves: moves_shown(t) == moves)
            assert board_on(watcher, game) == [list(row) for row in game.board]
        chan.write(b"q")
        await watcher.shows("the game you watched has ended")
        await listed.wait_for(lambda t: not any(line.split()[:1] == ["alice"] for line in _rows(t)))
        conn.close()
        viewer.close()

    run(scenario())


def test_watch_name_finds_a_game_just_begun_on_another_server(two_servers: Tuple[ServerThread, ServerThread]) -> None:
    # The other server lists it a tick or two of the exchange later: watch NAME waits that long.
    first, second = two_servers

    async def scenario() -> None:
        conn = await connect(first.port, client_key(), user="alice")
        _, player = await open_terminal(conn, "play --no-animation")
        await player.shows("Score")
        viewer = await connect(second.port, client_key(), user="bob")
        _, watcher = await open_terminal(viewer, "watch alice")
        await watcher.shows("watching alice")
        conn.close()
        viewer.close()

    run(scenario())


def _rows(terminal: object) -> list:  # type: ignore[type-arg]
    """The watch list's rows (under its title), stripped of the chosen mark."""
    lines = terminal.text().splitlines()  # type: ignore[attr-defined]
    return [line.lstrip("> ").strip() for line in lines[2:] if line.strip()]


def test_a_private_game_on_another_server_is_not_listed(two_servers: Tuple[ServerThread, ServerThread]) -> None:
    first, second = two_servers

    async def scenario() -> None:
        conn = await connect(first.port, client_key(), user="alice")
        _, player = await open_terminal(conn, "play --private --no-animation")
        await player.shows("Score")
        other = await connect(first.port, client_key(), user="carol")
        _, public = await open_terminal(other, "play --no-animation")
        await public.shows("Score")
        viewer = await connect(second.port, client_key(), user="bob")
        _, listed = await open_terminal(viewer, "watch", size=(80, 24))
        await listed.wait_for(lambda t: any(line.split()[:1] == ["carol"] for line in _rows(t)))
        assert not any(line.split()[:1] == ["alice"] for line in _rows(listed))
        for c in (conn, other, viewer):
            c.close()

    run(scenario())


def test_a_take_over_from_another_server_ends_the_session_there_at_once(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers
    key = client_key()

    async def scenario() -> None:
        async with await connect(first.port, key) as a_conn, await connect(second.port, key) as b_conn:
            _, a_terminal = await open_terminal(a_conn, "play --no-animation")
            await a_terminal.shows("Score")
            b, b_terminal = await open_terminal(b_conn, "play --no-animation")
            await b_terminal.shows(take_over_prompt(80)[0])
            b.write(b"y")
            # A types nothing and renews no claim: only the other server's word ends it.
            await a_terminal.closed.wait()
            assert SAID_TAKEN_OVER in a_terminal.text()
            await b_terminal.shows("Score")

    run(scenario())
