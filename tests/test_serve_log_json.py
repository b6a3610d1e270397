"""``--log-format json`` (issue 39): the log's events as JSON lines, one
object a line, each with its ``time``, ``event`` and the event's fields, as
docs/serving.md names them; in ASCII, whatever a client or a library said."""

from __future__ import annotations

import calendar
import io
import json
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ansi2048.serve.log import LibraryMessages, LogFormat, ServerLog, rendered

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import MemoryStore, ServeProcess, ServerThread, logged  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

TIME = "2026-11-18T08:26:40Z"
NOON = float(calendar.timegm(time.strptime(TIME, "%Y-%m-%dT%H:%M:%SZ")))


def objects(text: str) -> List[Dict[str, Any]]:
    """Each line of ``text`` as the JSON object it must be."""
    lines = text.splitlines()
    assert all(line.isascii() and line.isprintable() for line in lines), lines
    return [json.loads(line) for line in lines]


def test_an_event_is_one_ascii_json_line_with_its_time_event_and_fields() -> None:
    hostile = "alice\x1b[2J\r\nforged é"
    line = rendered(LogFormat.JSON, NOON, "text", "connected", {"name": hostile, "keys": 3})
    assert "\n" not in line and line.isascii()
    assert json.loads(line) == {"time": TIME, "event": "connected", "name": hostile, "keys": 3}
    assert json.loads(rendered(LogFormat.JSON, NOON, "store error: x", "message", {})) == {
        "time": TIME,
        "event": "message",
        "message": "store error: x",
    }
    assert rendered(LogFormat.TEXT, NOON, "store error: x", "message", {"a": 1}) == f"{TIME} store error: x"


def test_the_servers_log_and_a_librarys_message_write_events() -> None:
    memory = io.StringIO()
    ServerLog(memory, lambda: NOON, form=LogFormat.JSON).event("x", "stopping", {"sessions": 2})
    assert objects(memory.getvalue()) == [{"time": TIME, "event": "stopping", "sessions": 2}]
    written: List[Dict[str, Any]] = []
    handler = LibraryMessages(lambda line, event="message", **fields: written.append({"event": event, **fields}))
    handler.emit(logging.LogRecord("asyncssh", logging.WARNING, "x.py", 1, "bad \x1b packet", (), None))
    assert written == [{"event": "library", "logger": "asyncssh", "level": "warning", "message": "bad ? packet"}]


def test_a_server_logs_each_connection_as_json_events(tmp_path: Path) -> None:
    log = io.StringIO()
    with ServerThread(tmp_path, MemoryStore(), seeds=[7], log=log) as served:
        served.server._log = ServerLog(log, time.time, form=LogFormat.JSON)
        key = client_key()

        async def scenario() -> None:
            async with await connect(served.port, key) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                chan.write(b"a")
                await terminal.shows("Moves 1")
                chan.write(b"q")
                await terminal.closed.wait()

        run(scenario())
        text = logged(log, lambda text: '"ended"' in text)
    connected, ended = objects(text)
    fingerprint = key.get_fingerprint("sha256")
    assert connected == {
        "time": connected["time"],
        "event": "connected",
        "address": "127.0.0.1",
        "fingerprint": fingerprint,
        "name": "alice",
    }
    assert {name: ended[name] for name in ("event", "address", "fingerprint", "name", "term", "window")} == {
        "event": "ended",
        "address": "127.0.0.1",
        "fingerprint": fingerprint,
        "name": "alice",
        "term": "xterm-256color",
        "window": "80x24",
    }
    assert (ended["keys"], ended["endings"]) == (2, ["play: quit"]) and ended["seconds"] >= 0


def test_the_command_logs_json_from_listening_to_stopping(tmp_path: Path) -> None:
    path = tmp_path / "serve.log"
    served = ServeProcess(tmp_path, options=["--log-format", "json", "--log", str(path)])
    try:
        assert served.line.endswith(f"(host key {served.fingerprint})\n")  # the operator's own line: text
        assert served.kill(signal.SIGTERM) == 0
    finally:
        served.kill()
    events = objects(path.read_text())
    assert [event["event"] for event in events] == ["listening", "stopping"]
    assert events[0]["address"] == f"127.0.0.1:{served.port}" and events[0]["host_key"] == served.fingerprint
    assert events[1]["sessions"] == 0
