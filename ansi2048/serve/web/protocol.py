"""What the page and the server say over the WebSocket, and the checks on a
request: pure (no socket, no clock).

Up (page to server), text frames, each tagged by its first character:
``i`` then keys (as typed: UTF-8), ``r`` then ``COLSxROWS`` (the terminal's
size), ``p`` (pause: the page has more output unrendered than it wants) and
``c`` (continue). Down (server to page): binary frames, the terminal's
output as an SSH client gets it; a text frame ``x`` then the exit status
when the session ends. Anything else a page sends is ignored, message by
message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union
from urllib.parse import urlsplit

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MESSAGE_BYTES",
    "Continue",
    "Keys",
    "Pause",
    "Resize",
    "Up",
    "exit_message",
    "parse_up",
    "same_origin",
]

# The longest message the page may send: a key or a paste within the input
# budget's burst (limits.Limits.input_burst's default), a resize, a code.
# Longer ones end the socket (aiohttp's max_msg_size), as SSH's own limits do.
MESSAGE_BYTES = 8192
# Every response's policy: nothing but the server's own files (xterm.js is
# served from here), no inline script, no framing (clickjacking). Inline
# styles are allowed: xterm.js's DOM renderer sizes its rows with <style>
# elements it writes (style is not script).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:;"
    " connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class Keys:
    data: bytes


@dataclass(frozen=True)
class Resize:
    columns: int
    lines: int


@dataclass(frozen=True)
class Pause:
    """The page has too much output unrendered: hold the rest (it stays
    unsent, and the server's slow-reader rule sees it)."""


@dataclass(frozen=True)
class Continue:
    """The page has caught up: send again."""


Up = Union[Keys, Resize, Pause, Continue]
_LARGEST = 10_000  # a size past this is not a window (the session bounds it further)


def parse_up(text: str) -> Optional[Up]:
    """One text message from the page; None for anything that is not one."""
    tag, body = text[:1], text[1:]
    if tag == "i":
        return Keys(body.encode("utf-8", "replace")) if body else None
    if tag == "r":
        columns, x, lines = body.partition("x")
        if x and columns.isdigit() and lines.isdigit() and len(columns) <= 5 and len(lines) <= 5:
            size = int(columns), int(lines)
            if all(0 < n <= _LARGEST for n in size):
                return Resize(*size)
        return None
    if tag == "p" and not body:
        return Pause()
    if tag == "c" and not body:
        return Continue()
    return None


def exit_message(status: int) -> str:
    return f"x{status}"


def same_origin(origin: Optional[str], host: Optional[str]) -> bool:
    """A WebSocket's ``Origin`` names the page's own server (``host``, the
    request's Host header): a page of another site must not open a session
    with this browser's cookie (cross-site WebSocket hijacking). No Origin
    is a client that is not a browser (a script), which carries no cookie
    of a visitor's. http and https both: TLS may end at a proxy in front."""
    if origin is None:
        return True
    if not host:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower() and not parts.path.strip("/")
