"""The PostgreSQL store's group commit: appends wait in a queue that one
writer task empties into one transaction (one statement checks every claim,
one inserts every item), and each append returns once that transaction has
committed.

A batch holds its games' claims ``FOR SHARE`` from its check to its commit,
so a take-over waits for the batch (whose appends are then in) or the batch
sees the new holder (and that append raises :class:`~.base.ClaimLost`). A
COMMIT that got no answer leaves its appends *in doubt* until the database
says whether their transaction committed. The pool and every other
operation are :mod:`.postgres`'s.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Optional, Set, Tuple

from .base import ClaimLost, DailyTimes, StoreError, StoreUnavailable
from .daily import ADD_TIMES

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["MOST_PER_COMMIT", "Appends"]

MOST_PER_COMMIT = 1000  # appends in one transaction: bounds a commit's latency

Outcomes = List[Optional[BaseException]]  # per append: stored (None), ClaimLost or StoreUnavailable
# The store's one way to run work in a transaction on a pooled connection.
Transaction = Callable[[Callable[["AsyncConnection[Tuple[Any, ...]]"], Awaitable[Outcomes]]], Awaitable[Outcomes]]


@dataclass(eq=False)  # compared by identity: two appends of the same items are two appends
class _Append:
    player: int
    board: str
    holder: str
    items: bytes
    future: asyncio.Future[None]
    daily_times: Optional[DailyTimes] = None  # committed with the items (Store.append)

    @property
    def key(self) -> Tuple[int, str, str]:
        return (self.player, self.board, self.holder)


@dataclass
class _Attempt:
    """What one batch's transaction did, known even if its commit failed."""

    xid: Optional[str] = None  # the transaction's id, once it has one
    inserted: List[_Append] = field(default_factory=list)
    stored_before: List[_Append] = field(default_factory=list)  # by a transaction that was in doubt
    resolved: Set[Tuple[int, str, str]] = field(default_factory=set)  # in-doubt keys the database answered for


def _settle(future: asyncio.Future[None], error: Optional[BaseException]) -> None:
    if future.done():  # its caller was cancelled
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


class Appends:
    """The appends' writer task and its queue; ``transaction`` runs a
    batch's work on a pooled connection. ``commits``: how many batches it
    has committed."""

    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction
        self.commits = 0
        self._pending: List[_Append] = []
        # Appends whose transaction's COMMIT got no answer: its id and their items.
        self._in_doubt: Dict[Tuple[int, str, str], Tuple[str, bytes]] = {}
        self._wake = asyncio.Event()
        self._closing = False
        self._task: Optional[asyncio.Task[None]] = None

    def start(self) -> None:
        """The writer task, started on the running event loop."""
        self._closing = False
        self._wake = asyncio.Event()  # of this event loop: a store may be opened again under another
        self._task = asyncio.create_task(self._write_appends(), name="ansi2048-store")

    async def stop(self) -> None:
        """The writer task ended once every append queued before is written."""
        task, self._task = self._task, None
        if task is not None:
            self._closing = True
            self._wake.set()
            await task

    async def append(
        self, player: int, board: str, holder: str, items: bytes, daily_times: Optional[DailyTimes] = None
    ) -> None:
        if self._task is None:
            raise StoreError("the store is not open")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append(_Append(player, board, holder, items, future, daily_times))
        self._wake.set()
        await future

    async def _write_appends(self) -> None:
        """The writer: every append queued while it committed the last batch
        goes into the next one."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending[:MOST_PER_COMMIT], self._pending[MOST_PER_COMMIT:]
            if self._pending:
                self._wake.set()
            if batch:
                for append, error in zip(batch, await self._write(batch)):
                    _settle(append.future, error)
            elif self._closing:
                return

    async def _write(self, batch: List[_Append]) -> List[Optional[BaseException]]:
        """Each append's outcome: stored (None), ClaimLost or StoreUnavailable.

        A connection lost during COMMIT leaves it unknown whether the batch
        was stored. Its transaction's id is kept for each append it inserted
        (``_in_doubt``): when the caller tries the same items again, the
        database says whether that transaction committed (then they are
        stored already, and not stored twice) or not (then they are now)."""
        attempt = _Attempt()
        errors: List[Optional[BaseException]]
        try:
            errors = await self._transaction(partial(self._commit, batch=batch, attempt=attempt))
        except Exception as failure:  # StoreUnavailable, or a bug its callers must see
            errors = [type(failure)(*failure.args) if isinstance(failure, StoreError) else failure for _ in batch]
            if attempt.xid is not None:
                for append in attempt.inserted:
                    self._in_doubt[append.key] = (attempt.xid, append.items)
        else:
            self.commits += 1
        for key in attempt.resolved:
            self._in_doubt.pop(key, None)
        # Stored by an earlier transaction that was in doubt: done, whatever became of this one.
        return [None if append in attempt.stored_before else error for append, error in zip(batch, errors)]

    async def _commit(
        self, connection: AsyncConnection[Tuple[Any, ...]], batch: List[_Append], attempt: _Attempt
    ) -> List[Optional[BaseException]]:
        doubtful = {append.key: self._in_doubt[append.key] for append in batch if append.key in self._in_doubt}
        if doubtful:
            cursor = await connection.execute(
                "SELECT x, pg_xact_status(x::xid8) FROM unnest(%s::text[]) AS x",
                (sorted({xid for xid, _ in doubtful.values()}),),
            )
            status: Dict[str, Optional[str]] = {row[0]: row[1] for row in await cursor.fetchall()}
            for append in batch:
                if append.key not in doubtful:
                    continue
                xid, items = doubtful[append.key]
                if status.get(xid) == "in progress":
                    continue  # still unknown: this append stays unavailable (below) and in doubt
                attempt.resolved.add(append.key)
                if status.get(xid) == "committed" and items == append.items:
                    attempt.stored_before.append(append)
        unknown = [a for a in batch if a.key in doubtful and a.key not in attempt.resolved]
        todo = [a for a in batch if a not in attempt.stored_before and a not in unknown]
        row = await (await connection.execute("SELECT pg_current_xact_id()::text")).fetchone()
        attempt.xid = None if row is None else str(row[0])
        games = sorted({(append.player, append.board) for append in todo})
        cursor = await connection.execute(
            "SELECT player, board, holder FROM games"
            " WHERE (player, board) IN (SELECT * FROM unnest(%s::bigint[], %s::text[])) FOR SHARE",
            ([player for player, _ in games], [board for _, board in games]),
        )
        holders: Dict[Tuple[int, str], Optional[str]] = {(row[0], row[1]): row[2] for row in await cursor.fetchall()}
        attempt.inserted = [append for append in todo if holders.get((append.player, append.board)) == append.holder]
        if attempt.inserted:
            await connection.execute(
                "INSERT INTO items (player, board, items)"
                " SELECT r.player, r.board, r.items"
                " FROM unnest(%s::bigint[], %s::text[], %s::bytea[]) WITH ORDINALITY AS r(player, board, items, n)"
                " ORDER BY r.n",
                (
                    [append.player for append in attempt.inserted],
                    [append.board for append in attempt.inserted],
                    [append.items for append in attempt.inserted],
                ),
            )
        for append in attempt.inserted:  # a ranked game's key times, in the same transaction as its keys
            if append.daily_times is not None:
                entry, times = append.daily_times
                await connection.execute(ADD_TIMES, (times, entry))
        return [
            StoreUnavailable("the database has not said yet whether these keys were saved")
            if append in unknown
            else None
            if append in attempt.stored_before or append in attempt.inserted
            else ClaimLost("this game was taken over by another session")
            for append in batch
        ]
