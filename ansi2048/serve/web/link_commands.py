"""The SSH side of linking a browser: ``link`` (a one-time code),
``links`` (the player's browsers), ``unlink N``. No terminal needed; a
guest has no player to link."""

from __future__ import annotations

import os
import time

from ...options.parser import EXIT_OK
from ..context import ServeContext
from ..link import Client
from ..requests import REFUSED, LinkRequest
from .links import CODE_SECONDS, browsers, issue_code, new_code, unlink

__all__ = ["link_command"]


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


async def link_command(context: ServeContext, client: Client, request: LinkRequest) -> int:
    """``link``, ``links`` or ``unlink N``; the exit status."""
    player = await context.player(client.identity)
    if player is None:
        return client.refuse(f"{request.action}: connect with your SSH key: a guest has no game to link", REFUSED)
    store = context.store
    if request.action == "link":
        code = new_code(os.urandom)
        await issue_code(store, player.id, code, context.now())
        minutes = int(CODE_SECONDS // 60)
        client.say(f"Your code: {code}", stderr=False)
        client.say(
            f"Enter it on this server's web page (link) within {minutes} minutes: that browser then plays as"
            f" {player.name}. It works once.",
            stderr=False,
        )
        return EXIT_OK
    if request.action == "unlink":
        if not await unlink(store, player.id, request.number):
            return client.refuse(f"unlink: no browser {request.number} (see: links)", REFUSED)
        client.say(f"Browser {request.number} is unlinked: it plays as a guest from now on.", stderr=False)
        return EXIT_OK
    linked = await browsers(store, player.id)
    if not linked:
        client.say("No browser is linked (ssh HOST link gives a code for one).", stderr=False)
    for browser in linked:
        label = browser.label or "a browser"
        client.say(
            f"{browser.number:>3}  linked {_when(browser.created)}, last played {_when(browser.used)}  {label}",
            stderr=False,
        )
    return EXIT_OK
