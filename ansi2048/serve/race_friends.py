"""Who races, and who waits for whom (``race NAME``): the hall's
(:mod:`.race_hall`) book of players waiting for a friend who is in no
lobby yet.

A waiter names a player of the store (by their id: names change and a
race's shows ``bob-2`` when two players called bob meet; a guest is
``guest-N`` in one race only, so no guest can be named). The hall seats a
waiter in the lobby their friend sits in as soon as there is one, however
the friend got there: they started it (``race``, any settings), joined
one, or named the waiter back (the two meet in one lobby, opened with the
settings of the one who waited first). Nothing here reads the clock or a
socket: the hall and the waiter's session do."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

from ..game.race import LOBBY_SECONDS, RaceSettings
from .link import Incoming

__all__ = ["Entrant", "Friend", "Waiter", "Waiters"]


@dataclass(frozen=True)
class Entrant:
    """Who asks to race: ``key`` names them across connections (a player's
    id; a guest, never the same twice), ``source`` their address as the
    per-address caps count it."""

    key: str
    name: str
    player: Optional[int]
    source: str


@dataclass(frozen=True)
class Friend:
    """The player ``race NAME`` names, as the store knows them."""

    player: int
    name: str


class Waiter:
    """A player waiting for ``friend`` to start or join a race; their
    session's screen wakes when the hall seats them (or the clock turns)."""

    def __init__(
        self, entrant: Entrant, friend: Friend, settings: RaceSettings, incoming: asyncio.Queue[Incoming], since: float
    ) -> None:
        self.entrant = entrant
        self.friend = friend
        self.settings = settings  # the lobby's if the friend names this waiter back
        self.incoming = incoming
        self.since = since
        self.wake = asyncio.Event()

    def expired(self, now: float) -> bool:
        """Waited as long as a lobby waits to fill: the wait is over."""
        return now - self.since >= LOBBY_SECONDS


class Waiters:
    """The players waiting for a friend, in the order they came."""

    def __init__(self) -> None:
        self._waiting: Dict[int, Waiter] = {}  # by id(): a waiter is its own key

    def __iter__(self) -> Iterator[Waiter]:
        return iter(list(self._waiting.values()))

    def add(self, waiter: Waiter) -> None:
        self._waiting[id(waiter)] = waiter

    def remove(self, waiter: Waiter) -> bool:
        """``waiter`` waits no more; False if it was not waiting (seated already)."""
        return self._waiting.pop(id(waiter), None) is not None

    def of(self, key: str) -> Optional[Waiter]:
        """The wait of the entrant ``key``, if they wait (in another session)."""
        return next((w for w in self._waiting.values() if w.entrant.key == key), None)

    def for_player(self, player: Optional[int], now: float) -> List[Waiter]:
        """Those still waiting for ``player``, the first come first."""
        if player is None:
            return []
        return [w for w in self._waiting.values() if w.friend.player == player and not w.expired(now)]

    def from_source(self, source: str) -> int:
        """How many waits ``source``'s players hold (each counts as a race)."""
        return sum(w.entrant.source == source for w in self._waiting.values())
