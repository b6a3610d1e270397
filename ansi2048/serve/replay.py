"""Replaying finished games over SSH: ``replay [ID]`` plays a game back on
the piped replay's own driver (:class:`~ansi2048.play.piped.PipedDriver`)
on a thread of its own, its clock a :class:`~.replay_clock.ReplayClock` the
viewer's keys speed up, slow down and pause; ``cast [ID]`` is
:func:`~ansi2048.play.piped.play_piped` writing ``--cast``'s file. What
either plays is a :class:`Playback`: one of the player's own finished games
(its history record) or a ranked daily game (its verified recording)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import threading
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from ..game.engine import Game
from ..records.history import Record
from ..records.recording import Output, split_header
from .link import POLL_SECONDS, SAID_SLOW, Ended, Link, Typed, Viewer, next_incoming
from .replay_clock import ReplayClock, ReplayStopped

__all__ = ["CAST_CHUNK", "SAID_LEFT", "CastClient", "CastStream", "Playback", "cast_text", "play_replay", "stream_cast"]


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


async def play_replay(viewer: Viewer, playback: Playback, caption: str, animate: bool = True) -> str:
    """Play back a finished game on the piped replay's driver, on a thread:
    + and - change the speed, space pauses, q leaves. The line to say at
    the end."""
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
    session = Session(playback.game(), keep_keys=False)
    day_seed = playback.seed if playback.day else None
    settings = Settings(animate=animate, can_wait=False, replay=True, day=playback.day, day_seed=day_seed)
    play = Play(session, settings, viewer.window(), note=caption, warning=caption, saving=False)
    store = NoStore()
    performer = Performer(
        screen, store, Recorder(None, lambda message: None), BestWriter(store.record_best, clock.now, 0)
    )
    driver = PipedDriver(play, performer, clock.now, clock.sleep, REPLAY_DELAY)
    decoder = BodyDecoder()  # read as any replay reads keys (as ansi2048 < game.keys would)
    items = decoder.feed(playback.keys) + decoder.finish()

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
    try:  # a viewer that stops reading is dropped by its channel's rules (limits.ChannelRules): Ended
        while not done.done():
            incoming = await next_incoming(viewer.incoming, asyncio.Event(), POLL_SECONDS * 4)
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
        return ""
    finally:
        clock.stop()
        await done


def _finish(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


# A cast goes to its client in chunks of about this many bytes, and no
# more is made while this much is still unsent: it is never whole in memory
# (a 3,000-move 10x10 game's is 8.7 MB).
CAST_CHUNK = 64 * 1024
SAID_LEFT = "client left"


class CastStream:
    """Where :class:`~ansi2048.render.cast.CastWriter` writes, on the
    cast's thread: its lines gathered into chunks of :data:`CAST_CHUNK`
    bytes, each handed to ``send`` (which waits for the client to take it,
    and raises OSError once the client has gone: the writer then stops)."""

    name = "the client"

    def __init__(self, send: Callable[[bytes], None]) -> None:
        self._send = send
        self._parts: List[str] = []
        self._size = 0
        self._failed = False

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        return len(text)

    def flush(self) -> None:
        if self._size >= CAST_CHUNK:
            self._hand_over()

    def close(self) -> None:
        self._hand_over()

    def _hand_over(self) -> None:
        data, self._parts, self._size = "".join(self._parts).encode("utf-8"), [], 0
        if data and not self._failed:
            try:
                self._send(data)
            except OSError:
                self._failed = True
                raise


@dataclass(frozen=True)
class CastClient:
    """The client a cast streams to: its channel, whether it has gone, and
    the stall rule every viewer is under (unsent output for ``stall`` seconds)."""

    link: Link
    gone: Callable[[], bool]
    clock: Callable[[], float]
    stall: float


async def stream_cast(client: CastClient, playback: Playback, env: Dict[str, str], theme: str, timestamp: int) -> str:
    """The asciicast v2 file of a finished game (:func:`cast_text`) sent to
    ``client`` as it is made, made on a thread no faster than the client
    reads; "" when all is sent, else how it ended (:data:`SAID_LEFT`, or
    :data:`~.link.SAID_SLOW`: the client stopped reading and was dropped)."""
    loop = asyncio.get_running_loop()
    ended: List[str] = []

    async def sent(data: bytes) -> None:
        if not ended:
            client.link.write(data)
        since = client.clock()
        while not ended and client.link.unsent() > CAST_CHUNK and not client.gone():
            if client.clock() - since > client.stall:
                client.link.drop()
                ended.append(SAID_SLOW)
            await asyncio.sleep(POLL_SECONDS)
        if client.gone() and not ended:
            ended.append(SAID_LEFT)
        if ended:
            raise BrokenPipeError(ended[0])

    def send(data: bytes) -> None:  # on the cast's thread
        try:
            asyncio.run_coroutine_threadsafe(sent(data), loop).result()
        except (OSError, RuntimeError, concurrent.futures.CancelledError) as error:  # gone; the loop closed
            raise BrokenPipeError(str(error)) from None

    await loop.run_in_executor(None, cast_text, playback, env, theme, timestamp, CastStream(send))
    return ended[0] if ended else ""


def cast_text(playback: Playback, env: Dict[str, str], theme: str, timestamp: int, stream: Output) -> None:
    """The asciicast v2 file of a finished game written to ``stream``, as
    ``--cast`` writes it for a replay (:func:`~ansi2048.play.piped.play_piped`
    with the recording); the title and header name its day, not its seed,
    when the playback says so."""
    from .. import __version__
    from ..options.context import Context, Options
    from ..play.piped import play_piped
    from ..records.recording import format_header
    from ..render.cast import CastWriter

    cast = CastWriter(stream, time.monotonic, lambda message: None, timestamp=timestamp, env=env, theme=theme)
    options = Options(theme=theme)
    seed = playback.seed
    ctx = Context(options, io.StringIO(), io.StringIO(), env, lambda message: None, lambda: seed, cast=cast)
    header = format_header(seed, playback.rows, playback.cols, playback.goal, __version__)
    play_piped(ctx, header.encode("ascii") + playback.keys, day=playback.day)
    cast.close()
