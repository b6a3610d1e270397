"""What a command and its tasks (a player's game, a watcher, a replay) have
of the channel they run on: who the client is (:class:`Identity`), the
:class:`Client` a command is given, the :class:`Link` they write to, what
comes in from the client (:data:`Incoming`), waiting for it
(:func:`next_incoming`), and a viewer's side of it (:class:`Viewer`). The
side that fills them is :mod:`.ssh_channel`'s (an SSH client's, or a
browser's through :mod:`.web.socket`).

The client's terminal is raw (no pty's output processing in between):
:func:`for_terminal` is the one place LF becomes CR LF."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, Hashable, List, Optional, Protocol, Tuple, Union

from ..loop.events import Resized, Warned
from ..play.screen import Screen
from .limits import Breach

__all__ = [
    "BREACH_SAID",
    "POLL_SECONDS",
    "SAID_IDLE_CLOSED",
    "SAID_SLOW",
    "Client",
    "Ended",
    "Identity",
    "Incoming",
    "Link",
    "Typed",
    "Viewer",
    "for_terminal",
    "incoming_within",
    "next_incoming",
    "typed_ahead",
    "unmeasured",
]

# How often a waiting watcher looks at its channel again.
POLL_SECONDS = 0.05
SAID_SLOW = "your connection cannot take the frames; watching stopped"
SAID_IDLE_CLOSED = "no key for a while: the session is closed"
# What a channel ended by its rules says, unless what runs on it says its own (game.py).
BREACH_SAID = {Breach.IDLE: SAID_IDLE_CLOSED, Breach.SLOW: SAID_SLOW}


def for_terminal(text: str) -> str:
    """``text`` for the client's raw terminal: each LF a CR LF, as a pty's
    output processing (ONLCR) would make it."""
    return text.replace("\n", "\r\n")


@dataclass(frozen=True)
class Identity:
    """Who a client is: a key's fingerprint (None: a guest) and the name it
    asked for; ``named`` is told the name the store knows its key by (a key
    keeps its first name; another key's is taken with a suffix), for the log."""

    fingerprint: Optional[str]
    name: str
    named: Callable[[str], None] = field(default=lambda name: None, compare=False)


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


async def incoming_within(incoming: asyncio.Queue[Incoming], timeout: float) -> Optional[Incoming]:
    """What comes in within ``timeout`` seconds; None: nothing did.

    The queue is awaited in the caller's own task. ``asyncio.wait_for``
    before Python 3.12 awaits it in a task of its own, whose ending takes two
    more turns of the event loop before the caller sees a key: under load a
    turn is several milliseconds (300 players with motion on 2 cores: about
    9 ms each, measured), and a key's frame waited for each."""
    if not incoming.empty():
        return incoming.get_nowait()
    if sys.version_info >= (3, 11):
        try:
            async with asyncio.timeout(timeout):
                return await incoming.get()
        except TimeoutError:
            return None
    try:
        return await asyncio.wait_for(incoming.get(), timeout)
    except asyncio.TimeoutError:
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
        self.link.write(for_terminal(text).encode("utf-8", "replace"))


class Client(Protocol):
    """What a command has of the channel it runs on (:mod:`.commands`): the
    client, what it sends, its window, and the lines it is told; nothing
    of the server (that is the :class:`~.context.ServeContext`)."""

    @property
    def identity(self) -> Identity: ...

    @property
    def source(self) -> str:
        """What every per-address cap counts the client as (:func:`.limits.source_of`)."""

    @property
    def link(self) -> Link: ...

    @property
    def incoming(self) -> asyncio.Queue[Incoming]: ...

    @property
    def window(self) -> Tuple[int, int]: ...

    @property
    def has_terminal(self) -> bool:
        """The client asked for a pty (``ssh -t``)."""

    def gone(self) -> bool:
        """The client has left: nothing written reaches it."""

    def say(self, line: str, stderr: bool = True) -> None:
        """One line to the client."""

    def refuse(self, line: str, how: str, status: int = ...) -> int:
        """The command refused: ``line`` said, ``how`` in the log; its exit status."""

    def ended(self, how: str) -> None:
        """How the command ended, for the connection's line in the log."""

    def if_lost(self, how: Optional[str]) -> None:
        """How the command ends if the client goes now (said at once); None: as usual."""

    def client_env(self) -> Dict[str, str]:
        """What the client says of its terminal (TERM, COLORTERM, NO_COLOR)."""

    def cast_env(self) -> Dict[str, str]:
        """The terminal a cast is drawn for."""

    def claimed(self, holder: str) -> None:
        """The command holds a claim as ``holder`` (another session taking it over ends it)."""

    def played(self, keys: int) -> None:
        """``keys`` keys were played (the connection's line counts them)."""

    def stalls_after(self, seconds: float) -> None:
        """The client is dropped once it has not read for ``seconds`` (a viewer's own stall)."""


def unmeasured(seconds: float) -> None:
    """Told how long something took, by a game nobody measures (serve/metrics.py measures the server's)."""
