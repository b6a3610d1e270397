"""The SQLite store's writer: one thread owns the one connection, and runs
the operations coroutines hand it in group commits. The store's reader is
another of these, with a connection of its own that only reads, its batches
in read transactions (``BEGIN``): WAL lets them run beside the writer's,
each reading a snapshot of what was committed when it began.

Coroutines await futures the thread settles with ``call_soon_threadsafe``,
so the event loop never waits for the disk. The thread takes every
operation queued while it was busy and runs them in one ``BEGIN IMMEDIATE``
transaction, each in a savepoint of its own (one operation's
:class:`~.base.ClaimLost` does not undo the others): many sessions' appends
share one commit, and each caller's future is settled only once that commit
is done. What the operations are, and the file's settings, are
:mod:`.sqlite`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, List, Optional, Tuple, TypeVar

from .base import StoreError, StoreUnavailable

__all__ = ["MOST_PER_COMMIT", "Writer", "file_identity"]

T = TypeVar("T")

MOST_PER_COMMIT = 1000  # operations in one transaction: bounds a commit's latency


def _unavailable(error: Exception) -> StoreUnavailable:
    """A database error as the one line a player or an operator reads."""
    return StoreUnavailable(f"the database cannot be written now: {error}")


def _refused(error: sqlite3.Error) -> StoreError:
    """What the database refused to do (a constraint): the caller's mistake, not the database's state."""
    return StoreError(f"the database refused it: {error}")


class _Moved(Exception):
    """The database's file was deleted or replaced while it was open."""


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


def _settle_all(jobs: List[_Job[Any]]) -> None:
    for job in jobs:
        if job.future.cancelled():
            continue
        if job.error is not None:
            job.future.set_exception(job.error)
        else:
            job.future.set_result(job.result)


def _by_loop(batch: List[_Job[Any]]) -> Dict[asyncio.AbstractEventLoop, List[_Job[Any]]]:
    """``batch``'s jobs by the event loop that awaits each (one, but for tests that run several)."""
    jobs: Dict[asyncio.AbstractEventLoop, List[_Job[Any]]] = {}
    for job in batch:
        jobs.setdefault(job.loop, []).append(job)
    return jobs


class Writer:
    """The writer thread of one SQLite file: ``connect`` opens the
    connection (again after one was lost); ``begin`` starts each batch's
    transaction (``BEGIN``: the reader's, which takes no write lock);
    ``name``: the thread's. ``commits``: how many transactions it has
    committed (each settles every operation it held)."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        begin: str = "BEGIN IMMEDIATE",
        name: str = "ansi2048-store",
        moved: Callable[[], Optional[str]] = lambda: None,
    ) -> None:
        self._connect_to = connect
        self._moved = moved  # why the file is no longer the one opened (None: it is): checked before each commit
        self._begin = begin
        self._name = name
        self.commits = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._connection: Optional[sqlite3.Connection] = None

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
                # One hand-back per event loop, not per job: each is a wake-up
                # of the loop through its self-pipe (a system call), and every
                # job of a commit is settled at the same moment anyway.
                for loop, jobs in _by_loop(batch).items():
                    _hand_back(loop, _settle_all, jobs)
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
                self._connection = self._connect_to()
            connection = self._connection
            connection.execute(self._begin)
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
            moved = self._moved()
            if moved is not None:  # committed there, nothing would be kept: rolled back, the store is away
                self._fail(batch, _Moved(moved))
                return
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

    # -- what the store calls --------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """The writer thread, started: :meth:`do` may be awaited from now on."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()

    async def stop(self) -> None:
        """The thread ended once every job queued before is done, and the connection closed."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Closing(loop, future))
        await future
        thread.join()

    async def do(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """``operation`` run on the writer thread in the next transaction: its result, or its error."""
        if self._thread is None:
            raise StoreError("the store is not open")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(operation, loop, future))
        return await future


def _settle_closed(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.set_result(None)


def file_identity(path: str) -> Optional[Tuple[int, int]]:
    """The file at ``path``, as (device, inode); None: there is none (what
    the store compares to notice its file deleted or replaced)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino
