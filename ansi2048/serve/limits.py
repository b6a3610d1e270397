"""What one stranger may hold of a public server, and the accounting of it.

Pure but for :func:`raise_open_files` (the process's open-file limit):
counts and budgets kept in dicts and numbers, the time passed in. The
server's connections (:mod:`.connection`) ask :class:`Admission` before
they let a handshake or a session start, and tells it when either ends; each
session's input goes through an :class:`InputBudget`. asyncssh keeps no such
caps of its own.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from typing import Optional, Tuple

__all__ = [
    "ALLOWED_ENV",
    "DEFAULT_LIMITS",
    "Admission",
    "Breach",
    "ChannelRules",
    "InputBudget",
    "Limits",
    "Refusal",
    "capped_by_files",
    "raise_open_files",
    "short_fingerprint",
    "source_of",
]

# The client's environment variables the server reads; every other one is
# dropped as it arrives (a client may send thousands). NO_COLOR is kept: a
# player who sends it asks for no colour, as locally.
ALLOWED_ENV = frozenset({"TERM", "COLORTERM", "LANG", "NO_COLOR"})
# Open files the server needs besides its connections (the database, the
# AI pool's pipes, the log, the listening sockets).
SPARE_FILES = 64


@dataclass(frozen=True)
class Limits:
    """Each an ``ansi2048 serve`` option; the defaults are safe for a small
    public server."""

    sessions: int = 500  # game and command sessions, in all
    sessions_per_address: int = 8
    sessions_per_identity: int = 4  # per key (guests: per address)
    handshakes: int = 100  # connections not yet authenticated, in all
    handshakes_per_address: int = 10
    login_seconds: float = 20.0  # from connecting to authenticated
    idle_seconds: float = 3600.0  # no key for this long: saved, closed
    keepalive_seconds: float = 30.0  # SSH keepalives; 3 unanswered end it
    input_burst: int = 4096  # bytes a session may send at once...
    input_rate: int = 1024  # ...and a second, after: the rest is dropped
    unsent_bytes: int = 256 * 1024  # output held for a client that stops reading...
    stalled_seconds: float = 5.0  # ...or any held this long: disconnected, game saved
    command_chars: int = 1024  # the longest command line


DEFAULT_LIMITS = Limits()


# An IPv6 source is counted by its /64: one holder gets 2^64 addresses of it.
IPV6_PREFIX = 64


def source_of(address: str) -> str:
    """What every per-address cap counts ``address`` as (sessions, logins,
    guests, the daily ranking): an IPv4 address as itself, an IPv6 one by
    its /64 (``2001:db8:1:2::/64``), an IPv4-mapped IPv6 one
    (``::ffff:192.0.2.1``) as its IPv4 address; anything else (a Unix
    socket's "?") as it is."""
    try:
        parsed = ipaddress.ip_address(address.partition("%")[0])  # a zone (fe80::1%eth0) is no other source
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, IPV6_PREFIX), strict=False))
    return str(parsed)


class Refusal(Exception):
    """Over a limit: the message says which (it is shown to the client)."""


class Admission:
    """Connections in their handshake, and sessions, counted in all and per
    source (and sessions per identity). A source is what :func:`source_of`
    makes of an address: the caller passes it, never the raw address."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.handshakes: Counter[str] = Counter()
        self.sessions: Counter[str] = Counter()
        self.identities: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()  # refusals by the limit's name (a Limits field: serve/metrics.py)

    def _refuse(self, limit: str, said: str) -> Refusal:
        self.refused[limit] += 1
        return Refusal(said)

    def start_handshake(self, address: str) -> None:
        """Count a new connection from ``address``, or refuse it."""
        limits = self.limits
        if sum(self.handshakes.values()) >= limits.handshakes:
            raise self._refuse("handshakes", "too many connections logging in")
        if self.handshakes[address] >= limits.handshakes_per_address:
            raise self._refuse("handshakes_per_address", "too many connections logging in from your address")
        self.handshakes[address] += 1

    def end_handshake(self, address: str) -> None:
        """The connection from ``address`` logged in, or left before."""
        _take(self.handshakes, address)

    def start_session(self, address: str, identity: str, guest: bool = False) -> None:
        """Count a new session from ``address`` with ``identity`` (a key's
        fingerprint; a ``guest`` has none: it counts per address), or refuse it."""
        limits = self.limits
        if sum(self.sessions.values()) >= limits.sessions:
            raise self._refuse("sessions", "the server is full: try again later")
        if self.sessions[address] >= limits.sessions_per_address:
            raise self._refuse("sessions_per_address", "too many sessions from your address")
        if self.identities[identity] >= limits.sessions_per_identity:
            # A guest has no key: its sessions are counted by address.
            said = "too many guest sessions from your address" if guest else "too many sessions with your key"
            raise self._refuse("sessions_per_identity", said)
        self.sessions[address] += 1
        self.identities[identity] += 1

    def end_session(self, address: str, identity: str) -> None:
        _take(self.sessions, address)
        _take(self.identities, identity)


def _take(counts: Counter[str], key: str) -> None:
    # Keys at zero are removed: a scan from many addresses leaves nothing behind.
    if counts[key] <= 1:
        counts.pop(key, None)
    else:
        counts[key] -= 1


class InputBudget:
    """A token bucket over the bytes a session sends: ``burst`` at once, then
    ``rate`` a second. A typist (a few bytes a key, tens of keys a second)
    never meets it; a paste of megabytes is cut to what the bucket holds."""

    def __init__(self, burst: int, rate: int, now: float) -> None:
        self._burst = burst
        self._rate = rate
        self._tokens = float(burst)
        self._at = now
        self.dropped = 0

    def admit(self, data: bytes, now: float) -> bytes:
        """The part of ``data`` played; the rest is dropped (and counted)."""
        self._tokens = min(float(self._burst), self._tokens + (now - self._at) * self._rate)
        self._at = now
        taken = min(len(data), int(self._tokens))
        self._tokens -= taken
        self.dropped += len(data) - taken
        return data[:taken]


class Breach(Enum):
    """Why a channel is ended from the server's side (the log says the value)."""

    IDLE = "idle"  # no input for the idle limit
    SLOW = "client not reading"  # output held too long, or too much of it


