"""The list of live games a watcher chooses from (pure): its entries, its
lines, and the keys it takes (a watcher watching takes only the one that
leaves). Drawn and driven by :func:`~.watch.watch_session`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Dict, List, Sequence

from ..render.style import fit_text

__all__ = ["Entry", "ListKey", "list_keys", "list_lines", "watch_keys_leave"]


@dataclass(frozen=True)
class Entry:
    """One game of the watch list."""

    number: int  # the live game's id on this server
    name: str
    score: int
    biggest: int
    rows: int
    cols: int
    watchers: int
    secret: bool = False  # a ranked game of today: listed as played, not watchable (serve/secrecy.py)


# The list's first line, longest first: the first that fits the window is
# shown, and how to leave always is (as "q quit" stays on the game's key line).
_TITLES = (
    "Games being played now (arrows or j/k choose, Enter watches, q leaves)",
    "Games being played now (j/k, Enter watches, q leaves)",
    "Games played now (Enter watches, q leaves)",
    "Enter watches, q leaves",
    "q leaves",
)
# In place of a ranked game of today's watchers: it is being played, and
# replays once the day is over (serve/secrecy.py); it fits 80 columns.
SECRET_MARK = " (replay after 00:00 UTC)"
_NONE = (
    "  No game is being played now: this list follows as they start.",
    "  No game is being played now.",
    "  No game now.",
)


def list_lines(entries: Sequence[Entry], selected: int, width: int) -> List[str]:
    """The watch list, one game a line, the chosen one marked; its words
    are never cut: the table keeps the columns that fit the window whole."""
    lines = [fit_text(_TITLES, width), ""]
    if not entries:
        return [*lines, fit_text(_NONE, width)]
    # The names' column as wide as the longest (names.MAX_NAME at most):
    # a narrow window then shows the numbers beside them.
    named = max(len("player"), *(len(entry.name) for entry in entries))
    table = [[f"  {'player':<{named}}", f" {'score':>8}", f" {'tile':>6}", f" {'board':>6}", f" {'watching':>9}", ""]]
    for index, entry in enumerate(entries):
        mark = ">" if index == selected else " "
        board = f"{entry.rows}x{entry.cols}"
        watching = f" {'ranked':>9}" if entry.secret else f" {entry.watchers:>9}"
        numbers = [f" {entry.score:>8}", f" {entry.biggest:>6}", f" {board:>6}", watching]
        table.append([f"{mark} {entry.name:<{named}}", *numbers, SECRET_MARK if entry.secret else ""])
    kept, used = 1, max(len(row[0]) for row in table)  # the names, always (cut last, if even they do not fit)
    while kept < len(table[0]) and used + max(len(row[kept]) for row in table) <= width:
        used += max(len(row[kept]) for row in table)
        kept += 1
    return lines + ["".join(row[:kept]).rstrip()[:width] for row in table]


class ListKey(Enum):
    UP = "up"
    DOWN = "down"
    CHOOSE = "choose"
    LEAVE = "leave"


_LIST_KEYS: Dict[bytes, ListKey] = {
    b"\x1b[A": ListKey.UP,
    b"\x1bOA": ListKey.UP,
    b"k": ListKey.UP,
    b"\x1b[B": ListKey.DOWN,
    b"\x1bOB": ListKey.DOWN,
    b"j": ListKey.DOWN,
    b"\r": ListKey.CHOOSE,
    b"\n": ListKey.CHOOSE,
    b"q": ListKey.LEAVE,
    b"Q": ListKey.LEAVE,
    b"\x03": ListKey.LEAVE,
}


def list_keys(data: bytes) -> List[ListKey]:
    """The list's keys in one read; anything else is skipped byte by byte."""
    keys: List[ListKey] = []
    at = 0
    while at < len(data):
        for length in (3, 1):
            key = _LIST_KEYS.get(data[at : at + length])
            if key is not None:
                keys.append(key)
                at += length
                break
        else:
            at += 1
    return keys


def watch_keys_leave(data: bytes) -> bool:
    """A watcher's keys: only q (or Ctrl-C) does something: it leaves."""
    return ListKey.LEAVE in list_keys(data)
