"""The relay's door (:mod:`.relay`): where the other servers of the same
store bring a player whose race this server holds. Each stream that proves
it comes from one of them (the handshake's HMAC under the store's daily
secret) is a session like an SSH client's: the same command table, limits
(the player counted by their own address), log line and store
(:func:`~.connection.open_session_on`), on a :class:`RelayChannel`.

It listens on the address ``--relay`` gives (default: loopback, a free
port: the servers of one machine, ``--workers``); the store's race rows
say where (serve/far_races.py)."""

from __future__ import annotations

import asyncio
import hmac
from contextlib import suppress
from typing import Callable, Dict, Optional, Tuple

from .connection import ClientConnection, DoorChannel, open_session_on
from .context import ServeContext
from .relay import (
    DOWN_EXIT,
    DOWN_OUTPUT,
    HELLO_BYTES,
    UP_KEYS,
    UP_SIZE,
    Hello,
    challenge,
    frame,
    proof,
    read_frame,
    read_hello,
)
from .ssh_channel import SshChannel
from .store.base import StoreError

__all__ = ["RelayChannel", "open_relay_door"]

# Seconds the other server has to pass the handshake.
HANDSHAKE_SECONDS = 5.0
# Seconds the connection's log line waits for its session to end (it saves first).
ENDING_SECONDS = 5.0


class RelayChannel(DoorChannel):
    """The relay's stream as asyncssh's channel and connection are to a
    session and to the server's stop (as the browser door's socket is)."""

    def __init__(self, writer: asyncio.StreamWriter, hello: Hello) -> None:
        super().__init__((hello.source, 0))
        self._writer = writer
        self._env = dict(hello.env)

    def write(self, data: bytes) -> None:
        if self.closed or self._writer.is_closing():
            raise OSError("the relay is gone")  # as asyncssh's closed channel: the link marks itself gone
        self._writer.write(frame(DOWN_OUTPUT, data))

    write_stderr = write  # a terminal has one stream

    def get_write_buffer_size(self) -> int:
        transport = self._writer.transport
        return 0 if transport.is_closing() else transport.get_write_buffer_size()

    def get_environment(self) -> Dict[str, str]:
        return dict(self._env)

    def exit(self, status: int) -> None:
        with suppress(OSError, RuntimeError):
            if not self._writer.is_closing():
                self._writer.write(frame(DOWN_EXIT, str(status).encode("ascii")))
                self._writer.close()

    def abort(self) -> None:
        super().abort()
        self._writer.transport.abort()


async def open_relay_door(
    context: Callable[[], ServeContext], host: str, port: int
) -> Tuple[asyncio.AbstractServer, Tuple[str, int]]:
    """The door listening on ``host``:``port`` (0: a free one); where it
    listens. Each stream is served with the server's context as it is then."""

    async def relayed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(ConnectionError):
            await _serve(context(), reader, writer)
        writer.close()

    door = await asyncio.start_server(relayed, host, port, limit=HELLO_BYTES)
    address = door.sockets[0].getsockname()
    return door, (str(address[0]), int(address[1]))


async def _serve(context: ServeContext, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    hello = await _handshake(context.daily_secret, reader, writer)
    if hello is None:
        return
    channel = RelayChannel(writer, hello)
    record = ClientConnection(context)  # the connection's accounting and its line in the log
    record.connection_made(channel)  # type: ignore[arg-type]  # asyncssh's connection, as far as it is used
    record.line.endings.append("relayed")
    if len(record.line.endings) > 1:  # refused (too many logging in): cut already
        return
    record.line.fingerprint, record.line.name = hello.fingerprint, hello.name
    record.auth_completed()
    session: Optional[SshChannel] = None
    try:
        if hello.fingerprint is not None:
            with suppress(StoreError):  # the store away: nobody is kept out for it
                record.banned = await context.store.banned(hello.fingerprint)
        who = (hello.fingerprint, hello.name)
        session = open_session_on(record, channel, who, (hello.columns, hello.lines), hello.term, hello.command)
        while session is not None:
            got = await read_frame(reader)
            if got is None:
                break
            tag, payload = got
            if tag == UP_KEYS:
                session.data_received(payload, None)
            elif tag == UP_SIZE:
                columns, _, lines = payload.decode("ascii", "replace").partition("x")
                if columns.isdigit() and lines.isdigit():
                    session.terminal_size_changed(int(columns), int(lines), 0, 0)
    finally:
        if session is not None:
            session.connection_lost(None)
            if session.task is not None:  # its ending in the connection's line, as an SSH client's
                with suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(session.task), ENDING_SECONDS)
        record.connection_lost(None)


async def _handshake(secret: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Optional[Hello]:
    """The other server's hello, if its proof holds (else None: the stream closes)."""
    challenged = challenge()
    writer.write(challenged)
    try:
        line = await asyncio.wait_for(reader.readline(), HANDSHAKE_SECONDS)
        answer = await asyncio.wait_for(reader.readline(), HANDSHAKE_SECONDS)
    except (asyncio.TimeoutError, ValueError):  # ValueError: a line longer than the limit
        return None
    if not hmac.compare_digest(answer.strip(), proof(secret, challenged, line).strip()):
        return None
    return read_hello(line)
