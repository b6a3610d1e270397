"""What both databases share (pure): the schema's version rules, how a name
taken by another key gets its suffix, and how a record is kept.

The SQL differs between SQLite and PostgreSQL; these rules must not."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

from ...records import Record, config_key
from .base import Prefs, SchemaTooNew

__all__ = [
    "DEFAULT_FILE",
    "Migration",
    "Row",
    "distinct_name",
    "history_row",
    "pending_migrations",
    "prefs_of",
    "prefs_row",
]

DEFAULT_FILE = "serve.sqlite3"  # the SQLite database in the server's data directory

# One schema step: the statements that take a database from the version
# before it to the next. A store's steps are its schema's history: version N
# is the first N steps applied, and a database records the N it has.
Migration = Tuple[str, ...]

# A stored row of prefs: theme, color, animation (0, 1, None), private (0, 1).
Row = Tuple[Optional[str], Optional[str], Optional[int], int]


def pending_migrations(found: int, migrations: Sequence[Migration]) -> Sequence[Migration]:
    """The steps a database at version ``found`` needs; :class:`SchemaTooNew`
    (one line) if a newer ansi2048 wrote it."""
    if found > len(migrations):
        raise SchemaTooNew(
            f"the database's schema is version {found}, newer than this ansi2048's {len(migrations)}:"
            " upgrade ansi2048 to serve it"
        )
    return migrations[found:]


def distinct_name(name: str, taken: Iterable[str]) -> str:
    """``name``, or if another key holds it the first of ``name2``,
    ``name3``, ... that none does."""
    held = set(taken)
    if name not in held:
        return name
    suffix = 2
    while f"{name}{suffix}" in held:
        suffix += 1
    return f"{name}{suffix}"


def name_pattern(name: str) -> re.Pattern[str]:
    """The names :func:`distinct_name` may choose for ``name``: it, and it
    followed by digits (the names a query found starting with ``name`` are
    filtered by this)."""
    return re.compile(re.escape(name) + r"[0-9]*")


def prefs_row(prefs: Prefs) -> Row:
    animation = None if prefs.animation is None else int(prefs.animation)
    return (prefs.theme, prefs.color, animation, int(prefs.private))


def prefs_of(row: Row) -> Prefs:
    theme, color, animation, private = row
    return Prefs(theme, color, None if animation is None else bool(animation), bool(private))


@dataclass(frozen=True)
class HistoryRow:
    """A finished game as stored: its board and score beside the record's
    line, so that rankings can be queried without parsing every line."""

    board: str
    score: int
    daily: Optional[str]
    line: str


def history_row(record: Record) -> HistoryRow:
    return HistoryRow(config_key(record.rows, record.cols, record.goal), record.score, record.daily, record.to_json())
