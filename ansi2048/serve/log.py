"""The server's log (:class:`ServerLog`): lines written without ever
blocking the server.

Standard error can be a pipe nobody reads (``ansi2048 serve 2>pipe``), a
terminal on scroll-lock, a slow journald: a write there blocks once the
pipe's 64 KiB are full, and a write made by the event loop would stall every
game. So the loop only queues a line, in memory bounded by
:data:`LOG_BUFFER_BYTES`; a thread of the log's own writes them. When the
log cannot keep up, the lines that do not fit are dropped and counted, and
once the queue has room again one line says how many (``log: 1234 lines
dropped while the log was not read``), where they would have been. At stop,
what is queued is written for at most :data:`LOG_FLUSH_SECONDS`.

Why a thread, not the event loop's ``add_writer`` on a non-blocking
descriptor: ``O_NONBLOCK`` belongs to the open file description, which the
descriptor shares with every process that inherited it (the shell's
terminal, a ``2>&1`` stdout, a pipeline's other writers): setting it would
make their writes, and this process's own ``sys.stderr`` (a traceback), fail
with EAGAIN, and a server killed by SIGKILL could not set it back. A thread
blocked in ``write`` changes nothing for anyone else. It writes through a
duplicate of the descriptor with ``os.write``, not through the text stream:
a thread stuck in a stream's write holds the stream's lock, and the
interpreter's exit flushing ``sys.stderr`` would wait for it (a fatal
error); the duplicate also outlives a ``--log`` file's close. A stream with
no descriptor (memory: a test's ``StringIO``) cannot block: it is written
at once.

The libraries' own log messages (asyncssh, asyncio, psycopg's pool) come
through :class:`LibraryMessages`, a :mod:`logging` handler that queues them
here, one dated line each; without it, :mod:`logging` writes them on
standard error itself (its last-resort handler), synchronously, a traceback
over many lines.

``--log-format json`` writes the same events as JSON lines (:func:`rendered`):
one object a line, its ``time`` and ``event`` and the event's fields, in
ASCII (JSON escapes the rest), so a log shipper reads each whole."""

from __future__ import annotations

import json
import logging
import os
import select
import threading
from collections import deque
from contextlib import contextmanager, suppress
from enum import Enum
from typing import IO, Callable, Deque, Iterator, Mapping, Optional, Protocol, Tuple

from ..storage.history_file import utc_timestamp
from .names import printable

__all__ = [
    "LOG_BUFFER_BYTES",
    "LOG_FLUSH_SECONDS",
    "LibraryMessages",
    "LogFile",
    "LogFormat",
    "Logs",
    "ServerLog",
    "rendered",
]

# The most the lines not yet written may hold: a few thousand lines (a
# connection's is about 150 bytes), four pipes' worth, whatever the clients do.
LOG_BUFFER_BYTES = 256 * 1024
# How long the stop waits for the queued lines to be written.
LOG_FLUSH_SECONDS = 0.5
# The most of a library's message a line keeps: a message may quote what a
# client sent (asyncssh names a bad packet), and a line is read by a person.
LIBRARY_MESSAGE_CHARS = 500
# A library's message that comes again within this many seconds of its
# first writing is counted, not written (the count is said once it stops).
REPEATS_FOLDED_SECONDS = 60.0


class LogFormat(Enum):
    """``--log-format``: dated lines for a person, or JSON lines for a shipper."""

    TEXT = "text"
    JSON = "json"


class Logs(Protocol):
    """What writes a line on the server's log (``GameServer.log``): ``line``
    as a person reads it, and for JSON its ``event`` and fields (none: the
    line is the event's ``message``)."""

    def __call__(self, line: str, event: str = "message", **fields: object) -> None: ...


def rendered(form: LogFormat, when: float, line: str, event: str, fields: Mapping[str, object]) -> str:
    """One line of the log, at ``when`` (seconds since the epoch): ``line``
    dated (UTC, to the second), or a JSON object of ``time``, ``event`` and
    ``fields`` (``message``: ``line``, when it has none)."""
    stamp = utc_timestamp(when)
    if form is LogFormat.TEXT:
        return f"{stamp} {line}"
    return json.dumps({"time": stamp, "event": event, **(fields or {"message": line})}, ensure_ascii=True)


