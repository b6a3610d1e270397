"""The daily leaderboard's operations on PostgreSQL (the SQL: :mod:`.daily`),
a part of :class:`~.postgres.PostgresStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, List, Optional, Sequence, Tuple, TypeVar

from .base import DailyBoard, DailyEntry
from .daily import (
    COUNT_ADDRESS,
    INSERT,
    RESULT,
    SELECT_ALL,
    SELECT_BY_ID,
    SELECT_DAY,
    SELECT_ENTRY,
    SELECT_TIMES,
    entry_of,
    read_board,
    settled_row,
)
from .postgres_schema import SCHEMA_LOCK

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["DailyOnPostgres"]

T = TypeVar("T")


class DailyOnPostgres:
    """The daily operations of :class:`~.postgres.PostgresStore`, whose
    ``_transaction`` runs each in a transaction of its own."""

    async def _transaction(self, work: Callable[[AsyncConnection[Tuple[Any, ...]]], Awaitable[T]]) -> T:
        raise NotImplementedError  # PostgresStore's

    async def daily_start(
        self, day: str, player: int, address: str, started: float, recording: bytes, most_per_address: int
    ) -> Optional[DailyEntry]:
        async def begin(connection: AsyncConnection[Tuple[Any, ...]]) -> Optional[DailyEntry]:
            # One day's ranking is entered one player at a time, so that two
            # servers cannot both let an address past its cap.
            await connection.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (SCHEMA_LOCK, day))
            found = await (await connection.execute(SELECT_ENTRY, (day, player))).fetchone()
            if found is not None:
                return entry_of(found)
            counted = await (await connection.execute(COUNT_ADDRESS, (day, address, player))).fetchone()
            assert counted is not None
            if int(counted[0]) >= most_per_address:
                return None
            await connection.execute(INSERT, (day, player, address, started, "playing", recording))
            row = await (await connection.execute(SELECT_ENTRY, (day, player))).fetchone()
            assert row is not None
            return entry_of(row)

        return await self._transaction(begin)

    async def daily_entry(self, day: str, player: int) -> Optional[DailyEntry]:
        return await self._daily_one(SELECT_ENTRY, (day, player))

    async def daily_by_id(self, entry: int) -> Optional[DailyEntry]:
        return await self._daily_one(SELECT_BY_ID, (entry,))

    async def _daily_one(self, sql: str, parameters: Tuple[Any, ...]) -> Optional[DailyEntry]:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> Optional[DailyEntry]:
            row = await (await connection.execute(sql, parameters)).fetchone()
            return None if row is None else entry_of(row)

        return await self._transaction(read)

    async def daily_entries(self, day: Optional[str] = None) -> List[DailyEntry]:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> List[DailyEntry]:
            if day is None:
                cursor = await connection.execute(SELECT_ALL)
            else:
                cursor = await connection.execute(SELECT_DAY, (day,))
            return [entry_of(row) for row in await cursor.fetchall()]

        return await self._transaction(read)

    async def daily_board(self, day: str, me: Optional[int], top: int) -> DailyBoard:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> DailyBoard:
            async def fetch(sql: str, parameters: Tuple[Any, ...]) -> List[Sequence[Any]]:
                return list(await (await connection.execute(sql, parameters)).fetchall())

            return await read_board(fetch, day, me, top)

        return await self._transaction(read)

    async def daily_result(self, entry: DailyEntry) -> None:
        async def write(connection: AsyncConnection[Tuple[Any, ...]]) -> None:
            row = await (await connection.execute(SELECT_TIMES, (entry.id,))).fetchone()
            await connection.execute(RESULT, settled_row(entry, "" if row is None else str(row[0])))

        await self._transaction(write)
