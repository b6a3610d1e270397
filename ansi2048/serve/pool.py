"""The AI for every player of a server: a bounded pool of worker processes.

The search is CPU-bound Python: run on the event loop it would stall every
other player for its milliseconds, and threads would share one interpreter
lock. So it runs in ``workers`` processes (spawned, not forked: the server's
event loop and sockets are no state to copy), each with the AI loaded once.
At most ``limit`` questions are in flight; beyond that :meth:`AIPool.move`
says :class:`Busy` at once, instead of a queue that grows without bound."""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Callable, Optional, Tuple

from ..game.engine import Board, Direction

if TYPE_CHECKING:
    from ..ai import Player

__all__ = ["AIPool", "Busy"]

# Questions waiting per worker, beyond the one it is answering: a hint takes
# ~5 ms on 4x4 (p99 ~11 ms), so two more each is a wait of tens of ms.
_WAITING_PER_WORKER = 2

_player: Optional[Player] = None  # a worker's own AI, made on its first question
# What a worker answers: a move (None: none changes the board) and a warning ("" if none).
Answer = Tuple[Optional[Direction], str]
# A new executor's own first question (loading the AI in its worker): a 4x4 board of one tile.
_WARM_UP_BOARD: Board = ((2, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0))
_WARM_UP_GOAL = 2048


class Busy(Exception):
    """Every worker is taken and the waiting line is full: ask again later."""


def _ignore_interrupts() -> None:
    # Ctrl-C at the server's terminal reaches its whole process group: the
    # server shuts the pool down itself, its workers need not cry about it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _answer(board: Board, goal: int) -> Answer:
    """In a worker: the AI's move on ``board`` and its warning ("" if none)."""
    global _player
    if _player is None:
        import warnings

        from ..ai import Player, WeightsWarning

        warnings.filterwarnings("ignore", category=WeightsWarning)  # returned instead
        _player = Player()
    return _player.best_move(board, goal), _player.warning or ""


class AIPool:
    """``workers`` processes answering the AI's questions; started on first use.

    A worker that dies (the OOM killer, a kill -9) breaks the whole
    executor: every question in flight and every later one would fail. The
    pool then starts a new executor, and until its workers have loaded the
    AI (a first question of their own) it says :class:`Busy`, as it does
    when full: the player is told the AI is busy and plays on.

    A question counts against the bound from its asking until its worker is
    done with it, not until its asker stopped waiting: a question given up
    on (``asyncio.wait_for``'s timeout) still occupies a worker, and new
    ones must not pile up behind it. ``job`` answers a question in a worker
    (a module-level function: the spawned workers import it)."""

    def __init__(self, workers: int, job: Callable[[Board, int], Answer] = _answer) -> None:
        self._workers = max(1, workers)
        self._limit = self._workers * (1 + _WAITING_PER_WORKER)
        self._in_flight = 0
        self._job = job
        self._executor: Optional[ProcessPoolExecutor] = None
        self._warming: Optional[Future[Answer]] = None  # a new executor's first question, its own
        self.ready = False  # a question has been answered: the AI is loaded
        self.rebuilt = 0  # executors started again after a worker died

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(self._workers, mp_context=context, initializer=_ignore_interrupts)
        return self._executor

    @property
    def in_flight(self) -> int:
        """Questions a worker has not finished (those given up on included)."""
        return self._in_flight

    async def move(self, board: Board, goal: int) -> Answer:
        """The AI's move on ``board`` (None: no move changes it) and its
        warning; :class:`Busy` at once when too many questions wait, or
        while the pool starts again after a worker died."""
        if self._in_flight >= self._limit or (self._warming is not None and not self._warming.done()):
            raise Busy
        loop = asyncio.get_running_loop()
        executor = self._pool()
        try:
            job = executor.submit(self._job, board, goal)
        except BrokenProcessPool:
            self._start_again(executor)
            raise Busy from None
        self._in_flight += 1
        # Counted until the worker is done with it, whoever still waits (the callback runs on the executor's thread).
        job.add_done_callback(lambda _: loop.call_soon_threadsafe(self._finished))
        try:
            answer = await asyncio.wrap_future(job)
        except BrokenProcessPool:
            self._start_again(executor)
            raise Busy from None
        self.ready = True
        return answer

    def _finished(self) -> None:
        self._in_flight -= 1

    def _start_again(self, broken: ProcessPoolExecutor) -> None:
        """A worker of ``broken`` died: a new executor, warming up (once, however many questions found it broken)."""
        if self._executor is not broken:
            return
        broken.shutdown(wait=False, cancel_futures=True)
        self._executor = None
        self.rebuilt += 1
        self._warming = self._pool().submit(self._job, _WARM_UP_BOARD, _WARM_UP_GOAL)

    def close(self) -> None:
        """Stop the workers, not waiting for questions in flight."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
