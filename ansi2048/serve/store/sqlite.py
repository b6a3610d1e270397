"""The store on SQLite (the default): one file in the server's data directory.

One writer thread owns the one connection (:mod:`.sqlite_writer`): each
operation here is a function of the connection it runs in the next group
commit, in a savepoint of its own.

WAL mode: readers (a backup, ``sqlite3`` at the shell) never block the
writer; ``synchronous=FULL``: a committed append survives a power cut, not
only a killed server. ``busy_timeout``: another process writing the file
(a second server by mistake, a backup) is waited for, not failed at once.
``BEGIN IMMEDIATE``: the write lock is taken when the transaction starts,
so a read-then-write (a claim, a new name) cannot be overtaken between its
read and its write.

Reads that write nothing (a game's recording, the history, the daily board)
run on a second connection, the reader's (a thread of its own, the same
:class:`~.sqlite_writer.Writer` in read transactions, ``query_only``): they
never wait for the writer's commits, nor make its transactions longer.
A read begun after a write returned sees it (the write had committed).
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

from ...records.history import Record
from ...records.tally import BoardStats
from .base import Claim, ClaimLost, DailyBoard, DailyEntry, DailyTimes, Finished, Player, Prefs, SavedGame
from .common import (
    FOLD_NAMES,
    SQLITE,
    Migration,
    distinct_name,
    migrations,
    name_pattern,
    names_to_fold,
    pending_migrations,
    prefs_of,
    prefs_row,
    renamed_note,
)
from .daily import (
    ADD_TIMES as daily_ADD_TIMES,
    COUNT_ADDRESS as daily_COUNT_ADDRESS,
    INSERT as daily_INSERT,
    RESULT as daily_RESULT,
    SELECT_ALL as daily_SELECT_ALL,
    SELECT_BY_ID as daily_SELECT_BY_ID,
    SELECT_DAY as daily_SELECT_DAY,
    SELECT_ENTRY as daily_SELECT_ENTRY,
    SELECT_TIMES as daily_SELECT_TIMES,
    entry_of as daily_entry_of,
    question_marks as daily_question_marks,
    read_board,
    settled_row as daily_settled_row,
)
from .links import Statement
from .moderation import SELECT_BAN as moderation_SELECT_BAN
from .sqlite_writer import Writer, file_identity
from .tallies import keep_plan, run_plan, stats_plan, tally_plan

__all__ = ["MIGRATIONS", "SQLiteStore"]

BUSY_TIMEOUT = 5.0  # seconds another process's write lock is waited for

MIGRATIONS = migrations(SQLITE)


class SQLiteStore:
    """:class:`~.base.Store` on the SQLite file at ``path``.

    ``migrations``: the schema's steps (tests add one to check upgrades);
    ``busy_timeout``: seconds another process's write lock is waited for,
    then :class:`~.base.StoreUnavailable`. ``commits``: how many transactions the
    writer has committed (each settles every operation it held)."""

    def __init__(
        self, path: str, migrations: Sequence[Migration] = MIGRATIONS, busy_timeout: float = BUSY_TIMEOUT
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.migrations = tuple(migrations)
        self._opened: Optional[Tuple[int, int]] = None  # the file's (device, inode) as opened
        self._writer = Writer(self._connect, moved=self._moved)
        self._reader = Writer(self._connect_reader, begin="BEGIN", name="ansi2048-store-reader", moved=self._moved)

    @property
    def commits(self) -> int:
        """How many transactions the writer has committed (each settles every operation it held)."""
        return self._writer.commits

    # -- the file ----------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # The file holds the daily secret and every player's keys: created
        # 0600 here, not by SQLite (0644 less the umask), so that only the
        # server's user reads it whatever its folder's mode; SQLite gives
        # the -wal and -shm files it makes beside it the file's own mode.
        # O_EXCL: an existing file is never opened here, for closing any
        # descriptor of a file drops every POSIX lock the process holds on
        # it -- another connection's (a second store on the file in this
        # process, the reader), which SQLite's own locking relies on.
        with suppress(FileExistsError):
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
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

    def _connect_reader(self) -> sqlite3.Connection:
        """The reader's connection: the file's settings are the writer's (WAL is the file's own)."""
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {round(self.busy_timeout * 1000)}")
            connection.execute("PRAGMA query_only = ON")
        except BaseException:
            connection.close()
            raise
        return connection

    def _moved(self) -> Optional[str]:
        """Why the file at the path is no longer the one the store opened
        (deleted, or replaced: a restore, a ``mv``): the writer's commits and
        the reader's reads would go to a file nobody will open again, so the
        store is away (saving pauses) until the path holds that file again.
        None: it does (or the store is not open yet)."""
        if self._opened is None or file_identity(self.path) == self._opened:
            return None
        how = "deleted" if file_identity(self.path) is None else "replaced by another file"
        return f"{self.path} was {how} while the server ran (put it back, or restart the server to use another)"

    # -- the Store ---------------------------------------------------------------

    async def open(self) -> List[str]:
        if self._writer.running:
            return []
        self._writer.start()
        try:
            notes = await self._writer.do(self._migrate)
            self._opened = file_identity(self.path)
            self._reader.start()  # once the schema is there
            return notes
        except BaseException:
            await self.close()
            raise

    def _migrate(self, connection: sqlite3.Connection) -> List[str]:
        connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = connection.execute("SELECT version FROM schema_version").fetchone()
        found = 0 if row is None else int(row[0])
        notes: List[str] = []
        for step in pending_migrations(found, self.migrations):
            for statement in step:
                if statement == FOLD_NAMES:
                    players = connection.execute("SELECT id, name FROM players").fetchall()
                    for player, old, new in names_to_fold(players):
                        connection.execute("UPDATE players SET name = ? WHERE id = ?", (new, player))
                        notes.append(renamed_note(old, new))
                else:
                    connection.execute(statement)
        connection.execute("DELETE FROM schema_version")
        connection.execute("INSERT INTO schema_version VALUES (?)", (max(found, len(self.migrations)),))
        return notes

    async def close(self) -> None:
        await self._reader.stop()
        await self._writer.stop()

    async def player(self, fingerprint: str, name: str) -> Player:
        def find_or_create(connection: sqlite3.Connection) -> Player:
            row = connection.execute(
                "SELECT id, name, theme, color, animation, private FROM players WHERE fingerprint = ?",
                (fingerprint,),
            ).fetchone()
            if row is None:
                pattern = name_pattern(name)
                starting = connection.execute(
                    "SELECT name FROM players WHERE lower(substr(name, 1, ?)) = lower(?)", (len(name), name)
                )
                taken = [other for (other,) in starting if pattern.fullmatch(other)]
                chosen = distinct_name(name, taken)
                cursor = connection.execute(
                    "INSERT INTO players (fingerprint, name) VALUES (?, ?)", (fingerprint, chosen)
                )
                return Player(int(cursor.lastrowid or 0), fingerprint, chosen)
            return Player(int(row[0]), fingerprint, row[1], prefs_of(row[2:]))

        return await self._writer.do(find_or_create)

    async def set_prefs(self, player: int, prefs: Prefs) -> None:
        def update(connection: sqlite3.Connection) -> None:
            connection.execute(
                "UPDATE players SET theme = ?, color = ?, animation = ?, private = ? WHERE id = ?",
                (*prefs_row(prefs), player),
            )

        await self._writer.do(update)

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

        return await self._writer.do(take)

    async def renew(self, player: int, board: str, holder: str, ttl: float) -> bool:
        def extend(connection: sqlite3.Connection) -> bool:
            cursor = connection.execute(
                "UPDATE games SET until = ? WHERE player = ? AND board = ? AND holder = ?",
                (time.time() + ttl, player, board, holder),
            )
            return cursor.rowcount == 1

        return await self._writer.do(extend)

    async def release(self, player: int, board: str, holder: str) -> None:
        def let_go(connection: sqlite3.Connection) -> None:
            connection.execute(
                "UPDATE games SET holder = NULL, until = NULL WHERE player = ? AND board = ? AND holder = ?",
                (player, board, holder),
            )

        await self._writer.do(let_go)

    async def load(self, player: int, board: str) -> Optional[bytes]:
        saved = await self.load_saved(player, board)
        return None if saved is None else saved.recording

    async def load_saved(self, player: int, board: str) -> Optional[SavedGame]:
        def read(connection: sqlite3.Connection) -> Optional[SavedGame]:
            # One read transaction: the recording, its items and the snapshot as of one moment.
            row = connection.execute(
                "SELECT recording, snapshot FROM games WHERE player = ? AND board = ?", (player, board)
            ).fetchone()
            items = [
                bytes(chunk)
                for (chunk,) in connection.execute(
                    "SELECT items FROM items WHERE player = ? AND board = ? ORDER BY seq", (player, board)
                )
            ]
            if (row is None or row[0] is None) and not items:
                return None
            recording = b"".join([bytes(row[0] or b"") if row else b"", *items])
            return SavedGame(recording, None if row is None or row[1] is None else bytes(row[1]))

        return await self._reader.do(read)

    async def keep_snapshot(self, player: int, board: str, holder: str, snapshot: bytes) -> None:
        def keep(connection: sqlite3.Connection) -> None:
            self._check_holder(connection, player, board, holder)
            connection.execute(
                "UPDATE games SET snapshot = ? WHERE player = ? AND board = ?", (snapshot, player, board)
            )

        await self._writer.do(keep)

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
                "UPDATE games SET recording = ?, snapshot = NULL WHERE player = ? AND board = ?",
                (recording, player, board),
            )

        await self._writer.do(replace)

    async def append(
        self, player: int, board: str, holder: str, items: bytes, daily_times: Optional[DailyTimes] = None
    ) -> None:
        def add(connection: sqlite3.Connection) -> None:
            self._check_holder(connection, player, board, holder)
            connection.execute("INSERT INTO items (player, board, items) VALUES (?, ?, ?)", (player, board, items))
            if daily_times is not None:  # in the same savepoint: both or neither
                entry, times = daily_times
                connection.execute(_sql(daily_ADD_TIMES), (times, entry))

        await self._writer.do(add)

    async def discard(self, player: int, board: str, holder: str) -> None:
        def forget(connection: sqlite3.Connection) -> None:
            self._check_holder(connection, player, board, holder)
            connection.execute("DELETE FROM items WHERE player = ? AND board = ?", (player, board))
            connection.execute(
                "UPDATE games SET recording = NULL, snapshot = NULL WHERE player = ? AND board = ?", (player, board)
            )

        await self._writer.do(forget)

    async def run_script(self, script: Sequence[Statement], read: bool = False) -> List[List[Tuple[Any, ...]]]:
        def run(connection: sqlite3.Connection) -> List[List[Tuple[Any, ...]]]:
            return [connection.execute(_sql(step.sql), step.parameters).fetchall() for step in script]

        return await (self._reader if read else self._writer).do(run)

    async def shared_secret(self, name: str, proposed: bytes) -> bytes:
        def keep_first(connection: sqlite3.Connection) -> bytes:
            connection.execute(
                "INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING", (name, proposed)
            )
            return bytes(connection.execute("SELECT value FROM secrets WHERE name = ?", (name,)).fetchone()[0])

        return await self._writer.do(keep_first)

    async def banned(self, fingerprint: str) -> Optional[str]:
        def read(connection: sqlite3.Connection) -> Optional[str]:
            row = connection.execute(_sql(moderation_SELECT_BAN), (fingerprint,)).fetchone()
            return None if row is None else str(row[0])

        return await self._reader.do(read)

    async def best(self, player: int, key: str) -> int:
        def read(connection: sqlite3.Connection) -> int:
            row = connection.execute("SELECT score FROM bests WHERE player = ? AND key = ?", (player, key)).fetchone()
            return 0 if row is None else int(row[0])

        return await self._reader.do(read)

    async def record_best(self, player: int, key: str, score: int) -> int:
        def keep_max(connection: sqlite3.Connection) -> int:
            connection.execute(
                "INSERT INTO bests (player, key, score) VALUES (?, ?, ?)"
                " ON CONFLICT (player, key) DO UPDATE SET score = max(score, excluded.score)",
                (player, key, score),
            )
            row = connection.execute("SELECT score FROM bests WHERE player = ? AND key = ?", (player, key)).fetchone()
            return int(row[0])

        return await self._writer.do(keep_max)

    async def add_to_history(self, player: int, record: Record) -> None:
        await self._writer.do(lambda connection: run_plan(keep_plan(player, record), partial(_rows, connection)))

    async def stats(self, player: int, held_seed: int) -> Tuple[List[BoardStats], int]:
        await self._writer.do(lambda connection: run_plan(tally_plan(player), partial(_rows, connection)))
        return await self._reader.do(
            lambda connection: run_plan(stats_plan(player, held_seed), partial(_rows, connection))
        )

    async def history(self, player: int, limit: Optional[int] = None) -> List[Finished]:
        def read(connection: sqlite3.Connection) -> List[Tuple[int, str]]:
            rows = connection.execute(
                "SELECT id, record FROM history WHERE player = ? ORDER BY id DESC LIMIT ?",
                (player, -1 if limit is None else limit),
            ).fetchall()
            return list(reversed(rows))

        return [Finished(int(game), Record.from_json(line)) for game, line in await self._reader.do(read)]

    async def finished(self, player: int, game: int) -> Optional[Record]:
        def read(connection: sqlite3.Connection) -> Optional[str]:
            found = connection.execute("SELECT record FROM history WHERE player = ? AND id = ?", (player, game))
            row = found.fetchone()
            return None if row is None else str(row[0])

        line = await self._reader.do(read)
        return None if line is None else Record.from_json(line)

    # -- the daily leaderboard (the SQL: store/daily.py) ----------------------------

    async def daily_start(
        self, day: str, player: int, address: str, started: float, recording: bytes, most_per_address: int
    ) -> Optional[DailyEntry]:
        def begin(connection: sqlite3.Connection) -> Optional[DailyEntry]:
            row = connection.execute(_sql(daily_SELECT_ENTRY), (day, player)).fetchone()
            if row is not None:
                return daily_entry_of(row)
            (others,) = connection.execute(_sql(daily_COUNT_ADDRESS), (day, address, player)).fetchone()
            if others >= most_per_address:
                return None
            connection.execute(_sql(daily_INSERT), (day, player, address, started, "playing", recording))
            return daily_entry_of(connection.execute(_sql(daily_SELECT_ENTRY), (day, player)).fetchone())

        return await self._writer.do(begin)

    async def daily_entry(self, day: str, player: int) -> Optional[DailyEntry]:
        return await self._daily_one(daily_SELECT_ENTRY, (day, player))

    async def daily_by_id(self, entry: int) -> Optional[DailyEntry]:
        return await self._daily_one(daily_SELECT_BY_ID, (entry,))

    async def _daily_one(self, sql: str, parameters: Tuple[Any, ...]) -> Optional[DailyEntry]:
        def read(connection: sqlite3.Connection) -> Optional[DailyEntry]:
            row = connection.execute(_sql(sql), parameters).fetchone()
            return None if row is None else daily_entry_of(row)

        return await self._reader.do(read)

    async def daily_entries(self, day: Optional[str] = None) -> List[DailyEntry]:
        def read(connection: sqlite3.Connection) -> List[DailyEntry]:
            if day is None:
                rows = connection.execute(_sql(daily_SELECT_ALL)).fetchall()
            else:
                rows = connection.execute(_sql(daily_SELECT_DAY), (day,)).fetchall()
            return [daily_entry_of(row) for row in rows]

        return await self._reader.do(read)

    async def daily_board(self, day: str, me: Optional[int], top: int) -> DailyBoard:
        async def fetch(sql: str, parameters: Tuple[Any, ...]) -> List[Sequence[Any]]:
            return await self._reader.do(lambda connection: connection.execute(_sql(sql), parameters).fetchall())

        return await read_board(fetch, day, me, top)

    async def daily_result(self, entry: DailyEntry) -> None:
        def write(connection: sqlite3.Connection) -> None:
            row = connection.execute(_sql(daily_SELECT_TIMES), (entry.id,)).fetchone()
            connection.execute(_sql(daily_RESULT), daily_settled_row(entry, "" if row is None else str(row[0])))

        await self._writer.do(write)


def _sql(statement: str) -> str:
    return daily_question_marks(statement)


def _rows(connection: sqlite3.Connection, sql: str, parameters: Tuple[Any, ...]) -> List[Sequence[Any]]:
    return connection.execute(_sql(sql), parameters).fetchall()
