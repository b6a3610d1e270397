"""The browser door without a browser: its messages and checks (pure), and
its server as a script reaches it (aiohttp's client): the page's files and
headers, the WebSocket refused from another origin, a page's session as an
ordinary session (the log's line, the limits, the slow reader, the stop)."""

from __future__ import annotations

import asyncio
import io
import re
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

pytest.importorskip("asyncssh", exc_type=ImportError)
pytest.importorskip("aiohttp", exc_type=ImportError)

from ansi2048.serve.limits import Limits
from ansi2048.serve.web.protocol import (
    CONTENT_SECURITY_POLICY,
    Continue,
    Keys,
    Pause,
    Resize,
    parse_up,
    same_origin,
)

from .databases import run
from .serve_support import MemoryStore
from .web_support import PageSocket, WebServerThread

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")


class LogLines(io.StringIO):
    """The server's log, kept."""

    def lines(self) -> List[str]:
        return self.getvalue().splitlines()


def wait_for_log(log: LogLines, pattern: str, seconds: float = 10.0) -> str:
    """The log's first line matching ``pattern`` (the log is written by a thread of its own)."""
    for _ in range(int(seconds / 0.05)):
        found = [line for line in log.lines() if re.search(pattern, line)]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no log line like {pattern!r} in:\n{log.getvalue()}")


@pytest.fixture
def log() -> LogLines:
    return LogLines()


@pytest.fixture
def door(tmp_path: Path, log: LogLines) -> Iterator[WebServerThread]:
    with WebServerThread(tmp_path, MemoryStore(), log=log) as served:
        yield served


# -- the messages ------------------------------------------------------------------


def test_messages_up_are_parsed_and_anything_else_is_none() -> None:
    assert parse_up("i\x1b[A") == Keys(b"\x1b[A")
    assert parse_up("ié") == Keys("é".encode())
    assert parse_up("r80x24") == Resize(80, 24)
    assert parse_up("p") == Pause()
    assert parse_up("c") == Continue()
    for garbage in ("", "i", "r", "r80", "r80x", "rx24", "r0x24", "r-1x24", "r99999999x1", "r8 0x24", "p1", "z", "☃"):
        assert parse_up(garbage) is None, garbage


def test_same_origin_is_the_request_hosts_own() -> None:
    assert same_origin("http://example.org:8080", "example.org:8080")
    assert same_origin("https://Example.org", "example.org")  # TLS ended at a proxy in front
    assert same_origin(None, "example.org")  # not a browser: no visitor's cookie to abuse
    assert not same_origin("http://evil.example", "example.org")
    assert not same_origin("http://example.org.evil.example", "example.org")
    assert not same_origin("http://example.org:8081", "example.org:8080")
    assert not same_origin("null", "example.org")  # a sandboxed frame, a file: page
    assert not same_origin("ftp://example.org", "example.org")
    assert not same_origin("http://example.org", None)


# -- the server -------------------------------------------------------------------


