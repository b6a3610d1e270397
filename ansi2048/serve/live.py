"""Live games, as their watchers see them (issue 28).

A game being played is a state; a view is a function of the state and a
screen. So a watcher is not sent the player's bytes: the player's session
publishes each frame's :class:`~ansi2048.render.frame.View` (with its
motion's sprites) once the frame has gone to the player
(:class:`PublishingScreen`), and each watcher's own task (:mod:`.watch`)
draws the newest one through its own :class:`~ansi2048.play.screen.Screen`,
for its own window and colour depth.

A watcher costs the player nothing: publishing stores the newest frame and
sets each watcher's wake-up event (no await, no queue); watchers of one look
and size share each frame's drawing (:meth:`LiveGame.draw`). What is the
player's own (help, hints, the notes said to them) is not shown:
:func:`watched_view`. :class:`LiveGames` is the server's registry of them,
and the watchers' limits."""

from __future__ import annotations

import asyncio
import copy
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Set, Tuple

from ..play.screen import Screen
from ..render.frame import View
from ..render.motion import Sprite
from .link import Viewer
from .names import folded, guest_name
from .secrecy import Deal, GameFacts
from .settings import ServeOptions
from .watch_list import Entry

__all__ = [
    "REGULAR",
    "LiveGame",
    "LiveGames",
    "PublishingScreen",
    "WatchFull",
    "watched_view",
    "watchers_note",
]

REGULAR = GameFacts(Deal.REGULAR)  # a game of a seed of its own: anyone may watch it


class WatchFull(Exception):
    """No more watchers for this game, or on the server: one line."""


def watchers_note(count: int) -> str:
    """What the player is told of their watchers (the note line)."""
    return "" if count == 0 else f"{count} watching" if count > 1 else "1 watching"


def watched_view(view: View, name: str, watchers: int) -> View:
    """The player's frame as a watcher sees it: the board, score and moves;
    not the hint, nor the notes said to the player; a line saying whose game
    it is and how to leave in place of the keys."""
    return replace(
        view,
        note=watchers_note(watchers),
        hint=None,
        stuck=False,
        autoplay=0,
        ending=f"watching {name} · q leaves",
    )


Frame = Tuple[View, Optional[Tuple[Sprite, ...]], int]


