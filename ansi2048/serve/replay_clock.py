"""A replay's clock over SSH: the viewer's keys speed it up, slow it down,
pause and stop it, from the event loop's thread, while the replay's driver
reads and sleeps on it on a thread of its own (:func:`~.replay.play_replay`)."""

from __future__ import annotations

import threading
import time
from typing import Callable

__all__ = ["ReplayClock", "ReplayStopped"]


class ReplayClock:
    """A replay's clock: time runs at ``speed`` times the real clock's, or
    stands still while paused. ``now`` and ``sleep`` are what the piped
    driver is given; the viewer's keys come from another thread."""

    SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

    def __init__(self, real: Callable[[], float] = time.monotonic) -> None:
        self._real = real
        self._lock = threading.Condition()
        self._speed = 2  # index into SPEEDS: 1x
        self._paused = False
        self._stopped = False
        self._base_real = real()
        self._base = 0.0

    @property
    def speed(self) -> float:
        return self.SPEEDS[self._speed]

    @property
    def paused(self) -> bool:
        return self._paused

    def now(self) -> float:
        with self._lock:
            return self._now()

    def _now(self) -> float:
        if self._paused:
            return self._base
        return self._base + (self._real() - self._base_real) * self.SPEEDS[self._speed]

    def _rebase(self) -> None:
        self._base, self._base_real = self._now(), self._real()

    def faster(self) -> None:
        with self._lock:
            self._rebase()
            self._speed = min(self._speed + 1, len(self.SPEEDS) - 1)
            self._lock.notify_all()

    def slower(self) -> None:
        with self._lock:
            self._rebase()
            self._speed = max(self._speed - 1, 0)
            self._lock.notify_all()

    def pause(self) -> None:
        """Pause, or go on."""
        with self._lock:
            self._rebase()
            self._paused = not self._paused
            self._lock.notify_all()

    def stop(self) -> None:
        """The viewer left: the next sleep ends the replay."""
        with self._lock:
            self._stopped = True
            self._lock.notify_all()

    def sleep(self, seconds: float) -> None:
        """Until this clock has gone ``seconds`` further; :class:`ReplayStopped` once stopped."""
        with self._lock:
            target = self._now() + seconds
            while True:
                if self._stopped:
                    raise ReplayStopped()
                if self._paused:
                    self._lock.wait(0.1)
                    continue
                left = (target - self._now()) / self.SPEEDS[self._speed]
                if left <= 0:
                    return
                self._lock.wait(min(left, 0.1))


class ReplayStopped(Exception):
    """The viewer left the replay."""