def _get(url: str, origin: str = "") -> Tuple[int, Dict[str, str], bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Origin": origin} if origin else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_page_and_its_files_come_with_the_policy_and_no_inline_script(door: WebServerThread) -> None:
    status, headers, body = _get(door.origin + "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY and "default-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY.split("script-src")[1].split(";")[0]
    page = body.decode()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
    assert scripts and all('src="/static/' in attributes and not inline.strip() for attributes, inline in scripts)
    assert "http://" not in page and "https://" not in page  # nothing from another host
    for name in ("door.js", "door.css", "vendor/xterm.js", "vendor/xterm.css", "vendor/addon-fit.js"):
        status, headers, body = _get(f"{door.origin}/static/{name}")
        assert status == 200 and body and headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, name
    status, _, body = _get(door.origin + "/static/vendor/LICENSE.xterm")
    assert status == 200 and b"Permission is hereby granted" in body


def test_a_bad_request_is_a_4xx_and_one_log_line(door: WebServerThread, log: LogLines) -> None:
    for path in ("/nothing-here", "/static/../setup.cfg", "/static/nothing.js", "/socket"):
        status, headers, body = _get(door.origin + path)
        assert 400 <= status < 500, path
        assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert b"Traceback" not in body
    wait_for_log(log, r" web GET /socket 400 ")
    lines = [line for line in log.lines() if " web GET " in line]
    assert len(lines) == 4, lines
    assert "Traceback" not in log.getvalue()


def test_a_websocket_from_another_origin_is_refused(door: WebServerThread, log: LogLines) -> None:
    import aiohttp

    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(door.origin + "/socket", origin="http://evil.example")
            assert refused.value.status == 403

    run(scenario())
    line = wait_for_log(log, "403")
    assert line.endswith("web GET /socket 403 WebSocket from another origin")
    assert not door.server.sessions and not any("TERM=" in line for line in log.lines())


def test_a_pages_session_is_an_ordinary_session_of_the_server(door: WebServerThread, log: LogLines) -> None:
    async def scenario() -> None:
        async with PageSocket(door.origin) as page:
            await page.shows("Moves 0")
            assert "2048  Score 0" in page.text()
            for garbage in ("zzz", "r0x0", "r80", ""):  # ignored, message by message
                await page.socket.send_str(garbage)
            await page.socket.send_bytes(b"\x1b[A")
            await page.socket.send_str("iq")
            await page.until_closed()
            assert page.texts == ["x0"]  # the session's exit status, as ssh's
            assert "guest's game is not kept" in page.text()

    run(scenario())
    line = wait_for_log(log, "TERM=xterm-256color")
    assert re.search(r" 127\.0\.0\.1 guest browser TERM=xterm-256color 80x24 .* 1 keys, web; play: quit$", line), line


def test_a_message_over_the_limit_ends_the_socket(door: WebServerThread, log: LogLines) -> None:
    async def scenario() -> None:
        async with PageSocket(door.origin) as page:
            await page.shows("Moves 0")
            await page.socket.send_str("i" + "w" * 9000)
            await page.until_closed()

    run(scenario())
    assert "message too large" in wait_for_log(log, "TERM=")


def test_a_page_that_stops_taking_frames_is_dropped_as_an_ssh_client_is(tmp_path: Path, log: LogLines) -> None:
    limits = Limits(stalled_seconds=0.5)
    with WebServerThread(tmp_path, MemoryStore(), log=log, limits=limits) as door:

        async def scenario() -> None:
            async with PageSocket(door.origin) as page:
                await page.shows("Moves 0")
                await page.socket.send_str("p")  # the page has too much unrendered: the server holds the rest
                for key in "adwsadws":  # frames held for it; at 0.5 s of them, dropped
                    with suppress(ConnectionError):
                        await page.socket.send_str("i" + key)
                    await asyncio.sleep(0.2)
                await page.until_closed()

        run(scenario())
        assert "client not reading" in wait_for_log(log, "TERM=")


def test_the_servers_stop_ends_a_pages_game_saying_so(door: WebServerThread) -> None:
    async def scenario() -> None:
        async with PageSocket(door.origin) as page:
            await page.shows("Moves 0")
            stopping = asyncio.get_running_loop().run_in_executor(None, door.stop)
            await page.shows("the server is stopping")
            await page.until_closed()
            await stopping

    run(scenario())


def test_a_request_the_server_cannot_parse_is_a_400_and_one_line_without_a_traceback(
    door: WebServerThread, log: LogLines
) -> None:
    import socket

    too_long = b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 20000 + b"\r\n\r\n"
    for request in (b"GARBAGE\x00\x01 / HTTP/9\r\n\r\n", too_long):
        with socket.create_connection(("127.0.0.1", door.http_port), timeout=10) as client:
            client.sendall(request)
            assert client.recv(200).startswith(b"HTTP/1.0 400 Bad Request")
    line = wait_for_log(log, "LineTooLong")
    assert line.endswith("web: Error handling request from 127.0.0.1: LineTooLong: 400, message:"), line
    assert "Traceback" not in log.getvalue() and len(log.lines()) <= 2


def test_http_is_off_unless_asked_and_a_bad_address_is_a_usage_error() -> None:
    from ansi2048.serve.cli import parse_serve_options

    assert parse_serve_options([], {"HOME": "/nowhere"}).http is None
    assert parse_serve_options(["--http", "[::1]:8080"], {"HOME": "/nowhere"}).http == ("::1", 8080)
    assert not parse_serve_options([], {"HOME": "/nowhere"}).behind_https
    assert parse_serve_options(["--http", "0.0.0.0:80", "--behind-https"], {"HOME": "/nowhere"}).behind_https
    with pytest.raises(SystemExit) as bad:
        parse_serve_options(["--http", "8080"], {"HOME": "/nowhere"})
    assert bad.value.code == 2


@pytest.mark.posix("signals")
def test_serve_with_http_serves_the_page_and_stops_on_sigterm(tmp_path: Path) -> None:
    import signal

    from .serve_support import ServeProcess

    served = ServeProcess(tmp_path / "data", options=["--http", "127.0.0.1:0"])
    try:
        assert served.process.stderr is not None
        line = served.process.stderr.readline().decode()
        found = re.fullmatch(r"\S+ browsers: (http://127\.0\.0\.1:\d+/)\n", line)  # after its time
        assert found, line
        status, _, body = _get(found.group(1))
        assert status == 200 and b"/static/door.js" in body
    finally:
        assert served.kill(signal.SIGTERM) == 0


def test_a_page_may_run_a_command_of_the_ssh_table(door: WebServerThread, log: LogLines) -> None:
    async def scenario() -> None:
        async with PageSocket(door.origin, height=60, query="?command=help") as page:
            await page.shows("ansi2048 over SSH")
            await page.until_closed()
            assert page.texts == ["x0"]
        async with PageSocket(door.origin, query="?command=rm%20-rf") as page:
            await page.shows("unknown command 'rm'")
            await page.until_closed()
            assert page.texts == ["x2"]

    run(scenario())


def test_a_pages_keys_go_through_the_input_budget(tmp_path: Path, log: LogLines) -> None:
    limits = Limits(input_burst=10, input_rate=1)
    with WebServerThread(tmp_path, MemoryStore(), log=log, limits=limits) as door:

        async def scenario() -> None:
            async with PageSocket(door.origin) as page:
                await page.shows("Moves 0")
                await page.socket.send_str("i" + "ad" * 25)  # 50 keys at once: the burst's 10 are played
                await asyncio.sleep(1.5)  # a byte's worth of budget again
                await page.socket.send_str("iq")
                await page.until_closed()

        run(scenario())
        assert re.search(r" 11 keys, web; play: quit$", wait_for_log(log, "TERM="))


@pytest.mark.posix("signals")
def test_every_worker_serves_the_page_on_the_one_http_port(tmp_path: Path) -> None:
    import signal
    import socket

    from .serve_support import ServeProcess

    with socket.socket() as probe:  # a port free now, for --http (port 0 would give each worker its own)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    served = ServeProcess(tmp_path / "data", options=["--workers", "2", "--http", f"127.0.0.1:{port}"])
    try:
        for _ in range(6):  # new connections, spread by the system among the workers
            status, _, body = _get(f"http://127.0.0.1:{port}/")
            assert status == 200 and b"/static/door.js" in body
    finally:
        assert served.kill(signal.SIGTERM) == 0


def test_each_web_log_line_is_dated_once(door: WebServerThread, log: LogLines) -> None:
    _get(door.origin + "/nothing-here")
    line = wait_for_log(log, "nothing-here")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1 web GET /nothing-here 404 Not Found", line), line
