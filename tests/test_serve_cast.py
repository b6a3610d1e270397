"""``cast [ID]`` over SSH (issue 34): streamed to its client as it is made,
never made faster than the client reads (so never whole in memory); a
client that leaves mid-cast is logged as leaving, not as a server failure;
one that stops reading is dropped under the viewers' stall rule; and a cast
takes one of the server's viewer places, as a replay does."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, List, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.link import SAID_SLOW  # noqa: E402
from ansi2048.serve.replay import CAST_CHUNK, SAID_LEFT, CastClient, Playback, stream_cast  # noqa: E402

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, on_server, player_of, run  # noqa: E402
from .test_store import a_record  # noqa: E402

ENV = {"TERM": "xterm-256color"}
# A game long enough for many chunks: 400 moves of 4x4 make about 570 KB of cast.
LONG = Playback(4, 4, 2048, 7, b"wasd" * 100)


class SlowLink:
    """A client's channel: what was written, and how much of it the client has not read yet (set by the test)."""

    def __init__(self) -> None:
        self.written: List[bytes] = []
        self.backlog = 0
        self.dropped = False
        self.gone = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def unsent(self) -> int:
        return self.backlog

    def drop(self) -> None:
        self.dropped = self.gone = True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _until(check: Any, polls: int = 500) -> None:
    for _ in range(polls):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not seen in time")


def test_a_cast_is_made_no_faster_than_its_client_reads() -> None:
    link, clock = SlowLink(), Clock()
    link.backlog = 10 * CAST_CHUNK  # the client reads nothing for now

    async def scenario() -> Tuple[int, str]:
        client = CastClient(link, lambda: link.gone, clock, 60)
        task = asyncio.ensure_future(stream_cast(client, LONG, ENV, "classic", 0))
        await _until(lambda: link.written)
        await asyncio.sleep(0.3)  # time to make the whole cast, were it not held back
        held = sum(map(len, link.written))
        link.backlog = 0  # the client reads
        return held, await task

    held, said = run(scenario())
    assert said == ""
    assert 0 < held <= CAST_CHUNK + 8192  # one chunk, then it waited
    cast = b"".join(link.written).decode()
    assert len(cast) > 4 * CAST_CHUNK and len(link.written) > 4  # sent in chunks
    lines = cast.splitlines()
    assert json.loads(lines[0])["title"] == "ansi2048 replay 4x4 seed 7"
    assert all(json.loads(line)[1] == "o" for line in lines[1:])


def test_a_client_that_leaves_or_stops_reading_ends_the_cast_and_says_how() -> None:
    async def ended(leaves: bool) -> Tuple[str, SlowLink]:
        link, clock = SlowLink(), Clock()
        link.backlog = 10 * CAST_CHUNK
        client = CastClient(link, lambda: link.gone, clock, 5)
        task = asyncio.ensure_future(stream_cast(client, LONG, ENV, "classic", 0))
        await _until(lambda: link.written)
        if leaves:
            link.gone = True
        else:
            clock.now = 6  # unsent for longer than the stall rule allows
        return await asyncio.wait_for(task, 30), link

    said, link = run(ended(leaves=True))
    assert said == SAID_LEFT and len(link.written) == 1 and not link.dropped
    said, link = run(ended(leaves=False))
    assert said == SAID_SLOW and link.dropped


def test_a_client_leaving_mid_cast_is_logged_as_leaving_not_as_a_failure(tmp_path: Path, store_url: str) -> None:
    log = io.StringIO()
    key = client_key()
    long_game = replace(a_record(16), rows=10, cols=10, keys="wasd" * 750)  # a 3,000-move 10x10 game

    async def scenario(thread: ServerThread) -> int:
        player = await player_of(thread, key)
        await on_server(thread, thread.store.add_to_history(player.id, long_game))  # type: ignore[attr-defined]
        [kept] = await on_server(thread, thread.store.history(player.id))  # type: ignore[attr-defined]
        async with await connect(thread.port, key) as conn:
            process = await conn.create_process(f"cast g{kept.id}", encoding=None)
            first = await asyncio.wait_for(process.stdout.read(1000), 30)
            conn.abort()  # leaves mid-cast
        return len(first)

    with ServerThread(tmp_path, store_url, log=log) as thread:
        assert run(scenario(thread)) > 0
        for _ in range(200):  # a connection's line is written when the server sees it close
            if "cast" in log.getvalue():
                break
            time.sleep(0.05)
    text = log.getvalue()
    assert "cast: client left" in text and "session failed" not in text, text


def test_a_cast_takes_a_viewer_place_as_a_replay_does(tmp_path: Path, store_url: str) -> None:
    key = client_key()

    async def scenario(thread: ServerThread) -> Tuple[int, str, str]:
        player = await player_of(thread, key)
        await on_server(thread, thread.store.add_to_history(player.id, a_record(16)))  # type: ignore[attr-defined]
        thread.server.context.live.total = 0  # every viewer place taken
        async with await connect(thread.port, key) as conn:
            result = await conn.run("cast")
        return int(result.exit_status), bytes(result.stdout).decode(), bytes(result.stderr).decode()

    with ServerThread(tmp_path, store_url) as thread:
        status, out, err = run(scenario(thread))
        busy = thread.server.context.live.busy
    assert (status, out) == (1, "")
    assert err == "ansi2048: the server has its 0 watchers already; try again later\n"
    assert busy == 0  # nothing left counted
