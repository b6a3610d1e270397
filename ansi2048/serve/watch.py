"""Watching live games (issue 28): ``watch`` (the list of games, live, then
the game chosen) and ``watch NAME``, each a task of the watcher's session.

A watcher draws only when its channel has sent everything before (frames in
between are skipped: it gets the newest); one whose channel stays full is
dropped by its channel's rules (:class:`~.limits.ChannelRules`, as every
channel is), which end the watch with :class:`~.link.Ended`. The games and their drawing are
:mod:`.live`'s; the list's lines and keys are :mod:`.watch_list`'s, pure and
tested without a socket; the tasks take the session's link and incoming
queue (:class:`~.link.Viewer`)."""

from __future__ import annotations

import asyncio
from typing import Callable, List, Optional, Tuple

from ..render.repaint import SHOW_CURSOR, Repainter
from .link import POLL_SECONDS, Ended, Typed, Viewer, next_incoming
from .live import LiveGame, LiveGames
from .names import GUEST, folded
from .watch_list import ListKey, list_keys, list_lines, watch_keys_leave

__all__ = ["SAID_GONE", "More", "Refusal", "follow", "no_game_of", "watch_session"]

# The list's fastest redraw (scores change with every key).
_LIST_SECONDS = 0.25
SAID_GONE = "the game you watched has ended"


def _taken_away(repainter: Repainter, window: Tuple[int, int]) -> str:
    """What erases the frame ``repainter`` drew, leaving the cursor (shown)
    at the start of its first line: the list and the game it chose are one
    session's screens, each drawn in the other's place, never one under the
    other (on a window the board fills, the list's last line stayed above it)."""
    return repainter.frame([], *window) + SHOW_CURSOR


async def follow(viewer: Viewer, game: LiveGame, from_list: bool = False) -> str:
    """Watch ``game`` until it ends, the viewer leaves (q) or its
    connection goes; what to say then ("" for q). The last board stays on
    screen, but for a q back to the list (``from_list``): the list takes its place."""
    wake = game.join()
    left = False
    painted = game.fresh(viewer)
    dirty = True
    try:
        while True:
            incoming = await next_incoming(viewer.incoming, wake, POLL_SECONDS if dirty else 1.0)
            if isinstance(incoming, Ended):
                raise _Said(incoming.said)  # the connection went (""), or the server is stopping
            if isinstance(incoming, Typed) and watch_keys_leave(incoming.data):
                left = True
                return ""
            if wake.is_set() or incoming is not None:  # new state, or a resize: draw again
                wake.clear()
                dirty = True
            if dirty and game.latest is not None:
                if viewer.link.unsent() > 0:  # its channel has not sent the last frame: skip to the newest
                    continue
                async with game.turn:
                    painted, text = game.draw(painted, viewer.window())
                    viewer.write(text)
                dirty = False
            if game.ended and not dirty:
                return SAID_GONE
    finally:
        game.leave(wake)
        back = left and from_list
        viewer.write(_taken_away(painted.screen.mark(), viewer.window()) if back else painted.closed())


class _Said(Exception):
    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


def no_game_of(name: str) -> str:
    """Said to ``watch NAME`` when NAME's game is not to be watched (to
    ``watch guest``: how guests are named, as it was their one name once)."""
    if folded(name) == GUEST:
        return f"no game of {name!r}: guests are guest-1, guest-2, ... (watch lists them)"
    return f"no game of {name!r} is being played now (or it is private)"


# Lines under the list for a window this wide: the races being run (serve/race_replay.py).
More = Callable[[int], List[str]]

# Why a live game may not be watched by this viewer (the secrecy rule,
# serve/secrecy.py: a ranked game of today), or None if it may.
Refusal = Callable[[LiveGame], Optional[str]]


async def watch_session(
    viewer: Viewer, live: LiveGames, name: Optional[str], refusal: Refusal, more: More = lambda width: []
) -> str:
    """``watch`` (the list, then the game chosen) or ``watch NAME``; the
    line to say at the end (the command has refused a NAME no game has, or
    one ``refusal`` refuses, already: one that ended or began meanwhile is
    said here). :class:`~.live.WatchFull` when no watcher's place is free
    (the command says so, with its status, as a replay's does)."""
    try:
        if name is not None:
            game = live.find(name)
            if game is None:
                return no_game_of(name)
            refused = refusal(game)
            return refused if refused is not None else await follow(viewer, game)
        return await _list(viewer, live, refusal, more)
    except _Said as said:
        return said.said


async def _list(viewer: Viewer, live: LiveGames, refusal: Refusal, more: More) -> str:
    """The list of games, live, until one is chosen (watched, then back
    here) or the viewer leaves. A game ``refusal`` refuses is listed; chosen,
    the list says why it is not shown."""
    selected = 0
    said = ""
    changed = live.listen()
    repainter = Repainter()
    try:
        while True:
            entries = live.entries(lambda game: refusal(game) is not None)
            selected = max(0, min(selected, len(entries) - 1))
            width, height = viewer.window()
            lines = (list_lines(entries, selected, width) + more(width) + ([said[:width]] if said else []))[:height]
            viewer.write(repainter.frame(lines, width, height))
            changed.clear()
            incoming = await next_incoming(viewer.incoming, changed, 5.0)
            if isinstance(incoming, Ended):
                viewer.write(repainter.close())  # what is said goes under the list
                return incoming.said
            if isinstance(incoming, Typed):
                for key in list_keys(incoming.data):
                    if key is ListKey.LEAVE:
                        viewer.write(repainter.close())
                        return ""
                    if key is ListKey.UP:
                        selected -= 1
                    elif key is ListKey.DOWN:
                        selected += 1
                    elif key is ListKey.CHOOSE and entries:
                        chosen = live.get(entries[max(0, min(selected, len(entries) - 1))].number)
                        said = (refusal(chosen) if chosen is not None else None) or ""
                        if chosen is not None and not said:
                            viewer.write(_taken_away(repainter, viewer.window()))
                            await follow(viewer, chosen, from_list=True)  # its end from outside: _Said
                            repainter = Repainter()
                        break
            elif incoming is None:
                await asyncio.sleep(_LIST_SECONDS)  # at most a few redraws a second
    finally:
        live.unlisten(changed)
