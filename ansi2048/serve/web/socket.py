"""A WebSocket as the SSH channel and connection a session drives: the
page's session is an :class:`~..ssh_channel.SshChannel` like any SSH
client's (the same command table, limits, store, claims, log line), fed by
:func:`serve_socket` from the page's messages (:mod:`.protocol`) and
writing to a :class:`SocketChannel`, which has what the session and the
server use of asyncssh's channel and connection (write, the unsent bytes,
exit, the peer, abort)."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import Any, Dict, Optional, Tuple

from aiohttp import WebSocketError, WSCloseCode, WSMsgType, web

from ..connection import ClientConnection, DoorChannel, open_session_on
from ..context import ServeContext
from ..ssh_channel import SshChannel
from ..store.base import StoreError
from .protocol import MESSAGE_BYTES, Continue, Keys, Pause, Resize, exit_message, parse_up

__all__ = ["TERM", "SocketChannel", "serve_socket"]

# What the page's terminal is: xterm.js draws 24-bit colour.
TERM = "xterm-256color"
ENV = {"COLORTERM": "truecolor"}
# Output is sent in frames of at most this many bytes (a frame of the game is a few KB).
CHUNK_BYTES = 64 * 1024
# Seconds the page has to send its terminal's size, after the socket opens.
SIZE_SECONDS = 10.0
# Seconds the connection's log line waits for its session to end (it saves its game first).
ENDING_SECONDS = 5.0
# Seconds a refused page has to take the reason.
REFUSAL_SECONDS = 2.0


class SocketChannel(DoorChannel):
    """The WebSocket as asyncssh's channel and connection are to a session
    and to the server's stop: what is written waits in ``_out`` until the
    sender (:meth:`send_all`) has it on the socket; a page that asked to
    pause (or does not read) leaves it there, and :meth:`get_write_buffer_size`
    says how much, as asyncssh's does for an SSH client that does not read."""

    def __init__(self, socket: web.WebSocketResponse, peer: Tuple[str, int], abort: Any) -> None:
        super().__init__(peer)
        self._socket = socket
        self._abort = abort  # the transport's abort: the connection cut at once
        self._out = bytearray()
        self._in_flight = 0
        self._wake = asyncio.Event()
        self.paused = False
        self.status: Optional[int] = None  # the session's exit status, once it exited

    # -- what the session uses of asyncssh's channel ----------------------------

    def write(self, data: bytes) -> None:
        if self.closed:
            raise OSError("the page is gone")  # as asyncssh's closed channel: the link marks itself gone
        self._out += data
        self._wake.set()

    write_stderr = write  # a terminal has one stream

    def get_write_buffer_size(self) -> int:
        return len(self._out) + self._in_flight

    def get_environment(self) -> Dict[str, str]:
        return dict(ENV)

    def exit(self, status: int) -> None:
        self.status = status
        self._wake.set()

    # -- what the server uses of asyncssh's connection ----------------------------

    def abort(self) -> None:
        """Cut the connection at once, what it holds unsent dropped (a page
        that stopped reading would never take it)."""
        super().abort()
        self._out.clear()
        self._abort()
        self._wake.set()

    # -- flow control and the sender ------------------------------------------------

    def pause(self, paused: bool) -> None:
        self.paused = paused
        self._wake.set()

    async def send_all(self) -> None:
        """Send what is written, as the page takes it, until the session
        exits (then its status, and the socket closes) or the page goes."""
        socket = self._socket
        while not self.closed:
            await self._wake.wait()
            self._wake.clear()
            while self._out and not self.paused and not self.closed:
                chunk = bytes(self._out[:CHUNK_BYTES])
                del self._out[:CHUNK_BYTES]
                self._in_flight = len(chunk)
                try:
                    await socket.send_bytes(chunk)
                except (ConnectionError, RuntimeError):
                    self.closed = True
                finally:
                    self._in_flight = 0
            if self.status is not None and not self._out and not self.closed:
                with suppress(ConnectionError, RuntimeError):
                    await socket.send_str(exit_message(self.status))
                    await socket.close()
                self.closed = True


