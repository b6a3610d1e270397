"""Replaying finished games over SSH, on the event loop: ``replay [ID]``
plays a game back as a timer (:class:`ReplayTimer`: the loop's step when a
frame's time comes, nothing waiting in between), its clock a
:class:`~.replay_clock.ReplayClock` the viewer's keys speed up, slow down
and pause; ``cast [ID]`` is :func:`~ansi2048.play.piped.play_piped`
writing ``--cast``'s file, a key at a time, sent as it is made
(:func:`stream_cast`). What either plays is a :class:`Playback`: one of the
player's own finished games (its history record) or a ranked daily game
(its verified recording)."""

from __future__ import annotations

import asyncio
import io
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..game.engine import Game
from ..loop.events import Draw, Event, Key, Keys, KeysEnded, ReplayPaused, Tick
from ..loop.state import Play
from ..loop.step import next_due, start, step
from ..play.performer import BlockingDriver, Performer
from ..play.screen import Screen
from ..records.history import Record
from ..records.recording import Assisted, split_header
from ..records.replay import Steps
from ..render.keymap import ReplayKeys
from ..render.motion import FRAME_SECONDS
from .link import POLL_SECONDS, SAID_SLOW, Ended, Link, Typed, Viewer
from .replay_clock import ReplayClock

__all__ = [
    "CAST_CHUNK",
    "SAID_LEFT",
    "CastClient",
    "CastStream",
    "LoopLag",
    "Playback",
    "ReplayTimer",
    "cast_steps",
    "play_replay",
    "replay_timer",
    "stream_cast",
]


@dataclass(frozen=True)
class Playback:
    """A finished game as a replay plays it: a new game of its size, goal
    and seed, and the keys that played it (a recording's body)."""

    rows: int
    cols: int
    goal: int
    seed: int
    keys: bytes
    # The day whose served daily deal this is, when its seed may not be
    # shown (:mod:`.secrecy`): the header, caption and title name the day.
    day: str = ""

    @classmethod
    def of_record(cls, record: Record) -> Playback:
        return cls(record.rows, record.cols, record.goal, record.seed, record.keys.encode("ascii"))

    @classmethod
    def of_recording(cls, recording: bytes) -> Optional[Playback]:
        """A whole recording's (a daily game's: header and keys); None if
        its header does not fix a game the engine can play (a row altered
        by hand: the server wrote a good one)."""
        header, body = split_header(recording)
        if header is None or None in (header.seed, header.rows, header.cols, header.goal):
            return None
        assert header.seed is not None and header.rows is not None and header.cols is not None
        assert header.goal is not None
        playback = cls(header.rows, header.cols, header.goal, header.seed, body)
        try:
            playback.game()
        except ValueError:
            return None
        return playback

    def game(self) -> Game:
        """The game at its start (ValueError if no game has its rules)."""
        return Game(self.rows, self.cols, self.goal, self.seed)


class ReplayTimer(BlockingDriver):
    """A finished game's keys played as a timer plays them: one each
    ``delay`` seconds of the replay's clock, the loop's own timers (the
    motion, the "+N" fading) coming due between them; then the last move's
    motion, then the last frame (the pace of
    :class:`~ansi2048.play.piped.PipedDriver` with a delay). Nothing here
    waits: :meth:`due` says when the next thing happens, :meth:`advance`
    does it."""

    def __init__(self, play: Play, performer: Performer, keys: Sequence[Key], delay: float, now: float) -> None:
        super().__init__(play, performer)
        self._keys = keys
        self._played = 0
        self._delay = delay
        self._last_key = now  # when the last key was played
        self._ended = False

    def start(self, now: float) -> None:
        self.play, effects = start(self.play, now, autoplay=False)
        self.do(effects)

    def _keys_left(self) -> bool:
        return self._played < len(self._keys) and not self.play.over

    def due(self) -> Optional[float]:
        """When (on the replay's clock) the next thing is due; None once the replay is over."""
        if self._ended:
            return None
        timer = next_due(self.play)
        if self._keys_left():
            key = self._last_key + self._delay
            return key if timer is None or timer > key else timer
        if not self.play.over and self.play.moving is not None:
            return timer
        return self._last_key  # the end, at once

    def advance(self, now: float) -> None:
        """Do what is due (:meth:`due`) by ``now``. A replay behind its time
        (a loaded server) does all of it, drawing only the last frame, as a
        video player drops frames: its work shrinks with the time it has."""
        while not self._ended:
            event = self._next_event(now)
            if event is None:
                self._ended = True
                return
            self.play, effects = step(self.play, event)
            due = self.due()
            behind = due is not None and due <= now and not self.play.over
            self.do([effect for effect in effects if not isinstance(effect, Draw)] if behind else effects)
            if not behind:
                return

    def _next_event(self, now: float) -> Optional[Event]:
        """What comes next: a key, a timer, the end (None once there is nothing more)."""
        timer = next_due(self.play)
        if self._keys_left():
            key = self._last_key + self._delay
            if timer is not None and timer <= key:
                return Tick(max(timer, now))
            self._last_key = key
            self._played += 1
            return Keys((self._keys[self._played - 1],), now)
        if self.play.over:
            return None
        if self.play.moving is not None:
            assert timer is not None  # a motion always has its next frame due
            return Tick(max(timer, now))
        self._ended = True
        return KeysEnded()


