"""The keys as the game offers them (pure): which key does what with the
config's bindings, and the key line under the board, as much as fits."""

from __future__ import annotations

from enum import Enum
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from ..game.keys import ACTION_BYTES, ASSIST_BYTES, Action
from .board import Glyphs
from .lines import Line, line_of
from .style import PLAIN, Span, fit, printable

__all__ = ["MOVES", "ReplayKeys", "Restart", "key_map", "keys_line", "move_keys"]

# Key lines of a few configurations and widths (see .lines on bounded caches).
_CACHED = 256


def key_map(bindings: Tuple[Tuple[str, Action], ...], undo: bool) -> Dict[Action, List[str]]:
    """Every key the keyboard game takes, by action, with the config's
    ``bindings`` and ``undo`` or not: the built-in keys, then the config's
    (a key the config gives another action is that action's alone), one
    case of each letter."""
    return {action: list(found) for action, found in _key_map(bindings, undo).items()}


@lru_cache(maxsize=_CACHED)
def _key_map(bindings: Tuple[Tuple[str, Action], ...], undo: bool) -> Dict[Action, List[str]]:
    """:func:`key_map`, shared: not to be changed."""
    table: Dict[str, Action] = {}
    for key, action in (*ACTION_BYTES.items(), *ASSIST_BYTES.items()):
        table[key.decode()] = action
    for char, action in bindings:
        table[char] = action
    keys: Dict[Action, List[str]] = {}
    for char, action in table.items():
        if char.isupper() and table.get(char.lower()) is action:
            continue  # the lower-case letter says it (either case works)
        keys.setdefault(action, []).append(char)
    if not undo:
        keys.pop(Action.UNDO, None)
    return keys


class Restart(Enum):
    """What ``r`` does in this game, as the key line says it (long, short)
    and the help (without undo, with undo): a game's one truthful name for it."""

    NEW = ("new game", "new", "new game", "new game (undo brings the old one back)")
    # The daily game (--daily, or practice over SSH): the day's tiles again.
    DAY = (
        "restart day",
        "restart",
        "the day's game again, from its start",
        "the day's game again, from its start (undo brings the old one back)",
    )
    # A ranked daily game over SSH: r, asked twice, ends it and its score counts.
    END = (
        "end ranked",
        "end ranked",  # "r end" reads as quit: other items go first
        "end the ranked game (asked first; its score counts)",
        "end the ranked game (asked first; its score counts)",
    )

    def help(self, undo: bool) -> str:
        """The help's description of ``r``."""
        return self.value[3] if undo else self.value[2]


class ReplayKeys(Enum):
    """The keys a replay's watcher has, as its key line says them."""

    PIPED = "piped"  # ansi2048 < game.keys: the keyboard does not play it, only Ctrl-C stops it
    VIEWER = "viewer"  # a replay over SSH: its viewer's keys speed it, pause it, leave it
    PAUSED = "paused"  # the same, paused


MOVES = (Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT)


def move_keys(keys: Dict[Action, List[str]]) -> Tuple[List[str], List[str]]:
    """The move keys as groups of four ("wasd", "hjkl"), then any other
    move key with its direction ("i up")."""
    lists = [keys.get(action, []) for action in MOVES]
    groups: List[str] = []
    depth = min(len(found) for found in lists)
    for index in range(depth):
        group = "".join(found[index] for found in lists)
        groups.append("hjkl" if sorted(group) == ["h", "j", "k", "l"] else group)
    others = [f"{char} {action.name.lower()}" for action, found in zip(MOVES, lists) for char in found[depth:]]
    return groups, others


def _first(keys: Dict[Action, List[str]], action: Action) -> Optional[str]:
    found = keys.get(action)
    return found[0] if found else None


@lru_cache(maxsize=_CACHED)
def keys_line(
    ending: str,
    replay: Optional[ReplayKeys],
    bindings: Tuple[Tuple[str, Action], ...],
    undo: bool,
    glyphs: Glyphs,
    limit: int,
    restart: Restart = Restart.NEW,
) -> Line:
    """The key line, as much of it as fits (see :func:`_keys`)."""
    return line_of(fit(_keys(ending, replay, bindings, undo, glyphs, restart), limit))


def _keys(
    ending: str,
    replay: Optional[ReplayKeys],
    bindings: Tuple[Tuple[str, Action], ...],
    can_undo: bool,
    glyphs: Glyphs,
    restart: Restart = Restart.NEW,
) -> List[List[Span]]:
    """The key line, longest first: each variant drops whole items, the AI's
    and the move keys' names first; "? help" (which lists them all) stays
    until only "q quit" fits. ``replay``: the keys of a replay (None: a game)."""
    a, d = glyphs.arrows, glyphs.dot
    if ending:  # no key works any more: say so instead (its parts apart as the keys are: ASCII's "-")
        return [[(printable(ending).replace(" · ", f" {d} "), PLAIN)]]
    if replay is not None:
        return [[(text, PLAIN)] for text in _replay_keys(replay, d)]
    keys = _key_map(bindings, can_undo)
    groups, others = move_keys(keys)

    def item(action: Action, long: str, short: str) -> Tuple[str, str]:
        key = _first(keys, action)
        return (f"{key} {long}", f"{key} {short}") if key else ("", "")

    undo = item(Action.UNDO, "undo", "undo")
    new = item(Action.RESTART, restart.value[0], restart.value[1])
    ai = [item(Action.HINT, "hint", "hint")[0], item(Action.AUTOPLAY, "autoplay", "autoplay")[0]]
    helps = item(Action.HELP, "help", "help")[0]
    quits = item(Action.QUIT, "quit", "quit")[0] or "Ctrl-C quit"
    moves_long = " ".join([a, *groups]) + (" " + " ".join(others) if others else "")
    moves = " ".join([a, *groups])
    variants = [
        [moves_long, undo[0], new[0], *ai, helps, quits],
        # Your own keys before the AI's (the help has both).
        [moves_long, undo[0], new[0], helps, quits] if others else [],
        [moves, undo[0], new[0], *ai, helps, quits],
        [f"{a} move", undo[1], new[1], *ai, helps, quits],
        [f"{moves} move", undo[0], new[0], helps, quits],
        [f"{a} move", undo[1], new[1], helps, quits],
        [undo[1], new[1], helps, quits],
        [helps, quits],
        [quits],
    ]
    texts: List[str] = []
    for variant in variants:
        text = f" {d} ".join(part for part in variant if part)
        if text and text not in texts:
            texts.append(text)
    return [[(text, PLAIN)] for text in texts]


def _replay_keys(replay: ReplayKeys, d: str) -> List[str]:
    """A replay's key line, longest first: leaving (and "paused") stay longest."""
    if replay is ReplayKeys.PIPED:
        return [f"replay {d} Ctrl-C stops", "Ctrl-C stops"]
    if replay is ReplayKeys.PAUSED:
        return [
            f"paused {d} space play on {d} + - speed {d} q leave",
            f"paused {d} space play on {d} q leave",
            f"paused {d} space on {d} q leave",
            f"paused {d} q leave",
            "paused",
        ]
    return [
        f"replay {d} + - speed {d} space pause {d} q leave",
        f"+ - speed {d} space pause {d} q leave",
        f"space pause {d} q leave",
        "q leave",
    ]
