"""The small parts a served game's driver (:mod:`.game`) is made of, beside
its save policy (:mod:`.saving`): its timings (:class:`Timings`), the claim
on the game (:class:`Claim`), a lone ESC's wait for the rest of an arrow key
(:class:`EscapeWait`) and asking the AI (:class:`AskingAI`)."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from dataclasses import dataclass
from typing import Callable, Optional

from ..loop.events import AIMoved, AskAI
from ..loop.state import Play
from .keeping import CLAIM_SECONDS, Keeping
from .pool import AIPool, Busy
from .store.base import StoreUnavailable

__all__ = ["AI_TIMEOUT", "DEFAULT_TIMINGS", "ESC_TIMEOUT", "AskingAI", "Claim", "EscapeWait", "Timings"]

# How long a lone ESC waits for the rest of an arrow key before it counts as
# just ESC: longer than a terminal's 50 ms (terminal.console.ESC_TIMEOUT),
# since the network may hold back the second half of a sequence split
# across packets; a lone ESC only closes the help.
ESC_TIMEOUT = 0.3
# The longest an AI question may take before it counts as busy (a hint takes
# milliseconds; a stalled pool must not hold the player's keys for good).
AI_TIMEOUT = 10.0


@dataclass(frozen=True)
class Timings:
    """A driver's waits, in seconds: the claim renewed at a third of its
    length (it outlives a renewal that fails once), a lone ESC's wait, an AI
    question's longest."""

    renew: float = CLAIM_SECONDS / 3
    escape: float = ESC_TIMEOUT
    ai: float = AI_TIMEOUT


DEFAULT_TIMINGS = Timings()


class Claim:
    """The claim on the game (:meth:`~.store.base.Store.claim`): when it is
    next renewed, whether it was lost to another session (then nothing more
    of the game is written or shown), and whether a write handed to the
    server still needs it (then it is not released; it expires)."""

    def __init__(self, keeping: Keeping, clock: Callable[[], float], every: float) -> None:
        self._keeping = keeping
        self._clock = clock
        self._every = every
        self.renew_at = clock() + every
        self.lost = False
        self.kept = False

    def due(self, now: float) -> bool:
        return now >= self.renew_at

    def renewing(self) -> None:
        """A renewal begins: the next is due a period from now, whatever this one gives."""
        self.renew_at = self._clock() + self._every

    async def let_go(self) -> None:
        """The claim released, unless another session has it or a handed-over write needs it."""
        if not self.lost and not self.kept:
            with suppress(StoreUnavailable):  # then the claim expires by itself
                await self._keeping.release()


@dataclass
class EscapeWait:
    """A lone ESC's wait for the rest of its sequence: ``at`` is when it
    stands alone (None: no ESC waits)."""

    timeout: float
    at: Optional[float] = None

    def after_read(self, now: float, pending: bool) -> None:
        """A read was decoded at ``now``; ``pending``: it ended inside a sequence."""
        self.at = now + self.timeout if pending else None

    def due(self, now: float) -> bool:
        """The ESC stood alone long enough (the wait is over: asked once)."""
        if self.at is not None and now >= self.at:
            self.at = None
            return True
        return False


class AskingAI:
    """The AI's answers, from the server's pool of processes, bounded in time."""

    def __init__(self, pool: AIPool, clock: Callable[[], float], timeout: float) -> None:
        self._pool = pool
        self._clock = clock
        self._timeout = timeout

    @property
    def ready(self) -> bool:
        """The AI is loaded (a question was answered): the game offers it at once."""
        return self._pool.ready

    async def ask(self, effect: AskAI, play: Play) -> AIMoved:
        """The AI's answer for ``play``'s board. Keys typed meanwhile wait in
        the queue, as they wait in the terminal while the local game's AI thinks."""
        game = play.session.game
        try:
            direction, warning = await asyncio.wait_for(self._pool.move(game.board, game.goal), self._timeout)
        except (Busy, asyncio.TimeoutError):
            return AIMoved(effect.purpose, None, self._clock(), busy=True)
        return AIMoved(effect.purpose, direction, self._clock(), warning)
