"""The history file (the shell): ``history.jsonl`` in the data directory, one
finished game per line (see :mod:`.records` for the line), and UTC dates.

Appends are one ``write`` of a whole line to a file opened with
``O_APPEND``, so two games ending at once never interleave and a kill leaves
the line written or not. Should a line still be cut short (a full disk), the
next append starts on a new line and the reader skips it: one damaged line
never costs the others. Reading streams it a line at a time (a line too long
to be a record is skipped unread), so any history reads in bounded memory;
the file is opened only if it is a regular file of its own (:mod:`.files`):
a symlink (which would send the record outside the data directory) or a FIFO
is set aside when a game is kept, and skipped with a warning by ``--stats``.
"""

from __future__ import annotations

import os
from typing import IO, Callable, Iterator, List, Optional, Tuple

from ..records.history import Record
from .files import NotAFile, open_regular, reason, set_aside

__all__ = ["HISTORY_FILE", "MAX_LINE", "History", "utc_date", "utc_timestamp"]

HISTORY_FILE = "history.jsonl"
# The longest line read as a record: a game of about a million keys. A longer
# line is skipped over as damaged, so reading takes bounded memory.
MAX_LINE = 1 << 20

_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT


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

    def append(self, record: Record) -> Optional[str]:
        """Add ``record`` as one line; raises OSError if it cannot. A history
        that is not a regular file of its own is set aside and a new one
        begun: the warning that says so is returned."""
        line = record.to_json().encode("utf-8") + b"\n"
        note = None
        try:
            fd = open_regular(self.path, _FLAGS)
        except NotAFile as error:
            note = f"the history was {error}; it is set aside as\n{set_aside(self.path, 'bad')}"
            fd = open_regular(self.path, _FLAGS)
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
        return note

    def records(self, warn: Callable[[str], None]) -> Iterator[Tuple[int, Record]]:
        """Every record with its offset in the file, oldest first, read a
        line at a time (memory does not grow with the file). A damaged line
        is skipped, with one warning at the end for them all; a last line
        cut short by a kill, quietly. No file: none. A path that is not a
        regular file (a FIFO would hang, a device never end): one warning."""
        try:
            stream = os.fdopen(open_regular(self.path, os.O_RDONLY), "rb")
        except FileNotFoundError:
            return
        except (OSError, NotAFile) as error:
            warn(f"cannot read the history ({reason(error)}); no games read\n{self.path}")
            return
        bad: List[int] = []
        with stream:
            offset = 0
            for number, line, length, ended in _lines(stream):
                where, offset = offset, offset + length
                if line is not None and not line.strip():
                    continue
                try:
                    if line is None or len(line) > MAX_LINE:
                        raise ValueError("too long")
                    record = Record.from_json(line.decode("utf-8"))
                except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                    if ended:  # else: a last line cut short, as a kill leaves it
                        bad.append(number)
                    continue
                yield where, record
        if bad:
            which = f"line {bad[0]}" if len(bad) == 1 else f"{len(bad)} lines, the first line {bad[0]}"
            warn(f"skipped {which} of the history: not a game record\n{self.path}")

    def fetch(self, where: int) -> Record:
        """The record at offset ``where`` (as :meth:`records` gave it)."""
        with os.fdopen(open_regular(self.path, os.O_RDONLY), "rb") as stream:
            stream.seek(where)
            return Record.from_json(stream.readline(MAX_LINE + 1).decode("utf-8"))

    def read(self, warn: Callable[[str], None]) -> List[Record]:
        """Every record, oldest first (for a history known to be small)."""
        return [record for _, record in self.records(warn)]


def _lines(stream: IO[bytes]) -> Iterator[Tuple[int, Optional[bytes], int, bool]]:
    """(number from 1, the line or None if longer than MAX_LINE, its length
    in bytes, ended by a newline) for each line of ``stream``: a line too
    long to be a record is skipped over, never held whole."""
    number = 0
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        ended = line.endswith(b"\n")
        if len(line) <= MAX_LINE or ended:
            yield number, line, len(line), ended
            continue
        length = len(line)
        del line  # not held while the rest is skipped
        while not ended:
            more = stream.readline(MAX_LINE)
            if not more:
                break
            length += len(more)
            ended = more.endswith(b"\n")
        yield number, None, length, ended