# While a channel holds output unsent, it is looked at this often: it may
# drain (a slow reader) or stay held (one that stopped), the stall's rule.
HELD_POLL_SECONDS = 0.25


class ChannelRules:
    """One session channel's idle and stalled-reader rules, whatever runs
    on it (a game, a watcher, a replay, a prompt, nothing at all): no input
    for ``idle_seconds``; output held unsent for ``stalled_seconds``, or
    more than ``unsent_bytes`` of it. Pure: the time and the bytes unsent
    are passed in; :mod:`.guard` applies it to every channel from the
    moment it opens. A window's resize is not input: a client sending only
    resizes is idle."""

    def __init__(self, limits: Limits, now: float) -> None:
        self.idle_seconds = limits.idle_seconds
        self.stalled_seconds = limits.stalled_seconds
        self.unsent_bytes = limits.unsent_bytes
        self._last_input = now
        self._held_since: Optional[float] = None  # output unsent, none of it taken, since then
        self._last_unsent = 0  # the bytes unsent when last seen (a write, a look)

    def typed(self, now: float) -> None:
        """The client sent input (any: what the input budget drops too)."""
        self._last_input = now

    def wrote(self, now: float, before: int, after: int) -> None:
        """Output was written, taking what is unsent from ``before`` to
        ``after`` bytes: what the client took since it was last seen counts
        (a reader keeping up with frames that come faster than the looks is
        not stalled, even if every look finds a frame on its way)."""
        self._seen(now, before)
        if after and self._held_since is None:
            self._held_since = now
        self._last_unsent = after

    def _seen(self, now: float, unsent: int) -> None:
        """``unsent`` bytes held at ``now``: the stall is counted from when
        output was last taken. A reader that takes some (fewer bytes held
        than when last seen: a cast streamed to a slow link, a long replay)
        is reading, however slowly; only one that takes nothing stalls."""
        if unsent == 0:
            self._held_since = None
        elif self._held_since is None or unsent < self._last_unsent:
            self._held_since = now
        self._last_unsent = unsent

    def rested(self, now: float) -> None:
        """The client could not type to any effect until now (saving was
        paused): its idle time starts again."""
        self._last_input = max(self._last_input, now)

    def breach(self, now: float, unsent: int) -> Optional[Breach]:
        """The rule broken at ``now`` with ``unsent`` bytes held, if any."""
        self._seen(now, unsent)
        if self._held_since is not None and (
            unsent > self.unsent_bytes or now - self._held_since >= self.stalled_seconds
        ):
            return Breach.SLOW
        if now - self._last_input >= self.idle_seconds:
            return Breach.IDLE
        return None

    def next_look(self, now: float, unsent: int) -> float:
        """When to look again (:meth:`breach`): at the idle limit, or soon while output is held."""
        due = self._last_input + self.idle_seconds
        if unsent and self._held_since is not None:
            due = min(due, now + HELD_POLL_SECONDS, self._held_since + self.stalled_seconds)
        elif unsent:
            due = min(due, now)
        return due


def raise_open_files() -> int:
    """The process's open-file limit raised to its hard limit (each
    connection holds a socket); the limit now. The one function here that
    acts on the process: what :func:`capped_by_files` is given."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
        for limit in (wanted, 65536, 1 << 14):  # macOS refuses more than OPEN_MAX, however high hard is
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, wanted), hard))
                break
            except (ValueError, OSError):
                continue
    return int(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def capped_by_files(limits: Limits, open_files: int) -> Tuple[Limits, Optional[str]]:
    """``limits`` fitted into ``open_files`` (the process's limit, raised as
    far as it goes): each connection holds a socket; and what to say when
    the limit cut the sessions (None: it did not)."""
    room = max(1, open_files - SPARE_FILES)
    if limits.sessions + limits.handshakes <= room:
        return limits, None
    handshakes = max(1, min(limits.handshakes, room // 5))
    sessions = max(1, room - handshakes)
    fitted = Limits(
        **{
            **limits.__dict__,
            "sessions": sessions,
            "handshakes": handshakes,
            "handshakes_per_address": min(limits.handshakes_per_address, handshakes),
        }
    )
    return fitted, (
        f"the open-file limit ({open_files}) caps the server at {sessions} sessions"
        f" and {handshakes} connections logging in"
    )


def short_fingerprint(fingerprint: Optional[str]) -> str:
    """A key's SHA256 fingerprint shortened for the log (``guest`` without)."""
    if fingerprint is None:
        return "guest"
    return fingerprint[:19]  # "SHA256:" and 12 characters: enough to tell keys apart in a log