class ServerLog:
    """Lines to ``stream`` (the server's standard error, or ``--log``'s
    file): :meth:`line` never blocks. ``now`` is seconds since the epoch (the
    dropped lines' line is dated, as the others are); ``form``, the lines' format."""

    def __init__(
        self,
        stream: IO[str],
        now: Callable[[], float],
        buffer_bytes: int = LOG_BUFFER_BYTES,
        form: LogFormat = LogFormat.TEXT,
    ) -> None:
        self._stream = stream
        self._now = now
        self._form = form
        self._limit = buffer_bytes
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._queue: Deque[bytes] = deque()
        self._held = 0  # bytes queued, or being written
        self.dropped = 0  # lines dropped since the last line that said so
        self._closing = False
        self._changed = threading.Condition()
        self._fd: Optional[int] = None
        self._next_fd: Optional[int] = None  # reopen's: the writer takes it up before its next batch
        self._writer: Optional[threading.Thread] = None
        fd = _duplicate(stream)
        if fd is None:
            return  # no descriptor: memory, written at once
        self._fd = fd
        self._writer = threading.Thread(target=self._write_queued, name="ansi2048 serve log", daemon=True)
        self._writer.start()

    def reopen(self, stream: IO[str]) -> None:
        """Write to ``stream`` from the next line on (SIGHUP, once logrotate
        has moved ``--log``'s file away): the lines queued before it go to
        the new file too, none is lost. The caller may close ``stream``: the
        log writes through a duplicate of its descriptor, as at the start."""
        fd = _duplicate(stream)
        if self._writer is None or fd is None:
            if fd is not None:
                os.close(fd)
            self._stream = stream
            return
        with self._changed:
            if self._next_fd is not None:  # two reopens before the writer woke: the last wins
                os.close(self._next_fd)
            self._next_fd = fd
            self._changed.notify()

    def event(self, line: str, event: str, fields: Mapping[str, object]) -> None:
        """An event, dated now, as :func:`rendered` makes it: queued as :meth:`line`."""
        self.line(rendered(self._form, self._now(), line, event, fields))

    def line(self, text: str) -> None:
        """Queue ``text`` and a line feed; dropped (and counted) if the
        queue is full."""
        data = (text + "\n").encode(self._encoding, "backslashreplace")
        if self._writer is None:
            with suppress(OSError, ValueError):
                self._stream.write(text + "\n")
                self._stream.flush()
            return
        with self._changed:
            if self._closing:
                return
            if self.dropped:
                said = self._said_dropped()
                if self._held + len(said) + len(data) > self._limit:
                    self.dropped += 1
                    return
                self._queue_locked(said)
                self.dropped = 0
            elif self._held + len(data) > self._limit:
                self.dropped = 1
                return
            self._queue_locked(data)

    def _said_dropped(self) -> bytes:
        lines = "1 line" if self.dropped == 1 else f"{self.dropped} lines"
        said = f"log: {lines} dropped while the log was not read"
        return (rendered(self._form, self._now(), said, "log_dropped", {"lines": self.dropped}) + "\n").encode("ascii")

    def _queue_locked(self, data: bytes) -> None:
        self._queue.append(data)
        self._held += len(data)
        self._changed.notify()

    def _write_queued(self) -> None:
        assert self._fd is not None
        while True:
            with self._changed:
                while not self._queue and self._next_fd is None:
                    if self.dropped:  # the queue drained: say so now, not at the next line
                        self._queue_locked(self._said_dropped())
                        self.dropped = 0
                        break
                    if self._closing:
                        os.close(self._fd)
                        return
                    self._changed.wait()
                if self._next_fd is not None:  # reopened: what is queued goes to the new file
                    os.close(self._fd)
                    self._fd, self._next_fd = self._next_fd, None
                    if not self._queue:
                        continue
                batch = b"".join(self._queue)
                self._queue.clear()
            view = memoryview(batch)
            with suppress(OSError):  # the reader gone (EPIPE), the disk full: those lines are lost, as before
                while view:
                    try:
                        view = view[os.write(self._fd, view) :]
                    except BlockingIOError:
                        # Another process sharing the description made it
                        # non-blocking: this thread waits as a write would.
                        select.select([], [self._fd], [])
            with self._changed:
                self._held -= len(batch)  # held until written: the bound counts the batch under way
                self._changed.notify_all()

    def close(self) -> None:
        """No more lines: what is queued is written, then the thread ends
        (:meth:`written` says when)."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()

    def written(self) -> bool:
        """Every line queued has been written (or given up on: the reader
        gone), after :meth:`close`."""
        return self._writer is None or not self._writer.is_alive()


def _duplicate(stream: IO[str]) -> Optional[int]:
    """A duplicate of ``stream``'s descriptor, what it holds flushed first;
    None for a stream with none (memory)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
        return None
    with suppress(OSError, ValueError):
        stream.flush()  # what the stream holds goes first
    return os.dup(fd)


