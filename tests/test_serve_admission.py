"""What a session may bring and what it gives back (issue 34): the input
budget bounds the keys *played*, not only those stored; a window is clamped
to 500x200; a 10 KB environment value is dropped; a replay's and a cast's
watcher slot is given back; every admission counter is back to 0 once all
sessions end; the SQLite store's own connection is in WAL mode with
synchronous=FULL."""

from __future__ import annotations

import asyncio
import io
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, List

import pytest

from ansi2048.serve.store.sqlite import SQLiteStore

from .databases import run as run_store
from .test_store import a_record


def test_the_sqlite_stores_own_connection_is_wal_and_synchronous_full(tmp_path: Path) -> None:
    # synchronous is a setting of a connection, not of the file: asked of the store's own.
    store = SQLiteStore(str(tmp_path / "s.db"))

    async def scenario() -> List[Any]:
        await store.open()
        try:
            return await store._writer.do(
                lambda connection: [
                    connection.execute("PRAGMA journal_mode").fetchone()[0],
                    connection.execute("PRAGMA synchronous").fetchone()[0],
                ]
            )
        finally:
            await store.close()

    assert run_store(scenario()) == ["wal", sqlite3.connect(":memory:").execute("SELECT 2").fetchone()[0]]  # FULL: 2


if sys.platform == "win32":  # pragma: no cover
    pytest.skip("the server is for POSIX hosts", allow_module_level=True)
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.ssh_channel import MAX_COLUMNS, MAX_LINES, clamp_window  # noqa: E402 (asyncssh: POSIX, the serve extra)

from .serve_support import TIGHT, MemoryStore, ServerThread, logged  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

BOUND = 20.0  # bounds waits for what a broken server would never do


def test_a_window_is_clamped_to_500x200() -> None:
    assert (MAX_COLUMNS, MAX_LINES) == (500, 200)
    assert clamp_window(65535, 65535) == (500, 200)
    assert clamp_window(501, 100) == (500, 100)
    assert clamp_window(120, 201) == (120, 200)
    assert clamp_window(500, 200) == (500, 200)
    assert clamp_window(0, 50) == (80, 24)


async def _counts(served: ServerThread) -> List[int]:
    """Every count the server keeps of what clients hold: sessions (in all,
    per source, per identity), logins, watchers' and replays' slots, and
    its sets of sessions and connections."""
    server = served.server
    admission = server.context.admission
    return [
        sum(admission.sessions.values()),
        len(admission.sessions),
        sum(admission.identities.values()),
        len(admission.identities),
        sum(admission.handshakes.values()),
        len(admission.handshakes),
        server.context.live.busy,
        len(server.sessions),
        len(server.connections),
    ]


async def settled(served: ServerThread, index: slice = slice(None)) -> List[int]:
    """The counts (``index`` of them) once they reach 0 (bounded: as they are after BOUND s)."""
    end = time.monotonic() + BOUND
    counts = served.call(_counts(served))[index]
    while any(counts) and time.monotonic() < end:
        await asyncio.sleep(0.05)
        counts = served.call(_counts(served))[index]
    return counts


def test_the_input_budget_bounds_the_keys_played(tmp_path: Path) -> None:
    # The log's "N keys" is what the game played (game.py counts each key it
    # steps with), not what the store kept.
    log = io.StringIO()
    with ServerThread(tmp_path, MemoryStore(), seeds=[7], limits=TIGHT, log=log) as served:

        async def scenario() -> float:
            async with await connect(served.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation --size 10")
                await terminal.shows("Score")
                started = time.monotonic()
                chan.write(b"adws" * 5000)  # 20,000 keys at once
                await asyncio.sleep(0.5)
                chan.write(b"q")
                await asyncio.wait_for(terminal.closed.wait(), BOUND)
                return time.monotonic() - started

        elapsed = run(scenario())
    line = logged(log, lambda text: " keys, " in text)
    played = int(re.findall(r"(\d+) keys, ", line)[-1])
    assert 0 < played <= TIGHT.input_burst + TIGHT.input_rate * elapsed


def test_a_10_kb_environment_value_is_dropped(tmp_path: Path) -> None:
    with ServerThread(tmp_path, MemoryStore(), limits=TIGHT) as served:

        async def scenario() -> None:
            async with await connect(served.port, client_key()) as conn:
                env = {"LANG": "C" * 10240, "COLORTERM": "truecolor", "TERM": "x" * 10240}
                chan, terminal = await open_terminal(conn, "play --no-animation", env=env)
                await terminal.shows("Score")

                async def environment() -> Any:
                    [session] = served.server.sessions
                    return dict(session.chan.get_environment())

                assert served.call(environment()) == {"COLORTERM": "truecolor"}
                chan.write(b"q")
                await terminal.closed.wait()

        run(scenario())


def test_a_replays_and_a_casts_watcher_slot_is_given_back_and_every_count_ends_at_0(tmp_path: Path) -> None:
    store = MemoryStore()
    key = client_key()
    with ServerThread(tmp_path, store, seeds=[7, 8], limits=TIGHT) as served:
        served.server.context.live.total = 1  # one watcher or replay at a time: a slot not given back refuses the next

        async def scenario() -> None:
            async with await connect(served.port, key) as conn:
                player = served.call(store.player(key.get_fingerprint(), "alice"))
                served.call(store.add_to_history(player.id, a_record(16)))
                # A replay left with q, one whose client goes, a cast: each gives its slot back.
                chan, terminal = await open_terminal(conn, "replay")
                await terminal.shows("replay")
                refused = await conn.run("cast")  # a cast is counted as a replay is
                assert refused.exit_status == 1 and b"watchers" in bytes(refused.stderr)
                chan.write(b"q")
                await terminal.closed.wait()
                assert served.call(_counts(served))[6] == 0
                async with await connect(served.port, key) as gone:
                    _, terminal = await open_terminal(gone, "replay")
                    await terminal.shows("replay")
                assert await settled(served, slice(6, 7)) == [0]
                cast = await conn.run("cast")
                assert cast.exit_status == 0 and b'"version": 2' in bytes(cast.stdout)
                assert served.call(_counts(served))[6] == 0
                # Watchers, a guest, a command, a game: all of them end.
                game, game_terminal = await open_terminal(conn, "play --no-animation")
                await game_terminal.shows("Score")
                async with await connect(served.port, None) as guest:
                    _, watcher = await open_terminal(guest, "watch alice")
                    await watcher.shows("Score")
                    assert (await guest.run("help")).exit_status == 0
                game.write(b"q")
                await game_terminal.closed.wait()
            assert await settled(served) == [0] * 9

        run(scenario())
