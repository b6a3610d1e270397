"""A replay's clock over SSH: the viewer's keys speed it up, slow it down
and pause it; the replay's timer (:func:`~.replay.play_replay`, on the
event loop) asks it how long, in real seconds, until a moment of the
replay comes."""

from __future__ import annotations

import time
from typing import Callable, Optional

__all__ = ["ReplayClock"]


class ReplayClock:
    """A replay's clock: time runs at ``speed`` times the real clock's, or
    stands still while paused. ``now`` is what the replay's driver is given."""

    SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

    def __init__(self, real: Callable[[], float] = time.monotonic) -> None:
        self._real = real
        self._speed = 2  # index into SPEEDS: 1x
        self._paused = False
        self._base_real = real()
        self._base = 0.0

    @property
    def speed(self) -> float:
        return self.SPEEDS[self._speed]

    @property
    def paused(self) -> bool:
        return self._paused

    def now(self) -> float:
        if self._paused:
            return self._base
        return self._base + (self._real() - self._base_real) * self.SPEEDS[self._speed]

    def until(self, moment: float) -> Optional[float]:
        """Real seconds until this clock shows ``moment`` (0 if it has), or
        None while paused (never, unless a key goes on)."""
        if self._paused:
            return None
        return max(0.0, (moment - self.now()) / self.SPEEDS[self._speed])

    def _rebase(self) -> None:
        self._base, self._base_real = self.now(), self._real()

    def faster(self) -> None:
        self._rebase()
        self._speed = min(self._speed + 1, len(self.SPEEDS) - 1)

    def slower(self) -> None:
        self._rebase()
        self._speed = max(self._speed - 1, 0)

    def pause(self) -> None:
        """Pause, or go on."""
        self._rebase()
        self._paused = not self._paused
