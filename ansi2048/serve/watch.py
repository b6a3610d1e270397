"""Watching live, and replaying finished games (issue 28).

A game being played is a state; a view is a function of the state and a
screen. So a watcher is not sent the player's bytes: the player's session
publishes each frame's :class:`~ansi2048.render.frame.View` (with its
motion's sprites) once the frame has gone to the player, and each watcher's
own task draws the newest one through its own :class:`~ansi2048.play.screen.Screen`,
for its own window and colour depth.

A watcher costs the player nothing: publishing stores the newest frame and
sets each watcher's wake-up event (no await, no queue); a watcher draws only
when its channel has sent everything before (frames in between are skipped:
it gets the newest), and one whose channel stays full for ``stall`` seconds
is dropped. What is the player's own (help, hints, the notes said to them) is
not shown: :func:`watched_view`.

Replays (``replay``) are the piped replay's own driver
(:class:`~ansi2048.play.piped.PipedDriver`) on a thread of its own, its clock a
:class:`~.replay_clock.ReplayClock` the viewer's keys speed up, slow down and
pause; casts (``cast``) are :func:`~ansi2048.play.piped.play_piped` writing
``--cast``'s file.

The pure parts (the watched view here; the list and its keys,
:mod:`.watch_list`; the clock's arithmetic) are tested without a socket;
the tasks at the bottom take the session's link and incoming queue
(:mod:`.server`)."""

from __future__ import annotations

import asyncio
import copy
import io
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Set, Tuple

from ..game.engine import Game
from ..play.screen import Screen
from ..render.frame import View
from ..render.motion import Sprite
from ..render.repaint import Repainter
from .game import Ended, Incoming, Link, Typed
from .replay_clock import ReplayClock, ReplayStopped
from .watch_list import Entry, ListKey, list_keys, list_lines, watch_keys_leave

__all__ = [
    "DEFAULT_STALL_SECONDS",
    "GUEST_NAME",
    "SAID_GONE",
    "SAID_SLOW",
    "LiveGame",
    "LiveGames",
    "PublishingScreen",
    "Viewer",
    "WatchFull",
    "cast_text",
    "play_replay",
    "watch_session",
    "watched_view",
    "watchers_note",
]

# Seconds a watcher's channel may stay full (it stopped reading) before it is dropped.
DEFAULT_STALL_SECONDS = 10.0
# How often a waiting watcher looks at its channel again.
_POLL_SECONDS = 0.05
# The list's fastest redraw (scores change with every key).
_LIST_SECONDS = 0.25
GUEST_NAME = "guest"  # how a guest's game is listed
SAID_GONE = "the game you watched has ended"
SAID_SLOW = "your connection cannot take the frames; watching stopped"


class WatchFull(Exception):
    """No more watchers for this game, or on the server: one line."""


# -- pure -----------------------------------------------------------------------


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


# -- the registry ---------------------------------------------------------------


Frame = Tuple[View, Optional[Tuple[Sprite, ...]], int]


class LiveGame:
    """One game being played, as its watchers see it."""

    def __init__(self, number: int, name: str, rows: int, cols: int, owner: LiveGames) -> None:
        self.number = number
        self.name = name
        self.rows, self.cols = rows, cols
        self.latest: Optional[Frame] = None
        self.ended = False
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
        return len(self._wakes)

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
        key = (before, self.watchers, size)
        drawn = self._drawn.get(key)
        if drawn is None:
            after = copy.deepcopy(before)
            after.canvas.window = size
            view, sprites, shake = self.latest
            after.screen.paint(watched_view(view, self.name, self.watchers), sprites, shake)
            text = after.canvas.take()
            after = self._after.setdefault((before.look, self.watchers, size), after)
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
        self.on_watchers(self.watchers)
        owner.touch()
        return wake

    def leave(self, wake: asyncio.Event) -> None:
        if wake in self._wakes:
            self._wakes.discard(wake)
            self._owner.give_back()
            if not self.ended:
                self.on_watchers(self.watchers)
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

    def __init__(self, per_game: int = 20, total: int = 200) -> None:
        self.per_game = per_game
        self.total = total
        self.busy = 0  # watchers and replays now
        self.turn = asyncio.Lock()  # see LiveGame.turn
        self._games: Dict[int, LiveGame] = {}
        self._next = 1
        self._listeners: Set[asyncio.Event] = set()

    def start(self, name: str, rows: int, cols: int) -> LiveGame:
        game = LiveGame(self._next, name, rows, cols, self)
        self._games[self._next] = game
        self._next += 1
        self.touch()
        return game

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
        """The newest game of the player called ``name``."""
        named = [game for game in self._games.values() if game.name == name]
        return named[-1] if named else None

    def get(self, number: int) -> Optional[LiveGame]:
        return self._games.get(number)

    def entries(self) -> List[Entry]:
        entries = []
        for game in self._games.values():
            view = game.latest[0] if game.latest is not None else None
            score = view.score if view is not None else 0
            biggest = max((max(row) for row in view.board), default=0) if view is not None else 0
            entries.append(Entry(game.number, game.name, score, biggest, game.rows, game.cols, game.watchers))
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


