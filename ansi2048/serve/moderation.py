"""``ansi2048 serve --ban FINGERPRINT [--reason TEXT]``, ``--unban
FINGERPRINT`` and ``--remove-entry ID --reason TEXT``: one-shot commands
that act on the store and exit, as ``--backup`` does (:func:`moderate`), and
the bound on their reasons.

A ban is a row of the store (store/moderation.py), so it holds on every
server of the store from the next connection on: a server reads it as a key
logs in (serve/connection.py), and refuses that key's sessions, saying why.
A removed ranked game leaves its day's rankings but not its board: the board
lists it, with the reason, so that anyone re-checking the board knows what
was taken off and why (serve/daily.py's removed_line, removed_document)."""

from __future__ import annotations

import time
from typing import IO

from ..options.parser import EXIT_ERROR, EXIT_OK
from ..storage.history_file import utc_timestamp
from .names import display_name
from .settings import ServeOptions

__all__ = ["NO_REASON", "REASON_CHARS", "moderate"]

NO_REASON = "no reason given"  # a ban's, without --reason
REASON_CHARS = 200  # the longest reason (--reason's bound): shown to a refused player, and on the board


async def moderate(options: ServeOptions, stdout: IO[str], stderr: IO[str]) -> int:
    """The one moderation ``options`` ask for, on the store; one line saying
    what it did, or one error line (status 1)."""
    from .store import open_store
    from .store.base import StoreError
    from .store.links import Statement
    from .store.moderation import DELETE_BAN, UPSERT_BAN, UPSERT_REMOVAL

    since = utc_timestamp(time.time())
    try:
        store = open_store(options.db, options.data_dir)
        await store.open()
    except (OSError, ValueError, StoreError) as error:
        stderr.write(f"ansi2048 serve: error: {error}\n")
        return EXIT_ERROR
    try:
        if options.ban:
            await store.run_script([Statement(UPSERT_BAN, (options.ban, options.reason or NO_REASON, since))])
            said = f"banned {options.ban} on every server of this store, from its next connection on"
        elif options.unban:
            [deleted] = await store.run_script([Statement(DELETE_BAN, (options.unban,))])
            if not deleted:
                stderr.write(f"ansi2048 serve: error: --unban: {options.unban} is not banned\n")
                return EXIT_ERROR
            said = f"unbanned {options.unban}"
        else:
            assert options.remove_entry is not None  # neither --ban nor --unban
            entry = await store.daily_by_id(options.remove_entry)
            if entry is None:
                stderr.write(f"ansi2048 serve: error: --remove-entry: no ranked game {options.remove_entry}\n")
                return EXIT_ERROR
            await store.run_script([Statement(UPSERT_REMOVAL, (entry.id, options.reason, since))])
            who = f"{display_name(entry.name)}, score {entry.score}"
            said = f"removed game {entry.id} of {entry.day} ({who}) from its board, which says why"
    except StoreError as error:
        stderr.write(f"ansi2048 serve: error: {error}\n")
        return EXIT_ERROR
    finally:
        await store.close()
    stdout.write(said + "\n")
    return EXIT_OK
