"""The store on SQLite (the default): one file in the server's data directory.

One writer thread owns the one connection; coroutines hand it operations
and await futures it settles with ``call_soon_threadsafe``, so the event
loop never waits for the disk. The thread takes every operation queued
while it was busy and runs them in one ``BEGIN IMMEDIATE`` transaction, each
in a savepoint of its own (one operation's :class:`ClaimLost` does not undo
the others): many sessions' appends share one commit (group commit), and
each caller's future is settled only once that commit is done.

WAL mode: readers (a backup, ``sqlite3`` at the shell) never block the
writer; ``synchronous=FULL``: a committed append survives a power cut, not
only a killed server. ``busy_timeout``: another process writing the file
(a second server by mistake, a backup) is waited for, not failed at once.
``BEGIN IMMEDIATE``: the write lock is taken when the transaction starts,
so a read-then-write (a claim, a new name) cannot be overtaken between its
read and its write.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, List, Optional, Sequence, TypeVar

from ...records.history import Record
from .base import Claim, ClaimLost, Player, Prefs, StoreError, StoreUnavailable
from .common import (
    SQLITE,
    Migration,
    distinct_name,
    history_row,
    migrations,
    name_pattern,
    pending_migrations,
    prefs_of,
    prefs_row,
)

__all__ = ["MIGRATIONS", "SQLiteStore"]

T = TypeVar("T")

BUSY_TIMEOUT = 5.0  # seconds another process's write lock is waited for
MOST_PER_COMMIT = 1000  # operations in one transaction: bounds a commit's latency

MIGRATIONS = migrations(SQLITE)


def _unavailable(error: Exception) -> StoreUnavailable:
    """A database error as the one line a player or an operator reads."""
    return StoreUnavailable(f"the database cannot be written now: {error}")


def _refused(error: sqlite3.Error) -> StoreError:
    """What the database refused to do (a constraint): the caller's mistake, not the database's state."""
    return StoreError(f"the database refused it: {error}")


@dataclass
class _Job(Generic[T]):
    operation: Callable[[sqlite3.Connection], T]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[T]
    result: Any = None
    error: Optional[BaseException] = None


@dataclass
class _Closing:
    """The last thing the writer thread is handed."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]


def _hand_back(loop: asyncio.AbstractEventLoop, settle: Callable[[Any], None], what: Any) -> None:
    """``settle(what)`` on ``loop``'s thread; nothing if that loop has ended
    (its caller is gone): the writer thread must live on for the others."""
    with contextlib.suppress(RuntimeError):  # the loop is closed
        loop.call_soon_threadsafe(settle, what)


def _settle(job: _Job[Any]) -> None:
    if job.future.cancelled():
        return
    if job.error is not None:
        job.future.set_exception(job.error)
    else:
        job.future.set_result(job.result)


