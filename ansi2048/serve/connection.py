"""One client's SSH connection (:class:`ClientConnection`): who it is, what
it may open, and its line in the server's log (:mod:`.accounting`).

Identity is the public key a client authenticates with (its SHA256
fingerprint): every key is accepted, the first one the client offers is the
one it signs with and the one that names the player. A client without a key
gets in through keyboard-interactive with no prompt, as a guest whose game is
not kept. The display name is the SSH user name reduced (:mod:`.names`).

A connection opens session channels (:mod:`.ssh_channel`), within the
admission's limits (:mod:`.limits`; its address counted as its source,
:func:`.limits.source_of`: an IPv6 address by its /64), and nothing else: port forwarding
either way is refused, and of the environment a client sends only
:data:`.limits.ALLOWED_ENV` is kept."""

from __future__ import annotations

import asyncio
from typing import Any, Optional, Tuple

import asyncssh

from .accounting import ConnectionLine
from .context import ServeContext
from .kexguess import follow_rfc_guess
from .limits import ALLOWED_ENV, Refusal
from .link import Identity, for_terminal
from .names import display_name, printable
from .ssh_channel import SshChannel
from .store.base import StoreError

__all__ = ["ClientConnection", "DoorChannel", "open_session_on"]


class ClientConnection(asyncssh.SSHServer):
    """One client connection: its authentication, and what it may open."""

    def __init__(self, context: ServeContext) -> None:
        self._context = context
        self._conn: Optional[asyncssh.SSHServerConnection] = None
        self._key: Optional[asyncssh.SSHKey] = None
        self._guest = False
        self._logging_in = False  # counted among the handshakes
        self.line = ConnectionLine("?", context.log, context.clock)  # its line in the log, made again on connecting
        self.banned: Optional[str] = None  # why its key is banned (serve --ban), read as it logs in

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        follow_rfc_guess(conn)  # before its first packet: Dropbear's guessed one (serve/kexguess.py)
        self._conn = conn
        context = self._context
        context.connections.add(conn)
        peer = conn.get_extra_info("peername")
        self.line = ConnectionLine(str(peer[0]) if peer else "?", context.log, context.clock)
        try:
            context.admission.start_handshake(self.line.source)
        except Refusal as refusal:
            # Closed before its handshake costs anything: asyncssh sends its
            # version line first, then the connection goes.
            self.line.endings.append(f"refused: {refusal}")
            asyncio.get_running_loop().call_soon(conn.abort)
            return
        self._logging_in = True

    def auth_completed(self) -> None:
        self._end_handshake()
        if not self._guest and self._key is not None:
            self.line.fingerprint = str(self._key.get_fingerprint("sha256"))
        user = self._conn.get_extra_info("username") if self._conn is not None else None
        if user is not None:  # (a browser's connection is named by its door: serve/web/socket.py)
            self.line.name = display_name(user)
        self.line.connected()

    def _end_handshake(self) -> None:
        if self._logging_in:
            self._logging_in = False
            self._context.admission.end_handshake(self.line.source)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._logging_in:
            self.line.endings.append("left before logging in" if exc is None else "not logged in in time, or failed")
        self._end_handshake()
        if self._conn is not None:
            self._context.connections.discard(self._conn)
        self.line.lost()

    def open_session(self, name: str, fingerprint: Optional[str]) -> SshChannel:
        """A session channel for the client named ``name`` (its key's
        ``fingerprint``; None: a guest), within the admission's limits
        (:class:`Refusal` says which it is over): the one way a session
        opens, an SSH client's or a browser's."""
        line = self.line
        line.name, line.fingerprint = name, fingerprint
        counted = fingerprint or f"guest@{line.source}"
        try:
            if self.banned is not None and fingerprint is not None:  # serve --ban
                self._context.admission.refused["banned"] += 1
                raise Refusal(f"your key is banned from this server: {printable(self.banned, 200)}")
            self._context.admission.start_session(line.source, counted, guest=fingerprint is None)
        except Refusal as refusal:
            line.endings.append(f"session refused: {refusal}")
            raise
        return SshChannel(self._context, Identity(fingerprint, name, line.named), line, (line.source, counted))

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
                self.banned = await self._context.store.banned(str(key.get_fingerprint("sha256")))
            except StoreError as error:  # the store away: nobody is kept out for it
                self._context.log(f"ban not checked: {printable(str(error), 160)}")
        return bool(key.public_data == self._key.public_data)

    def kbdint_auth_supported(self) -> bool:
        return True

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        self._key, self._guest = None, True  # no key: a guest, let in without a prompt
        return True

    def password_auth_supported(self) -> bool:
        return False

    def session_requested(self) -> Tuple[asyncssh.SSHServerChannel[bytes], SshChannel]:
        assert self._conn is not None
        user = self._conn.get_extra_info("username") or ""
        try:
            session = self.open_session(display_name(user), self.line.fingerprint)
        except Refusal as refusal:
            raise asyncssh.ChannelOpenError(asyncssh.OPEN_RESOURCE_SHORTAGE, str(refusal)) from None
        chan = self._conn.create_server_channel()
        _keep_allowed_env(chan)
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


class DoorChannel:
    """What a session and the server's stop use of asyncssh's channel and
    connection that every door which is no SSH has alike (a browser's
    socket, another server's relay): its peer, and itself as its own
    connection, closed by being cut."""

    def __init__(self, peer: Tuple[str, int]) -> None:
        self._peer = peer
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "connection":
            return self
        if name == "peername":
            return self._peer
        return default

    def abort(self) -> None:
        """Cut the connection at once."""
        self.closed = True

    def close(self) -> None:
        self.abort()


def open_session_on(
    record: ClientConnection,
    channel: Any,
    who: Tuple[Optional[str], str],
    size: Tuple[int, int],
    term: str,
    command: Optional[str],
) -> Optional[SshChannel]:
    """A session started on ``channel`` (what a session uses of asyncssh's:
    a browser's socket, another server's relay), on a terminal ``term`` of
    ``size`` (columns, lines), as the client ``who`` names (a key's
    fingerprint, None for a guest; the name): opened as an SSH client's is
    (:meth:`ClientConnection.open_session`). None when the server's limits
    refuse it (the client is told why, and the channel exits 1)."""
    fingerprint, name = who
    try:
        session = record.open_session(name, fingerprint)
    except Refusal as refusal:
        channel.write(for_terminal(f"ansi2048: {refusal}\n").encode())
        channel.exit(1)
        return None
    session.connection_made(channel)
    session.pty_requested(term, (size[0], size[1], 0, 0), {})
    if command is None:
        session.shell_requested()
    else:
        session.exec_requested(command)
    session.session_started()
    return session
