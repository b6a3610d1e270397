"""Moderation's tables, the same on both databases (pure: SQL text; the
stores run it with :meth:`~.base.Store.run_script`): the keys banned from
every server of the store (checked as a key logs in), and the ranked games
taken off their day's board, each with the operator's reason, which the
board shows (a board anyone can check must say what was taken off)."""

from __future__ import annotations

from typing import Tuple

__all__ = [
    "DELETE_BAN",
    "NOT_REMOVED",
    "SCHEMA_STEP",
    "SELECT_BAN",
    "SELECT_REMOVED",
    "UPSERT_BAN",
    "UPSERT_REMOVAL",
]

# The schema's step 9 (after the races' 8).
SCHEMA_STEP: Tuple[str, ...] = (
    "CREATE TABLE bans (fingerprint TEXT PRIMARY KEY, reason TEXT NOT NULL, since TEXT NOT NULL)",
    """CREATE TABLE removals (
        entry {integer} PRIMARY KEY REFERENCES daily(id),
        reason TEXT NOT NULL,
        since TEXT NOT NULL
    )""",
)

# A ban given again replaces its reason (and its date).
UPSERT_BAN = (
    "INSERT INTO bans (fingerprint, reason, since) VALUES (%s, %s, %s)"
    " ON CONFLICT (fingerprint) DO UPDATE SET reason = excluded.reason, since = excluded.since"
)
DELETE_BAN = "DELETE FROM bans WHERE fingerprint = %s RETURNING fingerprint"
SELECT_BAN = "SELECT reason FROM bans WHERE fingerprint = %s"
UPSERT_REMOVAL = (
    "INSERT INTO removals (entry, reason, since) VALUES (%s, %s, %s)"
    " ON CONFLICT (entry) DO UPDATE SET reason = excluded.reason, since = excluded.since"
)
# What the board's rankings leave out (store/daily.py's ranked rows): a removed
# game stays out whatever its status becomes (it may still be being played).
NOT_REMOVED = "daily.id NOT IN (SELECT entry FROM removals)"
# The day's removed games, as the board lists them.
SELECT_REMOVED = (
    "SELECT daily.id, players.name, daily.score, removals.reason FROM removals"
    " JOIN daily ON daily.id = removals.entry JOIN players ON players.id = daily.player"
    " WHERE daily.day = %s ORDER BY daily.id"
)
