"""Seams of the served daily game (issue 40, items 3 to 5), on each
database, on a server whose clock the test sets: a ranked game ended with
``r r`` reaches its player's history; the daily game has its own best per
day, as the local daily does; a ranked game in progress shows on the board
as it stands, not as zeros."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.records.history import config_key, daily_key  # noqa: E402

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, on_server, player_of, run  # noqa: E402
from .test_serve_daily import DAY, Clock, command, daily_terminal, expected, seed_of, served  # noqa: E402, F401

REGULAR = config_key(4, 4, 2048)


def test_a_ranked_game_ended_with_r_twice_is_kept_in_its_players_history(
    served: Tuple[ServerThread, Clock],  # noqa: F811 (the fixture of test_serve_daily.py)
) -> None:
    server, _ = served
    dave = client_key()

    async def scenario() -> Tuple[Any, Tuple[int, str, str]]:
        async with daily_terminal(server, dave, "dave") as (chan, terminal):
            chan.write(b"sa")
            await asyncio.sleep(0.1)
            chan.write(b"r")
            await terminal.shows("r again ends it for good")
            chan.write(b"r")
            await terminal.closed.wait()
        player = await player_of(server, dave)
        kept = await on_server(server, server.store.history(player.id))  # type: ignore[attr-defined]
        return kept, await command(server, dave, "stats --json")

    kept, (status, out, _) = run(scenario())
    score, moves, _ = expected("sa")
    assert [(game.record.seed, game.record.score, game.record.moves) for game in kept] == [(seed_of(DAY), score, moves)]
    assert status == 0 and json.loads(out)["daily_held_back"] == 1  # counted once the day is over


def test_the_daily_game_has_its_own_best_per_day_not_the_regular_boards(
    served: Tuple[ServerThread, Clock],  # noqa: F811
) -> None:
    server, _ = served
    alice = client_key()

    async def scenario() -> Tuple[str, int, int]:
        player = await player_of(server, alice)
        await on_server(server, server.store.record_best(player.id, REGULAR, 652))  # type: ignore[attr-defined]
        async with daily_terminal(server, alice, "alice") as (chan, terminal):
            first = terminal.text()
            chan.write(b"wasd")
            await terminal.shows("Moves 4")
            chan.write(b"q")
            await terminal.closed.wait()
        regular = await on_server(server, server.store.best(player.id, REGULAR))  # type: ignore[attr-defined]
        daily = await on_server(server, server.store.best(player.id, daily_key(DAY, 4, 4, 2048)))  # type: ignore[attr-defined]
        return first, regular, daily

    first, regular, daily = run(scenario())
    assert "Best 652" not in first and "Best 0" in first
    assert (regular, daily) == (652, expected("wasd")[0])


def test_a_ranked_game_in_progress_shows_on_the_board_as_it_stands(
    served: Tuple[ServerThread, Clock],  # noqa: F811
) -> None:
    server, _ = served
    alice, bob = client_key(), client_key()
    score, moves, cells = expected("wasdwasd")

    async def scenario() -> Tuple[str, Any]:
        async with daily_terminal(server, alice, "alice") as (chan, terminal):
            for key in b"wasdwasd":
                chan.write(bytes([key]))
                await asyncio.sleep(0.02)
            await terminal.shows(f"Moves {moves}")
            chan.write(b"b")
            await terminal.shows("the board:")
            note = terminal.text()
            _, out, _ = await command(server, bob, "leaderboard --json")  # while she plays
            return note, json.loads(out)["top"]

    note, top = run(scenario())
    assert f"1. alice {score}" in note
    assert [(row["name"], row["score"], row["moves"], row["biggest"], row["finished"]) for row in top] == [
        ("alice", score, moves, max(cells), False)
    ]
