"""The served daily game and its leaderboard, the pure part: the day and its
seed, what a ranked game's recording replays to, the rule on key timing,
the board as text and as JSON, and the daily commands' words.

The day is the UTC date. Its seed is an HMAC-SHA256 of the date under the
server's secret (:func:`day_seed`), so nobody can compute a day's tiles
before the server publishes them with the day's recordings, once it is over
(``keys``). Everything about time comes in as numbers (seconds since the
epoch) from the shell (:mod:`.ranked`).

A score is ranked only as the engine's replay of its stored recording gives
it, from the day's deal and under the rules that recorded it
(:func:`ansi2048.records.replay.verdict`, the one definition of "the replay
matches", which ``serve --verify`` checks again: :func:`daily_setup`)."""

from __future__ import annotations

import datetime
import hashlib
import hmac
from typing import Any, Dict, List, Optional

from .. import __version__
from ..records.replay import Setup
from .names import display_name
from .store.base import DailyBoard, DailyEntry, Removed, Standing
from .store.daily import FINISHED, PLAYING, RANKED, machine_timing, times_list

__all__ = [
    "DAILY",
    "FINISHED",
    "PLAYING",
    "RANKED",
    "SAID_ASSISTED",
    "SAID_ENDED",
    "board_note",
    "clock_text",
    "daily_board",
    "daily_setup",
    "day_end",
    "day_of",
    "day_seed",
    "ended_line",
    "keys_text",
    "leaderboard_document",
    "leaderboard_lines",
    "machine_timing",
    "parse_day",
    "practice_seed",
    "removed_document",
    "removed_line",
]

DAILY = (4, 4, 2048)  # rows, columns, goal; and beyond: play goes on past the goal
ASSISTED, MISMATCH = "assisted", "mismatch"
TOP = 10  # the board's length


def day_of(now: float) -> str:
    """The UTC date of ``now`` (seconds since the epoch), YYYY-MM-DD."""
    return datetime.datetime.fromtimestamp(now, datetime.timezone.utc).date().isoformat()


def day_end(day: str) -> float:
    """The first second after ``day`` (UTC midnight), since the epoch."""
    date = datetime.date.fromisoformat(day) + datetime.timedelta(days=1)
    return datetime.datetime(date.year, date.month, date.day, tzinfo=datetime.timezone.utc).timestamp()


def parse_day(text: str) -> str:
    """``text`` if it is a date, YYYY-MM-DD; ValueError (one line) if not."""
    try:
        if len(text) != 10:
            raise ValueError
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise ValueError(f"expected a date YYYY-MM-DD, got {text[:20]!r}") from None


