"""Linking a browser to a player (``ssh HOST link``; the page's /link):
one-time codes and the tokens the browsers keep, stored hashed
(:mod:`..store.links`). The randomness and the clock are passed in."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from ..store.base import Store
from ..store.links import (
    DELETE_CODE,
    DELETE_EXPIRED,
    DELETE_LINK,
    INSERT_CODE,
    INSERT_LINK,
    SELECT_LINKS,
    SELECT_TOKEN,
    TOUCH_LINK,
    Statement,
)

__all__ = [
    "CODE_SECONDS",
    "COOKIE",
    "LinkedBrowser",
    "browsers",
    "issue_code",
    "linked_player",
    "new_code",
    "normal_code",
    "redeem",
    "unlink",
]

CODE_SECONDS = 600.0  # a code is good for 10 minutes, once
# Letters and digits that cannot be mistaken for one another (no 0 O 1 I).
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8  # 32**8: 10**12 codes, for one in the 10 minutes a code lives
COOKIE = "ansi2048_link"  # the browser's token: HttpOnly, SameSite=Strict


@dataclass(frozen=True)
class LinkedBrowser:
    number: int  # as ``links`` lists them, from 1
    created: float
    used: float
    label: str  # what the browser said it was (its User-Agent, shortened)


def digest(secret: str) -> str:
    """What the database keeps of a code or a token."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_code(random_bytes: Callable[[int], bytes]) -> str:
    """A one-time code, shown as ABCD-EFGH."""
    letters = "".join(CODE_ALPHABET[byte % len(CODE_ALPHABET)] for byte in random_bytes(CODE_LENGTH))
    return f"{letters[:4]}-{letters[4:]}"


def normal_code(text: str) -> Optional[str]:
    """A code as typed (any case, spaces or dashes anywhere) as issued; None
    if it cannot be one."""
    letters = "".join(ch for ch in text.upper() if ch not in " -")
    if len(letters) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in letters):
        return None
    return f"{letters[:4]}-{letters[4:]}"


async def issue_code(store: Store, player: int, code: str, now: float) -> None:
    """``code`` is the player's one code now (an older one is void)."""
    await store.run_script(
        [
            Statement(DELETE_EXPIRED, (now, player)),
            Statement(INSERT_CODE, (digest(code), player, now + CODE_SECONDS)),
        ]
    )


async def redeem(store: Store, code: str, token: str, label: str, now: float) -> bool:
    """The code used (it is gone either way): the browser holding ``token``
    is linked to the code's player. False: no such code, or too old."""
    (taken,) = await store.run_script([Statement(DELETE_CODE, (digest(code), now))])
    if not taken:
        return False
    player = int(taken[0][0])
    await store.run_script([Statement(INSERT_LINK, (player, digest(token), now, now, label))])
    return True


async def linked_player(store: Store, token: str, now: float) -> Optional[Tuple[str, str]]:
    """The key's fingerprint and the name of the player ``token`` is linked
    to; None when it is not (any more)."""
    hashed = digest(token)
    found, _ = await store.run_script([Statement(SELECT_TOKEN, (hashed,)), Statement(TOUCH_LINK, (now, hashed))])
    return (str(found[0][0]), str(found[0][1])) if found else None


async def browsers(store: Store, player: int) -> List[LinkedBrowser]:
    (rows,) = await store.run_script([Statement(SELECT_LINKS, (player,))])
    return [LinkedBrowser(number, float(row[1]), float(row[2]), str(row[3])) for number, row in enumerate(rows, 1)]


async def unlink(store: Store, player: int, number: int) -> bool:
    """The player's browser ``number`` (as listed) unlinked: its token
    names nobody from now on. False: there is no such browser."""
    (rows,) = await store.run_script([Statement(SELECT_LINKS, (player,))])
    if not 1 <= number <= len(rows):
        return False
    await store.run_script([Statement(DELETE_LINK, (rows[number - 1][0], player))])
    return True
