"""Streams at the edge: whole writes, the terminal's size, and a pipe read
in chunks on a thread (the same on every platform)."""

from __future__ import annotations

import errno
import os
import queue
import sys
import threading
from typing import IO, Any, Optional, Tuple

__all__ = ["ChunkReader", "isatty", "terminal_gone", "terminal_size", "write_all"]


def write_all(fd: int, data: bytes) -> None:
    """One frame, one ``write`` call where the OS allows it (loops on short writes)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def terminal_size(fd: int) -> Tuple[int, int]:
    """(columns, lines); a conservative 80x24 when the size cannot be read."""
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return 80, 24
    return size.columns or 80, size.lines or 24


class ChunkReader:
    """Reads a pipe or file in chunks on a helper thread.

    A thread rather than ``select`` because Windows cannot select on pipes;
    the bounded queue keeps memory flat however long the input is, and a
    timeout on ``read`` lets the caller decide whether a header is coming."""

    def __init__(self, fd: int, chunk_size: int = 1 << 16) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue(maxsize=4)
        self._fd = fd
        self._chunk_size = chunk_size
        self._eof = False
        threading.Thread(target=self._pump, name="ansi2048-stdin", daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self._fd, self._chunk_size)
            except OSError:
                data = b""
            self._queue.put(data)
            if not data:
                return

    def read(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next chunk; b"" at end of input; None if ``timeout`` passed first."""
        if self._eof:
            return b""
        try:
            data = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if not data:
            self._eof = True
        return data


def terminal_gone(error: OSError) -> bool:
    """The terminal behind a file descriptor went away (the window closed)."""
    return error.errno in (errno.EIO, errno.ENXIO, errno.EPIPE)


def isatty(stream: IO[Any]) -> bool:
    """``stream`` is a terminal (False for a closed or fake stream too). On
    Windows, a console: the C runtime's isatty says yes to every character
    device, the null device (``> NUL``) among them, where nobody would see
    a board drawn."""
    try:
        if not stream.isatty():
            return False
    except (AttributeError, ValueError):
        return False
    if sys.platform == "win32":
        try:
            fd = stream.fileno()
        except (AttributeError, ValueError, OSError):
            return True  # no descriptor to ask about: the stream's own word
        return _is_console(fd)
    return True


def _is_console(fd: int) -> bool:
    """File descriptor ``fd`` is a Windows console: GetConsoleMode takes its handle."""
    import ctypes
    import msvcrt
    from ctypes import wintypes

    try:
        handle = msvcrt.get_osfhandle(fd)  # type: ignore[attr-defined,unused-ignore]
    except OSError:
        return False
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.GetConsoleMode.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD)]
    return bool(kernel32.GetConsoleMode(handle, ctypes.byref(wintypes.DWORD())))
