"""``ansi2048 serve --verify [DAY]``: every stored ranked daily game replayed
again from its recording (after an upgrade, say, or to check the database),
and any whose result changed reported, by the rule that ranked it
(:func:`~ansi2048.records.replay.verdict`: the day's seed and board, this
version's rules, the stored score, moves and board). A recording whose
header names other rules than this version's is reported as such, never
re-ranked."""

from __future__ import annotations

from typing import IO, List, Optional

from ..options.parser import EXIT_ERROR, EXIT_OK
from ..records.replay import OTHER_RULES, Result, verdict
from .daily import RANKED, daily_setup
from .names import display_name
from .ranked import daily_secret
from .store import open_store
from .store.base import DailyEntry, StoreError

__all__ = ["changes", "verify"]


def changes(entry: DailyEntry, secret: bytes) -> str:
    """How ``entry``'s replay differs from its stored result ("" if not at
    all): the ranking's own rule (:func:`~ansi2048.records.replay.verdict`),
    the stored result in place of the game the player saw."""
    stored = Result(entry.score, entry.moves, entry.cells)
    replayed, why = verdict(entry.recording, daily_setup(secret, entry.day), stored)
    if why == OTHER_RULES:
        return "recorded under other rules than this version's: not replayed"
    if replayed is None:
        return f"the recording cannot be replayed: {why}"
    if not why:
        return ""
    numbers = (
        f"stored score {entry.score} (tile {entry.biggest}, {entry.moves} moves),"
        f" the replay gives {replayed.score} (tile {replayed.biggest}, {replayed.moves} moves)"
    )
    # (Numbers that differ say it all; else, what does differ.)
    differ = (replayed.score, replayed.moves) != (entry.score, entry.moves)
    return numbers if differ and why.startswith("the replay gives") else f"{numbers}: {why}"


async def verify(db: str, data_dir: str, day: Optional[str], stdout: IO[str], stderr: IO[str]) -> int:
    """The report on ``day``'s games (None: every day's), a line per
    changed game and one in all; status 1 if any changed."""
    try:
        store = open_store(db, data_dir)
        await store.open()
    except (OSError, ValueError, StoreError) as error:
        stderr.write(f"ansi2048 serve: error: {error}\n")
        return EXIT_ERROR
    try:
        ranked = [entry for entry in await store.daily_entries(day) if entry.status in RANKED]
        # (The days' seeds: their secret is in the store once any game was ranked.)
        secret = (await daily_secret(store, data_dir))[0] if ranked else b""
    except (OSError, ValueError, StoreError) as error:
        stderr.write(f"ansi2048 serve: error: {error}\n")
        return EXIT_ERROR
    finally:
        await store.close()
    changed: List[str] = []
    for entry in ranked:
        why = changes(entry, secret)
        if why:
            changed.append(f"game {entry.id} of {entry.day} ({display_name(entry.name)}): {why}")
    for line in changed:
        stdout.write(line + "\n")
    stdout.write(f"{len(ranked)} ranked games replayed, {len(changed)} changed\n")
    stdout.flush()
    return EXIT_ERROR if changed else EXIT_OK
