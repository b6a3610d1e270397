"""Every path the game opens, handled so that nothing there can hang,
crash or escape the game (the shell).

Reading (the config, the history, saves, best scores, the AI's weights):
only a regular file is read, never a FIFO (``O_NONBLOCK``, then ``fstat``),
a device or a directory; in the data directory never through a symlink
(``O_NOFOLLOW``, an ``lstat`` on Windows); and never more than a limit per
kind of file (:func:`read_regular`, :func:`read_tail`), so an endless or
huge file costs a warning, not the memory.

Writing in the data directory: only regular files of their own. Whole files
are replaced atomically (temp file + ``os.replace``); a file that cannot be
used is set aside, renamed, never deleted; locks are the platform's own.

Writing where the user says (``--record``, ``--cast``): :func:`open_output`
gives an :class:`OutputSink`, which never lets that output stall the game:
on a pipe, a FIFO or a device its writes do not block, and a write that
fails (a full disk, a reader that falls behind or leaves) stops that output
(one warning, from its writer). The exception: an output on the very pipe
standard output writes to (``--cast /dev/stdout | head``), whose reader
leaving is the end of the pipeline (:class:`PipelineEnded`).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from contextlib import contextmanager, suppress
from typing import Callable, Iterable, Iterator, List, Tuple

__all__ = [
    "NotAFile",
    "NotOurs",
    "OutputSink",
    "PipelineEnded",
    "TooBig",
    "atomic_write",
    "lock_fd",
    "locked",
    "open_output",
    "open_regular",
    "read_regular",
    "read_tail",
    "reason",
    "set_aside",
]

# Never follow a link out of the data directory, never block on a FIFO.
# Windows has neither flag: there an lstat before the open does the first.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class NotAFile(ValueError):
    """A symlink, FIFO, device or directory where the game keeps a file: it is
    set aside, never opened through (a FIFO would hang the game, a link would
    write outside the data directory)."""


class TooBig(ValueError):
    """A file bigger than the game ever writes for its kind: not read whole
    (an endless or huge file must not take the memory)."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str, flags: int, mode: int = 0o644, follow: bool = False) -> int:
    """Open ``path`` if it is a regular file of its own; NotAFile if it is
    anything else (the name itself, not what a link points to). ``follow``:
    a symlink to a regular file is read through (a config file the user
    links from elsewhere); still never a FIFO, a device or a directory."""
    nofollow = 0 if follow else _NOFOLLOW
    if not _NOFOLLOW:  # Windows: neither flag, so look at the name first
        try:
            info = os.stat(path) if follow else os.lstat(path)
        except FileNotFoundError:
            if not flags & os.O_CREAT:
                raise
        else:
            if not stat.S_ISREG(info.st_mode):
                raise NotAFile(_kind(info.st_mode))
    try:
        fd = os.open(path, flags | nofollow | _NONBLOCK | _BINARY, mode)
    except OSError as error:
        # ELOOP (EMLINK on BSD) for a link, ENXIO for a FIFO with no reader...
        try:
            info = os.stat(path) if follow else os.lstat(path)
        except OSError:
            raise error from None
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(_kind(info.st_mode)) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(_kind(info.st_mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str, limit: int, follow: bool = False) -> bytes:
    """All of ``path``, a regular file (see :func:`open_regular`) of at most
    ``limit`` bytes; TooBig if it holds more (only ``limit`` + 1 bytes are
    ever read, so a file that grows meanwhile cannot make it read more)."""
    with os.fdopen(open_regular(path, os.O_RDONLY, follow=follow), "rb") as stream:
        # Sized to the file, not to the limit: a read of n bytes takes n
        # bytes of memory first, and the limits are far above most files.
        size = os.fstat(stream.fileno()).st_size
        data = stream.read(min(size, limit) + 1)
        if len(data) > size:  # it grew meanwhile
            data += stream.read(limit + 1 - len(data))
    if len(data) > limit:
        raise TooBig(f"bigger than {_size(limit)}")
    return data


def read_tail(path: str, limit: int) -> Tuple[bytes, int]:
    """The last ``limit`` bytes of ``path`` (a regular file of its own), and
    how many bytes before them were skipped: for a file that only grows
    (the history), where the newest part is what counts."""
    with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        skipped = max(0, size - limit)
        stream.seek(skipped)
        return stream.read(limit), skipped


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count >> 10} KiB"


def set_aside(path: str, why: str) -> str:
    """Rename ``path`` to ``path.<why>-<time>`` (with a counter if that is
    taken: two in one second must not overwrite each other); the new name.
    A link is renamed itself, never what it points to."""
    stem = f"{path}.{why}-{int(time.time())}"
    aside, counter = stem, 1
    while os.path.lexists(aside):
        counter += 1
        aside = f"{stem}-{counter}"
    os.replace(path, aside)
    return aside


