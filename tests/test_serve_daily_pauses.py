"""A daily game's own store calls pause as every write of a served game
does (issue 26's path, serve/pauses.py): its recording begun when it opens,
and its result settled when it ends or its player leaves. Each is made to
fail while the test says so, on each database (tests/databases.py); the
player is told as for any write, the write lands once the store is back,
what is stored is what was shown, and the log has the outage's two lines."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.records.recording import split_header  # noqa: E402
from ansi2048.serve.daily import FINISHED, MISMATCH, PLAYING, daily_board  # noqa: E402
from ansi2048.serve.ranked_game import ASK_END  # noqa: E402
from ansi2048.serve.saving import SAID_PAUSED, SAID_UNSAVED  # noqa: E402
from ansi2048.serve.store.base import DailyEntry  # noqa: E402

from .serve_support import ServerThread, logged  # noqa: E402
from .test_serve import client_key, connect, on_server, open_terminal, player_of, run  # noqa: E402
from .test_serve_daily import DAY, NOON, SECRET, expected  # noqa: E402
from .test_serve_pauses import WAIT, Failing, opening_paused_then_resumed, paused_then_resumed, serving  # noqa: E402

# Keys of the day's game (SECRET's seed): a few moves that score.
KEYS = "wasdwasd"


def daily_serving(
    tmp_path: Path, store_url: str, call: str, when: Callable[..., bool] = lambda *args: True
) -> Tuple[ServerThread, Failing, io.StringIO]:
    log = io.StringIO()
    served, store = serving(tmp_path, store_url, call, log=log, when=when)
    served.server.context = replace(served.server.context, daily_secret=SECRET, now=lambda: NOON)
    return served, store, log


async def entry_of(served: ServerThread, key: Any) -> DailyEntry:
    player = await player_of(served, key)
    entry = await on_server(served, served.store.daily_entry(DAY, player.id))  # type: ignore[attr-defined]
    assert entry is not None
    return entry  # type: ignore[no-any-return]


async def typed(chan: Any, terminal: Any, keys: str) -> None:
    """``keys`` typed one at a time, each one's frame waited for."""
    for key in keys:
        shown = len(terminal.output)
        chan.write(key.encode())
        await terminal.wait_for(lambda t, shown=shown: len(t.output) > shown, WAIT)  # type: ignore[misc]


@asynccontextmanager
async def daily_played(served: ServerThread, key: Any, keys: str) -> AsyncIterator[Tuple[Any, Any, str]]:
    """The day's game on a terminal, ``keys`` played: its channel, its
    terminal, and the screen that shows them."""
    async with await connect(served.port, key) as conn:
        chan, terminal = await open_terminal(conn, "daily")
        await terminal.shows("Score", WAIT)
        await typed(chan, terminal, keys)
        score, moves, _ = expected(keys)  # the engine's: the last frame is on screen, whole
        await terminal.wait_for(lambda t: f"Score {score} " in t.text() and f"Moves {moves} " in t.text(), WAIT)
        yield chan, terminal, terminal.text()


def shown_score(text: str) -> int:
    found = re.search(r"Score +(\d+)", text)
    assert found is not None, text
    return int(found.group(1))


def outage_logged(log: io.StringIO) -> None:
    lines = [line for line in log.getvalue().splitlines() if " saving " in line]
    assert len(lines) == 2, log.getvalue()
    assert " saving paused: the store is unavailable: disk full " in lines[0]
    assert " saving resumed: the store is back after " in lines[1] and lines[1].endswith("(1 game paused)")


def test_a_ranked_games_recording_begun_pauses_before_its_first_frame_and_lands(tmp_path: Path, store_url: str) -> None:
    served, store, log = daily_serving(tmp_path, store_url, "rewrite")
    key = client_key()
    store.down = True  # the day's game is begun before its board shows
    with served:

        async def scenario() -> Tuple[DailyEntry, str]:
            async with await connect(served.port, key) as conn:
                chan, terminal = await open_terminal(conn, "daily")
                await opening_paused_then_resumed(store, terminal)
                await typed(chan, terminal, KEYS)
                await terminal.shows(f"Moves {expected(KEYS)[1]} ", WAIT)
                shown = terminal.text()
                chan.write(b"q")
                await terminal.closed.wait()
            return await entry_of(served, key), shown

        entry, shown = run(scenario())
    assert split_header(entry.recording)[1] == KEYS.encode()
    assert entry.status == PLAYING and entry.score == shown_score(shown) == expected(KEYS)[0] > 0
    outage_logged(log)


def test_a_ranked_games_result_paused_when_r_ends_it_lands_as_shown(tmp_path: Path, store_url: str) -> None:
    served, store, log = daily_serving(tmp_path, store_url, "daily_result")
    key = client_key()
    with served:

        async def scenario() -> Tuple[DailyEntry, str, str]:
            async with daily_played(served, key, KEYS) as (chan, terminal, shown):
                chan.write(b"r")
                await terminal.shows(ASK_END[:30], WAIT)
                store.down = True
                chan.write(b"r")  # ends it for good: its result is settled, and pauses
                await paused_then_resumed(store, terminal)
                await terminal.closed.wait()
                said = terminal.text()
            return await entry_of(served, key), shown, said

        entry, shown, said = run(scenario())
    assert entry.status == FINISHED
    assert split_header(entry.recording)[1] == KEYS.encode()
    assert entry.score == shown_score(shown) == expected(KEYS)[0] > 0
    assert f"your ranked game is over, score {entry.score}, rank 1 of 1 today\n" in said
    outage_logged(log)


