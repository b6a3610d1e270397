"""Your records (pure): the history's records as values and JSON lines, the
statistics per board, the top 10, and the daily game's seed.

One history line is one finished game, a JSON object::

    {"v": 1, "date": "2026-11-22T12:43:28Z", "size": "4x4", "goal": 2048,
     "seed": 7, "score": 2412, "moves": 231, "biggest": 256, "won": false,
     "over": true, "undo": false, "ai": false, "daily": null, "keys": "wasd..."}

``keys`` are the game's keys from its start (the recording format's action
characters), so ``seed`` and ``keys`` replay it exactly. Files and dates
live in the shell (``history``); this module only computes.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import (
    Any,
    Callable,
    Deque,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ..game.engine import UNDO_DEPTH, biggest_tile, check_goal, check_size
from ..game.limits import MAX_SEED_DIGITS
from ..game.session import Played

__all__ = [
    "HISTORY_VERSION",
    "TOP",
    "BoardStats",
    "Fetch",
    "Record",
    "Tally",
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
TOP = 10  # games in a board's top list
RECENT = 30  # scores in the sparkline

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


@dataclass(frozen=True)
class BoardStats:
    rows: int
    cols: int
    goal: int
    played: int
    won: int
    # One definition of best, the header's: the highest score a game reached
    # that the AI did not help (undo allowed), never lowered. An assisted
    # game sets none (the README promises it and the header shows it). The
    # history keeps each game's last score only, so the shell adds the best
    # scores file's (a score reached and then undone); see play/stats.py.
    best: int
    best_unaided: int  # the same, of games without undo or the AI
    median: float
    tiles: Tuple[Tuple[int, int], ...]  # (biggest tile, games), biggest first
    recent: Tuple[int, ...]  # the last scores, oldest first
    top: Tuple[Record, ...]


# Where a record can be found again (a byte offset in the file, an index in a
# list): the tally keeps this, not the record, and asks for the few it shows.
Fetch = Callable[[int], Record]
Board = Tuple[int, int, int]


class _Game(NamedTuple):
    """What the statistics need of one game (its keys and text are not kept).
    A named tuple: made once a record, and faster to make than a frozen dataclass."""

    number: int  # its place in the history: the earlier wins a tie
    where: int
    score: int
    biggest: int
    won: bool
    unaided: bool
    own: bool  # the AI did not help: its score can be a best (see BoardStats.best)
    entry: int  # its entry in the prefix index
    known: int  # the fingerprint of its board and seed


class _Board:
    """One board's statistics so far: the games still open to being
    superseded (the last WINDOW), and the rest folded into totals."""

    def __init__(self) -> None:
        self.open: Dict[int, _Game] = {}  # by number
        # The numbers of the board's last WINDOW records, oldest first (a
        # deque: popping a dict's first item rescans the slots it emptied).
        self.last: Deque[int] = deque()
        self.played = 0
        self.won = 0
        self.best = 0  # of the games the AI did not help
        self.best_unaided = 0
        self.scores: Dict[int, int] = {}  # games per score: as many entries as different scores
        self.tiles: Dict[int, int] = {}  # games per biggest tile
        self.recent: Deque[int] = deque(maxlen=RECENT)
        self.top: List[Tuple[int, int, int]] = []  # a heap of (score, -number, where): the best TOP

    def fold(self, game: _Game) -> None:
        """``game`` can no longer be superseded: into the totals (once a
        record: plain dict updates, not Counter's, which are slower)."""
        self.played += 1
        score = game.score
        if game.won:
            self.won += 1
        if game.own and score > self.best:
            self.best = score
        if game.unaided and score > self.best_unaided:
            self.best_unaided = score
        scores, tiles = self.scores, self.tiles
        scores[score] = scores.get(score, 0) + 1
        tiles[game.biggest] = tiles.get(game.biggest, 0) + 1
        self.recent.append(score)
        ranked = (score, -game.number, game.where)
        if len(self.top) < TOP:
            heapq.heappush(self.top, ranked)
        elif ranked > self.top[0]:
            heapq.heapreplace(self.top, ranked)


# A game's entry in the prefix index, packed in one int (a tuple would take
# five objects): bucket << 144 | fingerprint << 80 | keys' length << 40 | number.
_LOW40 = (1 << 40) - 1
_LOW64 = (1 << 64) - 1

# How many of a board's latest records a later one can still supersede.
# The game keeps one game per board in its save, and undo reaches back at
# most UNDO_DEPTH games left by r: a game is continued within that many
# games on its board, or never. Past the window a game is final, folded
# into totals: memory stays bounded whatever the history's length.
WINDOW = 4 * UNDO_DEPTH


class Tally:
    """Your records read once, a record at a time, in bounded memory (the
    last WINDOW games per board, and totals): ``--stats`` and
    ``--replay-best`` on a history of any length.

    A game can be kept more than once (game over, then undo and play on, or
    quit after winning and resumed later). Its keys only grow (undo is a key
    too), so a record whose board and seed match an earlier one's, and whose
    keys start with that one's, is that game further on: the earlier record
    no longer counts (see :meth:`_supersede`). ``only`` tallies one board;
    ``listing`` keeps where every game that counts is, for :meth:`latest`."""

    def __init__(self, only: Optional[Board] = None, listing: bool = False) -> None:
        self._only = only
        self._boards: Dict[Board, _Board] = {}
        self._count = 0
        # The open games, by a fingerprint of (board, seed, a prefix of
        # their keys a power of two long, which power): an entry, or a list
        # of them when several share the prefix.
        self._index: Dict[int, Union[int, List[int]]] = {}
        self._listing: Optional[List[Tuple[int, int]]] = [] if listing else None
        # Open records per fingerprint of (board, seed): most seeds have one
        # game, and a record with none open before it looks nothing up.
        self._open_games: Dict[int, int] = {}
        self.comparisons = 0  # prefix checks made: the tests' measure of the work

    def add(self, record: Record, where: int) -> None:
        """Count ``record``, which ``fetch(where)`` gives back."""
        board_key = record.board
        if self._only is not None and board_key != self._only:
            return
        number = self._count
        self._count += 1
        keys = record.keys
        game = (*board_key, record.seed)
        board = self._boards.get(board_key)
        if board is None:
            board = self._boards[board_key] = _Board()
        known = hash(game)
        open_games = self._open_games
        if known in open_games:
            for superseded in self._supersede(game, keys):
                del board.open[superseded]
                self._forget(known)
        open_games[known] = open_games.get(known, 0) + 1
        level = len(keys).bit_length() - 1  # -1 for no keys
        bucket = hash((game, level, keys[: 1 << level] if level >= 0 else "")) & _LOW64
        entry = bucket << 144 | (hash((game, keys)) & _LOW64) << 80 | len(keys) << 40 | number
        self._file(bucket, entry)
        board.open[number] = _Game(
            number, where, record.score, record.biggest, record.won, record.unaided, not record.ai, entry, known
        )
        board.last.append(number)
        if len(board.last) > WINDOW:
            oldest = board.open.pop(board.last.popleft(), None)  # None: superseded already
            if oldest is not None:
                self._close(board, oldest)

    def _file(self, bucket: int, entry: int) -> None:
        found = self._index.get(bucket)
        if found is None:
            self._index[bucket] = entry
        elif isinstance(found, int):
            self._index[bucket] = [found, entry]
        else:
            found.append(entry)

    def _forget(self, known: int) -> None:
        left = self._open_games[known] - 1
        if left:
            self._open_games[known] = left
        else:
            del self._open_games[known]

    def _close(self, board: _Board, game: _Game) -> None:
        """``game`` is final: out of the index, into the totals."""
        bucket = game.entry >> 144
        found = self._index[bucket]
        if isinstance(found, int):
            del self._index[bucket]
        else:
            found.remove(game.entry)
            if len(found) == 1:
                self._index[bucket] = found[0]
        self._forget(game.known)
        board.fold(game)
        if self._listing is not None:
            self._listing.append((game.number, game.where))

    def _supersede(self, game: Tuple[int, ...], keys: str) -> List[int]:
        """The numbers of the open records of ``game`` that these ``keys``
        continue, taken out of the index.

        An earlier game whose keys are a prefix of these, of length n, was
        filed under the prefix of these keys 2**floor(log2 n) long: one
        look-up per power of two up to the keys' length finds every
        candidate, so the work grows with the keys' length, not with the
        games already on the seed. Fingerprints are Python's 64-bit hashes:
        two different games that collide twice (bucket and keys) would be
        taken for one, about once in 2**64 comparisons."""
        index = self._index
        superseded: List[int] = []
        for level in range(-1, len(keys).bit_length()):
            bucket = hash((game, level, keys[: 1 << level] if level >= 0 else "")) & _LOW64
            found = index.get(bucket)
            if found is None:
                continue
            kept = []
            for entry in [found] if isinstance(found, int) else found:
                self.comparisons += 1
                length = entry >> 40 & _LOW40
                if length <= len(keys) and hash((game, keys[:length])) & _LOW64 == entry >> 80 & _LOW64:
                    superseded.append(entry & _LOW40)
                else:
                    kept.append(entry)
            if not kept:
                del index[bucket]
            else:
                index[bucket] = kept[0] if len(kept) == 1 else kept
        return superseded

    def _finish(self) -> None:
        """The end of the history: every open game is final."""
        for board in self._boards.values():
            while board.last:
                oldest = board.open.pop(board.last.popleft(), None)
                if oldest is not None:
                    self._close(board, oldest)

    def top(self, board: Board, fetch: Fetch, count: int = TOP) -> List[Record]:
        """The best ``count`` (at most TOP) games on ``board``: highest score
        first, then the earlier game (the first to reach a score keeps its place)."""
        self._finish()
        found = self._boards.get(board)
        ranked = sorted(found.top, key=lambda game: (-game[0], -game[1])) if found else []
        return [fetch(where) for _, _, where in ranked[:count]]

    def stats(self, fetch: Fetch) -> List[BoardStats]:
        """Statistics per board, the most played board first."""
        self._finish()
        out: List[BoardStats] = []
        for key, board in self._boards.items():
            if not board.played:
                continue
            out.append(
                BoardStats(
                    rows=key[0],
                    cols=key[1],
                    goal=key[2],
                    played=board.played,
                    won=board.won,
                    best=board.best,
                    best_unaided=board.best_unaided,
                    median=_median(board.scores, board.played),
                    tiles=tuple(sorted(board.tiles.items(), reverse=True)),
                    recent=tuple(board.recent),
                    top=tuple(self.top(key, fetch)),
                )
            )
        out.sort(key=lambda stats: (-stats.played, stats.rows, stats.cols, stats.goal))
        return out

    def latest(self) -> List[int]:
        """Where the records that count are (``where`` as added), in the
        order they were added; only with ``listing``."""
        self._finish()
        assert self._listing is not None, "Tally(listing=True) lists the games"
        return [where for _, where in sorted(self._listing)]


def _median(counts: Mapping[int, int], total: int) -> float:
    """The median of ``total`` scores given as {score: how many}, exact for
    whole numbers of any size (statistics.median goes through float)."""
    low_at, high_at = (total - 1) // 2, total // 2  # the middle one or two, counted from 0
    low: Optional[int] = None
    high = 0
    seen = 0
    for score in sorted(counts):
        seen += counts[score]  # places seen - counts[score] to seen - 1 hold this score
        if low is None and seen > low_at:
            low = score
        if seen > high_at:
            high = score
            break
    both = (high if low is None else low) + high
    return both // 2 if both % 2 == 0 else both / 2


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
