"""The door's pages without a terminal: the daily leaderboard as HTML that
needs no JavaScript, as ``leaderboard --json``'s document, and a finished
day's keys; every player's string escaped."""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

pytest.importorskip("asyncssh", exc_type=ImportError)
pytest.importorskip("aiohttp", exc_type=ImportError)

from ansi2048.serve.daily import day_of
from ansi2048.serve.store.base import DailyBoard, DailyEntry, Standing
from ansi2048.serve.web.pages import leaderboard_html
from ansi2048.serve.web.protocol import CONTENT_SECURITY_POLICY

from .serve_support import MemoryStore
from .test_web import LogLines, _get, wait_for_log
from .web_support import WebServerThread

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

PAST = "2020-02-29"
TODAY = day_of(time.time())
RECORDING = b"# ansi2048 daily 2020-02-29\nwasd\n"


def entry(id: int, day: str, name: str, score: int, status: str = "finished") -> DailyEntry:
    return DailyEntry(id, day, id, name, "10.0.0.1", 1.0e9, status, RECORDING, score=score, moves=10, seconds=3725)


class DailyStore(MemoryStore):
    """The memory store with ranked daily games of two days."""

    def __init__(self) -> None:
        super().__init__()
        self.entries = [
            entry(1, PAST, "ann", 1200),
            entry(2, PAST, "ben", 3400),
            entry(3, PAST, "cheat", 9999, "mismatch"),
            entry(4, TODAY, "dee", 500, "playing"),
        ]

    async def daily_entries(self, day: Optional[str] = None) -> List[DailyEntry]:
        return [known for known in self.entries if day is None or known.day == day]

    async def daily_by_id(self, wanted: int) -> Optional[DailyEntry]:
        return next((known for known in self.entries if known.id == wanted), None)

    async def daily_board(self, day: str, me: Optional[int], top: int) -> DailyBoard:
        ranked = sorted(
            (known for known in self.entries if known.day == day and known.status in ("playing", "finished")),
            key=lambda known: (-known.score, known.moves, known.started, known.id),
        )
        table = [Standing(rank, replace(known, recording=b"", times=""), False) for rank, known in enumerate(ranked, 1)]
        return DailyBoard(len(table), tuple(table[:top]), next((s for s in table if s.entry.player == me), None))


@pytest.fixture
def log() -> LogLines:
    return LogLines()


@pytest.fixture
def door(tmp_path: Path, log: LogLines) -> Iterator[WebServerThread]:
    with WebServerThread(tmp_path, DailyStore(), log=log) as served:
        yield served


def test_a_name_is_escaped_on_the_page() -> None:
    hostile = entry(1, PAST, '<script>alert("x")</script>&amp;<img src=x onerror=y>', 10)
    page = leaderboard_html(PAST, [Standing(1, hostile, False)], over=True)
    assert "<script" not in page and "<img" not in page and "onerror=y>" not in page
    assert "&amp;amp;" not in page  # escaped once, after the name was reduced


def test_a_past_days_board_is_html_without_script_with_each_games_keys(door: WebServerThread) -> None:
    status, headers, body = _get(f"{door.origin}/leaderboard/{PAST}")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    page = body.decode()
    assert "<script" not in page
    rows = re.findall(r"<tr><td>(\d+)</td><td>(\w+)</td><td>(\d+)</td>.*?</tr>", page)
    assert rows == [("1", "ben", "3400"), ("2", "ann", "1200")]  # the mismatch is not ranked
    assert "1:02:05" in page  # 3725 seconds
    assert '<a href="/keys/2">keys</a>' in page and '<a href="/keys/1">keys</a>' in page
    assert '<a href="/?command=replay%202">replay</a>' in page
    status, headers, body = _get(f"{door.origin}/keys/2")
    assert status == 200 and body.startswith(RECORDING) and headers["Content-Type"].startswith("text/plain")


def test_todays_board_is_the_default_and_its_keys_stay_secret(door: WebServerThread, log: LogLines) -> None:
    status, _, body = _get(f"{door.origin}/leaderboard")
    page = body.decode()
    assert status == 200 and f"The daily game of {TODAY}" in page and "dee" in page
    assert "/keys/4" not in page
    status, _, body = _get(f"{door.origin}/keys/4")
    assert status == 404 and RECORDING not in body
    assert "whose tiles stay secret" in wait_for_log(log, "GET /keys/4 404")


def test_the_json_is_the_leaderboard_commands_document(door: WebServerThread) -> None:
    status, headers, body = _get(f"{door.origin}/leaderboard/{PAST}.json")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    document = json.loads(body)
    assert document["day"] == PAST and document["ranked"] == 2 and document["you"] is None
    assert [(row["rank"], row["name"], row["score"], row["finished"]) for row in document["top"]] == [
        (1, "ben", 3400, True),
        (2, "ann", 1200, True),
    ]
    status, _, body = _get(f"{door.origin}/leaderboard.json")
    assert status == 200 and json.loads(body)["day"] == TODAY and json.loads(body)["top"][0]["name"] == "dee"


def test_a_bad_day_or_id_is_a_404_and_a_log_line(door: WebServerThread, log: LogLines) -> None:
    for path in ("/leaderboard/2020-13-01", "/leaderboard/yesterday", "/keys/abc", "/keys/99"):
        status, _, body = _get(door.origin + path)
        assert status == 404 and b"Traceback" not in body, path
    wait_for_log(log, "GET /keys/99 404")
    assert len([line for line in log.lines() if " 404 " in line]) == 4
