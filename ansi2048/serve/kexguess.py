"""A client's guessed key-exchange packet, ignored as RFC 4253 section 7
says: what lets Dropbear's ``dbclient`` in.

A client may send its first key-exchange packet (for the algorithm it
prefers) right after its KEXINIT, before it has seen the server's, and says
so with ``first_kex_packet_follows``. The RFC: the guess is wrong when the
two sides' *preferred* key-exchange or host-key algorithms differ (the first
of each list), and a wrong guess's packet MUST be ignored; the client then
sends the right one. OpenSSH's server applies that rule (``proposals_match``).

asyncssh 2.24.1 calls a guess wrong only when the algorithm *negotiated*
differs from the client's first. Dropbear (2022.83) prefers
``curve25519-sha256`` and guesses it; this server prefers
``mlkem768x25519-sha256``, which Dropbear lacks, so the two agree on
curve25519 and asyncssh takes the guess as right and answers it, while
Dropbear, by the RFC, calls its guess wrong and sends its key-exchange packet
again: asyncssh receives it after the exchange ended and disconnects ("Key
exchange not in progress"). Putting curve25519 first would let Dropbear in
but give up the post-quantum hybrid that current OpenSSH clients negotiate.

The adaptation (:func:`follow_rfc_guess`): each connection's KEXINIT
handler runs asyncssh's, then also marks the guessed packet to be ignored
when the RFC's rule calls the guess wrong. asyncssh's rule calls a guess
wrong only when the RFC's does too (the negotiated algorithm is the client's
first one the server supports: if that is not the client's first, the
preferences differ), so the adaptation only ever adds the case asyncssh
misses, and a fixed asyncssh makes it a no-op. It rests on asyncssh's
internals (its handler table, the flag its receive path reads, the KEXINIT
it sent): where any is missing, :func:`supported` is False and connections
are left as asyncssh makes them (every client but a guessing one still
connects). docs/serving.md says what an upstream report should say."""

from __future__ import annotations

import inspect
import struct
from typing import Any, Callable, Dict, Optional, Tuple

import asyncssh

__all__ = ["follow_rfc_guess", "guess_is_wrong", "preferences", "supported"]

MSG_KEXINIT = 20
_COOKIE = 16
# asyncssh's private names the adaptation rests on: the flag its receive path
# reads to skip one key-exchange packet, which its KEXINIT handler sets, and
# where it keeps the KEXINIT the server sent.
_IGNORE_FLAG = "_ignore_first_kex"
_SENT_KEXINIT = "_server_kexinit"

Handler = Callable[..., Any]


def _names(payload: bytes, offset: int) -> Tuple[bytes, int]:
    """The name-list at ``offset`` of a KEXINIT payload, and the offset after it."""
    start = offset + 4
    if start > len(payload):
        raise ValueError("truncated KEXINIT")
    (length,) = struct.unpack_from(">I", payload, offset)
    if start + length > len(payload):
        raise ValueError("truncated KEXINIT")
    return payload[start : start + length], start + length


def preferences(kexinit: bytes) -> Tuple[bytes, bytes, bool]:
    """A KEXINIT payload's (from its message number on) preferred key
    exchange and host key algorithm (each list's first name), and whether
    it says a guessed key-exchange packet follows. ValueError if it is not
    one."""
    if not kexinit or kexinit[0] != MSG_KEXINIT:
        raise ValueError("not a KEXINIT")
    kex, offset = _names(kexinit, 1 + _COOKIE)
    host_key, offset = _names(kexinit, offset)
    for _ in range(8):  # the ciphers, MACs, compressions and languages, each way
        _, offset = _names(kexinit, offset)
    if offset >= len(kexinit):
        raise ValueError("truncated KEXINIT")
    return kex.split(b",")[0], host_key.split(b",")[0], kexinit[offset] != 0


def guess_is_wrong(ours: bytes, theirs: bytes) -> bool:
    """RFC 4253 section 7: the peer whose KEXINIT is ``theirs`` sent a
    guessed packet that must be ignored (it guessed, and the two sides'
    preferred key-exchange or host-key algorithms differ)."""
    our_kex, our_host_key, _ = preferences(ours)
    their_kex, their_host_key, guessed = preferences(theirs)
    return guessed and (our_kex != their_kex or our_host_key != their_host_key)


def supported(connection_class: type = asyncssh.SSHServerConnection) -> bool:
    """asyncssh has the internals the adaptation rests on: a KEXINIT handler
    in the class's table, the flag read on receiving and set by that
    handler, and the sent KEXINIT kept (a look at the names its code uses,
    a few microseconds a connection)."""
    return _kexinit_handler(connection_class) is not None


def _kexinit_handler(connection_class: type) -> Optional[Handler]:
    handlers = getattr(connection_class, "_packet_handlers", None)
    handler: Optional[Handler] = handlers.get(MSG_KEXINIT) if isinstance(handlers, dict) else None
    receive = getattr(connection_class, "_recv_packet", None)
    send = getattr(connection_class, "_send_kexinit", None)
    if not (callable(handler) and callable(receive) and callable(send)):
        return None
    if not all(
        _uses(function, name)
        for function, name in ((receive, _IGNORE_FLAG), (handler, _IGNORE_FLAG), (send, _SENT_KEXINIT))
    ):
        return None
    return handler


def _uses(function: Handler, name: str) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and name in code.co_names


def follow_rfc_guess(conn: asyncssh.SSHServerConnection) -> bool:
    """Make ``conn`` (before its first packet) ignore a client's wrongly
    guessed key-exchange packet by RFC 4253's rule; False, and ``conn``
    left as it is, where asyncssh lacks what that rests on."""
    original = _kexinit_handler(type(conn))
    if original is None:
        return False

    async def process_kexinit(self: Any, pkttype: int, pktid: int, packet: Any) -> None:
        theirs = bytes([MSG_KEXINIT]) + packet.get_remaining_payload()
        result = original(self, pkttype, pktid, packet)
        if inspect.isawaitable(result):
            await result
        # asyncssh has chosen the algorithms and sent its KEXINIT if it had
        # not; the guessed packet waits until this handler returns.
        ours = getattr(self, _SENT_KEXINIT, b"")
        if ours and guess_is_wrong(ours, theirs):
            setattr(self, _IGNORE_FLAG, True)

    handlers: Dict[int, Handler] = dict(type(conn)._packet_handlers)
    handlers[MSG_KEXINIT] = process_kexinit
    conn._packet_handlers = handlers  # read by asyncssh's packet dispatch before the class's table
    return True
