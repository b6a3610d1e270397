"""The history file (the shell): ``history.jsonl`` in the data directory, one
finished game per line (see :mod:`.records` for the line), and UTC dates.

Appends are one ``write`` of a whole line to a file opened with
``O_APPEND``, so two games ending at once never interleave and a kill leaves
the line written or not. Should a line still be cut short (a full disk), the
next append starts on a new line and the reader skips it: one damaged line
never costs the others.
"""

from __future__ import annotations

import os
from typing import Callable, List

from .records import Record, parse_history

__all__ = ["HISTORY_FILE", "History", "utc_date", "utc_timestamp"]

HISTORY_FILE = "history.jsonl"

# Windows would turn "\n" into "\r\n" without O_BINARY; POSIX has no such flag.
_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)


def utc_timestamp(seconds: float) -> str:
    """ISO 8601 in UTC to the second: ``2026-11-22T12:43:28Z``."""
    from datetime import datetime, timezone  # here: only a finished game needs it, not start-up

    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_date(seconds: float) -> str:
    """The UTC date: ``2026-11-22`` (the daily game's day, the same for everyone)."""
    from datetime import datetime, timezone  # here: only the daily game needs it at start-up

    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d")


class History:
    """The history file at ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def append(self, record: Record) -> None:
        """Add ``record`` as one line; raises OSError if it cannot."""
        line = record.to_json().encode("utf-8") + b"\n"
        fd = os.open(self.path, _FLAGS, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:
                os.lseek(fd, size - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":
                    line = b"\n" + line  # a line cut short before: do not glue onto it
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(f"wrote {written} of {len(line)} bytes")
        finally:
            os.close(fd)

    def read(self, warn: Callable[[str], None]) -> List[Record]:
        """Every record, oldest first; damaged lines skipped with one warning
        (a last line cut short by a kill is skipped without one). No file: none."""
        try:
            with open(self.path, "rb") as stream:
                data = stream.read()
        except FileNotFoundError:
            return []
        lines = data.decode("utf-8", "replace").split("\n")
        torn = lines.pop()  # after the last newline: "" unless the last line was cut short
        records, bad = parse_history(lines)
        if torn.strip():
            records.extend(parse_history([torn])[0])
        if bad:
            where = f"line {bad[0]}" if len(bad) == 1 else f"{len(bad)} lines, the first line {bad[0]}"
            warn(f"skipped {where} of {self.path}: not a game record")
        return records
