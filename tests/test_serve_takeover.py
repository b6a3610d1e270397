"""An upgrade without dropping players (serve/takeover.py): a new server
started on the same data directory and address takes over the port, and the
old one drains -- it accepts no more connections, its players play on until
they leave (or ``--drain-seconds``), and it exits 0."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve import takeover  # noqa: E402
from ansi2048.serve.game import SAID_DRAINED  # noqa: E402

from .serve_support import ServeProcess  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402
from .test_serve_reuse_port import moves  # noqa: E402


def test_the_pid_file_names_only_a_running_server_of_this_address(tmp_path: Path) -> None:
    assert takeover.previous(str(tmp_path), "127.0.0.1", 2048) is None  # none yet
    takeover.record(str(tmp_path), takeover.Running(os.getpid(), "127.0.0.1", 2048))
    assert takeover.previous(str(tmp_path), "127.0.0.1", 2048) is None  # this process itself
    parent = takeover.Running(os.getppid(), "127.0.0.1", 2048)
    takeover.record(str(tmp_path), parent)
    assert takeover.previous(str(tmp_path), "127.0.0.1", 2048) == parent
    assert takeover.previous(str(tmp_path), "127.0.0.1", 2049) is None  # another address
    assert takeover.previous(str(tmp_path), "0.0.0.0", 2048) is None
    gone = 2**22 + 12345  # above the usual pid_max: no such process
    takeover.record(str(tmp_path), takeover.Running(gone, "127.0.0.1", 2048))
    assert takeover.previous(str(tmp_path), "127.0.0.1", 2048) is None  # a server killed outright
    takeover.forget(str(tmp_path))
    assert (tmp_path / takeover.PID_FILE).exists()  # not this process's: left
    (tmp_path / takeover.PID_FILE).write_text("garbage\n")
    assert takeover.previous(str(tmp_path), "127.0.0.1", 2048) is None


def _lines(path: Path, text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        said = path.read_text() if path.exists() else ""
        if text in said:
            return said
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} in {path}: {said}")


def _ended(server: ServeProcess, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while server.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.process.poll() is not None, "the old server did not end"
    return server.process.returncode


async def _one_move(chan: Any, terminal: Any) -> None:
    before = moves(terminal)
    for typed in b"asdw":
        shown = terminal.text()
        chan.write(bytes([typed]))
        await terminal.wait_for(lambda t, shown=shown: t.text() != shown)  # type: ignore[misc]
        if moves(terminal) > before:
            return
    raise AssertionError("no key moved")


@pytest.mark.parametrize("reuse_port", [True, False], ids=["beside it", "the port held alone"])
def test_a_new_server_takes_over_and_the_old_one_keeps_its_player_until_they_leave(
    tmp_path: Path, reuse_port: bool
) -> None:
    data, old_log, new_log = tmp_path / "data", tmp_path / "old.log", tmp_path / "new.log"
    shared = ["--reuse-port"] if reuse_port else []
    old = ServeProcess(data, options=[*shared, "--log", str(old_log)])
    new = None
    key = client_key()
    try:

        async def scenario() -> None:
            nonlocal new
            async with await connect(old.port, key) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                await _one_move(chan, terminal)
                new = ServeProcess(data, port=old.port, options=[*shared, "--take-over", "--log", str(new_log)])
                assert new.fingerprint == old.fingerprint  # one host key: the same server to ssh
                said = _lines(old_log, "draining: 1 sessions")
                await terminal.shows("server updating: play on, your game is kept")  # told once, as it drains
                assert "taking over from the server" in _lines(
                    new_log, f"taking over from the server {old.process.pid}"
                )
                # A new connection reaches the new server, as the old one accepts none.
                async with await connect(old.port, client_key(), user="bob") as other:
                    result = await other.run("stats", check=False)
                    assert result.exit_status == 0
                assert "bob" in _lines(new_log, "stats: done")
                assert "bob" not in old_log.read_text()
                # The player on the old server plays on, and leaves when they like.
                await _one_move(chan, terminal)
                assert old.process.poll() is None
                chan.write(b"q")
                await terminal.closed.wait()
                del said

        run(scenario())
        assert _ended(old) == 0  # it ended as soon as its last session did, not at --drain-seconds
        assert "play: quit" in old_log.read_text()
        assert (data / takeover.PID_FILE).read_text().split()[0] == str(new.process.pid)  # type: ignore[union-attr]
    finally:
        old.kill()
        if new is not None:
            new.kill()


def test_a_draining_server_ends_what_is_left_at_drain_seconds_and_says_so(tmp_path: Path) -> None:
    data, old_log = tmp_path / "data", tmp_path / "old.log"
    old = ServeProcess(data, options=["--reuse-port", "--drain-seconds", "1", "--log", str(old_log)])
    new = None
    try:

        async def scenario() -> None:
            nonlocal new
            async with await connect(old.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                new = ServeProcess(data, port=old.port, options=["--reuse-port", "--take-over"])
                await terminal.closed.wait()  # the idle player is let go at the deadline, told why
                assert "your game is kept" in terminal.text()
                del chan

        run(scenario())
        assert _ended(old) == 0
        assert "draining: 1 sessions, for 1 s at most" in old_log.read_text()
        assert "server stopping" in old_log.read_text()
    finally:
        old.kill()
        if new is not None:
            new.kill()


def test_a_draining_server_ends_a_game_at_its_game_over_and_says_so(tmp_path: Path) -> None:
    # Issue 38: a drained session ends at its next natural point -- a game
    # over -- not only when its player quits or the deadline comes.
    data, old_log = tmp_path / "data", tmp_path / "old.log"
    old = ServeProcess(data, options=["--reuse-port", "--drain-seconds", "120", "--log", str(old_log)])
    new = None
    try:

        async def scenario() -> None:
            nonlocal new
            async with await connect(old.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --size 2 --no-animation")
                await terminal.shows("Score")
                new = ServeProcess(data, port=old.port, options=["--reuse-port", "--take-over"])
                await terminal.shows("server updating")
                for _ in range(400):  # a 2x2 board is full within a few dozen moves
                    if terminal.closed.is_set():
                        break
                    chan.write(b"wasd")
                    await asyncio.sleep(0.02)
                await terminal.closed.wait()
                assert SAID_DRAINED in " ".join(terminal.text().split())

        run(scenario())
        assert _ended(old) == 0  # long before its --drain-seconds
        assert "play: game over while the server drained" in old_log.read_text()
    finally:
        old.kill()
        if new is not None:
            new.kill()


def test_servers_started_side_by_side_do_not_take_over_each_other(tmp_path: Path) -> None:
    # --reuse-port by hand (docs/serving.md: one server per core): both serve; only --take-over replaces.
    data = tmp_path / "data"
    first = ServeProcess(data, options=["--reuse-port"])
    second = ServeProcess(data, port=first.port, options=["--reuse-port"])
    try:
        time.sleep(1)  # a drain would have begun by now
        assert first.process.poll() is None and second.process.poll() is None
    finally:
        assert first.kill(15) == 0 and second.kill(15) == 0


def test_a_server_on_another_address_is_not_taken_over(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServeProcess(data)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    second = ServeProcess(data, port=port, options=["--take-over"])
    try:
        time.sleep(1)  # a drain would have begun by now
        assert first.process.poll() is None and second.process.poll() is None
    finally:
        first.kill()
        second.kill()