class LiveGame:
    """One game being played, as its watchers see it."""

    def __init__(
        self, number: int, name: str, rows: int, cols: int, owner: LiveGames, facts: GameFacts, far: bool = False
    ) -> None:
        self.number = number
        self.name = name
        self.facts = facts  # whose game, on which deal: who may watch it (:mod:`.secrecy`)
        self.rows, self.cols = rows, cols
        self.latest: Optional[Frame] = None
        self.ended = False
        # A game of another server of the store, mirrored here (serve/far_live.py):
        # its frames and standing come from there, and its watchers there are counted.
        self.far = far
        self.far_watchers = 0  # its watchers on other servers
        self._standing = (0, 0)  # a far game's score and biggest tile, before it has a frame here
        self._owner = owner
        self._wakes: Set[asyncio.Event] = set()
        self.on_watchers: Callable[[int], None] = lambda count: None  # the player is told
        # Watchers draw one at a time, each in a turn of the event loop of
        # its own: a player's key that comes meanwhile waits for one
        # watcher's frame (a write to its socket, a millisecond), not for all.
        self.turn = owner.turn
        self._fresh: Dict[Hashable, _Painted] = {}  # a screen that has drawn nothing, per look
        # The newest frame as drawn for (the screen before, watchers, size):
        # watchers in step (most of them) share one drawing.
        self._drawn: Dict[Tuple[_Painted, int, Tuple[int, int]], Tuple[_Painted, str]] = {}
        self._after: Dict[Tuple[Hashable, int, Tuple[int, int]], _Painted] = {}  # the screen after it, per look

    @property
    def watchers(self) -> int:
        """Its watchers on this server (what its limits count)."""
        return len(self._wakes)

    @property
    def watching(self) -> int:
        """Its watchers on every server of the store (what the player and the list are told)."""
        return len(self._wakes) + self.far_watchers

    def far_watched(self, count: int) -> None:
        """``count`` watch it from other servers now (serve/far_live.py)."""
        if count != self.far_watchers:
            self.far_watchers = count
            if not self.ended:
                self.on_watchers(self.watching)
            self._owner.touch()

    def standing(self) -> Tuple[int, int]:
        """Its score and biggest tile, as the list shows them."""
        if self.latest is None:
            return self._standing
        view = self.latest[0]
        return view.score, max((max(row) for row in view.board), default=0)

    def set_standing(self, score: int, biggest: int) -> None:
        """A far game's standing, as its server wrote it."""
        if (score, biggest) != self._standing:
            self._standing = (score, biggest)
            if self.latest is None:
                self._owner.touch()

    def publish(self, frame: Frame) -> None:
        """The player's newest frame (sent to the player already): no await,
        nothing queued; each watcher is woken to draw it when it can."""
        self.latest = frame
        self._drawn.clear()
        self._after.clear()
        for wake in self._wakes:
            wake.set()
        self._owner.touch()

    def fresh(self, viewer: Viewer) -> _Painted:
        """A screen for ``viewer``'s look that has drawn nothing yet."""
        painted = self._fresh.get(viewer.look)
        if painted is None:
            canvas = _Canvas()
            screen = viewer.new_screen(canvas.write, canvas.size)
            painted = self._fresh[viewer.look] = _Painted(screen, canvas, viewer.look)
        return painted

    def draw(self, before: _Painted, size: Tuple[int, int]) -> Tuple[_Painted, str]:
        """The newest frame drawn at ``size`` on a screen that drew ``before``
        last: the screen after it, and what to write. Screens are never
        changed once drawn on (a copy draws), so any number of watchers share them.

        Why: drawing a frame (the repaint's diff above all) costs
        milliseconds; twenty watchers each drawing the same frame would cost
        the player their keys' latency. Watchers of one look and size that
        drew the same frame last draw the next one once; and a screen is
        what it drew last (its repainter remembers the frame on screen), so
        watchers that came from other frames share the one after this."""
        assert self.latest is not None
        key = (before, self.watching, size)
        drawn = self._drawn.get(key)
        if drawn is None:
            after = copy.deepcopy(before)
            after.canvas.window = size
            view, sprites, shake = self.latest
            after.screen.paint(watched_view(view, self.name, self.watching), sprites, shake)
            text = after.canvas.take()
            after = self._after.setdefault((before.look, self.watching, size), after)
            drawn = self._drawn[key] = (after, text)
        return drawn

    def end(self) -> None:
        self.ended = True
        for wake in self._wakes:
            wake.set()
        self._owner.finish(self)

    def join(self) -> asyncio.Event:
        """A new watcher's wake-up event; :class:`WatchFull` over the limits."""
        owner = self._owner
        if owner.per_game == 0:
            raise WatchFull("games cannot be watched on this server")
        if self.watchers >= owner.per_game:
            raise WatchFull(f"{self.name}'s game has its {owner.per_game} watchers already")
        owner.take()
        wake = asyncio.Event()
        wake.set()  # draw what there is at once
        self._wakes.add(wake)
        self.on_watchers(self.watching)
        owner.touch()
        return wake

    def leave(self, wake: asyncio.Event) -> None:
        if wake in self._wakes:
            self._wakes.discard(wake)
            self._owner.give_back()
            if not self.ended:
                self.on_watchers(self.watching)
            self._owner.touch()


class _Canvas:
    """What a shared screen draws on: the text collected, at the size set."""

    def __init__(self) -> None:
        self.parts: List[str] = []
        self.window = (80, 24)

    def write(self, text: str) -> None:
        self.parts.append(text)

    def size(self) -> Tuple[int, int]:
        return self.window

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        return text


@dataclass(eq=False)  # hashed as itself: a key of LiveGame's drawings
class _Painted:
    """A screen, with what it draws on, as it stands after some frames."""

    screen: Screen
    canvas: _Canvas
    look: Hashable

    def closed(self) -> str:
        """What leaves this screen tidy (the cursor below the frame)."""
        after = copy.deepcopy(self)
        after.screen.close()
        return after.canvas.take()


