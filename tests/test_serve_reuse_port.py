"""Several ``ansi2048 serve`` processes on one port (``--reuse-port``,
SO_REUSEPORT) and one database: the system spreads the connections, and
whichever server a player reaches, their game is the same one. Stopping one
server (an upgrade, one at a time) leaves the others serving."""

from __future__ import annotations

import re
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import ServeProcess, Terminal  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="SO_REUSEPORT: Linux, BSD and macOS")


def moves(terminal: Terminal) -> int:
    found = re.search(r"Moves (\d+) ", terminal.text())
    assert found is not None, terminal.text()
    return int(found.group(1))


async def play_one_move(port: int, key: Any) -> int:
    """A connection that resumes the game, makes one move that moves, and
    quits: the moves the game had when it was resumed."""
    async with await connect(port, key) as conn:
        chan, terminal = await open_terminal(conn, "play --no-animation")
        await terminal.shows("Score")
        before = moves(terminal)
        for key_, direction in ((b"a", "left"), (b"s", "down"), (b"d", "right"), (b"w", "up")):
            answers = (f"Moves {before + 1} ", f"can't move {direction}")
            chan.write(key_)
            await terminal.wait_for(lambda shown, answers=answers: any(answer in shown.text() for answer in answers))
            if answers[0] in terminal.text():
                break
        else:
            raise AssertionError("no direction moved a board with empty cells")
        chan.write(b"q")
        await terminal.closed.wait()
    return before


def test_servers_sharing_a_port_share_the_games_and_one_may_stop(tmp_path: Path, store_url: str) -> None:
    data = tmp_path / "server"
    first = ServeProcess(data, store_url, options=["--reuse-port"])
    second = ServeProcess(data, store_url, port=first.port, options=["--reuse-port"])
    try:
        assert second.port == first.port and second.fingerprint == first.fingerprint  # one host key: one server to ssh
        key = client_key()

        async def scenario() -> None:
            # Whichever server takes each connection, the game goes on from where it was.
            for played in range(6):
                assert await play_one_move(first.port, key) == played
            assert first.kill(signal.SIGTERM) == 0
            # The port is still served, by the second alone, and the game is there.
            for played in range(6, 8):
                assert await play_one_move(first.port, key) == played

        run(scenario())
    finally:
        first.kill()
        second.kill()


def test_without_reuse_port_a_second_server_on_the_port_is_refused_in_one_line(tmp_path: Path) -> None:
    first = ServeProcess(tmp_path / "a")
    try:
        with pytest.raises(AssertionError) as refused:
            ServeProcess(tmp_path / "b", port=first.port)
        said = str(refused.value)
        assert f"ansi2048 serve: error: cannot listen on 127.0.0.1:{first.port}: " in said
        assert "in use" in said.lower() or sys.platform == "win32"
    finally:
        first.kill()
