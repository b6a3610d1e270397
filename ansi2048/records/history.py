"""Your records (pure): the history's records as values and JSON lines, the
statistics per board and the top 10 of a list of them (counted by ``tally``),
and the daily game's seed.

One history line is one finished game, a JSON object::

    {"v": 1, "date": "2026-11-22T12:43:28Z", "size": "4x4", "goal": 2048,
     "seed": 7, "score": 2412, "moves": 231, "biggest": 256, "won": false,
     "over": true, "undo": false, "ai": false, "daily": null, "keys": "wasd..."}

``keys`` are the game's keys from its start (the recording format's action
characters), so ``seed`` and ``keys`` replay it exactly. Files and dates
live in the shell (``history``); this module only computes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
)

from ..game.engine import biggest_tile, check_goal, check_size
from ..game.limits import MAX_SEED_DIGITS
from ..game.session import Played
from .tally import TOP, Board, BoardStats, Tally

__all__ = [
    "HISTORY_VERSION",
    "Record",
    "board_stats",
    "config_key",
    "daily_date",
    "daily_key",
    "daily_seed",
    "latest",
    "stats_document",
    "tally",
    "top_games",
    "unaided_key",
]

HISTORY_VERSION = 1

_SIZE = re.compile(r"([0-9]{1,3})x([0-9]{1,3})")
_SEED_LIMIT = 10**MAX_SEED_DIGITS
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_KEYS = "wasdu"  # the keys a game keeps: r begins another game, never in one


def config_key(rows: int, cols: int, goal: int) -> str:
    """A board configuration's name in file names and best scores: ``4x4-2048``."""
    return f"{rows}x{cols}-{goal}"


def unaided_key(key: str) -> str:
    """The best-scores entry for games that used neither undo nor the AI,
    next to the plain entry (which keeps the best of every game): a file
    of plain numbers, as older versions read and write it."""
    return f"{key}-unaided"


def daily_seed(date: str) -> int:
    """The daily game's seed for a UTC date ``YYYY-MM-DD``: its digits,
    ``2026-11-22`` -> ``20261122``. Readable, and anyone can replay a day
    with ``--seed 20261122``; the engine hashes every seed (SHA-256), so
    neighbouring days are unrelated games."""
    if not _DATE.fullmatch(date):
        raise ValueError(f"expected a date YYYY-MM-DD, got {date!r}")
    return int(date.replace("-", ""))


def daily_date(seed: int) -> Optional[str]:
    """The day whose daily game ``seed`` is (``20261122`` -> ``2026-11-22``),
    or None if it is no day's."""
    digits = str(seed) if 10_000_000 <= seed <= 99_999_999 else ""
    day = f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
    return day if digits and _is_day(day) else None


def daily_key(date: str, rows: int, cols: int, goal: int) -> str:
    """The best-scores entry of one day's daily game on one board."""
    return f"daily-{date}-{config_key(rows, cols, goal)}"