async def serve_socket(
    context: ServeContext, request: web.Request, fingerprint: Optional[str], name: str, command: Optional[str] = None
) -> web.WebSocketResponse:
    """One page's session, from the socket's opening to its end: the game
    on a terminal (or ``command``, as ``ssh -t HOST COMMAND`` runs it),
    played as the player ``fingerprint`` names (None: a guest)."""
    keepalive = context.limits.keepalive_seconds
    socket = web.WebSocketResponse(max_msg_size=MESSAGE_BYTES, heartbeat=keepalive or None)
    await socket.prepare(request)
    transport = request.transport
    peer = _peer(request)
    channel = SocketChannel(socket, peer, transport.abort if transport is not None else lambda: None)
    record = ClientConnection(context)  # the connection's accounting and its line in the log
    record.connection_made(channel)  # type: ignore[arg-type]  # asyncssh's connection, as far as it is used
    record.line.endings.append("web")
    sender = asyncio.get_running_loop().create_task(channel.send_all())
    session: Optional[SshChannel] = None
    try:
        if len(record.line.endings) > 1:  # refused (too many logging in): cut already
            return socket
        size = await _first_size(socket, context.limits.login_seconds)
        record.line.fingerprint, record.line.name = fingerprint, name
        record.auth_completed()
        if size is None:
            record.line.endings.append("no terminal size in time")
            return socket
        if fingerprint is not None:
            with suppress(StoreError):  # the store away: nobody is kept out for it
                record.banned = await context.store.banned(fingerprint)  # serve --ban, as an SSH client's key
        session = open_session_on(record, channel, (fingerprint, name), (size.columns, size.lines), TERM, command)
        if session is not None:
            await _read(socket, channel, session, record)
        return socket
    finally:
        if session is not None:
            session.connection_lost(None)
            if session.task is not None:  # its ending (saved, how) in the connection's line, as an SSH client's
                with suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(session.task), ENDING_SECONDS)
        elif channel.status is not None and not channel.closed:  # refused: the page is told why, briefly
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(sender), REFUSAL_SECONDS)
        sender.cancel()
        record.connection_lost(None)


async def _first_size(socket: web.WebSocketResponse, seconds: float) -> Optional[Resize]:
    """The terminal's size, the page's first message; None if it sends
    something else first, or nothing in time."""
    try:
        message = await socket.receive(timeout=min(seconds, SIZE_SECONDS))
    except asyncio.TimeoutError:
        return None
    up = parse_up(message.data) if message.type == WSMsgType.TEXT else None
    return up if isinstance(up, Resize) else None


async def _read(
    socket: web.WebSocketResponse, channel: SocketChannel, session: SshChannel, record: ClientConnection
) -> None:
    """The page's messages, to the session, until the socket closes."""
    async for message in socket:
        if message.type == WSMsgType.ERROR:  # then the socket closes
            too_big = isinstance(message.data, WebSocketError) and message.data.code == WSCloseCode.MESSAGE_TOO_BIG
            record.line.endings.append("message too large" if too_big else "bad WebSocket frame")
            continue
        if message.type != WSMsgType.TEXT:
            continue  # binary frames mean nothing up
        up = parse_up(message.data)
        if isinstance(up, Keys):
            session.data_received(up.data, None)
        elif isinstance(up, Resize):
            session.terminal_size_changed(up.columns, up.lines, 0, 0)
        elif isinstance(up, Pause):
            channel.pause(True)
        elif isinstance(up, Continue):
            channel.pause(False)


def _peer(request: web.Request) -> Tuple[str, int]:
    peer = request.transport.get_extra_info("peername") if request.transport is not None else None
    return (str(peer[0]), int(peer[1])) if peer else ("?", 0)
