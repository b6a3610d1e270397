"""The PostgreSQL store's schema, created or upgraded (:func:`migrate`):
under an advisory lock, so that two servers starting at once on one
database do not both upgrade it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Sequence, Tuple

from .common import FOLD_NAMES, Migration, names_to_fold, pending_migrations, renamed_note

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["SCHEMA_LOCK", "migrate"]

SCHEMA_LOCK = 20482048  # the advisory lock held while the schema is checked and upgraded


async def migrate(connection: AsyncConnection[Tuple[Any, ...]], migrations: Sequence[Migration]) -> List[str]:
    """The schema brought to ``migrations``' version in the transaction of
    ``connection``; what the upgrade did that the operator must hear of."""
    await connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
    await connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = await (await connection.execute("SELECT version FROM schema_version")).fetchone()
    found = 0 if row is None else int(row[0])
    notes: List[str] = []
    for step in pending_migrations(found, migrations):
        for statement in step:
            if statement == FOLD_NAMES:
                players = await (await connection.execute("SELECT id, name FROM players")).fetchall()
                for player, old, new in names_to_fold([(int(id_), str(name)) for id_, name in players]):
                    await connection.execute("UPDATE players SET name = %s WHERE id = %s", (new, player))
                    notes.append(renamed_note(old, new))
            else:
                await connection.execute(statement.encode())
    await connection.execute("DELETE FROM schema_version")
    await connection.execute("INSERT INTO schema_version VALUES (%s)", (max(found, len(migrations)),))
    return notes
