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

__all__ = ["CLIENT_ADDRESS", "SERVER_ADDRESS", "DelayLine", "SlowLink", "coalesced", "internet_checksum", "missing"]

SERVER_ADDRESS = "10.204.8.1"
CLIENT_ADDRESS = "10.204.8.2"

# <linux/if_tun.h>: attach the open /dev/net/tun to a new device; a TUN
# device (IP packets, no Ethernet header), without the 4-byte packet info.
_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000
_IFNAMSIZ = 16
_COMMAND_TIMEOUT = 30  # seconds one ip command may take
_TCP = 6  # the IP protocol number
_ACK, _PSH = 0x10, 0x08  # TCP flags
_MTU = 1500  # the TUN devices' (the kernel's default)
_SEQUENCE = 0xFFFFFFFF  # TCP's sequence numbers wrap at 2**32

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


def internet_checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _segment(packet: bytes) -> Optional[Tuple[bytes, int, int, int]]:
    """An IPv4 TCP segment's flow (addresses and ports), sequence number,
    header length (IP and TCP) and flags; None for any other packet, or a
    fragment."""
    if len(packet) < 40 or packet[0] >> 4 != 4 or packet[9] != _TCP or struct.unpack("!H", packet[6:8])[0] & 0x3FFF:
        return None
    ip_length = (packet[0] & 15) * 4
    tcp_length = (packet[ip_length + 12] >> 4) * 4
    flow = packet[12:20] + packet[ip_length : ip_length + 4]
    sequence = struct.unpack("!I", packet[ip_length + 4 : ip_length + 8])[0]
    return flow, sequence, ip_length + tcp_length, packet[ip_length + 13]


def _joined(first: bytes, last: bytes, payload: bytes) -> bytes:
    """``first``'s headers (its sequence number), ``last``'s acknowledgment
    and window, ``payload``: lengths and checksums made anew."""
    ip_length = (first[0] & 15) * 4
    tcp_length = (first[ip_length + 12] >> 4) * 4
    ip = bytearray(first[:ip_length])
    tcp = bytearray(first[ip_length : ip_length + tcp_length])
    tcp[8:12] = last[ip_length + 8 : ip_length + 12]  # acknowledgment
    tcp[13] |= last[ip_length + 13] & _PSH
    tcp[14:16] = last[ip_length + 14 : ip_length + 16]  # window
    tcp[16:18] = b"\0\0"
    pseudo = bytes(ip[12:20]) + struct.pack("!BBH", 0, _TCP, tcp_length + len(payload))
    tcp[16:18] = struct.pack("!H", internet_checksum(pseudo + bytes(tcp) + payload))
    ip[2:4] = struct.pack("!H", ip_length + tcp_length + len(payload))
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
    return bytes(ip + tcp) + payload


def coalesced(packets: Sequence[bytes]) -> List[bytes]:
    """``packets``, arriving together, as a receiver's GRO (generic receive
    offload) hands them up: a TCP segment of data (ACK, maybe PSH) that
    carries on where the one before it in the same flow ended is joined to
    it, up to the link's MTU (what a resent segment repeats is left out, a
    repeat of nothing new left out whole), so the socket gets them in one
    piece. A TUN device has no GRO: without this, a burst (what a stall
    held) reaches the receiving socket one small segment at a time, and a
    receiver scheduled between two of them reads only the first."""
    out: List[bytes] = []
    first, last, payload = b"", b"", b""  # the segment joined to, the latest joined, the data so far
    flow, following, room = b"", 0, 0  # the joined ones' flow, the sequence number after their data, room left

    def flush() -> None:
        nonlocal first
        if first:
            out.append(_joined(first, last, payload))
            first = b""

    for packet in packets:
        segment = _segment(packet)
        if segment is None or segment[3] & ~_PSH != _ACK or len(packet) == segment[2]:
            flush()  # not data: as it came
            out.append(packet)
            continue
        this_flow, sequence, header, _ = segment
        gap = 0 < (sequence - following) & _SEQUENCE < 2**31
        if first and this_flow == flow and not gap:
            behind = (following - sequence) & _SEQUENCE  # its start, joined already
            new = packet[header + behind :] if behind < len(packet) - header else b""
            if len(new) <= room:
                payload, last, room = payload + new, packet, room - len(new)
                following = (following + len(new)) & _SEQUENCE
                continue
        flush()
        first, last, payload, flow = packet, packet, packet[header:], this_flow
        following, room = (sequence + len(payload)) & _SEQUENCE, _MTU - len(packet)
    flush()
    return out


class DelayLine:
    """Copies every packet read from either of two files into the other,
    ``delay`` seconds after it was read, in the order read (as netem's
    delay does without jitter): one thread, both ways. :meth:`stall` holds
    the line for a while, as a mobile link or a lost packet's
    retransmission does: what was sent meanwhile then comes all at once.
    Packets due together reach the other end as a real receiver's GRO
    hands them to its sockets (:func:`coalesced`)."""

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
            due_now: List[Tuple[float, int, bytes]] = []
            while self._held and self._held[0][0] <= time.monotonic():
                due_now.append(self._held.popleft())
            for to, packets in itertools.groupby(due_now, key=lambda held: held[1]):
                for packet in coalesced([packet for _, _, packet in packets]):
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
