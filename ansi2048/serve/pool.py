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
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Optional, Tuple

from ..game.engine import Board, Direction

if TYPE_CHECKING:
    from ..ai import Player

__all__ = ["AIPool", "Busy"]

# Questions waiting per worker, beyond the one it is answering: a hint takes
# ~5 ms on 4x4 (p99 ~11 ms), so two more each is a wait of tens of ms.
_WAITING_PER_WORKER = 2

_player: Optional[Player] = None  # a worker's own AI, made on its first question


class Busy(Exception):
    """Every worker is taken and the waiting line is full: ask again later."""


def _ignore_interrupts() -> None:
    # Ctrl-C at the server's terminal reaches its whole process group: the
    # server shuts the pool down itself, its workers need not cry about it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _answer(board: Board, goal: int) -> Tuple[Optional[Direction], str]:
    """In a worker: the AI's move on ``board`` and its warning ("" if none)."""
    global _player
    if _player is None:
        import warnings

        from ..ai import Player, WeightsWarning

        warnings.filterwarnings("ignore", category=WeightsWarning)  # returned instead
        _player = Player()
    return _player.best_move(board, goal), _player.warning or ""


class AIPool:
    """``workers`` processes answering the AI's questions; started on first use."""

    def __init__(self, workers: int) -> None:
        self._workers = max(1, workers)
        self._limit = self._workers * (1 + _WAITING_PER_WORKER)
        self._in_flight = 0
        self._executor: Optional[ProcessPoolExecutor] = None
        self.ready = False  # a question has been answered: the AI is loaded

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(self._workers, mp_context=context, initializer=_ignore_interrupts)
        return self._executor

    async def move(self, board: Board, goal: int) -> Tuple[Optional[Direction], str]:
        """The AI's move on ``board`` (None: no move changes it) and its
        warning; :class:`Busy` at once when too many questions wait."""
        if self._in_flight >= self._limit:
            raise Busy
        self._in_flight += 1
        try:
            answer = await asyncio.get_running_loop().run_in_executor(self._pool(), _answer, board, goal)
        finally:
            self._in_flight -= 1
        self.ready = True
        return answer

    def close(self) -> None:
        """Stop the workers, not waiting for questions in flight."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
