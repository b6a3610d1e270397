"""The store on PostgreSQL, through psycopg 3 and its async connection pool:
for several servers sharing one database.

Group commit, as on SQLite: appends wait in a queue that one writer task
empties into one transaction (:mod:`.postgres_appends`), and each append
returns once that transaction has committed. The other operations are rare next to appends: each runs in a transaction
of its own on a pooled connection.

Several servers: a claim is a row; taking it over updates that row, while a
batch of appends holds it ``FOR SHARE`` from its check to its commit, so a
take-over waits for the batch (whose appends are then in) or the batch sees
the new holder (and raises :class:`ClaimLost`): never two writers of a game.
Names are taken by ``INSERT ... ON CONFLICT DO NOTHING``, tried again with
the next suffix when another server took the name first. The schema is
upgraded under an advisory lock, so two servers starting at once do not
both upgrade it. Times are the database's clock, which every server shares.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from ...records.history import Record
from ...records.tally import BoardStats
from .base import (
    Claim,
    ClaimLost,
    DailyTimes,
    Finished,
    Player,
    Prefs,
    SavedGame,
    StoreError,
    StoreUnavailable,
)
from .common import (
    POSTGRES,
    Migration,
    distinct_name,
    migrations,
    name_pattern,
    prefs_of,
    prefs_row,
)
from .links import Statement
from .moderation import SELECT_BAN as moderation_SELECT_BAN
from .postgres_appends import Appends
from .postgres_daily import DailyOnPostgres
from .postgres_schema import migrate
from .tallies import keep_plan, run_plan_async, stats_plan, tally_plan

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

__all__ = ["MIGRATIONS", "PostgresStore"]

T = TypeVar("T")

CONNECT_TIMEOUT = 5.0  # seconds a connection is waited for, then StoreUnavailable
STATEMENT_TIMEOUT = 10.0  # seconds a statement may take (a lock held elsewhere, a stalled database)
# A database that went silent (a network partition, not a refusal) is given
# up on within about 15 s rather than the system's default of hours; the URL
# may set these itself.
SILENCE = {"keepalives_idle": "5", "keepalives_interval": "2", "keepalives_count": "3", "tcp_user_timeout": "15000"}
NAME_ATTEMPTS = 100  # names tried before giving up, each taken by another server meanwhile

MIGRATIONS = migrations(POSTGRES)

NOW = "extract(epoch FROM clock_timestamp())"


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class PostgresStore(DailyOnPostgres):
    """:class:`~.base.Store` on the PostgreSQL database at ``url``
    (``postgresql://USER@HOST/DB``, any libpq connection URI).

    ``migrations``: the schema's steps (tests add one to check upgrades);
    ``pool_size``: most connections this server opens; ``timeout``: seconds
    a connection is waited for; ``statement_timeout``: seconds a statement
    may take; past either, :class:`StoreUnavailable`. ``commits``: how many
    batches of appends the writer has committed."""

    def __init__(
        self,
        url: str,
        migrations: Sequence[Migration] = MIGRATIONS,
        pool_size: int = 8,
        timeout: float = CONNECT_TIMEOUT,
        statement_timeout: float = STATEMENT_TIMEOUT,
    ) -> None:
        self.url = url
        self.migrations = tuple(migrations)
        self.pool_size = pool_size
        self.timeout = timeout
        self.statement_timeout = statement_timeout
        self._pool: Optional[AsyncConnectionPool[AsyncConnection[Tuple[Any, ...]]]] = None
        self._appends = Appends(self._transaction)

    @property
    def commits(self) -> int:
        """How many batches of appends the writer has committed."""
        return self._appends.commits

    # -- connections ------------------------------------------------------------

    async def _transaction(self, work: Callable[[AsyncConnection[Tuple[Any, ...]]], Awaitable[T]]) -> T:
        """``work`` in one transaction on a pooled connection; a database that
        cannot be reached or went away is :class:`StoreUnavailable`."""
        import psycopg
        from psycopg_pool import PoolTimeout

        if self._pool is None:
            raise StoreError("the store is not open")
        try:
            async with self._pool.connection() as connection, connection.transaction():
                return await work(connection)
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as error:
            raise StoreUnavailable(f"the database cannot be reached now: {_first_line(error)}") from error
        except psycopg.Error as error:  # a constraint: the caller's mistake, not the database's state
            raise StoreError(f"the database refused it: {_first_line(error)}") from error

    async def open(self) -> List[str]:
        if self._pool is not None:
            return []
        from psycopg_pool import AsyncConnectionPool, PoolTimeout

        # A connection the database dropped (restarted) is found out before
        # use, by the pool's check (psycopg_pool 3.2+; before it, on first use).
        check = getattr(AsyncConnectionPool, "check_connection", None)
        pool: AsyncConnectionPool[AsyncConnection[Tuple[Any, ...]]] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self.pool_size,
            open=False,
            timeout=self.timeout,
            kwargs={"autocommit": True, **self._silence()},
            configure=self._configure,
            **({"check": check} if check is not None else {}),
        )
        try:
            await pool.open(wait=True, timeout=self.timeout)
        except PoolTimeout as error:
            await pool.close()
            raise StoreUnavailable(f"cannot connect to the database at {self._where()}") from error
        self._pool = pool
        try:
            notes = await self._transaction(partial(migrate, migrations=self.migrations))
        except BaseException:
            self._pool = None
            await pool.close()
            raise
        self._appends.start()
        return notes

    def _silence(self) -> Dict[str, str]:
        """:data:`SILENCE`'s settings the URL does not make itself (TCP only: a Unix socket never goes silent)."""
        from psycopg.conninfo import conninfo_to_dict

        try:
            given = conninfo_to_dict(self.url)
        except Exception:
            return {}  # connecting will say what is wrong with the URL
        host = str(given.get("host") or "")
        if not host or host.startswith("/") or host.startswith("@"):
            return {}
        return {name: value for name, value in SILENCE.items() if name not in given}

    async def _configure(self, connection: AsyncConnection[Tuple[Any, ...]]) -> None:
        await connection.execute(f"SET statement_timeout = {round(self.statement_timeout * 1000)}".encode())

    def _where(self) -> str:
        """The URL without its password, for messages."""
        from psycopg.conninfo import conninfo_to_dict

        try:
            parts = conninfo_to_dict(self.url)
        except Exception:
            return "(an unreadable URL)"
        return f"{parts.get('user', '')}@{parts.get('host', '')}/{parts.get('dbname', '')}"

    async def close(self) -> None:
        await self._appends.stop()
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    # -- group commit (postgres_appends.py) ----------------------------------------

    async def append(
        self, player: int, board: str, holder: str, items: bytes, daily_times: Optional[DailyTimes] = None
    ) -> None:
        await self._appends.append(player, board, holder, items, daily_times)

    # -- the rest of the Store --------------------------------------------------

    async def player(self, fingerprint: str, name: str) -> Player:
        pattern = name_pattern(name)

        async def find_or_create(connection: AsyncConnection[Tuple[Any, ...]]) -> Player:
            for _ in range(NAME_ATTEMPTS):
                cursor = await connection.execute(
                    "SELECT id, name, theme, color, animation, private FROM players WHERE fingerprint = %s",
                    (fingerprint,),
                )
                row = await cursor.fetchone()
                if row is not None:
                    return Player(int(row[0]), fingerprint, row[1], prefs_of(row[2:]))
                cursor = await connection.execute(
                    "SELECT name FROM players WHERE lower(left(name, %s)) = lower(%s)", (len(name), name)
                )
                taken = [other for (other,) in await cursor.fetchall() if pattern.fullmatch(other)]
                chosen = distinct_name(name, taken)
                cursor = await connection.execute(
                    "INSERT INTO players (fingerprint, name) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING id",
                    (fingerprint, chosen),
                )
                created = await cursor.fetchone()
                if created is not None:
                    return Player(int(created[0]), fingerprint, chosen)
                # Another server took the name, or made this player, since we looked: look again.
            raise StoreUnavailable(f"no free name like {name!r} after {NAME_ATTEMPTS} tries")

        return await self._transaction(find_or_create)

    async def set_prefs(self, player: int, prefs: Prefs) -> None:
        async def update(connection: AsyncConnection[Tuple[Any, ...]]) -> None:
            await connection.execute(
                "UPDATE players SET theme = %s, color = %s, animation = %s, private = %s WHERE id = %s",
                (*prefs_row(prefs), player),
            )

        await self._transaction(update)

    async def claim(self, player: int, board: str, holder: str, ttl: float, take_over: bool = False) -> Optional[Claim]:
        async def take(connection: AsyncConnection[Tuple[Any, ...]]) -> Optional[Claim]:
            cursor = await connection.execute(
                f"INSERT INTO games (player, board, holder, until) VALUES (%s, %s, %s, {NOW} + %s)"
                " ON CONFLICT (player, board) DO UPDATE SET holder = excluded.holder, until = excluded.until"
                f" WHERE games.holder IS NULL OR games.holder = excluded.holder OR games.until <= {NOW} OR %s"
                " RETURNING holder",
                (player, board, holder, ttl, take_over),
            )
            if await cursor.fetchone() is not None:
                return None
            # Not taken: the row is locked by the upsert, its holder as it is now.
            cursor = await connection.execute(
                "SELECT holder, until FROM games WHERE player = %s AND board = %s", (player, board)
            )
            row = await cursor.fetchone()
            assert row is not None
            return Claim(row[0], float(row[1]))

        return await self._transaction(take)

    async def renew(self, player: int, board: str, holder: str, ttl: float) -> bool:
        async def extend(connection: AsyncConnection[Tuple[Any, ...]]) -> bool:
            cursor = await connection.execute(
                f"UPDATE games SET until = {NOW} + %s WHERE player = %s AND board = %s AND holder = %s",
                (ttl, player, board, holder),
            )
            return cursor.rowcount == 1

        return await self._transaction(extend)

    async def release(self, player: int, board: str, holder: str) -> None:
        async def let_go(connection: AsyncConnection[Tuple[Any, ...]]) -> None:
            await connection.execute(
                "UPDATE games SET holder = NULL, until = NULL WHERE player = %s AND board = %s AND holder = %s",
                (player, board, holder),
            )

        await self._transaction(let_go)

    async def load(self, player: int, board: str) -> Optional[bytes]:
        saved = await self.load_saved(player, board)
        return None if saved is None else saved.recording

    async def load_saved(self, player: int, board: str) -> Optional[SavedGame]:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> Optional[SavedGame]:
            # One statement, one view of the database: never an old recording with new items.
            cursor = await connection.execute(
                "SELECT (SELECT recording FROM games WHERE player = %s AND board = %s),"
                " (SELECT string_agg(items, ''::bytea ORDER BY seq) FROM items WHERE player = %s AND board = %s),"
                " (SELECT snapshot FROM games WHERE player = %s AND board = %s)",
                (player, board, player, board, player, board),
            )
            row = await cursor.fetchone()
            assert row is not None
            recording, items, snapshot = row
            if recording is None and items is None:
                return None
            return SavedGame(
                bytes(recording or b"") + bytes(items or b""), None if snapshot is None else bytes(snapshot)
            )

        return await self._transaction(read)

    async def keep_snapshot(self, player: int, board: str, holder: str, snapshot: bytes) -> None:
        async def keep(connection: AsyncConnection[Tuple[Any, ...]]) -> None:
            await self._check_holder(connection, player, board, holder)
            await connection.execute(
                "UPDATE games SET snapshot = %s WHERE player = %s AND board = %s", (snapshot, player, board)
            )

        await self._transaction(keep)

    @staticmethod
    async def _check_holder(connection: AsyncConnection[Tuple[Any, ...]], player: int, board: str, holder: str) -> None:
        cursor = await connection.execute(
            "SELECT holder FROM games WHERE player = %s AND board = %s FOR UPDATE", (player, board)
        )
        row = await cursor.fetchone()
        if row is None or row[0] != holder:
            raise ClaimLost("this game was taken over by another session")

    async def rewrite(self, player: int, board: str, holder: str, recording: bytes) -> None:
        async def replace(connection: AsyncConnection[Tuple[Any, ...]]) -> None:
            await self._check_holder(connection, player, board, holder)
            await connection.execute("DELETE FROM items WHERE player = %s AND board = %s", (player, board))
            await connection.execute(
                "UPDATE games SET recording = %s, snapshot = NULL WHERE player = %s AND board = %s",
                (recording, player, board),
            )

        await self._transaction(replace)

    async def discard(self, player: int, board: str, holder: str) -> None:
        async def forget(connection: AsyncConnection[Tuple[Any, ...]]) -> None:
            await self._check_holder(connection, player, board, holder)
            await connection.execute("DELETE FROM items WHERE player = %s AND board = %s", (player, board))
            await connection.execute(
                "UPDATE games SET recording = NULL, snapshot = NULL WHERE player = %s AND board = %s", (player, board)
            )

        await self._transaction(forget)

    async def run_script(self, script: Sequence[Statement], read: bool = False) -> List[List[Tuple[Any, ...]]]:
        async def run(connection: AsyncConnection[Tuple[Any, ...]]) -> List[List[Tuple[Any, ...]]]:
            cursors = [await connection.execute(step.sql.encode(), step.parameters) for step in script]
            return [list(await cursor.fetchall()) if cursor.description else [] for cursor in cursors]

        return await self._transaction(run)

    async def shared_secret(self, name: str, proposed: bytes) -> bytes:
        async def keep_first(connection: AsyncConnection[Tuple[Any, ...]]) -> bytes:
            await connection.execute(
                "INSERT INTO secrets (name, value) VALUES (%s, %s) ON CONFLICT DO NOTHING", (name, proposed)
            )
            cursor = await connection.execute("SELECT value FROM secrets WHERE name = %s", (name,))
            row = await cursor.fetchone()
            assert row is not None  # inserted above, or already there; secrets are never deleted
            return bytes(row[0])

        return await self._transaction(keep_first)

    async def banned(self, fingerprint: str) -> Optional[str]:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> Optional[str]:
            row = await (await connection.execute(moderation_SELECT_BAN, (fingerprint,))).fetchone()
            return None if row is None else str(row[0])

        return await self._transaction(read)

    async def best(self, player: int, key: str) -> int:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> int:
            cursor = await connection.execute("SELECT score FROM bests WHERE player = %s AND key = %s", (player, key))
            row = await cursor.fetchone()
            return 0 if row is None else int(row[0])

        return await self._transaction(read)

    async def record_best(self, player: int, key: str, score: int) -> int:
        async def keep_max(connection: AsyncConnection[Tuple[Any, ...]]) -> int:
            cursor = await connection.execute(
                "INSERT INTO bests (player, key, score) VALUES (%s, %s, %s)"
                " ON CONFLICT (player, key) DO UPDATE SET score = GREATEST(bests.score, excluded.score)"
                " RETURNING score",
                (player, key, score),
            )
            row = await cursor.fetchone()
            assert row is not None
            return int(row[0])

        return await self._transaction(keep_max)

    async def add_to_history(self, player: int, record: Record) -> None:
        await self._transaction(lambda connection: run_plan_async(keep_plan(player, record), _rows_of(connection)))

    async def stats(self, player: int, held_seed: int) -> Tuple[List[BoardStats], int]:
        await self._transaction(lambda connection: run_plan_async(tally_plan(player), _rows_of(connection)))
        plan = stats_plan(player, held_seed)
        return await self._transaction(lambda connection: run_plan_async(plan, _rows_of(connection)))

    async def history(self, player: int, limit: Optional[int] = None) -> List[Finished]:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> List[Tuple[Any, ...]]:
            cursor = await connection.execute(
                "SELECT id, record FROM history WHERE player = %s ORDER BY id DESC LIMIT %s", (player, limit)
            )
            return list(reversed(await cursor.fetchall()))

        return [Finished(int(game), Record.from_json(line)) for game, line in await self._transaction(read)]

    async def finished(self, player: int, game: int) -> Optional[Record]:
        async def read(connection: AsyncConnection[Tuple[Any, ...]]) -> Optional[str]:
            cursor = await connection.execute(
                "SELECT record FROM history WHERE player = %s AND id = %s", (player, game)
            )
            row = await cursor.fetchone()
            return None if row is None else str(row[0])

        line = await self._transaction(read)
        return None if line is None else Record.from_json(line)


def _rows_of(
    connection: AsyncConnection[Tuple[Any, ...]],
) -> Callable[[str, Tuple[Any, ...]], Awaitable[List[Sequence[Any]]]]:
    """A plan's statements run on ``connection``: each one's rows (none for a write)."""

    async def execute(sql: str, parameters: Tuple[Any, ...]) -> List[Sequence[Any]]:
        cursor = await connection.execute(sql, parameters)
        return list(await cursor.fetchall()) if cursor.description is not None else []

    return execute
