"""``ansi2048 serve --verify [DAY]``: every stored ranked daily game replayed
again from its recording (after an upgrade, say, or to check the database),
and any whose result changed reported. A recording whose header names other
rules than this version's is reported as such, never re-ranked."""

from __future__ import annotations

from typing import IO, List, Optional

from ..options.parser import EXIT_ERROR, EXIT_OK
from .daily import RANKED, replay_recording, same_rules
from .names import display_name
from .store import open_store
from .store.base import DailyEntry, StoreError

__all__ = ["changes", "verify"]


def changes(entry: DailyEntry) -> str:
    """How ``entry``'s replay differs from its stored result ("" if not at all)."""
    if not same_rules(entry.recording):
        return "recorded under other rules than this version's: not replayed"
    try:
        replayed = replay_recording(entry.recording)
    except ValueError as error:
        return f"the recording cannot be replayed: {error}"
    stored = (entry.score, entry.biggest, entry.moves, entry.cells)
    if (replayed.score, replayed.biggest, replayed.moves, replayed.cells) == stored:
        return ""
    return (
        f"stored score {entry.score} (tile {entry.biggest}, {entry.moves} moves),"
        f" the replay gives {replayed.score} (tile {replayed.biggest}, {replayed.moves} moves)"
        + ("" if replayed.score != entry.score or replayed.moves != entry.moves else ", another board")
    )


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
        entries = await store.daily_entries(day)
    except StoreError as error:
        stderr.write(f"ansi2048 serve: error: {error}\n")
        return EXIT_ERROR
    finally:
        await store.close()
    ranked = [entry for entry in entries if entry.status in RANKED]
    changed: List[str] = []
    for entry in ranked:
        why = changes(entry)
        if why:
            changed.append(f"game {entry.id} of {entry.day} ({display_name(entry.name)}): {why}")
    for line in changed:
        stdout.write(line + "\n")
    stdout.write(f"{len(ranked)} ranked games replayed, {len(changed)} changed\n")
    stdout.flush()
    return EXIT_ERROR if changed else EXIT_OK