def test_leaving_while_the_result_cannot_be_stored_leaves_at_once_and_it_lands_later(
    tmp_path: Path, store_url: str
) -> None:
    served, store, log = daily_serving(tmp_path, store_url, "daily_result")
    key = client_key()
    with served:

        async def scenario() -> Tuple[DailyEntry, str]:
            async with daily_played(served, key, KEYS) as (chan, terminal, shown):
                store.down = True
                chan.write(b"q")  # the player leaves: not held by the pause
                await terminal.closed.wait()
            await store.until(lambda failing: failing.failures >= 2)  # the server keeps trying
            store.down = False
            await store.until(lambda failing: failing.landed >= 1)
            return await entry_of(served, key), shown

        entry, shown = run(scenario())
    assert entry.status == PLAYING
    assert split_header(entry.recording)[1] == KEYS.encode()
    assert entry.score == shown_score(shown) == expected(KEYS)[0] > 0
    outage_logged(log)


def mismatch_logged(log: io.StringIO, entry: DailyEntry) -> str:
    """The log's line saying ``entry`` is not ranked, its replay not
    matching (once: whoever found it, the player's session or the server
    settling it after they left); why, as it says it."""
    said = f" daily: game {entry.id} of {entry.name} not ranked, its replay does not match: "
    text = logged(log, lambda text: said in text)
    lines = [line for line in text.splitlines() if " daily: game " in line]
    assert len(lines) == 1 and said in lines[0], text
    return lines[0].partition(said)[2]


async def altered(served: ServerThread, key: Any) -> None:
    """Keys appended to ``key``'s ranked game in the store, under the claim
    its session holds: the recording no longer gives what was shown."""
    player = await player_of(served, key)
    board = daily_board(DAY)
    held = await on_server(served, served.store.claim(player.id, board, "test", 60))
    assert held is not None  # the session's claim
    await on_server(served, served.store.append(player.id, board, held.holder, b"sd"))


def test_a_mismatch_found_while_the_player_is_there_is_logged(tmp_path: Path, store_url: str) -> None:
    served, _, log = daily_serving(tmp_path, store_url, "load")
    key = client_key()
    with served:

        async def scenario() -> DailyEntry:
            async with daily_played(served, key, KEYS) as (chan, terminal, _):
                await altered(served, key)
                chan.write(b"r")
                await terminal.shows(ASK_END[:30], WAIT)
                chan.write(b"r")  # ends it: settled now, from the recording
                await terminal.closed.wait()
            await asyncio.to_thread(logged, log, lambda text: " not ranked, " in text)
            return await entry_of(served, key)

        entry = run(scenario())
        why = mismatch_logged(log, entry)
    assert why.startswith("the replay gives") and entry.status == MISMATCH


def test_a_mismatch_found_when_the_result_is_settled_after_its_player_left_is_logged(
    tmp_path: Path, store_url: str
) -> None:
    # The result is settled later (the store cannot be read as the player
    # leaves); meanwhile the recording is altered in the store: its replay
    # no longer gives what the player saw. It was not logged at all.
    served, store, log = daily_serving(tmp_path, store_url, "load")
    key = client_key()
    with served:

        async def scenario() -> DailyEntry:
            async with daily_played(served, key, KEYS) as (chan, terminal, _):
                store.down = True
                chan.write(b"q")  # the player leaves: the settle reads the recording, and is handed over
                await terminal.closed.wait()
            await store.until(lambda failing: failing.failures >= 1)
            await altered(served, key)  # under the left session's claim, kept for the settle
            store.down = False
            await store.until(lambda failing: failing.landed >= 1)
            await asyncio.to_thread(logged, log, lambda text: " not ranked, " in text)  # once it is settled
            return await entry_of(served, key)

        entry = run(scenario())
        why = mismatch_logged(log, entry)
    assert why.startswith("the replay gives") and entry.status == MISMATCH


# -- a ranked game's keys and their times: one write ---------------------------------


def with_times(*args: Any) -> bool:
    """An append that carries a ranked game's key times (Store.append)."""
    return len(args) > 4 and args[4] is not None


def test_a_ranked_games_keys_and_their_times_pause_together_and_land_once(tmp_path: Path, store_url: str) -> None:
    served, store, log = daily_serving(tmp_path, store_url, "append")
    key = client_key()
    with served:

        async def scenario() -> DailyEntry:
            async with await connect(served.port, key) as conn:
                chan, terminal = await open_terminal(conn, "daily")
                await terminal.shows("Score", WAIT)
                store.down = True
                chan.write(b"wasd")
                await paused_then_resumed(store, terminal)
                chan.write(b"q")
                await terminal.closed.wait()
            return await entry_of(served, key)

        entry = run(scenario())
    assert split_header(entry.recording)[1] == b"wasd"  # once, though its append was tried again
    assert len(entry.times.split()) == 4
    outage_logged(log)


def test_quitting_while_a_ranked_games_key_times_cannot_be_stored_stores_neither_keys_nor_times(
    tmp_path: Path, store_url: str
) -> None:
    served, store, _ = daily_serving(tmp_path, store_url, "append", when=with_times)
    key = client_key()
    with served:

        async def scenario() -> Tuple[DailyEntry, str, str]:
            async with daily_played(served, key, "wa") as (chan, terminal, shown):
                store.down = True
                chan.write(b"s")  # its times cannot be stored: neither can the key
                await terminal.shows(SAID_PAUSED, WAIT)
                chan.write(b"q")
                await terminal.closed.wait()
                said = terminal.text()
            store.down = False
            return await entry_of(served, key), shown, said

        entry, shown, said = run(scenario())
    assert SAID_UNSAVED in said
    assert split_header(entry.recording)[1] == b"wa"  # what was shown: the key never shown is not kept
    assert len(entry.times.split()) == 2  # a time for each key kept, no key without one
    assert entry.score == shown_score(shown) == expected("wa")[0]