@dataclass(frozen=True)
class Record(Played):
    """One finished game as one line of the history: the game as it ended
    (:class:`~.session.Played`, which the session reports), dated by the
    shell when it keeps it, and the day if it was a daily game."""

    date: str  # UTC, ISO 8601 to the second, when the game ended
    daily: Optional[str] = None  # the date, for a daily game

    @classmethod
    def of(cls, played: Played, date: str, daily: Optional[str] = None) -> Record:
        return cls(**vars(played), date=date, daily=daily)

    def to_json(self) -> str:
        """One line, without its newline."""
        return json.dumps(
            {
                "v": HISTORY_VERSION,
                "date": self.date,
                "size": f"{self.rows}x{self.cols}",
                "goal": self.goal,
                "seed": self.seed,
                "score": self.score,
                "moves": self.moves,
                "biggest": self.biggest,
                "won": self.won,
                "over": self.over,
                "undo": self.undo,
                "ai": self.ai,
                "daily": self.daily,
                "keys": self.keys,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, line: str) -> Record:
        """The record on ``line``; ValueError (saying what) if it is not one.

        Total: any text is a record or a ValueError, never another exception
        or a record the game could not play (see :func:`_checked`)."""
        if _LONG_NUMBER.search(line):
            # Refused before json parses it: digits that long are no field
            # (a seed has at most MAX_SEED_DIGITS), and turning them into an
            # int costs time quadratic in their length.
            raise ValueError("a number too long")
        try:
            data: Any = json.loads(line)
        except RecursionError:  # nested too deep
            raise ValueError("nested too deep") from None
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return _checked(data)


# -- the schema: one check per field, with the engine's own limits ----------------------

_LONG_NUMBER = re.compile(f"[0-9]{{{MAX_SEED_DIGITS + 1}}}")
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")


def _whole(value: Any, name: str) -> int:
    # type(), not isinstance: bool is an int subclass, and true is no number.
    if type(value) is not int or value < 0:
        raise ValueError(f"bad or missing {name!r}")
    return value


def _flag(value: Any, name: str) -> bool:
    if type(value) is not bool:
        raise ValueError(f"bad or missing {name!r}")
    return value


def _text(value: Any, name: str, check: Callable[[str], bool], longest: int) -> str:
    # The length first: the checks are cached, and must not keep long strings.
    if type(value) is not str or len(value) > longest or not check(value):
        raise ValueError(f"bad or missing {name!r}")
    return value


# Cached: a history repeats its dates and boards, and these checks are
# most of the time spent on a line after json's own.
@lru_cache(maxsize=512)
def _is_timestamp(text: str) -> bool:
    found = _TIMESTAMP.fullmatch(text)
    if found is None or not _is_day(text[:10]):
        return False
    hours, minutes, seconds = (int(part) for part in found.groups()[3:])
    return hours < 24 and minutes < 60 and seconds < 61  # 60: a leap second


@lru_cache(maxsize=512)
def _is_day(text: str) -> bool:
    found = _DATE.fullmatch(text)
    if found is None:
        return False
    year, month, day = (int(part) for part in found.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return year >= 1 and 1 <= month <= 12 and 1 <= day <= _MONTH_DAYS[month - 1] + (month == 2 and leap)


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@lru_cache(maxsize=256)
def _board(size: str, goal: int) -> Tuple[int, int]:
    """(rows, cols) of a board the game can play to ``goal``, as the engine checks it."""
    found = _SIZE.fullmatch(size)
    if found is None:
        raise ValueError("bad 'size'")
    rows, cols = int(found.group(1)), int(found.group(2))
    check_size(rows, cols)
    check_goal(goal, rows, cols)
    return rows, cols


def _checked(data: Dict[str, Any]) -> Record:
    """The record ``data`` holds, each field checked as the game itself
    would check it; ValueError for the first that is not."""
    get = data.get
    if type(get("v")) is not int or get("v") != HISTORY_VERSION:
        raise ValueError("not a version 1 record")
    date = _text(get("date"), "date", _is_timestamp, 20)
    goal = _whole(get("goal"), "goal")
    size = get("size")
    if type(size) is not str or len(size) > 5:
        raise ValueError("bad or missing 'size'")
    rows, cols = _board(size, goal)
    seed = _whole(get("seed"), "seed")
    if seed >= _SEED_LIMIT:
        raise ValueError(f"a seed of more than {MAX_SEED_DIGITS} digits")
    keys = get("keys")
    if type(keys) is not str or keys.strip(_KEYS):  # strip leaves any other character (a C loop)
        raise ValueError("bad or missing 'keys'")
    moves = _whole(get("moves"), "moves")
    if moves > len(keys):
        raise ValueError("more moves than keys")
    # The tiles on a board add up to the tiles spawned (two at the start,
    # one a move, each 2 or 4), and a move scores at most the tiles it
    # merges: bounds no game can pass, whatever its keys.
    spawned = 4 * (moves + 2)
    biggest = _whole(get("biggest"), "biggest")
    if biggest < 2 or biggest & (biggest - 1) or biggest > spawned or biggest > biggest_tile(rows, cols):
        raise ValueError("a biggest tile no such game has")
    score = _whole(get("score"), "score")
    if score > moves * spawned:
        raise ValueError("a score no such game has")
    daily = get("daily")
    if daily is not None and daily_seed(_text(daily, "daily", _is_day, 10)) != seed:
        raise ValueError("a daily game on another seed")
    fields = {
        "rows": rows,
        "cols": cols,
        "goal": goal,
        "seed": seed,
        "keys": keys,
        "score": score,
        "moves": moves,
        "biggest": biggest,
        "won": _flag(get("won"), "won"),
        "over": _flag(get("over"), "over"),
        "undo": _flag(get("undo"), "undo"),
        "ai": _flag(get("ai", False), "ai"),  # absent: written before the AI existed
        "date": date,
        "daily": daily,
    }
    # Every field is checked above: the frozen dataclass's __init__, which
    # sets them one by one through object.__setattr__, would take as long
    # as all the checks together. The same object, made at once.
    record: Record = object.__new__(Record)
    record.__dict__.update(fields)
    return record


def tally(records: Iterable[Record], only: Optional[Board] = None) -> Tally:
    """The tally of ``records``, each found again by its index."""
    counted = Tally(only)
    for index, record in enumerate(records):
        counted.add(record, index)
    return counted


def latest(records: Sequence[Record]) -> List[Record]:
    """``records`` without those a later record of the same game supersedes."""
    counted = Tally(listing=True)
    for index, record in enumerate(records):
        counted.add(record, index)
    return [records[at] for at in counted.latest()]


def top_games(records: Sequence[Record], rows: int, cols: int, goal: int, count: int = TOP) -> List[Record]:
    """The best ``count`` games on a board (see :meth:`Tally.top`)."""
    return tally(records, (rows, cols, goal)).top((rows, cols, goal), records.__getitem__, count)


def board_stats(records: Sequence[Record]) -> List[BoardStats]:
    """Statistics per board, the most played board first."""
    return tally(records).stats(records.__getitem__)


def _number(value: float) -> Any:
    return int(value) if value == int(value) else value


def stats_document(stats: Sequence[BoardStats], version: str) -> Dict[str, Any]:
    """``--stats --json``: one JSON document."""
    return {
        "version": version,
        "games": sum(board.played for board in stats),
        "boards": [
            {
                "size": f"{board.rows}x{board.cols}",
                "goal": board.goal,
                "played": board.played,
                "won": board.won,
                "best": board.best,
                "best_unaided": board.best_unaided,
                "assisted": board.assisted,
                "median": _number(board.median),
                "biggest_tiles": {str(tile): count for tile, count in board.tiles},
                "recent_scores": list(board.recent),
                "top": [
                    {
                        "rank": rank,
                        "score": game.score,
                        "biggest": game.biggest,
                        "moves": game.moves,
                        "date": game.date,
                        "seed": game.seed,
                        "undo": game.undo,
                        "ai": game.ai,
                        "daily": game.daily,
                    }
                    for rank, game in enumerate(board.top, 1)
                ],
            }
            for board in stats
        ],
    }