class LibraryMessages(logging.Handler):
    """A :mod:`logging` handler that gives each message of the libraries the
    server runs on (asyncssh, asyncio, psycopg's pool: anything below the
    root logger, at its level, WARNING unless changed) to ``line`` as one
    line (which the server's log dates): the logger's name, the level, the message, and the
    exception's last line if any (no traceback: one line each, a person
    reads it and ``grep`` finds it whole), printable ASCII and bounded.
    :meth:`attached` installs it for a ``with`` block."""

    def __init__(self, line: Logs, clock: Callable[[], float] = lambda: 0.0) -> None:
        super().__init__()
        self._line = line
        self._clock = clock  # monotonic seconds: how long a run of repeats is folded
        self._last: Optional[Tuple[str, str, str]] = None  # (logger, level, message) last written
        self._since = 0.0  # when it was written
        self._repeats = 0  # times it came again since, not written

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                text += f": {type(error).__name__}: {error}" if str(error) else f": {type(error).__name__}"
        except Exception:  # a library's bad format string must not reach standard error either
            text = f"(unreadable message: {record.msg!r})"
        words = " | ".join(part.strip() for part in text.splitlines() if part.strip())
        said = (record.name, record.levelname.lower(), printable(words, LIBRARY_MESSAGE_CHARS))
        now = self._clock()
        # A library that says one thing again and again (psycopg's pool, once
        # per reconnection attempt during an outage): counted, not repeated;
        # the count is said when something else is, or a window has passed.
        if said == self._last and now - self._since < REPEATS_FOLDED_SECONDS:
            self._repeats += 1
            return
        self.said_repeats()
        self._last, self._since = said, now
        logger, level, message = said
        # Dated by the server's log.
        self._line(f"{logger}: {level}: {message}", "library", logger=logger, level=level, message=message)

    def said_repeats(self) -> None:
        """How many times the last message came again unwritten, if it did: one line."""
        if self._last is None or not self._repeats:
            return
        logger, level, message = self._last
        times, self._repeats = self._repeats, 0
        line = f"{logger}: {level}: the message before came {times} more times: {printable(message, 80)}"
        self._line(line, "library_repeated", logger=logger, level=level, message=message, times=times)

    @contextmanager
    def attached(self) -> Iterator[None]:
        """While the ``with`` block runs, this is a handler of the root
        logger: every library's messages come here, and logging's last
        resort (synchronous, on standard error) is never used."""
        root = logging.getLogger()
        root.addHandler(self)
        try:
            yield
        finally:
            root.removeHandler(self)
            self.said_repeats()  # a count not yet said


class LogFile:
    """Where the log goes: ``--log``'s file (``path``), appended to, or
    ``stderr`` (no path). Opening the file may raise OSError."""

    def __init__(self, path: str, stderr: IO[str]) -> None:
        self._path = path
        self.stream: IO[str] = open(path, "a", encoding="utf-8") if path else stderr  # noqa: SIM115 (open while serving)

    @property
    def separate(self) -> bool:
        """The log is a file, not standard error (lines said on both go to each)."""
        return bool(self._path)

    def reopen(self, log: Logs, write_to: Callable[[IO[str]], None]) -> None:
        """SIGHUP: logrotate's "the file moved, write a new one": the file
        opened again by its name, and the server's log (``log``) written
        there from now on (``write_to``, :meth:`ServerLog.reopen`); any other
        sender is harmless (it once killed the server, and its players)."""
        if not self._path:
            log("SIGHUP: the log is standard error, nothing to reopen", "sighup", reopened=False)
            return
        try:
            reopened = open(self._path, "a", encoding="utf-8")  # noqa: SIM115 (open while the server runs)
        except OSError as error:
            why = f"{error.filename}: {error.strerror}"
            log(f"SIGHUP: cannot reopen the log: {why}", "sighup", reopened=False, error=why)
            return
        write_to(reopened)
        self.stream.close()  # the log writes through its own duplicate of the old descriptor, closed by its thread
        self.stream = reopened
        log("SIGHUP: the log reopened", "sighup", reopened=True)

    def close(self) -> None:
        if self._path:
            self.stream.close()
