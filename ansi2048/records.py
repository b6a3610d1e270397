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

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .session import Played

__all__ = [
    "HISTORY_VERSION",
    "TOP",
    "BoardStats",
    "Record",
    "board_stats",
    "config_key",
    "daily_key",
    "daily_seed",
    "latest",
    "parse_history",
    "stats_document",
    "top_games",
    "unaided_key",
]

HISTORY_VERSION = 1
TOP = 10  # games in a board's top list
RECENT = 30  # scores in the sparkline

_SIZE = re.compile(r"([0-9]{1,3})x([0-9]{1,3})")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_KEYS = re.compile(r"[wasdur]*")


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


def daily_key(date: str, rows: int, cols: int, goal: int) -> str:
    """The best-scores entry of one day's daily game on one board."""
    return f"daily-{date}-{config_key(rows, cols, goal)}"


@dataclass(frozen=True)
class Record:
    """One finished game, as one line of the history."""

    date: str  # UTC, ISO 8601 to the second, when the game ended
    rows: int
    cols: int
    goal: int
    seed: int
    score: int
    moves: int
    biggest: int
    won: bool
    over: bool
    undo: bool  # undo stepped back a move
    ai: bool  # the AI played or hinted
    keys: str  # from the game's start: with ``seed`` they replay it
    daily: Optional[str] = None  # the date, for a daily game

    @classmethod
    def of(cls, played: Played, date: str, daily: Optional[str] = None) -> Record:
        return cls(
            date=date,
            rows=played.rows,
            cols=played.cols,
            goal=played.goal,
            seed=played.seed,
            score=played.score,
            moves=played.moves,
            biggest=played.biggest,
            won=played.won,
            over=played.over,
            undo=played.used_undo,
            ai=played.assisted,
            keys=played.keys,
            daily=daily,
        )

    @property
    def board(self) -> Tuple[int, int, int]:
        return (self.rows, self.cols, self.goal)

    @property
    def unaided(self) -> bool:
        return not (self.undo or self.ai)

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
        """The record on ``line``; ValueError (saying what) if it is not one."""
        data: Any = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        size = _SIZE.fullmatch(_field(data, "size", str))
        if not size:
            raise ValueError("bad size")
        keys = _field(data, "keys", str)
        if not _KEYS.fullmatch(keys):
            raise ValueError("bad keys")
        daily = data.get("daily")
        if daily is not None and not (isinstance(daily, str) and _DATE.fullmatch(daily)):
            raise ValueError("bad daily date")
        numbers = {name: _field(data, name, int) for name in ("goal", "seed", "score", "moves", "biggest")}
        if any(value < 0 for value in numbers.values()):
            raise ValueError("negative number")
        return cls(
            date=_field(data, "date", str),
            rows=int(size.group(1)),
            cols=int(size.group(2)),
            won=_field(data, "won", bool),
            over=_field(data, "over", bool),
            undo=_field(data, "undo", bool),
            ai=bool(data.get("ai", False)),  # absent: written before the AI existed
            keys=keys,
            daily=daily,
            **numbers,
        )


def _field(data: Dict[str, Any], name: str, kind: type) -> Any:
    value = data.get(name)
    # bool is an int to isinstance: a number field must not take true/false.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"bad or missing {name!r}")
    return value


def parse_history(lines: Iterable[str]) -> Tuple[List[Record], List[int]]:
    """The records on ``lines`` and the (1-based) numbers of the lines that
    are not records; blank lines are neither."""
    records: List[Record] = []
    bad: List[int] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(Record.from_json(line))
        except ValueError:  # json.JSONDecodeError is a ValueError
            bad.append(number)
    return records, bad


def latest(records: Sequence[Record]) -> List[Record]:
    """``records`` without those a later record of the same game supersedes.

    A game is kept when it ends, and a game can end twice: game over, then
    undo and play on, or quit after winning and resume later. Its keys only
    grow (undo is a key too), so a later record of the same board and seed
    whose keys start with an earlier one's is that game, further on."""
    kept: List[Optional[Record]] = []
    same_game: Dict[Tuple[int, int, int, int], List[int]] = {}
    for record in records:
        group = same_game.setdefault((*record.board, record.seed), [])
        for index in group:
            earlier = kept[index]
            if earlier is not None and record.keys.startswith(earlier.keys):
                kept[index] = None
        group.append(len(kept))
        kept.append(record)
    return [record for record in kept if record is not None]


def top_games(records: Sequence[Record], rows: int, cols: int, goal: int, count: int = TOP) -> List[Record]:
    """The best ``count`` games on a board: highest score first, then the
    earlier game (the first to reach a score keeps its place)."""
    games = [record for record in latest(records) if record.board == (rows, cols, goal)]
    ranked = sorted(enumerate(games), key=lambda pair: (-pair[1].score, pair[0]))
    return [record for _, record in ranked[:count]]


@dataclass(frozen=True)
class BoardStats:
    rows: int
    cols: int
    goal: int
    played: int
    won: int
    best: int
    best_unaided: int
    median: float
    tiles: Tuple[Tuple[int, int], ...]  # (biggest tile, games), biggest first
    recent: Tuple[int, ...]  # the last scores, oldest first
    top: Tuple[Record, ...]


def board_stats(records: Sequence[Record]) -> List[BoardStats]:
    """Statistics per board, the most played board first."""
    import statistics  # here: ~4 ms (decimal, fractions, random) of every start-up otherwise

    games = latest(records)
    boards: Dict[Tuple[int, int, int], List[Record]] = {}
    for record in games:
        boards.setdefault(record.board, []).append(record)
    out: List[BoardStats] = []
    for (rows, cols, goal), played in boards.items():
        scores = [record.score for record in played]
        tiles: Dict[int, int] = {}
        for record in played:
            tiles[record.biggest] = tiles.get(record.biggest, 0) + 1
        out.append(
            BoardStats(
                rows=rows,
                cols=cols,
                goal=goal,
                played=len(played),
                won=sum(record.won for record in played),
                best=max(scores),
                best_unaided=max((record.score for record in played if record.unaided), default=0),
                median=statistics.median(scores),
                tiles=tuple(sorted(tiles.items(), reverse=True)),
                recent=tuple(scores[-RECENT:]),
                top=tuple(top_games(played, rows, cols, goal)),
            )
        )
    out.sort(key=lambda stats: (-stats.played, stats.rows, stats.cols, stats.goal))
    return out


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