# -- the watcher's tasks --------------------------------------------------------


async def _next(incoming: asyncio.Queue[Incoming], wake: asyncio.Event, timeout: float) -> Optional[Incoming]:
    """What came in first: the viewer's input, or (None) a wake-up or the timeout."""
    if not incoming.empty():
        return incoming.get_nowait()
    getter = asyncio.ensure_future(incoming.get())
    waiter = asyncio.ensure_future(wake.wait())
    try:
        await asyncio.wait({getter, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not getter.done():
            getter.cancel()
    if getter.done() and not getter.cancelled():
        return getter.result()
    return None


@dataclass
class Viewer:
    """A watcher's side: its channel, what it types, its window, a screen for
    its own size and colour depth (made anew for each game watched)."""

    link: Link
    incoming: asyncio.Queue[Incoming]
    window: Callable[[], Tuple[int, int]]
    # A screen for this viewer's colour depth and theme, drawing with
    # ``write`` at ``size``; ``look`` names what it depends on: viewers of
    # the same look share the drawing of a frame (LiveGame.draw).
    new_screen: Callable[[Callable[[str], None], Callable[[], Tuple[int, int]]], Screen]
    look: Hashable
    stall: float = DEFAULT_STALL_SECONDS
    clock: Callable[[], float] = time.monotonic
    # Close the connection at once, what it holds unsent dropped (a viewer
    # that stopped reading would never take the rest, nor the close after it).
    drop: Callable[[], None] = lambda: None

    def write(self, text: str) -> None:
        # The client's terminal is raw: LF becomes CR LF here, as a pty would.
        self.link.write(text.replace("\n", "\r\n").encode("utf-8", "replace"))


class _Dropped(Exception):
    """The viewer's channel stayed full: it stopped reading."""


async def follow(viewer: Viewer, game: LiveGame) -> str:
    """Watch ``game`` until it ends, the viewer leaves (q) or its
    connection goes; what to say then ("" for q)."""
    wake = game.join()
    painted = game.fresh(viewer)
    dirty = True
    full_since: Optional[float] = None
    try:
        while True:
            incoming = await _next(viewer.incoming, wake, _POLL_SECONDS if dirty else 1.0)
            if isinstance(incoming, Ended):
                raise _Said(incoming.said)  # the connection went (""), or the server is stopping
            if isinstance(incoming, Typed) and watch_keys_leave(incoming.data):
                return ""
            if wake.is_set() or incoming is not None:  # new state, or a resize: draw again
                wake.clear()
                dirty = True
            if dirty and game.latest is not None:
                if viewer.link.unsent() > 0:  # its channel has not sent the last frame: skip to the newest
                    now = viewer.clock()
                    full_since = full_since if full_since is not None else now
                    if now - full_since > viewer.stall:
                        raise _Dropped()
                    continue
                full_since = None
                async with game.turn:
                    painted, text = game.draw(painted, viewer.window())
                    viewer.write(text)
                dirty = False
            if game.ended and not dirty:
                return SAID_GONE
    finally:
        game.leave(wake)
        viewer.write(painted.closed())


class _Said(Exception):
    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


async def watch_session(viewer: Viewer, live: LiveGames, name: Optional[str]) -> str:
    """``watch`` (the list, then the game chosen) or ``watch NAME``; the
    line to say at the end."""
    try:
        if name is not None:
            game = live.find(name)
            if game is None:
                return f"no game of {name!r} is being played now (or it is private)"
            return await follow(viewer, game)
        return await _list(viewer, live)
    except WatchFull as full:
        return str(full)
    except _Said as said:
        return said.said
    except _Dropped:
        viewer.drop()
        return SAID_SLOW


async def _list(viewer: Viewer, live: LiveGames) -> str:
    """The list of games, live, until one is chosen (watched, then back
    here) or the viewer leaves."""
    selected = 0
    changed = live.listen()
    repainter = Repainter()
    try:
        while True:
            entries = live.entries()
            selected = max(0, min(selected, len(entries) - 1))
            width, height = viewer.window()
            lines = list_lines(entries, selected, width)[:height]
            viewer.write(repainter.frame(lines, width, height))
            changed.clear()
            incoming = await _next(viewer.incoming, changed, 5.0)
            if isinstance(incoming, Ended):
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
                        if chosen is not None:
                            viewer.write(repainter.close())
                            said = await follow(viewer, chosen)
                            if said == SAID_SLOW:
                                return said
                            repainter = Repainter()
                        break
            elif incoming is None:
                await asyncio.sleep(_LIST_SECONDS)  # at most a few redraws a second
    finally:
        live.unlisten(changed)


# -- replays and casts ----------------------------------------------------------


async def play_replay(viewer: Viewer, game: Game, game_keys: str, caption: str, animate: bool = True) -> str:
    """Play back a finished game (``game`` new, at its seed; ``game_keys`` its
    keys) on the piped replay's driver, on a thread: + and - change the
    speed, space pauses, q leaves. The line to say at the end."""
    from ..game.session import Session
    from ..loop.state import Play, Settings
    from ..options.parser import REPLAY_DELAY
    from ..play.performer import BestWriter, NoStore, Performer
    from ..play.piped import PipedDriver
    from ..records.recording import BodyDecoder, Recorder

    loop = asyncio.get_running_loop()
    clock = ReplayClock()
    done: asyncio.Future[None] = loop.create_future()

    def write(text: str) -> None:  # on the replay's thread: the channel is the loop's
        loop.call_soon_threadsafe(viewer.write, text)

    screen = viewer.new_screen(write, viewer.window)
    session = Session(game, keep_keys=False)
    settings = Settings(animate=animate, can_wait=False, replay=True)
    play = Play(session, settings, viewer.window(), note=caption, warning=caption, saving=False)
    store = NoStore()
    performer = Performer(
        screen, store, Recorder(None, lambda message: None), BestWriter(store.record_best, clock.now, 0)
    )
    driver = PipedDriver(play, performer, clock.now, clock.sleep, REPLAY_DELAY)
    decoder = BodyDecoder()  # a history's keys are a recording's body
    items = decoder.feed(game_keys.encode("ascii")) + decoder.finish()

    def run() -> None:
        try:
            driver.start()
            driver.keys(items, one_by_one=True)
            driver.end()
        except ReplayStopped:
            pass
        finally:
            screen.close()
            loop.call_soon_threadsafe(_finish, done)

    thread = threading.Thread(target=run, name="ansi2048-replay", daemon=True)
    thread.start()
    full_since: Optional[float] = None
    try:
        while not done.done():
            incoming = await _next(viewer.incoming, asyncio.Event(), _POLL_SECONDS * 4)
            if isinstance(incoming, Ended):
                clock.stop()
                return incoming.said
            if isinstance(incoming, Typed):
                for key in incoming.data.decode("latin-1"):
                    if key in "qQ\x03":
                        clock.stop()
                    elif key == "+":
                        clock.faster()
                    elif key == "-":
                        clock.slower()
                    elif key == " ":
                        clock.pause()
            if viewer.link.unsent() > 0:
                full_since = full_since if full_since is not None else viewer.clock()
                if viewer.clock() - full_since > viewer.stall:
                    clock.stop()
                    viewer.drop()
                    return SAID_SLOW
            else:
                full_since = None
        return ""
    finally:
        clock.stop()
        await done


def _finish(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


def cast_text(game: Game, game_keys: str, env: Dict[str, str], theme: str, timestamp: int) -> str:
    """The asciicast v2 file of a finished game, as ``--cast`` writes it for
    a replay (:func:`~ansi2048.play.piped.play_piped` with the recording)."""
    from .. import __version__
    from ..options.context import Context, Options
    from ..play.piped import play_piped
    from ..records.recording import format_header
    from ..render.cast import CastWriter

    class _Kept(io.StringIO):
        def close(self) -> None:  # the writer closes its stream: its text is kept to be read
            pass

    stream = _Kept()
    cast = CastWriter(stream, time.monotonic, lambda message: None, timestamp=timestamp, env=env, theme=theme)
    options = Options(theme=theme)
    ctx = Context(options, io.StringIO(), io.StringIO(), env, lambda message: None, lambda: game.seed, cast=cast)
    header = format_header(game.seed, game.rows, game.cols, game.goal, __version__)
    play_piped(ctx, (header + game_keys).encode("ascii"))
    cast.close()
    return stream.getvalue()
