"""The limits every channel goes through, whatever it runs (a game, a
watcher, a replay, a cast, a command's lines, a prompt, or nothing at all),
as layers around it (:class:`ChannelGuard`), as charmbracelet/wish applies
its middleware to every handler: a new command cannot forget one.

- its input, through the :class:`~.limits.InputBudget` (:meth:`ChannelGuard.typed`);
- its output, through a :class:`GuardedLink` (the :class:`~.link.Link` every
  command writes to): each write is looked at by the channel's
  :class:`~.limits.ChannelRules` (idle, unsent output, a stalled reader),
  and a timer looks at them again when they next may break.

A broken rule is reported once (``on_breach``), after a reader that
stopped is disconnected (what it holds unsent goes). The admission that
let the channel open and its connection's line in the log are the
connection's (:mod:`.connection`, :mod:`.accounting`), also on every channel."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

import asyncssh

from .limits import HELD_POLL_SECONDS, Breach, ChannelRules, InputBudget, Limits

__all__ = ["ChannelGuard", "GuardedLink"]


class GuardedLink:
    """What runs on the channel writes to (see :class:`.link.Link`): each
    write is looked at by the channel's rules (``written``). ``chan`` is
    asyncssh's channel, or a page's socket (serve/web/socket.py)."""

    def __init__(self, chan: Any, written: Callable[[int], None], rested: Callable[[], None]) -> None:
        self._chan = chan
        self._written = written
        self.rested = rested
        self.gone = False

    def write(self, data: bytes) -> None:
        if self.gone:
            return
        before = self.unsent()
        try:
            self._chan.write(data)
        except (OSError, asyncssh.Error):
            self.gone = True
            return
        self._written(before)

    def unsent(self) -> int:
        return int(self._chan.get_write_buffer_size())

    def drop(self) -> None:
        if not self.gone:
            self.gone = True
            self._chan.get_extra_info("connection").abort()


class ChannelGuard:
    """One channel's limits from the moment it opens (:meth:`attach`) to
    its end (:meth:`close`). Pure but for the event loop's timer; the clock
    is passed in."""

    def __init__(self, limits: Limits, clock: Callable[[], float], on_breach: Callable[[Breach], None]) -> None:
        self._clock = clock
        self._on_breach = on_breach
        self._input = InputBudget(limits.input_burst, limits.input_rate, clock())
        self.rules = ChannelRules(limits, clock())
        self.link: Optional[GuardedLink] = None
        self._timer: Optional[asyncio.TimerHandle] = None
        self._breached = False

    def attach(self, chan: Any) -> GuardedLink:
        """The channel's output, under the rules from now, whatever it asks for (or never does)."""
        self.link = GuardedLink(chan, self._written, lambda: self.rules.rested(self._clock()))
        self._look()
        return self.link

    def typed(self, data: bytes) -> bytes:
        """Input from the client: what of it is played (the rest is over the budget, dropped)."""
        now = self._clock()
        self.rules.typed(now)
        return self._input.admit(data, now)

    def stalls_after(self, seconds: float) -> None:
        """A reader is dropped once it has taken nothing for ``seconds`` (a viewer's own stall)."""
        self.rules.stalled_seconds = seconds

    def close(self) -> None:
        """The channel is gone: nothing more is looked at or written."""
        self._cancel()
        if self.link is not None:
            self.link.gone = True

    def _look(self) -> None:
        """The rules looked at now; then again when they next may break."""
        self._timer = None
        if self.link is None or self.link.gone or self._breached:
            return
        now, unsent = self._clock(), self.link.unsent()
        breach = self.rules.breach(now, unsent)
        if breach is not None:
            self._breach(breach)
            return
        delay = max(0.0, self.rules.next_look(now, unsent) - now)
        self._timer = asyncio.get_running_loop().call_later(delay, self._look)

    def _written(self, before: int) -> None:
        """Output went out (``before``: bytes unsent until then): over the
        unsent limit, the reader is dropped at once; else held output is
        looked at soon (it may stall)."""
        assert self.link is not None
        unsent = self.link.unsent()
        self.rules.wrote(self._clock(), before, unsent)
        if unsent > self.rules.unsent_bytes:
            self._breach(Breach.SLOW)
        elif unsent and self._timer is not None and self._timer.when() > self._soon():
            self._timer.cancel()
            self._look()

    @staticmethod
    def _soon() -> float:
        return asyncio.get_running_loop().time() + HELD_POLL_SECONDS

    def _breach(self, breach: Breach) -> None:
        if self._breached or self.link is None:
            return
        self._breached = True
        self._cancel()
        if breach is Breach.SLOW:
            self.link.drop()
        self._on_breach(breach)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
