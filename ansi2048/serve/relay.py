"""A session played on another server of the same store (issue 37: a race
that player's server does not hold): what the two servers say over the
relay's TCP stream (pure: framing and the handshake's proof), and the
player's side, :func:`relay_session`, which carries their keys and window
there and the other server's output back to them. The other side, which
runs the session as it runs an SSH client's, is :mod:`.relay_door`.

The stream: the holding server sends a line, a random challenge; the
player's server answers with one line of JSON (:class:`Hello`: who the
player is, their terminal, the command) and one line, the HMAC-SHA256 of
the challenge and that JSON under the store's daily secret (every server
of one store shares it: no other program can relay a player in, or claim
to be one). Then frames both ways: one byte tag, four bytes of length,
the payload. Up: ``i`` keys, ``r`` the window (``COLSxLINES``). Down:
``o`` output (what the player's terminal gets), ``x`` the exit status.
Either side closing the stream ends the session: the player's connection
gone is the holding server's too (a racer's seat waits for them)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import struct
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional, Tuple

from ..loop.events import Resized
from .link import Client, Ended, Typed
from .names import printable

__all__ = [
    "CONNECT_SECONDS",
    "DOWN_EXIT",
    "DOWN_OUTPUT",
    "FRAME_BYTES",
    "HELLO_BYTES",
    "UP_KEYS",
    "UP_SIZE",
    "Hello",
    "challenge",
    "frame",
    "proof",
    "read_frame",
    "read_hello",
    "relay_session",
]

UP_KEYS, UP_SIZE, DOWN_OUTPUT, DOWN_EXIT = b"i", b"r", b"o", b"x"
# The largest frame either side sends or takes (a frame of the game is a few KB).
FRAME_BYTES = 256 * 1024
# The longest hello line: a command is at most a few hundred characters.
HELLO_BYTES = 8192
# Seconds to reach the holding server and pass its handshake.
CONNECT_SECONDS = 5.0
_HEADER = struct.Struct(">cI")


@dataclass(frozen=True)
class Hello:
    """Who is relayed: their key's fingerprint (None: a guest), name and
    address (the holding server counts them by it, as their own server
    does), their terminal, and the command to run there."""

    fingerprint: Optional[str]
    name: str
    source: str
    term: str
    env: Dict[str, str]
    columns: int
    lines: int
    command: str


def challenge() -> bytes:
    """The holding server's first line: 32 random hex digits."""
    return os.urandom(16).hex().encode("ascii") + b"\n"


def proof(secret: bytes, challenged: bytes, hello: bytes) -> bytes:
    """The answer to ``challenged`` for the JSON line ``hello``, as a hex line."""
    return hmac.new(secret, challenged.strip() + b"\n" + hello.strip(), hashlib.sha256).hexdigest().encode() + b"\n"


def frame(tag: bytes, payload: bytes) -> bytes:
    return _HEADER.pack(tag, len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader) -> Optional[Tuple[bytes, bytes]]:
    """The next frame (tag, payload); None at the stream's end or at a frame too large (then it ends)."""
    try:
        tag, size = _HEADER.unpack(await reader.readexactly(_HEADER.size))
        if size > FRAME_BYTES:
            return None
        return tag, await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def read_hello(line: bytes) -> Optional[Hello]:
    """The hello's JSON line, or None for anything that is not one; its
    texts made printable (they reach the log and the screens)."""
    try:
        fields: Any = json.loads(line)
        Hello(**fields)  # its fields, and no others
    except (ValueError, TypeError):
        return None
    texts = [fields[name] for name in ("name", "source", "term", "command")]
    sizes = [fields["columns"], fields["lines"]]
    env, fingerprint = fields["env"], fields["fingerprint"]
    if not all(isinstance(text, str) for text in texts) or not all(type(size) is int for size in sizes):
        return None
    if not isinstance(env, dict) or not isinstance(fingerprint, (str, type(None))):
        return None
    name, source, term, command = texts
    kept = {key: printable(str(env[key])) for key in ("COLORTERM", "NO_COLOR") if key in env}
    return Hello(fingerprint, printable(name), printable(source), printable(term), kept, sizes[0], sizes[1], command)


async def relay_session(client: Client, address: Tuple[str, int], secret: bytes, command: str) -> Optional[int]:
    """``command`` run for ``client`` on the server at ``address`` (its
    relay door), until it exits or the client goes; its exit status, or
    None if that server could not be reached (nothing was shown)."""
    fingerprint, name = client.identity.fingerprint, client.identity.name
    columns, lines = client.window
    env = client.client_env()
    term = env.pop("TERM", "dumb")
    hello = json.dumps(asdict(Hello(fingerprint, name, client.source, term, env, columns, lines, command))).encode()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(*address), CONNECT_SECONDS)
    except (OSError, asyncio.TimeoutError):
        return None
    try:
        challenged = await asyncio.wait_for(reader.readline(), CONNECT_SECONDS)
        if not challenged.endswith(b"\n"):
            return None
        writer.write(hello + b"\n" + proof(secret, challenged, hello))
        return await _carry(client, reader, writer)
    except (OSError, asyncio.TimeoutError):
        return None
    finally:
        writer.close()
        with suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), CONNECT_SECONDS)


async def _carry(client: Client, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Optional[int]:
    """Keys and windows up, output down, until the other side exits (its
    status) or the client goes (None: the stream closes, and its session
    there sees the connection gone)."""
    up = asyncio.ensure_future(_up(client, writer))
    try:
        status: Optional[int] = None
        while True:
            got = await read_frame(reader)
            if got is None:
                return status
            tag, payload = got
            if tag == DOWN_OUTPUT and not client.gone():
                client.link.write(payload)
            elif tag == DOWN_EXIT:
                status = int(payload) if payload.isdigit() else 1
    finally:
        up.cancel()
        with suppress(asyncio.CancelledError):
            await up


async def _up(client: Client, writer: asyncio.StreamWriter) -> None:
    """What the client sends, to the other side; the stream closed once the client has gone."""
    while True:
        got: object = await client.incoming.get()
        if isinstance(got, Typed):
            writer.write(frame(UP_KEYS, got.data))
        elif isinstance(got, Resized):
            writer.write(frame(UP_SIZE, f"{got.size[0]}x{got.size[1]}".encode("ascii")))
        elif isinstance(got, Ended):  # gone, or this server stops: there, the connection is gone
            writer.close()
            return
