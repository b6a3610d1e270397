"""Waiting for what a client sends (serve/link.py's ``incoming_within``): what
came first, None once the time is up, and nothing that came lost."""

from __future__ import annotations

import asyncio
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.loop.events import Resized  # noqa: E402
from ansi2048.serve.link import Ended, Incoming, Typed, incoming_within  # noqa: E402


def test_what_is_queued_already_comes_at_once_in_order() -> None:
    async def scenario() -> list[object]:
        incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        for item in (Typed(b"a"), Resized((80, 24)), Typed(b"b")):
            incoming.put_nowait(item)
        return [await incoming_within(incoming, 0.0) for _ in range(4)]

    assert asyncio.run(scenario()) == [Typed(b"a"), Resized((80, 24)), Typed(b"b"), None]


def test_a_key_that_comes_while_waiting_ends_the_wait_and_the_time_up_says_none() -> None:
    async def scenario() -> tuple[object, float, object, float]:
        loop = asyncio.get_running_loop()
        incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        loop.call_later(0.05, incoming.put_nowait, Typed(b"k"))
        began = loop.time()
        came = await incoming_within(incoming, 5.0)
        waited = loop.time() - began
        began = loop.time()
        nothing = await incoming_within(incoming, 0.05)
        return came, waited, nothing, loop.time() - began

    came, waited, nothing, timed_out = asyncio.run(scenario())
    assert came == Typed(b"k")
    assert waited < 2.0  # the key ended the wait, long before its 5 s
    assert nothing is None
    assert timed_out >= 0.04


def test_what_comes_as_the_time_runs_out_stays_queued_for_the_next_wait() -> None:
    """A put in the same turn of the loop as the timeout: the item is not lost."""

    async def scenario() -> list[object]:
        loop = asyncio.get_running_loop()
        seen: list[object] = []
        for attempt in range(50):
            incoming: asyncio.Queue[Incoming] = asyncio.Queue()
            when = loop.time() + 0.01
            loop.call_at(when, incoming.put_nowait, Ended(said=str(attempt)))
            first = await incoming_within(incoming, max(0.0, when - loop.time()))
            seen.append(first if first is not None else await incoming_within(incoming, 1.0))
        return seen

    assert asyncio.run(scenario()) == [Ended(said=str(attempt)) for attempt in range(50)]


def test_a_cancelled_wait_is_cancelled_and_leaves_the_queue_as_it_was() -> None:
    async def scenario() -> tuple[bool, object]:
        incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        waiting = asyncio.ensure_future(incoming_within(incoming, 5.0))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        incoming.put_nowait(Typed(b"x"))
        return waiting.cancelled(), await incoming_within(incoming, 1.0)

    assert asyncio.run(scenario()) == (True, Typed(b"x"))
