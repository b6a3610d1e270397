"""Where every server's lobbies, races and waits are, as rows (pure: SQL
text; the stores run it with :meth:`~.base.Store.run_script`), so that a
player on one server races in a lobby another server holds
(serve/far_races.py, serve/relay.py).

``race_rooms``: one row per lobby, race running, or player waiting for a
friend (``race NAME``) on some server: the server's id and its relay
door's address, what the row is (``phase``: lobby, racing, waiting), what
meets there (``settings``: a public lobby's settings; a friends' lobby's
are its own; a wait's, the friend it waits for), the player ids in it
(``players``, as ``,3,7,``), and what the watch list shows of it (its
settings' line, ``title``; the names the race shows, ``names``, a JSON
list). ``seen`` is the server's heartbeat: a row not seen for
:data:`STALE_SECONDS` is a killed server's, and is deleted.

One public lobby of given settings, on all servers together: a unique
index on the settings of the rows in the lobby phase. A server opening a
lobby writes its row (:data:`INSERT_ROOM`: nothing if another server's
lobby is there) and reads which lobby holds (:data:`SELECT_LOBBY`): if it
is another's, its player is relayed there. Nothing here is kept."""

from __future__ import annotations

from typing import Tuple

__all__ = [
    "DELETE_NOT_NOW",
    "DELETE_STALE",
    "INSERT_ROOM",
    "SCHEMA_STEP",
    "SELECT_LOBBY",
    "SELECT_ROOMS",
    "STALE_SECONDS",
    "UPDATE_ROOM",
]

# A server rewrites its rows every second; a row older than this is a gone server's.
STALE_SECONDS = 5.0

# The schema's step 11 (after the live games' 10).
SCHEMA_STEP: Tuple[str, ...] = (
    """CREATE TABLE race_rooms (
        token TEXT PRIMARY KEY,
        server TEXT NOT NULL,
        address TEXT NOT NULL,
        phase TEXT NOT NULL,
        settings TEXT NOT NULL,
        players TEXT NOT NULL,
        title TEXT NOT NULL,
        names TEXT NOT NULL,
        seen {real} NOT NULL
    )""",
    "CREATE UNIQUE INDEX race_rooms_one_lobby ON race_rooms (settings) WHERE phase = 'lobby'",
)

# A row written: new (nothing if another's lobby has its settings), then as it is now.
INSERT_ROOM = (
    "INSERT INTO race_rooms (token, server, address, phase, settings, players, title, names, seen)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)
UPDATE_ROOM = "UPDATE race_rooms SET phase = %s, players = %s, names = %s, seen = %s WHERE token = %s AND server = %s"
# A server's rows not written in this script (each written with the same time): gone.
DELETE_NOT_NOW = "DELETE FROM race_rooms WHERE server = %s AND seen <> %s"
DELETE_STALE = "DELETE FROM race_rooms WHERE seen < %s"
SELECT_LOBBY = "SELECT server, address FROM race_rooms WHERE phase = 'lobby' AND settings = %s"
SELECT_ROOMS = (
    "SELECT address, phase, settings, players, title, names FROM race_rooms WHERE server <> %s AND seen >= %s"
)
