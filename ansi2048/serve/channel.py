"""What a session's tasks (a player's game, a watcher, a replay) have of
their SSH channel: the :class:`Link` they write to, what comes in from the
client (:data:`Incoming`), waiting for it (:func:`next_incoming`), and a
viewer's side of it (:class:`Viewer`). The asyncssh side that fills them is
:mod:`.session`'s."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable, Hashable, List, Optional, Protocol, Tuple, Union

from ..loop.events import Resized, Warned
from ..play.screen import Screen
from .limits import Breach

__all__ = [
    "BREACH_SAID",
    "DEFAULT_STALL_SECONDS",
    "POLL_SECONDS",
    "SAID_IDLE_CLOSED",
    "SAID_SLOW",
    "Ended",
    "Incoming",
    "Link",
    "Typed",
    "Viewer",
    "next_incoming",
    "typed_ahead",
    "unmeasured",
]

# Seconds a watcher's channel may stay full (it stopped reading) before it
# is dropped (its channel's stalled-reader rule: --watcher-stalled-seconds).
DEFAULT_STALL_SECONDS = 10.0
# How often a waiting watcher looks at its channel again.
POLL_SECONDS = 0.05
SAID_SLOW = "your connection cannot take the frames; watching stopped"
SAID_IDLE_CLOSED = "no key for a while: the session is closed"
# What a channel ended by its rules says, unless what runs on it says its own (game.py).
BREACH_SAID = {Breach.IDLE: SAID_IDLE_CLOSED, Breach.SLOW: SAID_SLOW}


class Link(Protocol):
    """What the game needs of its SSH channel."""

    def write(self, data: bytes) -> None: ...

    def unsent(self) -> int:
        """Bytes written but not yet sent (the client is slow to read)."""

    def drop(self) -> None:
        """Disconnect the client at once (it stopped reading: nothing more it is sent gets there)."""

    def rested(self) -> None:
        """The client could not play until now (saving paused): its idle time starts again."""


@dataclass(frozen=True)
class Typed:
    """The bytes of one read from the client, and when they came (the
    server's clock: the key-to-frame latency is measured from it)."""

    data: bytes
    at: float = 0.0


@dataclass(frozen=True)
class Ended:
    """Play ends from outside: the connection is gone (``said`` empty), or the
    server says ``said`` on the line below the board. ``lost``: another
    session took the game over (its claim is gone: nothing more is written)."""

    said: str = ""
    lost: bool = False
    breach: Optional[Breach] = None  # the channel's rules ended it (limits.ChannelRules)


# Warned: a line for the note from the server (how many are watching).
Incoming = Union[Typed, Resized, Warned, Ended]


async def next_incoming(incoming: asyncio.Queue[Incoming], wake: asyncio.Event, timeout: float) -> Optional[Incoming]:
    """What came in first: the viewer's input, or (None) a wake-up or the timeout."""
    if not incoming.empty():
        return incoming.get_nowait()
    getter = asyncio.ensure_future(incoming.get())
    waiter = asyncio.ensure_future(wake.wait())
    try:
        await asyncio.wait({getter, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not getter.done():
            getter.cancel()
    if getter.done() and not getter.cancelled():
        return getter.result()
    return None


def typed_ahead(incoming: asyncio.Queue[Incoming], data: bytes) -> bytes:
    """``data`` and the keys queued right behind it. Keys that came in
    packets of their own but are all here by now (a slow link delivering
    what it held at once, or keys typed while a step was being done) were
    typed ahead of the screen: one step plays them all and draws one frame,
    as the local game's one read of its terminal does, instead of a motion
    begun and cut short per key. Whatever else is queued keeps its place."""
    later: List[Incoming] = []  # from the first that is not keys on, put back in order
    while not incoming.empty():
        item = incoming.get_nowait()
        if isinstance(item, Typed) and not later:
            data += item.data
        else:
            later.append(item)
    for item in later:
        incoming.put_nowait(item)
    return data


@dataclass
class Viewer:
    """A watcher's side: its channel, what it types, its window, a screen for
    its own size and colour depth (made anew for each game watched)."""

    link: Link
    incoming: asyncio.Queue[Incoming]
    window: Callable[[], Tuple[int, int]]
    # A screen for this viewer's colour depth and theme, drawing with
    # ``write`` at ``size``; ``look`` names what it depends on: viewers of
    # the same look share the drawing of a frame (LiveGame.draw).
    new_screen: Callable[[Callable[[str], None], Callable[[], Tuple[int, int]]], Screen]
    look: Hashable

    def write(self, text: str) -> None:
        # The client's terminal is raw: LF becomes CR LF here, as a pty would.
        self.link.write(text.replace("\n", "\r\n").encode("utf-8", "replace"))


def unmeasured(seconds: float) -> None:
    """Told how long something took, by a game nobody measures (serve/metrics.py measures the server's)."""
