"""The live games of every server on one store, as rows (pure: SQL text;
the stores run it with :meth:`~.base.Store.run_script` and
:meth:`~.base.Store.read_script`), so that a watcher connected to one
server sees the games played on the others (serve/far_live.py).

``live_games``: each server's games being played (its own id and the
game's number there), what the watch list shows of them, who may watch
them (serve/secrecy.py's facts), and, while a watcher on another server
follows one, its newest frame as JSON; ``seen`` is the server's heartbeat:
a row not seen for :data:`STALE_SECONDS` is a killed server's, ignored and
then deleted. ``live_watchers``: how many watchers each server has of each
game of another, which that server adds to its player's "N watching".
``live_takeovers``: claims taken over from another server's session, which
that server ends (its player is told at once, not at their next key).

Nothing here is kept: a server that starts deletes nothing of the others',
and every row is rewritten within seconds by the server it belongs to."""

from __future__ import annotations

from typing import Tuple

__all__ = [
    "DELETE_GONE",
    "DELETE_STALE",
    "DELETE_STALE_TAKEN_OVER",
    "DELETE_STALE_WATCHERS",
    "DELETE_TAKEN_OVER",
    "INSERT_TAKEN_OVER",
    "SCHEMA_STEP",
    "SELECT_GAMES",
    "SELECT_TAKEN_OVER",
    "SELECT_WATCHERS",
    "STALE_SECONDS",
    "TOUCH_GAMES",
    "UPSERT_GAME",
    "UPSERT_VIEW",
    "UPSERT_WATCHERS",
]

# A server rewrites its rows' heartbeat every second or so; a row not seen
# for this long belongs to a server that is gone (killed: it could not
# delete them).
STALE_SECONDS = 10.0

# The schema's step 10 (after moderation's 9).
SCHEMA_STEP: Tuple[str, ...] = (
    """CREATE TABLE live_games (
        server TEXT NOT NULL,
        number {integer} NOT NULL,
        name TEXT NOT NULL,
        board_rows {integer} NOT NULL,
        board_cols {integer} NOT NULL,
        deal TEXT NOT NULL,
        day TEXT NOT NULL,
        owner {integer},
        score {integer} NOT NULL,
        biggest {integer} NOT NULL,
        watchers {integer} NOT NULL,
        view TEXT,
        version {integer} NOT NULL,
        seen {real} NOT NULL,
        PRIMARY KEY (server, number)
    )""",
    """CREATE TABLE live_watchers (
        watcher TEXT NOT NULL,
        server TEXT NOT NULL,
        number {integer} NOT NULL,
        watching {integer} NOT NULL,
        seen {real} NOT NULL,
        PRIMARY KEY (watcher, server, number)
    )""",
    "CREATE TABLE live_takeovers (holder TEXT PRIMARY KEY, seen {real} NOT NULL)",
)

# A game as the list shows it (its frame left as it was).
UPSERT_GAME = (
    "INSERT INTO live_games (server, number, name, board_rows, board_cols, deal, day, owner, score, biggest,"
    " watchers, view, version, seen) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, 0, %s)"
    " ON CONFLICT (server, number) DO UPDATE SET score = excluded.score, biggest = excluded.biggest,"
    " watchers = excluded.watchers, seen = excluded.seen"
)
# Its newest frame, for its watchers on other servers.
UPSERT_VIEW = "UPDATE live_games SET view = %s, version = %s, seen = %s WHERE server = %s AND number = %s"
# The heartbeat of a server's games.
TOUCH_GAMES = "UPDATE live_games SET seen = %s WHERE server = %s"
# A game that ended, and what watched it.
DELETE_GONE = "DELETE FROM live_games WHERE server = %s AND number = %s"
UPSERT_WATCHERS = (
    "INSERT INTO live_watchers (watcher, server, number, watching, seen) VALUES (%s, %s, %s, %s, %s)"
    " ON CONFLICT (watcher, server, number) DO UPDATE SET watching = excluded.watching, seen = excluded.seen"
)
# Rows of servers that are gone (older than a time), and watchers of none.
DELETE_STALE = "DELETE FROM live_games WHERE seen < %s"
DELETE_STALE_WATCHERS = "DELETE FROM live_watchers WHERE seen < %s OR watching = 0"

# A claim of another server's session taken over here: that server ends the
# session at its next tick (its own take-overs it ends at once).
INSERT_TAKEN_OVER = "INSERT INTO live_takeovers (holder, seen) VALUES (%s, %s) ON CONFLICT (holder) DO NOTHING"
SELECT_TAKEN_OVER = "SELECT holder FROM live_takeovers WHERE substr(holder, 1, %s) = %s"
DELETE_TAKEN_OVER = "DELETE FROM live_takeovers WHERE holder = %s"
DELETE_STALE_TAKEN_OVER = "DELETE FROM live_takeovers WHERE seen < %s"

# The other servers' games seen lately (the view only when newer than the
# version the reader has: the column is read whole otherwise).
SELECT_GAMES = (
    "SELECT server, number, name, board_rows, board_cols, deal, day, owner, score, biggest, watchers, version,"
    " view FROM live_games WHERE server <> %s AND seen >= %s"
)
# How many watch each of this server's games from elsewhere.
SELECT_WATCHERS = (
    "SELECT number, SUM(watching) FROM live_watchers WHERE server = %s AND watcher <> %s AND seen >= %s GROUP BY number"
)
