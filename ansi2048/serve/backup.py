"""``ansi2048 serve --backup FILE``: a consistent copy of a SQLite store,
taken while the server runs.

Copying ``serve.sqlite3`` with ``cp`` while a server writes can catch a
half-written page, and misses what is still in the ``-wal`` file. SQLite's
online backup (Python's :meth:`sqlite3.Connection.backup`) copies the
database as one read transaction sees it: in WAL mode that reader never
blocks the server's writer, and the copy is every transaction committed
when it began, whole. It is written beside ``FILE`` under a temporary name,
checked (``PRAGMA integrity_check``), synced and renamed into place, so
``FILE`` is either the old copy or the new one, never half of one; and it is
made readable by its owner only, as the store is: it holds the daily
game's secret.

PostgreSQL has its own tool for this (``pg_dump``: docs/storage.md)."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing, suppress
from dataclasses import dataclass
from typing import Tuple

__all__ = ["Backup", "backup_sqlite"]


@dataclass(frozen=True)
class Backup:
    """What a backup holds: its players, their games in progress and
    finished, and the copy's size in bytes."""

    players: int
    playing: int
    finished: int
    size: int

    def __str__(self) -> str:
        return f"{self.players} players, {self.playing} games in progress, {self.finished} finished ({self.size} bytes)"


def backup_sqlite(source: str, target: str) -> Backup:
    """Copy the SQLite store at ``source`` to ``target`` (replaced whole, or
    left as it was). :class:`OSError` or :class:`sqlite3.Error` when it
    cannot be done; ``ValueError`` for a source that is not a store."""
    if not os.path.isfile(source):
        raise ValueError(f"no database at {source}: is the data directory (--data-dir) or --db right?")
    if os.path.exists(target) and os.path.samefile(source, target):
        raise ValueError(f"{target} is the database itself: back it up to another file")
    directory = os.path.dirname(os.path.abspath(target))
    partial = os.path.join(directory, f".{os.path.basename(target)}.{os.getpid()}.partial")
    # The copy is created 0600 before SQLite writes a byte of it.
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    try:
        # mode=ro: the backup never writes the server's database (nor creates it).
        with (
            closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as database,
            closing(sqlite3.connect(partial)) as copy,
        ):
            database.backup(copy)  # all pages in one step: one read transaction, one consistent state
            checked = copy.execute("PRAGMA integrity_check").fetchone()
            if checked is None or checked[0] != "ok":
                raise ValueError(f"the copy of {source} failed its integrity check: {checked}")
            players, playing, finished = _counts(copy)
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
        _sync_directory(directory)
    except BaseException:
        with suppress(OSError):
            os.unlink(partial)
        raise
    return Backup(players, playing, finished, os.path.getsize(target))


def _counts(copy: sqlite3.Connection) -> Tuple[int, int, int]:
    try:
        players, playing, finished = (
            int(copy.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("players", "games", "history")
        )
    except sqlite3.OperationalError as error:  # no such table: not the game's store
        raise ValueError(f"not an ansi2048 serve database ({error})") from None
    return players, playing, finished


def _sync_directory(directory: str) -> None:
    """The rename itself made durable (POSIX; a no-op where directories cannot be opened)."""
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
