"""A new server taking over from the one it replaces, without dropping
anyone: the upgrade (docs/serving.md, "Upgrading without dropping players").

A server (or a ``--workers`` parent) writes ``serve.pid`` in its data
directory: its process id and where it listens. A new one started on the
same data directory and address reads it, and once the new one listens
(beside the old one, both with ``SO_REUSEPORT``; or, when the old one holds
the port alone, as soon as the old one lets go of it) it sends the old one
SIGUSR2: *drain*. The old one stops accepting, tells its players once, lets
each session end at its own pace, and stops the rest at ``--drain-seconds``.

Only a process that is running and names this data directory's address is
signalled: a stale file (a server killed outright), another address, or the
process itself are left alone."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import socket
from contextlib import suppress
from dataclasses import dataclass
from typing import Awaitable, Callable, Optional, Tuple

__all__ = [
    "DRAIN_SIGNAL",
    "PID_FILE",
    "Running",
    "can_share",
    "drain",
    "either",
    "forget",
    "listen_taking_over",
    "previous",
    "record",
]

PID_FILE = "serve.pid"
DRAIN_SIGNAL = signal.SIGUSR2


@dataclass(frozen=True)
class Running:
    """What ``serve.pid`` says: who serves this data directory, and where."""

    pid: int
    host: str
    port: int

    def line(self) -> str:
        return f"{self.pid} {self.host} {self.port}\n"


def parse(text: str) -> Optional[Running]:
    """``serve.pid``'s one line, or None for anything else."""
    fields = text.split()
    if len(fields) != 3 or not fields[0].isdigit() or not fields[2].isdigit():
        return None
    return Running(int(fields[0]), fields[1], int(fields[2]))


def previous(data_dir: str, host: str, port: int) -> Optional[Running]:
    """The server running now on this data directory and address (not this
    process), if there is one."""
    try:
        with open(os.path.join(data_dir, PID_FILE), encoding="ascii") as file:
            found = parse(file.read(100))
    except (OSError, UnicodeDecodeError):
        return None
    if found is None or found.pid == os.getpid() or (found.host, found.port) != (host, port) or port == 0:
        return None
    try:
        os.kill(found.pid, 0)
    except ProcessLookupError:
        return None  # killed outright: its file stayed
    except PermissionError:
        return None  # another user's process, which this pid now is: not ours to signal
    return found


def record(data_dir: str, running: Running) -> None:
    """Write ``serve.pid`` (replaced whole: a reader never sees half of it)."""
    path = os.path.join(data_dir, PID_FILE)
    partial = f"{path}.{running.pid}"
    with open(partial, "w", encoding="ascii") as file:
        file.write(running.line())
    os.replace(partial, path)


def forget(data_dir: str) -> None:
    """Remove ``serve.pid`` if it is still this process's (the server that
    took over has written its own)."""
    path = os.path.join(data_dir, PID_FILE)
    with suppress(OSError, UnicodeDecodeError):
        with open(path, encoding="ascii") as file:
            found = parse(file.read(100))
        if found is not None and found.pid == os.getpid():
            os.unlink(path)


def drain(running: Running) -> bool:
    """Ask the server ``running`` to drain; whether it was still there."""
    try:
        os.kill(running.pid, DRAIN_SIGNAL)
    except OSError:
        return False
    return True


# A server taking over a port its predecessor holds alone tries it again
# this often, this many times (the predecessor lets go of it as it drains).
TAKEOVER_WAIT, TAKEOVER_TRIES = 0.05, 100


async def listen_taking_over(
    listen: Callable[[], Awaitable[Tuple[str, int]]], replaced: Optional[Running]
) -> Tuple[str, int]:
    """``listen()``'s address. Where the server being ``replaced`` holds the
    port alone (no ``--reuse-port``), it is asked to drain, which lets go of
    the port at once, and the port is tried again for a while."""
    try:
        return await listen()
    except OSError as error:
        if replaced is None or error.errno != errno.EADDRINUSE or not drain(replaced):
            raise
        last = error
    for _ in range(TAKEOVER_TRIES):
        await asyncio.sleep(TAKEOVER_WAIT)
        try:
            return await listen()
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            last = error
    raise last


def can_share(host: str, port: int) -> bool:
    """Whether a socket with ``SO_REUSEPORT`` may listen beside the one
    holding ``host``:``port`` now (the holder set it too)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            probe.bind((host, port))
        except OSError:
            return False
    return True


async def either(first: asyncio.Event, second: asyncio.Event) -> None:
    """Until either event is set (SIGTERM's stop, or SIGUSR2's drain)."""
    waits = [asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
