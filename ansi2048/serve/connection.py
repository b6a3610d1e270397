"""One client's SSH connection (:class:`ClientConnection`): who it is, what
it may open, and its line in the server's log.

Identity is the public key a client authenticates with (its SHA256
fingerprint): every key is accepted, the first one the client offers is the
one it signs with and the one that names the player. A client without a key
gets in through keyboard-interactive with no prompt, as a guest whose game is
not kept. The display name is the SSH user name reduced (:mod:`.names`).

A connection opens session channels (:mod:`.session`), within the
admission's limits (:mod:`.limits`; its address counted as its source,
:func:`.limits.source_of`: an IPv6 address by its /64), and nothing else: port forwarding
either way is refused, and of the environment a client sends only
:data:`.limits.ALLOWED_ENV` is kept."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import asyncssh

from .commands import printable
from .kexguess import follow_rfc_guess
from .limits import ALLOWED_ENV, Refusal, short_fingerprint, source_of
from .names import display_name
from .session import SessionChannel
from .store.base import StoreError

if TYPE_CHECKING:
    from .server import GameServer  # which imports this module, to accept connections

__all__ = ["ClientConnection", "Identity"]


@dataclass(frozen=True)
class Identity:
    """Who a connection is: a key's fingerprint (None: a guest) and a name."""

    fingerprint: Optional[str]
    name: str