def atomic_write(path: str, chunks: Iterable[bytes], durable: bool = True) -> None:
    """Temp file in the same directory, then ``os.replace``: readers see the
    old file or the new one, whatever kills the process. ``durable`` also
    fsyncs, against power loss; the best scores skip it: a sync can take
    milliseconds, and a best lost to power loss is recovered from the
    saved game, which holds every score it reached."""
    temp = f"{path}.{os.getpid()}.tmp"
    with suppress(FileNotFoundError):
        os.unlink(temp)  # a stale one, or a link planted there: never written through
    try:
        with os.fdopen(open_regular(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as stream:
            for chunk in chunks:
                stream.write(chunk)
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.replace(temp, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)


@contextmanager
def locked(path: str, warnings: List[str]) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` for the duration (the platform's
    own primitive, chosen here: flock on POSIX, msvcrt.locking on Windows)."""
    fd = lock_fd(path, True, warnings)
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock on both platforms


def lock_fd(path: str, blocking: bool, warnings: List[str]) -> int:
    """Open ``path`` and lock it; raises BlockingIOError when ``blocking`` is
    False and another process holds the lock. A lock file that is a link or
    a FIFO is set aside (``warnings`` says so) and a plain one made."""
    try:
        fd = open_regular(path, os.O_RDWR | os.O_CREAT)
    except NotAFile as error:
        warnings.append(f"lock file was {error}; it is set aside as\n{set_aside(path, 'bad')}")
        fd = open_regular(path, os.O_RDWR | os.O_CREAT)
    try:
        if sys.platform == "win32":
            import msvcrt

            mode = msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK  # type: ignore[attr-defined,unused-ignore]
            try:
                msvcrt.locking(fd, mode, 1)  # type: ignore[attr-defined,unused-ignore]
            except PermissionError as error:
                raise BlockingIOError(str(error)) from None
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


def reason(error: Exception) -> object:
    """What to say of ``error`` in a warning: the OS's words when it has them."""
    return error.strerror if isinstance(error, OSError) and error.strerror else error


class NotOurs(Exception):
    """An output file (``--record``, ``--cast``) holds something else the user
    would lose: a bad option."""


class PipelineEnded(Exception):
    """The reader of standard output has left (``ansi2048 --json | head -1``):
    the normal end of a pipeline, ended quietly as ``cat`` ends, not an error
    to report. Not an OSError, so that no handler of a file's errors (a
    writer stopping its output) takes it for its own."""


class OutputSink:
    """A file the user named for output: text in, encoded bytes out through
    the descriptor, kept until :meth:`flush`. On a pipe, a FIFO or a device
    (``blocking`` False) a write never waits: a reader that falls behind
    (EAGAIN) or leaves (EPIPE) makes :meth:`flush` raise OSError saying so,
    and the writer (the recording, the cast) stops that output, once, while
    the game plays on. A regular file is written as usual.

    ``ends_pipeline``: this is the pipe standard output writes to, so its
    reader leaving is standard output's (:class:`PipelineEnded`)."""

    def __init__(self, fd: int, name: str, encoding: str, blocking: bool) -> None:
        self._fd = fd
        self.name = name
        self._encoding = encoding
        self._pending = bytearray()
        self._written_early = ""  # what write_early sent ahead of the writer
        self.ends_pipeline = False
        if _NONBLOCK:  # POSIX; Windows has neither the flag nor FIFOs
            os.set_blocking(fd, blocking)

    def fileno(self) -> int:
        return self._fd

    def write_early(self, start: str) -> None:
        """Write ``start``, the first characters every file of this kind
        begins with, now, before the game: a target that cannot take them
        (``/dev/full``, a file in ``/proc``) is refused as a bad option
        (OSError) rather than found out once the game is under way, the
        output the user asked for lost. The writer's first write, which
        begins with them, does not write them again."""
        self.write(start)
        self.flush()
        self._written_early = start

    def write(self, text: str) -> int:
        if self._fd < 0:
            raise ValueError("write to a closed output")
        length = len(text)
        if self._written_early:
            assert text.startswith(self._written_early), "the writer begins otherwise than it said"
            text, self._written_early = text[len(self._written_early) :], ""
        self._pending += text.encode(self._encoding)
        return length

    def flush(self) -> None:
        view = memoryview(self._pending)
        written = 0
        try:
            while written < len(view):
                written += os.write(self._fd, view[written:])
        except BlockingIOError:
            raise OSError(errno.EAGAIN, "its reader is not keeping up") from None
        except BrokenPipeError:
            if self.ends_pipeline:
                raise PipelineEnded(self.name) from None
            raise OSError(errno.EPIPE, "its reader has gone") from None
        finally:
            view.release()
            del self._pending[:written]

    def close(self) -> None:
        """Flush what is left if it can be, else drop it, and close: closing
        never waits for a reader, nor fails. Closing twice is fine."""
        if self._fd < 0:
            return
        try:
            self.flush()
        except (OSError, PipelineEnded):
            pass  # the writer has said so already, or is closing after a failure
        finally:
            os.close(self._fd)
            self._fd = -1
            self._pending.clear()


def open_output(path: str, ours: Callable[[bytes], bool], what: str, encoding: str) -> OutputSink:
    """The output file the user named (``--record``, ``--cast``), opened to
    write, followed through symlinks (the user named it).

    A regular file (or none yet) is emptied only if it is empty or ``ours``
    says its first bytes are one of ours; else NotOurs naming ``what`` it
    is not. It is opened without truncating, checked, then truncated through
    the same descriptor: what was checked is what gets emptied, even if the
    name is swapped meanwhile. Anything else (a pipe, a FIFO, /dev/stdout,
    a terminal) is opened write-only, never read-write: the game must not be
    its own reader, or it would never hear that the real one left. Without a
    reader, a FIFO is refused rather than waited for."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        regular = True  # created below
    except OSError:
        regular = False  # a link loop, say: the open below names the problem
    if not regular:
        try:
            fd = os.open(path, os.O_WRONLY | _NONBLOCK | _BINARY)
        except OSError as error:
            if error.errno == errno.ENXIO:
                raise OSError(error.errno, "nothing is reading it") from None
            raise
        if stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a file meanwhile
            os.close(fd)
        else:
            return OutputSink(fd, path, encoding, blocking=False)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _NONBLOCK | _BINARY, 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO meanwhile
            raise OSError(errno.EAGAIN, "it changed while being opened")
        if os.fstat(fd).st_size > 0:
            if not ours(os.read(fd, 4096)):
                raise NotOurs(f"{path!r} is not {what}; not overwriting it")
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
        return OutputSink(fd, path, encoding, blocking=True)
    except BaseException:
        os.close(fd)
        raise
