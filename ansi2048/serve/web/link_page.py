"""The page that links a browser (``/link``): a form for the code ``ssh
HOST link`` gives, plain HTML without JavaScript; and the bound on the codes
one address may try (a code is 1 in 10**12, and only 10 minutes long)."""

from __future__ import annotations

from collections import deque
from html import escape
from typing import Deque, Dict

__all__ = ["BAD_CODE", "LINK_SECONDS", "TOO_MANY", "LinkTries", "link_page"]

LINK_SECONDS = 400 * 24 * 3600  # the cookie's life (browsers cap it at 400 days); unlink ends it sooner
BAD_CODE = "That code is not one the server gave, or it was used, or it is older than 10 minutes."
TOO_MANY = "Too many codes tried from your address: try again in a few minutes."
TRIES = 10  # failed codes one address may try...
TRIES_SECONDS = 600.0  # ...in this long
ADDRESSES = 10_000  # addresses remembered at most (the oldest forgotten first)


def link_page(said: str, ssh: str) -> str:
    """The form, with ``said`` (a fixed sentence of this module's) above it;
    ``ssh``: how to reach the server (``ssh -p PORT HOST``), escaped here."""
    ssh = escape(ssh)
    note = f'<p class="said">{said}</p>' if said else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ansi2048: link this browser</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/pages.css">
</head>
<body>
<h1>Link this browser to your SSH key</h1>
<p>Run <code>{ssh} link</code> with your key: it prints a code. Enter it here, within 10
minutes, and this browser plays as you: your game, your best scores, your daily game.</p>
{note}
<form method="post" action="/link">
<label for="code">Code</label>
<input id="code" name="code" autocomplete="off" autocapitalize="characters" spellcheck="false"
 maxlength="20" placeholder="ABCD-EFGH" required autofocus>
<button type="submit">Link</button>
</form>
<p><a href="/">Back to the game</a>. <code>{ssh} links</code> lists your browsers,
<code>{ssh} unlink N</code> unlinks one.</p>
</body>
</html>
"""


class LinkTries:
    """The codes that failed, per address, over the last TRIES_SECONDS."""

    def __init__(self) -> None:
        self._failed: Dict[str, Deque[float]] = {}

    def allowed(self, address: str, now: float) -> bool:
        times = self._failed.get(address)
        if times is None:
            return True
        while times and now - times[0] >= TRIES_SECONDS:
            times.popleft()
        if not times:
            del self._failed[address]
        return len(times) < TRIES

    def failed(self, address: str, now: float) -> None:
        if address not in self._failed and len(self._failed) >= ADDRESSES:
            del self._failed[next(iter(self._failed))]
        self._failed.setdefault(address, deque()).append(now)