class ClientConnection(asyncssh.SSHServer):
    """One client connection: its authentication, and what it may open."""

    def __init__(self, server: GameServer) -> None:
        self._server = server
        self._conn: Optional[asyncssh.SSHServerConnection] = None
        self._key: Optional[asyncssh.SSHKey] = None
        self._guest = False
        self._address = "?"
        self.source = "?"
        self._started = server.clock()
        self._logging_in = False  # counted among the handshakes
        self.fingerprint: Optional[str] = None
        self.name = "-"
        # What the connection's line in the log says, filled in by its sessions.
        self.term = ""
        self.window: Optional[Tuple[int, int]] = None
        self.keys = 0
        self.endings: List[str] = []
        self.running = 0  # its sessions still running: its line waits for them to say how they ended
        self._banned: Optional[str] = None  # why its key is banned (serve --ban), read as it logs in
        self._lost = False

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        follow_rfc_guess(conn)  # before its first packet: Dropbear's guessed one (serve/kexguess.py)
        self._conn = conn
        self._server.connections.add(conn)
        peer = conn.get_extra_info("peername")
        self._address = str(peer[0]) if peer else "?"
        self.source = source_of(self._address)  # what the per-address caps count it as
        try:
            self._server.admission.start_handshake(self.source)
        except Refusal as refusal:
            # Closed before its handshake costs anything: asyncssh sends its
            # version line first, then the connection goes.
            self.endings.append(f"refused: {refusal}")
            asyncio.get_running_loop().call_soon(conn.abort)
            return
        self._logging_in = True

    def auth_completed(self) -> None:
        self._end_handshake()
        if not self._guest and self._key is not None:
            self.fingerprint = str(self._key.get_fingerprint("sha256"))
        user = self._conn.get_extra_info("username") if self._conn is not None else None
        if user is not None:  # (a browser's connection is named by its door: serve/web/socket.py)
            self.name = display_name(user)
        # The connection's first line in the log: who is in (its last says how it ended).
        said = f"{self._address} {short_fingerprint(self.fingerprint)} {self.name} connected"
        self._server.log(said, "connected", address=self._address, fingerprint=self.fingerprint, name=self.name)

    def _end_handshake(self) -> None:
        if self._logging_in:
            self._logging_in = False
            self._server.admission.end_handshake(self.source)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._logging_in:
            self.endings.append("left before logging in" if exc is None else "not logged in in time, or failed")
        self._end_handshake()
        if self._conn is not None:
            self._server.connections.discard(self._conn)
        self._lost = True
        if not self.running:
            self._log_ended()

    def session_done(self) -> None:
        """One of its sessions has ended (and said how): once the client
        has gone and none runs, the connection's line is logged."""
        self.running -= 1
        if self._lost and not self.running:
            self._log_ended()

    def _log_ended(self) -> None:
        """The connection's line in the log: when, from where, who (a short
        fingerprint), in which terminal, how long, how many keys, how it
        ended. Nothing the client sent is in it as it came (TERM is made
        printable and bounded), and no key."""
        window = f"{self.window[0]}x{self.window[1]}" if self.window else "-"
        seconds = self._server.clock() - self._started
        ended = "; ".join(self.endings) or "closed"
        line = (
            f"{self._address} {short_fingerprint(self.fingerprint)} {self.name} TERM={self.term or '-'} {window}"
            f" {seconds:.1f} s, {self.keys} keys, {ended}"
        )
        who = {"address": self._address, "fingerprint": self.fingerprint, "name": self.name}
        facts = {"term": self.term or None, "window": window if self.window else None, "seconds": round(seconds, 1)}
        self._server.log(line, "ended", **who, **facts, keys=self.keys, endings=self.endings or ["closed"])

    def begin_auth(self, username: str) -> bool:
        return True  # authentication is asked for: a keyless client still gets in (kbdint)

    def public_key_auth_supported(self) -> bool:
        return True

    async def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        # Called for the client's query, then for its signature: the first
        # key offered is accepted, and only that one names the player. A
        # banned key is accepted too (else the client would log in as a
        # guest), and its sessions refused, saying why.
        if self._key is None:
            self._key = key
            try:
                self._banned = await self._server.store.banned(str(key.get_fingerprint("sha256")))
            except StoreError as error:  # the store away: nobody is kept out for it
                self._server.log(f"ban not checked: {printable(str(error), 160)}")
        return bool(key.public_data == self._key.public_data)

    def kbdint_auth_supported(self) -> bool:
        return True

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        self._key, self._guest = None, True  # no key: a guest, let in without a prompt
        return True

    def password_auth_supported(self) -> bool:
        return False

    def session_requested(self) -> Tuple[asyncssh.SSHServerChannel[bytes], SessionChannel]:
        assert self._conn is not None
        user = self._conn.get_extra_info("username") or ""
        self.name = display_name(user)
        fingerprint = self.fingerprint
        counted = fingerprint or f"guest@{self.source}"
        if self._banned is not None and fingerprint is not None:
            self.endings.append("session refused: banned")
            self._server.admission.refused["banned"] += 1
            said = f"your key is banned from this server: {printable(self._banned, 200)}"
            raise asyncssh.ChannelOpenError(asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, said)
        try:
            self._server.admission.start_session(self.source, counted, guest=fingerprint is None)
        except Refusal as refusal:
            self.endings.append(f"session refused: {refusal}")
            raise asyncssh.ChannelOpenError(asyncssh.OPEN_RESOURCE_SHORTAGE, str(refusal)) from None
        chan = self._conn.create_server_channel()
        _keep_allowed_env(chan)
        session = SessionChannel(self._server, Identity(fingerprint, self.name), self, (self.source, counted))
        return chan, session

    # Refused, always: this server runs the game and nothing else.
    def connection_requested(self, dest_host: str, dest_port: int, orig_host: str, orig_port: int) -> bool:
        return False  # ssh -L

    def server_requested(self, listen_host: str, listen_port: int) -> bool:
        return False  # ssh -R

    def unix_connection_requested(self, dest_path: str) -> bool:
        return False

    def unix_server_requested(self, listen_path: str) -> bool:
        return False

    def tun_requested(self, unit: Optional[int]) -> bool:
        return False

    def tap_requested(self, unit: Optional[int]) -> bool:
        return False


def _keep_allowed_env(chan: asyncssh.SSHServerChannel[bytes]) -> None:
    """Environment variables other than :data:`.limits.ALLOWED_ENV` dropped
    as they arrive: asyncssh keeps every one a client sends (any number, any
    size) and has no option to refuse them, so its handler of the ``env``
    request is wrapped on this channel (a request it looks up by name)."""
    process = chan._process_env_request  # asyncssh's handler: no public hook

    def allowed_only(packet: Any) -> bool:
        name = bytes(packet.get_string())
        value = bytes(packet.get_string())
        packet.check_end()
        if name.decode("ascii", "replace") in ALLOWED_ENV and len(value) <= 256:
            return bool(process(_Replayed(name, value)))  # type: ignore[arg-type]
        return True  # said to be set, and dropped: the client need not know

    chan._process_env_request = allowed_only  # type: ignore[method-assign]


class _Replayed:
    """An ``env`` request's packet as asyncssh's handler reads it."""

    def __init__(self, name: bytes, value: bytes) -> None:
        self._strings = [name, value]

    def get_string(self) -> bytes:
        return self._strings.pop(0)

    def check_end(self) -> None:
        pass
