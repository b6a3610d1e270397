"""The one rule that keeps the day's deal secret (docs/serving.md, "The
daily leaderboard"): **nothing that reveals the day's deal reaches anyone
before the day is over, except each player's own ranked game as they play
it** (and, once finished, replayed to them without its seed).

Every path that shows a game asks :func:`shown` what it may show: replay
and cast (their titles, captions and headers), ``keys``, ``watch NAME`` and
the watch list, ``stats`` and ``leaderboard`` (and their JSON), and the
lines that refuse them (:func:`published`, :func:`keys_for`, the lines
below). Nothing else decides. Pure: the game's facts, the viewer and the
current day come in."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional, Tuple

from .daily import RANKED, day_of, day_seed, keys_text
from .store.base import DailyEntry

__all__ = [
    "Deal",
    "GameFacts",
    "Refused",
    "Shown",
    "facts_of_seed",
    "keys_for",
    "live_secret_line",
    "published",
    "secret_line",
    "secret_seed",
    "shown",
]


class Deal(Enum):
    """Where a game's tiles come from."""

    RANKED = "ranked"  # the day's deal (daily.day_seed): the one ranked game a player has that day
    PRACTICE = "practice"  # the day's practice deal (daily.practice_seed): other tiles, nothing to hide
    REGULAR = "regular"  # a seed of its own, drawn at random


class Shown(Enum):
    """What of a game a viewer may be shown."""

    NOTHING = "nothing"  # not the game, not its moves: it is refused
    WITHOUT_SEED = "without seed"  # its boards, but not its seed, nor its keys with the seed
    EVERYTHING = "everything"  # its seed and keys too (ansi2048 --seed N replays it)


@dataclass(frozen=True)
class GameFacts:
    """What the rule needs to know of a game."""

    deal: Deal
    day: str = ""  # YYYY-MM-DD, the day the deal is of ("" for a regular game)
    owner: Optional[int] = None  # the player whose game it is (None: a guest's)


def shown(game: GameFacts, viewer: Optional[int], today: str) -> Shown:
    """What ``viewer`` (a player's id; None: a guest) may be shown of
    ``game`` on ``today`` (the current UTC day, YYYY-MM-DD)."""
    if game.deal is not Deal.RANKED or game.day < today:  # ISO dates sort as days do
        return Shown.EVERYTHING
    # The day's ranked deal, its day not over (or a day still to come).
    if viewer is not None and viewer == game.owner:
        return Shown.WITHOUT_SEED  # their own game: they saw its boards as they played it
    return Shown.NOTHING


def facts_of_seed(seed: int, owner: Optional[int], secret: bytes, today: str) -> GameFacts:
    """The facts of a game known by its seed alone (a finished game in a
    player's history): the day's ranked deal if it is today's; any other
    day's is public already, and practice deals other tiles."""
    if seed == day_seed(secret, today):
        return GameFacts(Deal.RANKED, today, owner)
    return GameFacts(Deal.REGULAR, "", owner)


def secret_seed(secret: bytes, today: str) -> int:
    """The one seed that a finished game known by its seed alone may have
    and be secret (:func:`facts_of_seed`): today's ranked deal's. ``stats``
    has the database leave its games out, asking :func:`shown` first."""
    return day_seed(secret, today)


def secret_line(command: str, what: str, day: str) -> str:
    """The line that refuses ``command`` of ``what`` (a game, a player's
    game) of ``day``'s deal: when it may be seen, and no more."""
    return f"{command}: {what} is of {day}, whose tiles stay secret until it ends (00:00 UTC)"


def live_secret_line(name: str, day: str) -> str:
    """Why ``name``'s ranked game of ``day`` is not watched live."""
    return (
        f"{name} is playing the ranked daily game of {day}: not watchable live, its tiles stay secret"
        " until the day ends (00:00 UTC); then it replays from the leaderboard"
    )


class Refused(Exception):
    """``keys``, ``replay``, ``cast`` or ``watch`` cannot give this game (one line)."""


def published(
    entry: Optional[DailyEntry], wanted: int, now: float, command: str, viewer: Optional[int] = None
) -> Tuple[DailyEntry, Shown]:
    """``entry`` and what ``viewer`` may be shown of it (the secrecy rule,
    :func:`shown`): anything once its day is over; before, its own
    player may see it played back without its seed, and nobody else may
    have anything of it (its boards would give away the day's tiles to
    everyone still playing): :class:`Refused`, saying when, in
    ``command``'s name."""
    if entry is None or entry.status not in RANKED:
        raise Refused(f"{command}: no ranked game {wanted}")
    showing = shown(GameFacts(Deal.RANKED, entry.day, entry.player), viewer, day_of(now))
    if showing is Shown.NOTHING:
        raise Refused(secret_line(command, f"game {wanted}", entry.day))
    return entry, showing


def keys_for(entry: Optional[DailyEntry], wanted: int, now: float, viewer: Optional[int]) -> bytes:
    """What ``keys ID`` gives, or :class:`Refused`: a ranked game's
    recording, which holds its seed: only when everything of it may be
    shown (:func:`published`), once its day is over."""
    entry, showing = published(entry, wanted, now, "keys", viewer)
    if showing is not Shown.EVERYTHING:
        raise Refused(secret_line("keys", f"game {wanted}", entry.day))
    return keys_text(entry)
