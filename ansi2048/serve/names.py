"""What a client's words become on the server (pure): its SSH user name as
a display name, and anything else it sent as it may be repeated (to it, to
another player, in the log): one place for each."""

from __future__ import annotations

import re
from itertools import count
from typing import Callable

__all__ = ["GUEST", "MAX_NAME", "NAMELESS", "display_name", "folded", "guest_name", "key_name", "printable", "reserved"]

# As ssh-chat does: short enough for a score line, long enough to tell apart.
MAX_NAME = 16
# What a name keeps: ASCII letters, digits and _.- (no control character, no
# escape sequence, no bidi override, no look-alike letter of another script).
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.-]+")
# Control sequences are dropped whole first, so that their parameters
# ("31m" of ESC [31m) do not end up in the name: CSI (7-bit ESC [ and 8-bit
# 0x9b), OSC and the other strings (ESC ] P X ^ _ ... up to BEL or ST),
# and two-character escapes.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
# What a guest is called; each one, numbered (guest_name).
GUEST = "guest"
# The name of a client whose user name keeps nothing.
NAMELESS = "player"
# A guest's numbered name (guest_name), folded.
_GUEST_NUMBERED = re.compile(rf"{GUEST}-[0-9]+")


def display_name(user: str) -> str:
    """``user`` reduced to the allowed characters, at most :data:`MAX_NAME`
    of them; :data:`NAMELESS` when nothing is left."""
    return _NOT_ALLOWED.sub("", _SEQUENCE.sub("", user))[:MAX_NAME] or NAMELESS


def reserved(name: str) -> bool:
    """A name no key may take: "guest" is every player without a key (the
    first screen), and guest-N one of them (the watch list, a race), never
    a player with one."""
    return folded(name) == GUEST or _GUEST_NUMBERED.fullmatch(folded(name)) is not None


def key_name(requested: str) -> str:
    """The name a key asks for (a display name, ``requested``) as the store
    is asked for it: :data:`NAMELESS` in place of a reserved one."""
    return NAMELESS if reserved(requested) else requested


def guest_name(taken: Callable[[str], bool]) -> str:
    """A guest's name where ``taken`` says which names are in use: guest-N,
    the lowest N free. A guest has no name of its own, yet a watcher or a
    racer must tell guests apart (and ``watch guest-2`` find one): each is
    numbered within what it is in (a race, among its racers; a live game,
    among the games being played), and keeps the name while that lasts."""
    return next(name for name in (f"{GUEST}-{n}" for n in count(1)) if not taken(name))


def folded(name: str) -> str:
    """What two names must not share to be told apart: ``Dana`` and
    ``dana`` are one name (a display name keeps ASCII only, so no letter of
    another script is left to look like one of these: case is the fold
    left). The store keeps names unique by it, and ``watch NAME`` finds by it."""
    return name.lower()


def printable(text: str, longest: int = 40) -> str:
    """A client's words as they may be repeated (to them, or in the log):
    printable ASCII, short."""
    kept = "".join(ch if " " <= ch <= "~" else "?" for ch in text)
    return kept if len(kept) <= longest else kept[: longest - 3] + "..."