class LiveGames:
    """The games being played on this server that may be watched, and the
    watchers' limits: ``per_game`` for one game, ``total`` in all (replays
    count there too)."""

    def __init__(self, per_game: int = ServeOptions.watchers_per_game, total: int = ServeOptions.watchers) -> None:
        self.per_game = per_game
        self.total = total
        self.busy = 0  # watchers and replays now
        self.turn = asyncio.Lock()  # see LiveGame.turn
        self._games: Dict[int, LiveGame] = {}
        self._next = 1
        self._listeners: Set[asyncio.Event] = set()

    def start(self, name: Optional[str], rows: int, cols: int, facts: GameFacts = REGULAR) -> LiveGame:
        """The game of the player ``name`` (None: a guest, listed and
        watched as guest-N, the number its own until the game ends) begins."""
        game = LiveGame(self._next, name if name is not None else self.next_guest(), rows, cols, self, facts)
        self._games[self._next] = game
        self._next += 1
        self.touch()
        return game

    def next_guest(self) -> str:
        """The name a guest's game that begins now is listed as (guest-N, the lowest free)."""
        return guest_name(lambda taken: self.find(taken) is not None)

    def mirror(self, name: str, rows: int, cols: int, facts: GameFacts) -> LiveGame:
        """A game of another server, listed and watched here as one of this
        server's (serve/far_live.py publishes its frames)."""
        game = LiveGame(self._next, name, rows, cols, self, facts, far=True)
        self._games[self._next] = game
        self._next += 1
        self.touch()
        return game

    def games(self) -> List[LiveGame]:
        """The games listed now: this server's and the mirrors of the others'."""
        return list(self._games.values())

    def finish(self, game: LiveGame) -> None:
        self._games.pop(game.number, None)
        self.touch()

    def take(self) -> None:
        if self.busy >= self.total:
            raise WatchFull(f"the server has its {self.total} watchers already; try again later")
        self.busy += 1

    def give_back(self) -> None:
        self.busy = max(0, self.busy - 1)

    def touch(self) -> None:
        for listener in self._listeners:
            listener.set()

    def listen(self) -> asyncio.Event:
        event = asyncio.Event()
        self._listeners.add(event)
        return event

    def unlisten(self, event: asyncio.Event) -> None:
        self._listeners.discard(event)

    def find(self, name: str) -> Optional[LiveGame]:
        """The newest game of the player called ``name`` (names are unique without regard to case: names.folded)."""
        named = [game for game in self._games.values() if folded(game.name) == folded(name)]
        named.sort(key=lambda game: not game.far)  # a game on this server before one on another
        return named[-1] if named else None

    async def find_soon(self, name: str, seconds: float) -> Optional[LiveGame]:
        """:meth:`find`, waiting ``seconds`` at most for the game to be
        listed: one just begun on another server of the store is, a tick or
        two of the exchange later (serve/far_live.py)."""
        changed = self.listen()
        try:
            loop = asyncio.get_running_loop()
            end = loop.time() + seconds
            while (game := self.find(name)) is None and loop.time() < end:
                changed.clear()
                with suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(changed.wait(), end - loop.time())
            return game
        finally:
            self.unlisten(changed)

    def get(self, number: int) -> Optional[LiveGame]:
        return self._games.get(number)

    def entries(self, hidden: Callable[[LiveGame], bool] = lambda game: False) -> List[Entry]:
        """The list's entries; a game ``hidden`` says may not be watched is
        listed as being played, no more."""
        entries = []
        for game in self._games.values():
            score, biggest = game.standing()
            entry = Entry(game.number, game.name, score, biggest, game.rows, game.cols, game.watching)
            entries.append(replace(entry, secret=True) if hidden(game) else entry)
        return entries


class PublishingScreen(Screen):
    """The player's screen: what it paints is also kept, to be published to
    watchers once sent (:meth:`sent`); the help screen is the player's own:
    watchers go on seeing the board under it."""

    live: Optional[LiveGame] = None
    _painted: Optional[Frame] = None

    def paint(self, view: View, sprites: Optional[Sequence[Sprite]] = None, shake: int = 0) -> None:
        super().paint(view, sprites, shake)
        self._painted = (view, tuple(sprites) if sprites is not None else None, shake)

    def paint_help(self, view: View) -> None:
        super().paint_help(view)
        self._painted = (view, None, 0)

    def sent(self) -> None:
        """The frames painted so far have gone to the player: the newest to the watchers."""
        if self.live is not None and self._painted is not None:
            self.live.publish(self._painted)
            self._painted = None
