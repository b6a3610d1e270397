"""Replaying finished games over SSH: ``replay N`` plays the player's game
back on the piped replay's own driver (:class:`~ansi2048.play.piped.PipedDriver`)
on a thread of its own, its clock a :class:`~.replay_clock.ReplayClock` the
viewer's keys speed up, slow down and pause; ``cast N`` is
:func:`~ansi2048.play.piped.play_piped` writing ``--cast``'s file."""

from __future__ import annotations

import asyncio
import io
import threading
import time
from typing import Dict, Optional

from ..game.engine import Game
from .channel import POLL_SECONDS, SAID_SLOW, Ended, Typed, Viewer, next_incoming
from .replay_clock import ReplayClock, ReplayStopped

__all__ = ["cast_text", "play_replay"]


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
