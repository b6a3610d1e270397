"""``ansi2048 serve --workers N`` (serve/workers.py): N servers on one port
kept by one parent: one listening line, a worker killed by SIGKILL is
started again with nothing its players were shown lost, signals passed on,
and the parent gone once its workers are."""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, Set

import pytest

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="SO_REUSEPORT: Linux, BSD and macOS")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.cli import parse_serve_options  # noqa: E402
from ansi2048.serve.workers import Ready, parse_ready, worker_argv  # noqa: E402

from .serve_support import ServeProcess  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402
from .test_serve_reuse_port import moves  # noqa: E402


def test_a_worker_is_the_parents_server_on_the_parents_port() -> None:
    given = ["--workers", "3", "--listen", "0.0.0.0:0", "--idle-seconds", "77", "--log", "/var/log/serve.log"]
    argv = worker_argv(given, "0.0.0.0", 4567, ready_fd=9)
    assert argv[1:4] == ["-m", "ansi2048", "serve"]
    options = parse_serve_options(argv[4:], {})
    assert (options.workers, options.reuse_port, options.host, options.port) == (1, True, "0.0.0.0", 4567)
    assert (options.ready_fd, options.limits.idle_seconds, options.log) == (9, 77.0, "/var/log/serve.log")
    assert options.parent_pid == os.getpid()  # the worker stops without this process, whenever it goes
    assert parse_serve_options(worker_argv([], "::1", 22, 5)[4:], {}).host == "::1"


def test_the_ready_line_is_read_back() -> None:
    ready = Ready("[::1]", 2048, "SHA256:abc")
    assert parse_ready(str(ready) + "\n") == ready
    assert parse_ready("listening on 127.0.0.1:1 (host key SHA256:x)") == Ready("127.0.0.1", 1, "SHA256:x")
    assert parse_ready("ansi2048 serve: error: cannot listen") is None


def _children(pid: int) -> Set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry))
    return found


def _wait_for_children(pid: int, count: int, other_than: Set[int] = frozenset()) -> Set[int]:  # type: ignore[assignment]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = _children(pid)
        if len(children) == count and not children & other_than:
            return children
        time.sleep(0.05)
    raise AssertionError(f"not {count} workers: {_children(pid)}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_killed_is_started_again_and_its_player_resumes_every_move_shown(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "data", options=["--workers", "2"])
    try:
        assert server.line.endswith(" with 2 workers\n")
        workers = _wait_for_children(server.process.pid, 2)
        key = client_key()

        async def play(count: int) -> Any:
            conn = await connect(server.port, key)
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            for typed in b"asdw" * 20:
                if moves(terminal) >= count:
                    break
                shown = terminal.text()
                chan.write(bytes([typed]))
                await terminal.wait_for(lambda t, shown=shown: t.text() != shown)  # type: ignore[misc]
            return conn, terminal

        async def scenario() -> None:
            conn, terminal = await play(3)
            shown = moves(terminal), re.search(r"Score +(\d+)", terminal.text())
            for worker in workers:  # whichever one serves this player
                os.kill(worker, signal.SIGKILL)
            await terminal.closed.wait()
            conn.close()
            _wait_for_children(server.process.pid, 2, other_than=workers)
            conn, terminal = await play(0)  # resumed: every move shown is there
            assert moves(terminal) == shown[0] >= 3
            again = re.search(r"Score +(\d+)", terminal.text())
            assert shown[1] is not None and again is not None and again.group(1) == shown[1].group(1)
            conn.close()

        run(scenario())
        assert server.kill(signal.SIGTERM) == 0  # passed on to the workers; all ended, each with 0
        assert not _children(server.process.pid)
        assert server.process.stderr is not None
        said = server.process.stderr.read().decode()
        assert said.count("ended (signal 9): starting another") == 2, said
    finally:
        server.kill()


def test_a_worker_that_cannot_listen_ends_the_parent_in_one_line(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))  # without SO_REUSEPORT: no worker may share it
    taken.listen()
    try:
        with pytest.raises(AssertionError) as refused:
            ServeProcess(tmp_path / "data", port=taken.getsockname()[1], options=["--workers", "2"])
        assert f"ansi2048 serve: error: cannot listen on 127.0.0.1:{taken.getsockname()[1]}: " in str(refused.value)
    finally:
        taken.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_end_when_their_parent_is_killed_outright(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "data", options=["--workers", "2"])
    try:
        workers = _wait_for_children(server.process.pid, 2)
        assert server.kill(signal.SIGKILL) == -signal.SIGKILL
        deadline = time.monotonic() + 30  # they look every second (server.ORPHAN_CHECK_SECONDS), then stop
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers)
    finally:
        server.kill()


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