def day_seed(secret: bytes, day: str) -> int:
    """The seed of ``day``'s game: 64 bits of HMAC-SHA256(secret, day)."""
    digest = hmac.new(secret, f"ansi2048 daily {day}".encode("ascii"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def practice_seed(secret: bytes, day: str) -> int:
    """The seed of ``day``'s practice game (a guest's, or a player's after
    their ranked one): the same HMAC over other words, so practice deals
    other tiles. Were it the ranked deal, anyone could search the day's
    game with undo, hints and autoplay, then play the line found as their
    ranked game; and it tells nothing of the ranked deal."""
    digest = hmac.new(secret, f"ansi2048 practice {day}".encode("ascii"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def daily_board(day: str) -> str:
    """The board key of a player's ranked game of ``day`` in progress (not a
    :func:`~ansi2048.records.history.config_key`: it never meets their other games)."""
    return f"daily-{day}"


def daily_setup(secret: bytes, day: str) -> Setup:
    """``day``'s ranked game at its start: the day's seed, the daily board."""
    rows, cols, goal = DAILY
    return Setup(day_seed(secret, day), rows, cols, goal)


def times_of(entry: DailyEntry) -> List[int]:
    return times_list(entry.times)


# -- the board ---------------------------------------------------------------------


def clock_text(seconds: float) -> str:
    """A game's time as the board shows it, H:MM:SS."""
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _finished(entry: DailyEntry, over: bool) -> bool:
    """Shown as finished: once the day is ``over`` a game still open at
    midnight counts as it stood."""
    return over or entry.status == FINISHED


def _line(standing: Standing, over: bool) -> str:
    entry = standing.entry
    state = "finished" if _finished(entry, over) else "playing"
    mark = " *" if standing.machine else ""
    return (
        f"{standing.rank:>4}  {display_name(entry.name):<16} {entry.score:>7} {entry.biggest:>6} {entry.moves:>6}"
        f" {clock_text(entry.seconds):>8}  {state:<8} {entry.id:>5}{mark}"
    )


def removed_line(removed: Removed) -> str:
    """A game taken off the board (serve --remove-entry) as the board's text
    says it (its reason is printable text, as --reason takes it)."""
    return f"removed: game {removed.id} ({display_name(removed.name)}, score {removed.score}): {removed.reason}"


def removed_document(removed: Removed) -> Dict[str, Any]:
    """A game taken off the board in the board's JSON (docs/serving.md)."""
    return {"id": removed.id, "name": display_name(removed.name), "score": removed.score, "reason": removed.reason}


def leaderboard_lines(day: str, board: DailyBoard, me: Optional[int], over: bool) -> List[str]:
    """The day's board as text: the top 10, then the caller's own rank; the
    mark's footnote when a game shown has it."""
    lines = [f"The daily game of {day} (UTC), {board.ranked} ranked"]
    removed = [removed_line(game) for game in board.removed]  # a board anyone checks says what was taken off
    if not board.top:
        return [*lines, "No ranked game yet.", *removed]
    lines.append("rank  name               score   tile  moves     time  state       id")
    shown = list(board.top[:TOP])
    lines += [_line(standing, over) for standing in shown]
    mine = board.mine
    if mine is not None and mine not in shown:
        lines += ["  ...", _line(mine, over)]
        shown.append(mine)
    if any(standing.machine for standing in shown):
        lines.append("* key timing no person types (see: help)")
    if me is not None:
        lines.append(f"Your rank: {mine.rank} of {board.ranked}" if mine else "You have no ranked game this day.")
    return lines + removed


def _standing_document(standing: Standing, over: bool) -> Dict[str, Any]:
    entry = standing.entry
    return {
        "rank": standing.rank,
        "name": display_name(entry.name),
        "score": entry.score,
        "biggest": entry.biggest,
        "moves": entry.moves,
        "seconds": round(entry.seconds, 3),
        "finished": _finished(entry, over),
        "id": entry.id,
        "machine_timing": standing.machine,
    }


def leaderboard_document(day: str, board: DailyBoard, over: bool) -> Dict[str, Any]:
    """The day's board as one JSON document (documented in docs/serving.md)."""
    return {
        "version": __version__,
        "day": day,
        "ranked": board.ranked,
        "top": [_standing_document(standing, over) for standing in board.top[:TOP]],
        "you": None if board.mine is None else _standing_document(board.mine, over),
        "removed": [removed_document(game) for game in board.removed],
    }


def board_note(board: DailyBoard) -> str:
    """The board on one line (the game's note line, under ``b``): the top
    three and the player's own rank."""
    if not board.top:
        return "the board: no ranked game yet"
    top = "  ".join(f"{s.rank}. {display_name(s.entry.name)} {s.entry.score}" for s in board.top[:3])
    mine = board.mine
    you = f"; you: {mine.rank} of {board.ranked}" if mine is not None else f"; {board.ranked} ranked"
    return f"the board: {top}{you}"


# What follows a ranked game that ended for good, on a line of its own: the
# command that plays on, as typed after ssh (the server cannot know the name
# its players reach it by).
AFTER_RANKED = "connect again with the command daily"
SAID_ENDED = "your ranked game is over, score {score}"  # then its rank, or why none
SAID_ASSISTED = "your ranked game ended unranked, score {score}\nto practise with the AI, " + AFTER_RANKED


def ended_line(entry: DailyEntry, board: DailyBoard) -> str:
    """A ranked game's last line once ``r`` twice ended it (settled:
    ``entry``): its score and the rank ``board`` (its day's) gives it, or why none."""
    mine = board.mine if board.mine is not None and board.mine.entry.id == entry.id else None
    if entry.status == MISMATCH:
        rank = " (not ranked: its replay does not match the game you saw)"
    else:
        rank = f", rank {mine.rank} of {board.ranked} today" if mine else " (leaderboard shows its rank)"
    return f"{SAID_ENDED.format(score=entry.score)}{rank}\nto practise (other tiles), {AFTER_RANKED}"


def keys_text(entry: DailyEntry) -> bytes:
    """A ranked game's recording as ``keys`` gives it: the header with the
    day's seed, the keys, and the keys' times as a closing comment (a
    replay skips it)."""
    body = entry.recording if entry.recording.endswith(b"\n") else entry.recording + b"\n"
    times = " ".join(str(time) for time in times_of(entry))
    return body + f"# times in ms from the start, one per key: {times}\n".encode("ascii")
