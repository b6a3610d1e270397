"""A browser linked to a player: ``ssh HOST link``'s one-time code entered
in the page binds the browser to that key's player (a cookie naming a token
the database keeps hashed), ``links`` lists them, ``unlink N`` revokes one."""

from __future__ import annotations

import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Tuple

import pytest

pytest.importorskip("asyncssh", exc_type=ImportError)
pytest.importorskip("aiohttp", exc_type=ImportError)

from ansi2048.serve.commands import parse_command
from ansi2048.serve.requests import CommandError, LinkRequest
from ansi2048.serve.web.link_page import TRIES, LinkTries
from ansi2048.serve.web.links import browsers, issue_code, linked_player, normal_code, redeem, unlink

from .databases import run
from .serve_support import SCREEN_WAIT
from .test_serve import client_key, connect, open_terminal
from .test_store import opened
from .test_web_browser import shows
from .web_support import WebServerThread, chromium as open_chromium

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

MOVES_RE = re.compile(r"Moves ([1-9][0-9]*)")  # past the first move
CODE_RE = re.compile(r"Your code: ([A-Z2-9]{4}-[A-Z2-9]{4})")


def test_codes_are_read_as_typed_and_anything_else_is_refused() -> None:
    assert normal_code("abcd efgh") == "ABCD-EFGH"
    assert normal_code(" ABCD-EFGH ") == "ABCD-EFGH"
    for bad in ("", "ABCD-EFG", "ABCD-EFGHJ", "ABCD-EFG0", "ABCD-EFGI", "ÄBCD-EFGH", "ABCD_EFGH"):
        assert normal_code(bad) is None, bad


def test_link_commands_are_parsed() -> None:
    assert parse_command("link") == LinkRequest("link")
    assert parse_command("links") == LinkRequest("links")
    assert parse_command("unlink 2") == LinkRequest("unlink", 2)
    for bad in ("link now", "unlink", "unlink x", "unlink 1 2", "unlink ²", "unlink 12345678"):
        with pytest.raises(CommandError):
            parse_command(bad)


def test_an_address_may_try_only_so_many_bad_codes() -> None:
    tries = LinkTries()
    for _ in range(TRIES):
        assert tries.allowed("10.0.0.1", 100.0)
        tries.failed("10.0.0.1", 100.0)
    assert not tries.allowed("10.0.0.1", 101.0)
    assert tries.allowed("10.0.0.2", 101.0)
    assert tries.allowed("10.0.0.1", 100.0 + 600)  # ten minutes on


