"""Files in the data directory, handled so that nothing there can hang,
crash or escape the game (the shell).

Every file is opened only if it is a regular file of its own: never through
a symlink (``O_NOFOLLOW``, an ``lstat`` on Windows), never blocking on a FIFO
(``O_NONBLOCK``, then ``fstat``). Whole files are replaced atomically (temp
file + ``os.replace``); a file that cannot be used is set aside, renamed,
never deleted; locks are the platform's own.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from contextlib import contextmanager, suppress
from typing import Iterable, Iterator, List

__all__ = ["NotAFile", "atomic_write", "lock_fd", "locked", "open_regular", "reason", "set_aside"]

# Never follow a link out of the data directory, never block on a FIFO.
# Windows has neither flag: there an lstat before the open does the first.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class NotAFile(ValueError):
    """A symlink, FIFO, device or directory where the game keeps a file: it is
    set aside, never opened through (a FIFO would hang the game, a link would
    write outside the data directory)."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def open_regular(path: str, flags: int, mode: int = 0o644) -> int:
    """Open ``path`` if it is a regular file of its own; NotAFile if it is
    anything else (the name itself, not what a link points to)."""
    if not _NOFOLLOW:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            if not flags & os.O_CREAT:
                raise
        else:
            if not stat.S_ISREG(info.st_mode):
                raise NotAFile(_kind(info.st_mode))
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _BINARY, mode)
    except OSError as error:
        # ELOOP (EMLINK on BSD) for a link, ENXIO for a FIFO with no reader...
        try:
            info = os.lstat(path)
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
        warnings.append(f"lock file {path} was {error}; kept as {set_aside(path, 'bad')}")
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
