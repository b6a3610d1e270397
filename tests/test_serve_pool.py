"""The AI's pool (issue 34): a worker killed (as the OOM killer would) does
not break hints for good: the pool starts again, saying "busy" meanwhile;
a question given up on still counts against the bound until its worker is
done with it."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from ansi2048.game.engine import Board, Direction, Game

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

from ansi2048.serve.pool import AIPool, Busy  # noqa: E402

# Bounds on waits for what a broken server would never do (spawning and loading the AI takes seconds under load).
BOUND = 60.0
SLOW = 1.5  # seconds a slow question takes in its worker


def slow_answer(board: Board, goal: int) -> Tuple[Optional[Direction], str]:
    """A question that keeps its worker busy (imported by the spawned worker)."""
    time.sleep(SLOW)
    return Direction.LEFT, ""


def kill_workers() -> List[int]:
    """SIGKILL every worker process of this process's pools; their ids."""
    killed = [child.pid for child in multiprocessing.active_children() if child.pid is not None]
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    return killed


async def answered(pool: AIPool, board: Board) -> Tuple[Optional[Direction], str]:
    """The pool's answer, asked again while it says busy (bounded)."""
    end = time.monotonic() + BOUND
    while True:
        try:
            return await pool.move(board, 2048)
        except Busy:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.1)


def test_a_killed_worker_is_replaced_and_the_pool_says_busy_meanwhile() -> None:
    async def scenario() -> None:
        pool = AIPool(1)
        board = Game(4, 4, 2048, 3).board
        try:
            assert (await pool.move(board, 2048))[0] is not None
            assert kill_workers()
            busy = 0
            end = time.monotonic() + BOUND
            while time.monotonic() < end:  # until the pool has noticed, started again and answers
                try:
                    direction, _ = await pool.move(board, 2048)
                except Busy:
                    busy += 1
                    await asyncio.sleep(0.05)
                    continue
                if pool.rebuilt:
                    break
            assert busy >= 1 and pool.rebuilt == 1
            assert direction is not None
            assert pool.in_flight == 0
        finally:
            pool.close()

    asyncio.run(scenario())


def test_a_question_given_up_on_counts_until_its_worker_is_done() -> None:
    async def scenario() -> None:
        pool = AIPool(1, job=slow_answer)
        board = Game(4, 4, 2048, 3).board
        try:
            await answered(pool, board)  # the worker started
            first = asyncio.ensure_future(pool.move(board, 2048))
            await asyncio.sleep(SLOW / 3)  # its worker has it
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(first, 0.05)  # given up on, as the game gives up after a while
            assert pool.in_flight == 1  # still in its worker
            waiting = [asyncio.ensure_future(pool.move(board, 2048)) for _ in range(2)]  # the bound: 1 + 2 waiting
            await asyncio.sleep(0)
            with pytest.raises(Busy):
                await pool.move(board, 2048)
            assert await asyncio.gather(*waiting) == [(Direction.LEFT, "")] * 2
            end = time.monotonic() + BOUND
            while pool.in_flight and time.monotonic() < end:
                await asyncio.sleep(0.05)
            assert pool.in_flight == 0
            assert await pool.move(board, 2048) == (Direction.LEFT, "")
        finally:
            pool.close()

    asyncio.run(scenario())


asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.loop.step import AI_BUSY_NOTE  # noqa: E402

from .serve_support import MemoryStore, ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

HINT = re.compile(r"hint: \S+ (up|down|left|right)")


def test_hints_come_back_after_the_ai_worker_is_killed(tmp_path: Path) -> None:
    with ServerThread(tmp_path, MemoryStore(), seeds=[7]) as served:

        async def scenario() -> None:
            async with await connect(served.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                chan.write(b"t")
                await terminal.wait_for(lambda t: HINT.search(t.text()) is not None, BOUND)
                assert kill_workers()
                seen_busy = False
                end = time.monotonic() + BOUND
                while time.monotonic() < end:
                    for key in b"adt":  # a move clears the hint; t asks again
                        chan.write(bytes([key]))
                        await asyncio.sleep(0.1)
                    await terminal.wait_for(
                        lambda t: HINT.search(t.text()) is not None or AI_BUSY_NOTE in t.text(), BOUND
                    )
                    if AI_BUSY_NOTE in terminal.text():
                        seen_busy = True
                    elif seen_busy:
                        break
                assert seen_busy and HINT.search(terminal.text()) is not None
                assert served.server.context.pool.rebuilt == 1
                chan.write(b"q")
                await terminal.closed.wait()
                assert "the server failed" not in terminal.text()

        run(scenario())