def replay_timer(
    viewer: Viewer, playback: Playback, caption: str, animate: bool, clock: ReplayClock
) -> Tuple[ReplayTimer, Screen]:
    """The replay of ``playback`` at the pace of a replay on a terminal
    (``--replay-best``'s), on ``clock``; and the screen of ``viewer``'s it draws on."""
    from ..game.session import Session
    from ..loop.state import Settings
    from ..options.parser import REPLAY_DELAY
    from ..play.performer import BestWriter, NoStore
    from ..records.recording import BodyDecoder, Recorder

    screen = viewer.new_screen(viewer.write, viewer.window)
    session = Session(playback.game(), keep_keys=False)
    day_seed = playback.seed if playback.day else None
    settings = Settings(animate=animate, can_wait=False, replay=True, day=playback.day, day_seed=day_seed)
    play = Play(
        session, settings, viewer.window(), note=caption, warning=caption, saving=False, replay_keys=ReplayKeys.VIEWER
    )
    store = NoStore()
    performer = Performer(
        screen, store, Recorder(None, lambda message: None), BestWriter(store.record_best, clock.now, 0)
    )
    decoder = BodyDecoder()  # read as any replay reads keys (as ansi2048 < game.keys would)
    items = decoder.feed(playback.keys) + decoder.finish()
    keys = [item for item in items if not isinstance(item, Assisted)]
    return ReplayTimer(play, performer, keys, REPLAY_DELAY, clock.now()), screen


async def play_replay(viewer: Viewer, playback: Playback, caption: str, animate: bool = True) -> str:
    """Play back a finished game on the event loop, a frame when its time
    comes (:class:`ReplayTimer`): + and - change the speed, space pauses,
    q leaves. The line to say at the end."""
    clock = ReplayClock()
    timer, screen = replay_timer(viewer, playback, caption, animate, clock)
    timer.start(clock.now())
    lag = LoopLag()
    key = asyncio.ensure_future(viewer.incoming.get())
    try:  # a viewer that stops reading is dropped by its channel's rules (limits.ChannelRules): Ended
        while True:
            due = timer.due()
            if due is None:
                return ""
            # (A frame already due waits for one turn of the loop all the
            # same: other sessions' frames are not held up behind a replay's.)
            wait = clock.until(due)
            wait = None if wait is None else max(wait, lag.spacing)
            began = time.monotonic()
            await asyncio.wait({key}, timeout=wait)
            if not key.done():
                assert wait is not None  # (no timeout: the wait ends with a key)
                lag.waited(wait, time.monotonic() - began)
                timer.advance(clock.now())
                continue
            incoming, key = key.result(), asyncio.ensure_future(viewer.incoming.get())
            if isinstance(incoming, Ended):
                return incoming.said
            paused = clock.paused
            if isinstance(incoming, Typed) and _viewer_keys(clock, incoming.data):
                return ""
            if clock.paused != paused:  # (not redrawn for a pause and a go-on in one read)
                timer.feed(ReplayPaused(ReplayKeys.PAUSED if clock.paused else ReplayKeys.VIEWER))
    finally:
        key.cancel()
        screen.close()


class LoopLag:
    """How far behind its time the event loop runs, as a replay sees it (a
    wait that ends later than it was meant to), and so how far apart the
    replay's frames are spaced: on a loaded server replays give way to
    players' frames instead of queueing ahead of them all at once. Keys
    still play at their time (:meth:`ReplayTimer.advance` drops the frames
    between); the spacing grows at once with the lag and shrinks as it goes."""

    LONGEST = 1.0  # a replay shows a frame a second at least

    def __init__(self) -> None:
        self.spacing = 0.0

    def waited(self, meant: float, took: float) -> None:
        behind = took - meant
        if behind > FRAME_SECONDS:
            self.spacing = min(self.LONGEST, max(2 * behind, 1.5 * self.spacing))
        else:
            self.spacing = self.spacing * 0.75 if self.spacing > 0.005 else 0.0


