"""The log's lines for each connection (issue 39): one when it is admitted,
one when it ends, with the keys played and the true ending -- quit,
disconnected, taken over, did not take over, server stopping, ranked game
ended, day over (idle and a client not reading: tests/test_serve_limits.py)."""

from __future__ import annotations

import calendar
import io
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, List

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import MemoryStore, ServerThread, logged  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

WAIT = 20.0
DAY = "2026-11-27"
NOON = calendar.timegm(time.strptime(DAY + " 12:00", "%Y-%m-%d %H:%M"))
DATED = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def ended_lines(log: io.StringIO, count: int = 1) -> List[str]:
    """The connections' closing lines, once ``count`` are written (bounded)."""
    text = logged(log, lambda text: len(re.findall(r" keys, ", text)) >= count)
    return [line for line in text.splitlines() if " keys, " in line]


async def play(served: ServerThread, key: Any, keys: bytes, command: str = "play --no-animation") -> Any:
    """A session of ``command`` with ``keys`` typed, each shown before the next."""
    conn = await connect(served.port, key)
    chan, terminal = await open_terminal(conn, command)
    await terminal.shows("Score", WAIT)
    for typed in keys:
        shown = terminal.text()
        chan.write(bytes([typed]))
        await terminal.wait_for(lambda t, shown=shown: t.text() != shown, WAIT)  # type: ignore[misc]
    return conn, chan, terminal


def test_a_connection_is_a_line_when_admitted_and_one_when_it_ends_with_its_keys_quit(tmp_path: Path) -> None:
    log = io.StringIO()
    with ServerThread(tmp_path, MemoryStore(), seeds=[7], log=log) as served:

        async def scenario() -> None:
            conn, chan, terminal = await play(served, client_key(), b"ad")
            assert re.search(DATED + r"127\.0\.0\.1 SHA256:\S{12} alice connected$", log.getvalue(), re.M)
            chan.write(b"q")
            await terminal.closed.wait()
            conn.close()

        run(scenario())
        (line,) = ended_lines(log)
        assert re.fullmatch(
            DATED + r"127\.0\.0\.1 SHA256:\S{12} alice TERM=xterm-256color 80x24 \S+ s, 3 keys, play: quit", line
        )
        assert log.getvalue().index(" connected\n") < log.getvalue().index(line)


def test_a_dropped_client_is_disconnected_with_the_keys_it_played(tmp_path: Path) -> None:
    log = io.StringIO()
    with ServerThread(tmp_path, MemoryStore(), seeds=[7], log=log) as served:

        async def scenario() -> None:
            conn, _, _ = await play(served, client_key(), b"adad")
            conn.abort()

        run(scenario())
        (line,) = ended_lines(log)
        assert line.endswith(" 4 keys, play: disconnected"), line


def test_a_game_taken_over_says_so_and_the_one_declining_says_so(tmp_path: Path) -> None:
    log = io.StringIO()
    key = client_key()
    with ServerThread(tmp_path, MemoryStore(), seeds=[7, 8], log=log) as served:

        async def asked(answer: bytes) -> Any:
            conn = await connect(served.port, key)
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("y: play it here", WAIT)
            chan.write(answer)
            return conn, chan, terminal

        async def scenario() -> None:
            first, _, first_terminal = await play(served, key, b"a")
            declining, _, terminal = await asked(b"n")
            await terminal.closed.wait()
            declining.close()
            second, chan, terminal = await asked(b"y")
            await terminal.shows("Score", WAIT)
            await first_terminal.closed.wait()
            chan.write(b"q")
            await terminal.closed.wait()
            first.close()
            second.close()

        run(scenario())
        lines = ended_lines(log, 3)
        assert any(line.endswith(" 0 keys, play: did not take over") for line in lines), lines
        assert any(line.endswith(" 1 keys, play: taken over") for line in lines), lines
        assert any(line.endswith(" 1 keys, play: quit") for line in lines), lines


def test_the_server_stopping_is_the_ending_of_its_sessions(tmp_path: Path) -> None:
    log = io.StringIO()
    served = ServerThread(tmp_path, MemoryStore(), seeds=[7], log=log)
    conns: List[Any] = []

    async def scenario() -> None:
        conn, _, _ = await play(served, client_key(), b"ad")
        conns.append(conn)

    run(scenario())
    served.stop()
    (line,) = ended_lines(log)
    assert line.endswith(" 2 keys, play: server stopping"), line


@pytest.fixture
def daily(tmp_path: Path) -> Any:
    log = io.StringIO()
    clock = Clock(NOON)
    with ServerThread(tmp_path, "", log=log) as served:  # SQLite: the day's tables
        served.server.context = replace(served.server.context, daily_secret=b"s" * 32, now=clock)
        yield served, clock, log


def test_a_ranked_game_ended_with_r_twice_is_ranked_game_ended(daily: Any) -> None:
    served, _, log = daily

    async def scenario() -> None:
        conn, chan, terminal = await play(served, client_key(), b"", command="daily")
        chan.write(b"r")
        await terminal.shows("r again ends it for good", WAIT)
        chan.write(b"r")
        await terminal.closed.wait()
        conn.close()

    run(scenario())
    (line,) = ended_lines(log)
    assert line.endswith(" 2 keys, daily: ranked game ended"), line


def test_a_ranked_game_at_midnight_is_day_over(daily: Any) -> None:
    served, clock, log = daily

    async def scenario() -> None:
        conn, chan, terminal = await play(served, client_key(), b"", command="daily")
        clock.now = NOON + 12 * 3600 + 1  # past UTC midnight
        chan.write(b"a")
        await terminal.closed.wait()
        assert "the day is over" in terminal.text()
        conn.close()

    run(scenario())
    (line,) = ended_lines(log)
    assert line.endswith(" 1 keys, daily: day over"), line


def test_a_ranked_game_ended_by_a_confirmed_hint_is_ranked_game_ended_unranked(daily: Any) -> None:
    served, _, log = daily

    async def scenario() -> None:
        conn, chan, terminal = await play(served, client_key(), b"", command="daily")
        chan.write(b"t")
        await terminal.shows("t again ends it, unranked", WAIT)
        chan.write(b"t")
        await terminal.closed.wait()
        assert "ended unranked" in terminal.text()
        conn.close()

    run(scenario())
    (line,) = ended_lines(log)
    assert line.endswith(" 2 keys, daily: ranked game ended unranked"), line
