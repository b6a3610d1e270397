"""A slow link for the server's tests and benchmarks: two throwaway network
namespaces, the server's and the client's, joined by a point-to-point link
whose every packet is held ``delay`` seconds each way (50 ms: a 100 ms round
trip), so that TCP and SSH on both ends see a real round-trip time.

Why not ``tc qdisc ... netem delay``: the kernels this runs on (CI's
included) are built without ``sch_netem`` ("Specified qdisc kind is
unknown"). The delay is made here instead, as netem makes it, packet by
packet: each namespace holds one end, a TUN device, and :class:`DelayLine`
(a thread of the test process) reads every IP packet from one end and writes
it into the other once its time has come, in order. The addresses are
private to the namespaces (``SERVER_ADDRESS`` and ``CLIENT_ADDRESS``):
nothing listens on the machine's own network, and the namespaces and TUN
devices go when the link is closed (a TUN device dies with its file).

Needs Linux (``sys.platform``), and there root (namespaces and TUN
devices), ``ip`` (iproute2) and ``/dev/net/tun``: :func:`missing` says which
is missing."""

from __future__ import annotations

import itertools
import os
import select
import shutil
import struct
import subprocess
import threading
import time
from collections import deque
from contextlib import suppress
from typing import Deque, List, Optional, Sequence, Tuple

__all__ = ["CLIENT_ADDRESS", "SERVER_ADDRESS", "DelayLine", "SlowLink", "missing"]

SERVER_ADDRESS = "10.204.8.1"
CLIENT_ADDRESS = "10.204.8.2"

# <linux/if_tun.h>: attach the open /dev/net/tun to a new device; a TUN
# device (IP packets, no Ethernet header), without the 4-byte packet info.
_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000
_IFNAMSIZ = 16
_COMMAND_TIMEOUT = 30  # seconds one ip command may take

_links = itertools.count(1)


def missing() -> str:
    """Why a slow link cannot be made on this Linux machine ("": it can)."""
    if os.geteuid() != 0:
        return "a slow link needs root (network namespaces, TUN devices)"
    if shutil.which("ip") is None:
        return "a slow link needs ip (iproute2) for its network namespaces"
    if not os.path.exists("/dev/net/tun"):
        return "a slow link needs /dev/net/tun (TUN devices)"
    return ""


def _ip(*args: str) -> None:
    done = subprocess.run(
        ["ip", *args], capture_output=True, text=True, timeout=_COMMAND_TIMEOUT, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _tun() -> Tuple[int, str]:
    """A new TUN device, the kernel naming it: its file and its name."""
    import fcntl

    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        request = struct.pack(f"{_IFNAMSIZ}sH", b"a2048t%d", _IFF_TUN | _IFF_NO_PI).ljust(40, b"\0")
        answer = fcntl.ioctl(fd, _TUNSETIFF, request)
    except OSError:
        os.close(fd)
        raise
    return fd, answer[:_IFNAMSIZ].rstrip(b"\0").decode()


class DelayLine:
    """Copies every packet read from either of two files into the other,
    ``delay`` seconds after it was read, in the order read (as netem's
    delay does without jitter): one thread, both ways. :meth:`stall` holds
    the line for a while, as a mobile link or a lost packet's
    retransmission does: what was sent meanwhile then comes all at once."""

    def __init__(self, ends: Tuple[int, int], delay: float) -> None:
        self._ends = ends
        self._delay = delay
        self._stalled_until = 0.0  # monotonic time: nothing is delivered before it
        self._held: Deque[Tuple[float, int, bytes]] = deque()  # (due, to, packet), due in order
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="delay line", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        first, second = self._ends
        other = {first: second, second: first}
        readable: List[int] = [first, second, self._wake_read]
        while True:
            wait = None if not self._held else max(0.0, self._held[0][0] - time.monotonic())
            ready, _, _ = select.select(readable, [], [], wait)
            if self._wake_read in ready:
                return
            now = time.monotonic()
            for end in ready:
                while True:  # every packet waiting: one read is one packet
                    try:
                        packet = os.read(end, 65536)
                    except OSError:  # none left (EAGAIN), or the device going away at the end
                        break
                    due = max(now + self._delay, self._stalled_until)  # never before one held earlier
                    self._held.append((due, other[end], packet))
            while self._held and self._held[0][0] <= time.monotonic():
                _, to, packet = self._held.popleft()
                with suppress(OSError):  # a device going away at the end
                    os.write(to, packet)

    def stall(self, seconds: float) -> None:
        """Deliver nothing sent from now on until ``seconds`` from now."""
        self._stalled_until = time.monotonic() + seconds

    def close(self) -> None:
        os.write(self._wake_write, b"x")
        self._thread.join(5)
        os.close(self._wake_read)
        os.close(self._wake_write)


class SlowLink:
    """The two namespaces and the delay line between them. ``server`` and
    ``client`` are command prefixes that run a program in the server's or
    the client's namespace (``ip netns exec NAME``). Close it (or use it as
    a context manager) to remove everything it made."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        base = f"a2048-{os.getpid()}-{next(_links)}"
        self._namespaces: List[str] = []
        self._files: List[int] = []
        self.line: Optional[DelayLine] = None
        try:
            for role, address, peer in (("s", SERVER_ADDRESS, CLIENT_ADDRESS), ("c", CLIENT_ADDRESS, SERVER_ADDRESS)):
                namespace = f"{base}-{role}"
                _ip("netns", "add", namespace)
                self._namespaces.append(namespace)
                fd, device = _tun()
                self._files.append(fd)
                # Made in this (the host's) namespace, then moved: its file
                # stays ours, and the device lives where the server or client is.
                _ip("link", "set", "dev", device, "netns", namespace)
                _ip("-n", namespace, "link", "set", "lo", "up")
                _ip("-n", namespace, "addr", "add", address, "peer", peer, "dev", device)
                _ip("-n", namespace, "link", "set", device, "up")
            self.line = DelayLine((self._files[0], self._files[1]), delay)
        except BaseException:
            self.close()
            raise
        self.server: Sequence[str] = ("ip", "netns", "exec", self._namespaces[0])
        self.client: Sequence[str] = ("ip", "netns", "exec", self._namespaces[1])

    def stall(self, seconds: float) -> None:
        """Hold the line both ways for ``seconds`` (:meth:`DelayLine.stall`)."""
        assert self.line is not None, "the link is closed"
        self.line.stall(seconds)

    def __enter__(self) -> SlowLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.line is not None:
            self.line.close()
            self.line = None
        for fd in self._files:
            os.close(fd)
        self._files.clear()
        for namespace in self._namespaces:
            with suppress(RuntimeError, subprocess.TimeoutExpired):
                _ip("netns", "delete", namespace)
        self._namespaces.clear()