def _viewer_keys(clock: ReplayClock, data: bytes) -> bool:
    """The viewer's keys done on the replay's clock; True if one leaves (q)."""
    for key in data.decode("latin-1"):
        if key in "qQ\x03":
            return True
        if key == "+":
            clock.faster()
        elif key == "-":
            clock.slower()
        elif key == " ":
            clock.pause()
    return False


# A cast goes to its client in chunks of about this many bytes, and no
# more is made while this much is still unsent: it is never whole in memory
# (a 3,000-move 10x10 game's is 8.7 MB).
CAST_CHUNK = 64 * 1024
SAID_LEFT = "client left"


class CastStream:
    """Where :class:`~ansi2048.render.cast.CastWriter` writes: its lines
    gathered until :func:`stream_cast` takes them, a chunk at a time."""

    name = "the client"

    def __init__(self) -> None:
        self._parts: List[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        return len(text)

    def flush(self) -> None:
        pass  # taken by the cast's sender, a chunk at a time

    def close(self) -> None:
        pass

    @property
    def full(self) -> bool:
        """A chunk's worth is here (:data:`CAST_CHUNK`)."""
        return self._size >= CAST_CHUNK

    def take(self) -> bytes:
        """What has been written since the last take."""
        data, self._parts, self._size = "".join(self._parts).encode("utf-8"), [], 0
        return data


@dataclass(frozen=True)
class CastClient:
    """The client a cast streams to: its channel, whether it has gone, and
    the stall rule every viewer is under (unsent output for ``stall`` seconds)."""

    link: Link
    gone: Callable[[], bool]
    clock: Callable[[], float]
    stall: float


async def stream_cast(client: CastClient, playback: Playback, env: Dict[str, str], theme: str, timestamp: int) -> str:
    """The asciicast v2 file of a finished game (:func:`cast_steps`) sent to
    ``client`` as it is made, a key at a time on the event loop (other
    sessions' work runs between keys), no faster than the client reads; ""
    when all is sent, else how it ended (:data:`SAID_LEFT`, or
    :data:`~.link.SAID_SLOW`: the client stopped reading and was dropped)."""
    stream = CastStream()
    steps = cast_steps(playback, env, theme, timestamp, stream)
    try:
        for _ in steps:
            said = await _sent(client, stream.take()) if stream.full else ""
            if said:
                return said
            await asyncio.sleep(0)
        return await _sent(client, stream.take())
    finally:
        steps.close()


async def _sent(client: CastClient, data: bytes) -> str:
    """``data`` written to ``client``, then waited for until no more than a
    chunk is unsent; "" or how the cast ended (as :func:`stream_cast` says)."""
    if client.gone():
        return SAID_LEFT
    client.link.write(data)
    since = client.clock()
    while client.link.unsent() > CAST_CHUNK:
        if client.gone():
            return SAID_LEFT
        if client.clock() - since > client.stall:
            client.link.drop()
            return SAID_SLOW
        await asyncio.sleep(POLL_SECONDS)
    return SAID_LEFT if client.gone() else ""


def cast_steps(playback: Playback, env: Dict[str, str], theme: str, timestamp: int, stream: CastStream) -> Steps[None]:
    """The asciicast v2 file of a finished game written to ``stream`` a key
    at a time, as ``--cast`` writes it for a replay
    (:func:`~ansi2048.play.piped.piped_steps` with the recording); the title
    and header name its day, not its seed, when the playback says so."""
    from .. import __version__
    from ..options.context import Context, Options
    from ..play.piped import piped_steps
    from ..records.recording import format_header
    from ..render.cast import CastWriter

    cast = CastWriter(stream, time.monotonic, lambda message: None, timestamp=timestamp, env=env, theme=theme)
    options = Options(theme=theme)
    seed = playback.seed
    ctx = Context(options, io.StringIO(), io.StringIO(), env, lambda message: None, lambda: seed, cast=cast)
    header = format_header(seed, playback.rows, playback.cols, playback.goal, __version__)
    yield from piped_steps(ctx, header.encode("ascii") + playback.keys, day=playback.day)
    cast.close()
