"""Moderation (issue 39): ``serve --ban``/``--unban`` refuse a key (and
let it in again) from its next connection on, on every server of the store,
while they run; ``--remove-entry ID --reason TEXT`` takes a ranked game off
its day's board, and the board -- text, JSON and the web page -- says that
it was removed and why. Each a one-shot command on the store; bad options one
line and status 2."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, List, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.store.base import DailyBoard, Removed  # noqa: E402

from .conftest import child_env  # noqa: E402
from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402
from .test_serve_daily import NOON, SECRET, Clock, command, play_daily  # noqa: E402

REASON = "cheating with a bot \x1b[2J"  # a control character is refused: the reason is shown to players
FAIR = "used a bot"


def serve(data: Path, *options: str) -> Tuple[int, str, str]:
    """``ansi2048 serve --data-dir DATA OPTIONS``: status, out, err."""
    done = subprocess.run(
        [sys.executable, "-m", "ansi2048", "serve", "--data-dir", str(data), *options],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


async def plays(served: ServerThread, key: Any) -> Tuple[bool, str]:
    """Whether ``key`` gets a game; else what its refusal said."""
    async with await connect(served.port, key) as conn:
        try:
            chan, terminal = await open_terminal(conn, "play --no-animation")
        except asyncssh.ChannelOpenError as error:
            return False, str(error.reason)
        await terminal.shows("Score")
        chan.write(b"q")
        await terminal.closed.wait()
        return True, ""


def test_a_ban_refuses_the_key_from_its_next_connection_on_servers_running_on_the_store(tmp_path: Path) -> None:
    banned, other = client_key(), client_key()
    fingerprint = banned.get_fingerprint("sha256")
    with ServerThread(tmp_path, "") as first, ServerThread(tmp_path, "") as second:  # two servers, one store
        assert run(plays(first, banned)) == (True, "")
        status, out, err = serve(tmp_path, "--ban", fingerprint, "--reason", FAIR)
        assert (status, err) == (0, "") and out.count("\n") == 1 and fingerprint in out
        for served in (first, second):
            assert run(plays(served, banned)) == (False, f"your key is banned from this server: {FAIR}")
            assert run(plays(served, other)) == (True, "")
        assert first.server.context.admission.refused["banned"] == 1
        status, out, err = serve(tmp_path, "--unban", fingerprint)
        assert (status, err) == (0, "") and out == f"unbanned {fingerprint}\n"
        assert run(plays(second, banned)) == (True, "")
    status, out, err = serve(tmp_path, "--unban", fingerprint)
    assert (status, out) == (1, "") and err == f"ansi2048 serve: error: --unban: {fingerprint} is not banned\n"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--ban", "alice"], "argument --ban: expected a key's fingerprint"),
        (["--unban", "SHA256:short"], "argument --unban: expected a key's fingerprint"),
        (["--remove-entry", "0", "--reason", "x"], "argument --remove-entry: expected a ranked game's id"),
        (["--remove-entry", "3"], "--remove-entry needs --reason TEXT"),
        (["--reason", "why"], "--reason goes with --ban or --remove-entry"),
        (["--remove-entry", "3", "--reason", REASON], "argument --reason: expected printable text"),
        (["--remove-entry", "3", "--reason", "x" * 201], "argument --reason: expected printable text"),
        (["--ban", "SHA256:" + "a" * 43, "--backup", "x"], "--ban and --backup are two things to do"),
    ],
)
def test_a_bad_moderation_option_is_one_line_and_status_2(tmp_path: Path, options: List[str], said: str) -> None:
    status, out, err = serve(tmp_path, *options)
    assert (status, out) == (2, "") and err.count("\n") == 1 and said in err, err


def test_a_removed_entry_leaves_the_ranking_and_the_board_says_why(tmp_path: Path) -> None:
    with ServerThread(tmp_path, "") as served:
        served.server.context = replace(served.server.context, daily_secret=SECRET, now=Clock(NOON))
        cheat, fair = client_key(), client_key()

        async def scenario() -> Tuple[str, str, str, str]:
            await play_daily(served, cheat, b"wasdwasdwasdwasd", user="mallory")
            await play_daily(served, fair, b"sa", user="alice")
            _, before, _ = await command(served, fair, "leaderboard --json")
            (entry,) = [row["id"] for row in json.loads(before)["top"] if row["name"] == "mallory"]
            status, out, err = await asyncio.to_thread(serve, tmp_path, "--remove-entry", str(entry), "--reason", FAIR)
            assert (status, err) == (0, "") and out.count("\n") == 1 and f"game {entry} " in out
            _, text, _ = await command(served, fair, "leaderboard")
            _, document, _ = await command(served, fair, "leaderboard --json")
            return before, text, document, str(entry)

        before, text, document, entry = run(scenario())
    board = json.loads(document)
    assert json.loads(before)["ranked"] == 2 and board["ranked"] == 1
    assert [row["name"] for row in board["top"]] == ["alice"]
    (removed,) = board["removed"]
    assert (removed["id"], removed["name"], removed["reason"]) == (int(entry), "mallory", FAIR)
    assert f"removed: game {entry} (mallory, score {removed['score']}): {FAIR}" in text.splitlines()
    status, _, err = serve(tmp_path, "--remove-entry", "999", "--reason", FAIR)
    assert status == 1 and err == "ansi2048 serve: error: --remove-entry: no ranked game 999\n"


def test_the_web_board_lists_a_removed_game_and_why() -> None:
    pytest.importorskip("aiohttp", reason="the web pages need aiohttp", exc_type=ImportError)
    from ansi2048.serve.web.pages import leaderboard_html

    board = DailyBoard(0, (), None, (Removed(7, "mallory", 1234, "used a bot <script>"),))
    page = leaderboard_html("2026-11-26", board.top, False, board.removed)
    assert "removed: game 7 (mallory, score 1234): used a bot &lt;script&gt;" in page