def test_a_code_links_once_within_ten_minutes_and_the_database_keeps_only_hashes(
    store_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            ann = await store.player("SHA256:ann", "ann")
            await issue_code(store, ann.id, "ABCD-EFGH", 1000.0)
            assert not await redeem(store, "ABCD-EFGJ", "token-x", "a browser", 1001.0)
            assert await redeem(store, "ABCD-EFGH", "token-1", "Firefox", 1001.0)
            assert not await redeem(store, "ABCD-EFGH", "token-2", "again", 1002.0)  # once
            await issue_code(store, ann.id, "WXYZ-2345", 2000.0)
            assert not await redeem(store, "WXYZ-2345", "token-3", "late", 2000.0 + 600)  # ten minutes
            await issue_code(store, ann.id, "OLD2-CODE", 3000.0)
            await issue_code(store, ann.id, "NEW2-CODE", 3001.0)
            assert not await redeem(store, "OLD2-CODE", "token-4", "void", 3002.0)  # a new code voids the old
            assert await linked_player(store, "token-1", 4000.0) == ("SHA256:ann", "ann")
            assert await linked_player(store, "token-2", 4000.0) is None
            listed = await browsers(store, ann.id)
            assert [(b.number, b.label, b.created, b.used) for b in listed] == [(1, "Firefox", 1001.0, 4000.0)]
            assert not await unlink(store, ann.id, 2)
            assert await unlink(store, ann.id, 1)
            assert await linked_player(store, "token-1", 4001.0) is None

    run(scenario())
    if store_url.startswith("sqlite"):
        dump = "\n".join(sqlite3.connect(store_url.split("///", 1)[1]).iterdump())
        assert "link_codes" in dump and "token-1" not in dump and "ABCD" not in dump


@pytest.fixture
def chromium(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from open_chromium(request, tmp_path)


def test_a_linked_browser_resumes_the_ssh_players_game_until_unlinked(chromium: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url = f"sqlite:///{tmp_path / 'serve.sqlite3'}"
    key = client_key()
    with WebServerThread(tmp_path, url, seeds=[1234] * 8) as door:

        async def ssh_plays_then_asks_for_a_code() -> Tuple[int, str]:
            async with await connect(door.port, key) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Moves 0")
                chan.write(b"adwsadws")  # whichever of them move
                await terminal.wait_for(lambda shown: MOVES_RE.search(shown.text()) is not None)
                chan.write(b"q")
                await terminal.shows("game kept")
                moves = MOVES_RE.search(terminal.text())
                assert moves is not None
                said = (await conn.run("link")).stdout.decode()
                return int(moves.group(1)), str(said)

        ssh_moves, said = run(ssh_plays_then_asks_for_a_code())
        found = CODE_RE.search(said)
        assert found, said

        chromium.get(door.origin + "/link")
        chromium.find_element(By.ID, "code").send_keys(found.group(1).lower())
        chromium.find_element(By.CSS_SELECTOR, "form button").click()
        # The click returns before the page it posts to has come (a 303 to
        # the game): waited for, bounded; a refusal stays on /link, saying why.
        try:
            WebDriverWait(chromium, SCREEN_WAIT).until(lambda driver: "/link" not in driver.current_url)
        except TimeoutException:
            raise AssertionError(chromium.page_source) from None
        lines = shows(chromium, f"Moves {ssh_moves}")  # the same game, where the SSH player left it
        assert not any("guest" in line for line in lines)
        cookie = chromium.get_cookie("ansi2048_link")
        assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"

        async def links_then_unlink() -> str:
            async with await connect(door.port, key) as conn:
                listed = (await conn.run("links")).stdout.decode()
                assert (await conn.run("unlink 1")).exit_status == 0
                return str(listed)

        listed = run(links_then_unlink())
        assert re.search(r"^\s+1  linked \d{4}-\d\d-\d\d", listed, re.M), listed
        chromium.get(door.origin + "/")
        shows(chromium, "guest: nothing is kept")


def test_the_link_form_refuses_another_origin_and_a_flood_of_guesses(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    def post(door: WebServerThread, code: str, origin: str) -> Tuple[int, str]:
        request = urllib.request.Request(
            door.origin + "/link", data=f"code={code}".encode(), headers={"Origin": origin}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers.get("Set-Cookie", "")
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Set-Cookie", "")

    with WebServerThread(tmp_path, f"sqlite:///{tmp_path / 'serve.sqlite3'}") as door:
        assert post(door, "ABCD-EFGH", "http://evil.example") == (403, "")
        statuses = [post(door, f"ABCD-EFG{digit}", door.origin)[0] for digit in "23456789ABCD"]
        assert statuses == [400] * TRIES + [429] * (12 - TRIES)


@pytest.mark.parametrize("behind_https", [False, True])
def test_the_cookie_is_httponly_strict_and_secure_behind_https(tmp_path: Path, behind_https: bool) -> None:
    import http.client

    with WebServerThread(tmp_path, f"sqlite:///{tmp_path / 'serve.sqlite3'}") as door:
        door.site.secure = behind_https  # as --behind-https makes it
        player = door.call(door.store.player("SHA256:ann", "ann"))  # type: ignore[attr-defined]
        door.call(issue_code(door.store, player.id, "ABCD-EFGH", time.time()))  # type: ignore[arg-type]
        connection = http.client.HTTPConnection("127.0.0.1", door.http_port, timeout=10)
        connection.request(
            "POST", "/link", body="code=abcd-efgh", headers={"Origin": door.origin, "Content-Type": _FORM}
        )
        response = connection.getresponse()
        cookie = response.getheader("Set-Cookie", "")
        assert response.status == 303 and response.getheader("Location") == "/"
        token = re.match(r"ansi2048_link=([A-Za-z0-9_-]{40,});", cookie)
        assert token is not None, cookie
        attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
        assert {"httponly", "samesite", "path", "max-age"} <= attributes and "SameSite=Strict" in cookie
        assert ("secure" in attributes) is behind_https
        assert door.call(linked_player(door.store, token.group(1), time.time())) == ("SHA256:ann", "ann")  # type: ignore[arg-type]


_FORM = "application/x-www-form-urlencoded"


def test_the_link_page_says_the_ssh_command_to_run_its_host_escaped(tmp_path: Path) -> None:
    import http.client

    with WebServerThread(tmp_path, f"sqlite:///{tmp_path / 'serve.sqlite3'}") as door:
        for host, shown in ((f"127.0.0.1:{door.http_port}", "127.0.0.1"), ("a<b>:1", None)):
            connection = http.client.HTTPConnection("127.0.0.1", door.http_port, timeout=10)
            connection.request("GET", "/link", headers={"Host": host})
            response = connection.getresponse()
            page = response.read().decode()
            if shown is None:  # not a host: refused, or shown escaped
                assert "<b>" not in page
            else:
                assert response.status == 200 and f"<code>ssh -p {door.port} {shown} link</code>" in page