class SQLiteStore:
    """:class:`~.base.Store` on the SQLite file at ``path``.

    ``migrations``: the schema's steps (tests add one to check upgrades);
    ``busy_timeout``: seconds another process's write lock is waited for,
    then :class:`StoreUnavailable`. ``commits``: how many transactions the
    writer has committed (each settles every operation it held)."""

    def __init__(
        self, path: str, migrations: Sequence[Migration] = MIGRATIONS, busy_timeout: float = BUSY_TIMEOUT
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.migrations = tuple(migrations)
        self.commits = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._connection: Optional[sqlite3.Connection] = None

    # -- the writer thread -------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: no implicit transactions; the writer says BEGIN IMMEDIATE itself.
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {round(self.busy_timeout * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
            connection.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            connection.close()
            raise
        return connection

    def _serve(self) -> None:
        """The writer thread: batches of queued jobs, one transaction each."""
        while True:
            first = self._queue.get()
            batch: List[_Job[Any]] = []
            closing: Optional[_Closing] = None
            item = first
            while True:
                if isinstance(item, _Closing):
                    closing = item
                    break
                batch.append(item)
                if len(batch) >= MOST_PER_COMMIT:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                try:
                    self._run(batch)
                except Exception as error:  # a bug: its callers see it, the writer lives on
                    self._fail(batch, error)
                for job in batch:
                    _hand_back(job.loop, _settle, job)
            if closing is not None:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None
                _hand_back(closing.loop, _settle_closed, closing.future)
                return

    def _run(self, batch: List[_Job[Any]]) -> None:
        """Every job of ``batch`` in one transaction; each job's result or
        error set on it. A database error that is no job's fault (the disk
        full, the file locked too long) fails them all: nothing of the batch
        was committed, and each caller may try again."""
        try:
            if self._connection is None:
                self._connection = self._connect()
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
        except (sqlite3.Error, OSError) as error:  # OSError: the data directory cannot be made
            self._fail(batch, error)
            return
        try:
            for job in batch:
                connection.execute("SAVEPOINT job")
                try:
                    job.result = job.operation(connection)
                except sqlite3.OperationalError:
                    raise
                except Exception as error:  # the job's own failure: ClaimLost, an unknown player
                    connection.execute("ROLLBACK TO job")
                    job.error = _refused(error) if isinstance(error, sqlite3.Error) else error
                connection.execute("RELEASE job")
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            self._fail(batch, error)
            return
        self.commits += 1

    def _fail(self, batch: List[_Job[Any]], error: Exception) -> None:
        connection = self._connection
        if connection is not None and connection.in_transaction:
            try:
                connection.execute("ROLLBACK")
            except sqlite3.Error:
                # The connection is unusable: the next batch opens another.
                connection.close()
                self._connection = None
        for job in batch:
            job.result = None
            job.error = _unavailable(error)

    async def _do(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        if self._thread is None:
            raise StoreError("the store is not open")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(operation, loop, future))
        return await future

    # -- the Store ---------------------------------------------------------------

    async def open(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._serve, name="ansi2048-store", daemon=True)
        self._thread.start()
        try:
            await self._do(self._migrate)
        except BaseException:
            await self.close()
            raise

    def _migrate(self, connection: sqlite3.Connection) -> None:
        connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = connection.execute("SELECT version FROM schema_version").fetchone()
        found = 0 if row is None else int(row[0])
        for step in pending_migrations(found, self.migrations):
            for statement in step:
                connection.execute(statement)
        connection.execute("DELETE FROM schema_version")
        connection.execute("INSERT INTO schema_version VALUES (?)", (max(found, len(self.migrations)),))

    async def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Closing(loop, future))
        await future
        thread.join()

    async def player(self, fingerprint: str, name: str) -> Player:
        def find_or_create(connection: sqlite3.Connection) -> Player:
            row = connection.execute(
                "SELECT id, name, theme, color, animation, private FROM players WHERE fingerprint = ?",
                (fingerprint,),
            ).fetchone()
            if row is None:
                pattern = name_pattern(name)
                starting = connection.execute(
                    "SELECT name FROM players WHERE substr(name, 1, ?) = ?", (len(name), name)
                )
                taken = [other for (other,) in starting if pattern.fullmatch(other)]
                chosen = distinct_name(name, taken)
                cursor = connection.execute(
                    "INSERT INTO players (fingerprint, name) VALUES (?, ?)", (fingerprint, chosen)
                )
                return Player(int(cursor.lastrowid or 0), fingerprint, chosen)
            return Player(int(row[0]), fingerprint, row[1], prefs_of(row[2:]))

        return await self._do(find_or_create)

    async def set_prefs(self, player: int, prefs: Prefs) -> None:
        def update(connection: sqlite3.Connection) -> None:
            connection.execute(
                "UPDATE players SET theme = ?, color = ?, animation = ?, private = ? WHERE id = ?",
                (*prefs_row(prefs), player),
            )

        await self._do(update)

    async def claim(self, player: int, board: str, holder: str, ttl: float, take_over: bool = False) -> Optional[Claim]:
        def take(connection: sqlite3.Connection) -> Optional[Claim]:
            now = time.time()
            row = connection.execute(
                "SELECT holder, until FROM games WHERE player = ? AND board = ?", (player, board)
            ).fetchone()
            if row is not None and row[0] is not None and row[0] != holder and row[1] > now and not take_over:
                return Claim(row[0], row[1])
            connection.execute(
                "INSERT INTO games (player, board, holder, until) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (player, board) DO UPDATE SET holder = excluded.holder, until = excluded.until",
                (player, board, holder, now + ttl),
            )
            return None

        return await self._do(take)

    async def release(self, player: int, board: str, holder: str) -> None:
        def let_go(connection: sqlite3.Connection) -> None:
            connection.execute(
                "UPDATE games SET holder = NULL, until = NULL WHERE player = ? AND board = ? AND holder = ?",
                (player, board, holder),
            )

        await self._do(let_go)

    async def load(self, player: int, board: str) -> Optional[bytes]:
        def read(connection: sqlite3.Connection) -> Optional[bytes]:
            row = connection.execute(
                "SELECT recording FROM games WHERE player = ? AND board = ?", (player, board)
            ).fetchone()
            items = [
                bytes(chunk)
                for (chunk,) in connection.execute(
                    "SELECT items FROM items WHERE player = ? AND board = ? ORDER BY seq", (player, board)
                )
            ]
            if (row is None or row[0] is None) and not items:
                return None
            return b"".join([bytes(row[0] or b"") if row else b"", *items])

        return await self._do(read)

    @staticmethod
    def _check_holder(connection: sqlite3.Connection, player: int, board: str, holder: str) -> None:
        row = connection.execute("SELECT holder FROM games WHERE player = ? AND board = ?", (player, board)).fetchone()
        if row is None or row[0] != holder:
            raise ClaimLost("this game was taken over by another session")

    async def rewrite(self, player: int, board: str, holder: str, recording: bytes) -> None:
        def replace(connection: sqlite3.Connection) -> None:
            self._check_holder(connection, player, board, holder)
            connection.execute("DELETE FROM items WHERE player = ? AND board = ?", (player, board))
            connection.execute(
                "UPDATE games SET recording = ? WHERE player = ? AND board = ?", (recording, player, board)
            )

        await self._do(replace)

    async def append(self, player: int, board: str, holder: str, items: bytes) -> None:
        def add(connection: sqlite3.Connection) -> None:
            self._check_holder(connection, player, board, holder)
            connection.execute("INSERT INTO items (player, board, items) VALUES (?, ?, ?)", (player, board, items))

        await self._do(add)

    async def discard(self, player: int, board: str, holder: str) -> None:
        def forget(connection: sqlite3.Connection) -> None:
            self._check_holder(connection, player, board, holder)
            connection.execute("DELETE FROM items WHERE player = ? AND board = ?", (player, board))
            connection.execute("UPDATE games SET recording = NULL WHERE player = ? AND board = ?", (player, board))

        await self._do(forget)

    async def best(self, player: int, key: str) -> int:
        def read(connection: sqlite3.Connection) -> int:
            row = connection.execute("SELECT score FROM bests WHERE player = ? AND key = ?", (player, key)).fetchone()
            return 0 if row is None else int(row[0])

        return await self._do(read)

    async def record_best(self, player: int, key: str, score: int) -> int:
        def keep_max(connection: sqlite3.Connection) -> int:
            connection.execute(
                "INSERT INTO bests (player, key, score) VALUES (?, ?, ?)"
                " ON CONFLICT (player, key) DO UPDATE SET score = max(score, excluded.score)",
                (player, key, score),
            )
            row = connection.execute("SELECT score FROM bests WHERE player = ? AND key = ?", (player, key)).fetchone()
            return int(row[0])

        return await self._do(keep_max)

    async def keep(self, player: int, record: Record) -> None:
        row = history_row(record)

        def add(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT INTO history (player, board, score, daily, record) VALUES (?, ?, ?, ?, ?)",
                (player, row.board, row.score, row.daily, row.line),
            )

        await self._do(add)

    async def history(self, player: int, limit: Optional[int] = None) -> List[Record]:
        def read(connection: sqlite3.Connection) -> List[str]:
            rows = connection.execute(
                "SELECT record FROM history WHERE player = ? ORDER BY id DESC LIMIT ?",
                (player, -1 if limit is None else limit),
            ).fetchall()
            return [line for (line,) in reversed(rows)]

        return [Record.from_json(line) for line in await self._do(read)]


def _settle_closed(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.set_result(None)
