"""How a ranked daily game ended with ``r r`` says goodbye (issue 40 item
7): the score, the rank it got today, and the command that plays on,
spelt as it is typed (never a placeholder such as ``ssh ...``)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, run  # noqa: E402
from .test_serve_daily import Clock, daily_terminal, expected, served  # noqa: E402, F401


async def ended_with_r_r(server: ServerThread, key: Any, user: str, keys: bytes) -> str:
    """``daily`` played with ``keys``, then ended with r twice: the last screen's text."""
    async with daily_terminal(server, key, user) as (chan, terminal):
        for byte in keys:
            chan.write(bytes([byte]))
            await asyncio.sleep(0.02)
        chan.write(b"r")
        await terminal.shows("r again ends it")
        chan.write(b"r")
        await terminal.closed.wait()
        return terminal.text()


def test_ending_a_ranked_game_with_r_twice_says_its_rank_and_the_real_command(
    served: Tuple[ServerThread, Clock],  # noqa: F811 (the fixture of test_serve_daily.py)
) -> None:
    server, _ = served
    alice, bob = client_key(), client_key()
    high, low = "wasdwasdwasd", "ss"
    assert expected(high)[0] > expected(low)[0]

    async def scenario() -> Tuple[str, str]:
        first = await ended_with_r_r(server, alice, "alice", low.encode())
        second = await ended_with_r_r(server, bob, "bob", high.encode())
        return first, second

    first, second = run(scenario())
    assert f"your ranked game is over, score {expected(low)[0]}, rank 1 of 1 today\n" in first, first
    assert f"your ranked game is over, score {expected(high)[0]}, rank 1 of 2 today\n" in second, second
    for text in (first, second):
        assert "ssh ..." not in text and "HOST" not in text, text
        assert "\nto practise (other tiles), connect again with the command daily\n" in text, text
