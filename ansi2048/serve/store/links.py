"""Browsers linked to a player (the browser door's ``link`` flow), stored
the same way on both databases (pure: SQL text; the stores run it with
:meth:`~.base.Store.run_script`).

A one-time code (``ssh HOST link``) is a row of ``link_codes`` until it is
used or expires; a linked browser is a row of ``browser_links``, found by
its token's hash: the database never holds a code or a token as the
browser has it, so a copy of it links nobody."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

__all__ = [
    "DELETE_CODE",
    "DELETE_EXPIRED",
    "DELETE_LINK",
    "INSERT_CODE",
    "INSERT_LINK",
    "SCHEMA_STEP",
    "SELECT_LINKS",
    "SELECT_TOKEN",
    "TOUCH_LINK",
    "Statement",
]

# Version 4 of the schema: linked browsers.
SCHEMA_STEP: Tuple[str, ...] = (
    """CREATE TABLE link_codes (
        code_hash TEXT PRIMARY KEY,
        player {integer} NOT NULL REFERENCES players(id),
        expires {real} NOT NULL
    )""",
    """CREATE TABLE browser_links (
        id {serial},
        player {integer} NOT NULL REFERENCES players(id),
        token_hash TEXT NOT NULL UNIQUE,
        created {real} NOT NULL,
        used {real} NOT NULL,
        label TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX browser_links_of_player ON browser_links (player, id)",
)


@dataclass(frozen=True)
class Statement:
    """One SQL statement (psycopg's placeholders, ``%s``) and its parameters."""

    sql: str
    parameters: Tuple[Any, ...] = ()


DELETE_EXPIRED = "DELETE FROM link_codes WHERE expires <= %s OR player = %s"
INSERT_CODE = "INSERT INTO link_codes (code_hash, player, expires) VALUES (%s, %s, %s)"
# A code is used once: taken out as it is read (both databases return the deleted row).
DELETE_CODE = "DELETE FROM link_codes WHERE code_hash = %s AND expires > %s RETURNING player"
INSERT_LINK = "INSERT INTO browser_links (player, token_hash, created, used, label) VALUES (%s, %s, %s, %s, %s)"
SELECT_TOKEN = (
    "SELECT players.fingerprint, players.name FROM browser_links JOIN players ON players.id = browser_links.player"
    " WHERE browser_links.token_hash = %s"
)
TOUCH_LINK = "UPDATE browser_links SET used = %s WHERE token_hash = %s"
SELECT_LINKS = "SELECT id, created, used, label FROM browser_links WHERE player = %s ORDER BY id"
DELETE_LINK = "DELETE FROM browser_links WHERE id = %s AND player = %s"
