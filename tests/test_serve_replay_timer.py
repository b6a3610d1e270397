"""Replays and casts on the event loop (issue 35 item 5): a replay is a
timer (:class:`~ansi2048.serve.replay.ReplayTimer`) the viewer's keys pause,
speed up and end, no thread of its own; a replay behind its time drops
frames, not keys; a cast is made a key at a time on the loop."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import List, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.game.engine import Direction, Game  # noqa: E402
from ansi2048.options.parser import REPLAY_DELAY  # noqa: E402
from ansi2048.play.screen import Screen  # noqa: E402
from ansi2048.render.repaint import FRAME_END  # noqa: E402
from ansi2048.render.style import ColorDepth  # noqa: E402
from ansi2048.serve.link import Ended, Incoming, Typed, Viewer  # noqa: E402
from ansi2048.serve.replay import (  # noqa: E402
    CastClient,
    LoopLag,
    Playback,
    ReplayTimer,
    play_replay,
    replay_timer,
    stream_cast,
)
from ansi2048.serve.replay_clock import ReplayClock  # noqa: E402

KEYS = b"wasdssdd" * 6
MOVES = {"w": Direction.UP, "a": Direction.LEFT, "s": Direction.DOWN, "d": Direction.RIGHT}
GAME = Playback(4, 4, 2048, 11, KEYS)


def final_cells() -> Tuple[int, ...]:
    """The engine's own board after KEYS (no replay involved)."""
    game = Game(4, 4, 2048, 11)
    for key in KEYS.decode():
        game.move(MOVES[key])
    return tuple(game.cells)


class Link:
    def __init__(self) -> None:
        self.written: List[bytes] = []
        self.gone = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def unsent(self) -> int:
        return 0

    def drop(self) -> None:
        self.gone = True

    def rested(self) -> None:
        pass

    def frames(self) -> int:
        return b"".join(self.written).count(FRAME_END.encode())


def viewer_on(link: Link) -> Viewer:
    return Viewer(
        link=link,
        incoming=asyncio.Queue(),
        window=lambda: (80, 24),
        new_screen=lambda write, size: Screen(write, size, ColorDepth.EXTENDED, {"TERM": "xterm"}),
        look="xterm-256",
    )


def started(real: List[float]) -> Tuple[ReplayClock, Link, ReplayTimer]:
    """GAME's replay started, on a clock whose real time is ``real[0]``; what it draws goes to the link."""
    clock = ReplayClock(lambda: real[0])
    link = Link()
    timer, _ = replay_timer(viewer_on(link), GAME, "replay", True, clock)
    timer.start(clock.now())
    return clock, link, timer


def test_a_replay_plays_a_key_each_delay_of_its_clock_and_ends_on_the_games_board() -> None:
    real = [100.0]
    clock, link, timer = started(real)
    moved_at: List[float] = []
    steps = 0
    while (due := timer.due()) is not None and steps < 10_000:
        real[0] = 100.0 + max(due, clock.now())  # the timer's wait, on time
        moves = timer.play.session.game.moves
        timer.advance(clock.now())
        if timer.play.session.game.moves != moves:
            moved_at.append(clock.now())
        steps += 1
    assert tuple(timer.play.session.game.cells) == final_cells()
    gaps = [later - earlier for earlier, later in zip(moved_at, moved_at[1:])]
    # A key each delay (one that moves nothing leaves a gap of two, or more).
    delays = [gap / REPLAY_DELAY for gap in gaps]
    assert delays and all(round(delay) >= 1 and delay == pytest.approx(round(delay)) for delay in delays)
    assert min(gaps) == pytest.approx(REPLAY_DELAY)
    assert link.frames() > len(moved_at)  # each key's frame and its motion's


def test_a_replay_behind_its_time_plays_every_key_and_draws_only_the_last_frame() -> None:
    real = [0.0]
    clock, link, timer = started(real)
    drawn = link.frames()
    real[0] = 1000.0  # the loop gave the replay no turn for long after its start
    timer.advance(clock.now())
    assert timer.due() is None  # over: every key played
    assert tuple(timer.play.session.game.cells) == final_cells()
    assert link.frames() == drawn + 1


def test_a_replay_runs_on_the_loop_its_viewer_pauses_it_and_leaves_it() -> None:
    async def scenario() -> Tuple[str, str, int, int, List[str]]:
        link = Link()
        viewer = viewer_on(link)
        threads = threading.active_count()
        replay = asyncio.ensure_future(play_replay(viewer, GAME, "replay"))
        for _ in range(500):
            await asyncio.sleep(0.01)
            if link.frames() > 3:
                break
        names = [thread.name for thread in threading.enumerate()][threads:]
        viewer.incoming.put_nowait(Typed(b" "))  # paused
        await asyncio.sleep(0.05)
        paused = link.frames()
        await asyncio.sleep(0.3)
        still = link.frames()
        viewer.incoming.put_nowait(Typed(b"+- q"))  # faster, slower, go on, leave
        left = await asyncio.wait_for(replay, 10)
        return left, await ended_from_outside(Ended("the server is stopping")), paused, still, names

    async def ended_from_outside(ended: Incoming) -> str:
        viewer = viewer_on(Link())
        replay = asyncio.ensure_future(play_replay(viewer, GAME, "replay"))
        await asyncio.sleep(0.05)
        viewer.incoming.put_nowait(ended)
        return await asyncio.wait_for(replay, 10)

    left, said, paused, still, names = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert left == ""
    assert said == "the server is stopping"
    assert paused == still  # no frame while paused
    assert names == []  # no thread of its own


def test_a_cast_is_made_on_the_loop_a_key_at_a_time_beside_other_work() -> None:
    async def scenario() -> Tuple[str, int, int, List[str]]:
        link = Link()
        turns = [0]
        threads = threading.active_count()
        names: List[str] = []

        async def other_work() -> None:
            while True:
                turns[0] += 1
                names.extend(thread.name for thread in threading.enumerate()[threads:])
                await asyncio.sleep(0)

        other = asyncio.ensure_future(other_work())
        client = CastClient(link, lambda: False, lambda: 0.0, 10)
        said = await stream_cast(client, GAME, {"TERM": "xterm"}, "classic", 0)
        other.cancel()
        return said, turns[0], len(b"".join(link.written)), names

    said, turns, size, names = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert said == "" and size > 0
    assert turns >= len(KEYS)  # other work ran between the cast's keys
    assert names == []


def test_a_replay_spaces_its_frames_while_the_loop_runs_late_and_closes_them_up_after() -> None:
    lag = LoopLag()
    lag.waited(0.01, 0.012)  # on time
    assert lag.spacing == 0.0
    lag.waited(0.0, 0.2)  # the loop came back 200 ms late: a loaded server
    assert lag.spacing == pytest.approx(0.4)
    for _ in range(20):
        lag.waited(0.0, 0.5)
    assert lag.spacing == LoopLag.LONGEST  # a frame a second, at least
    for _ in range(40):
        lag.waited(lag.spacing, lag.spacing + 0.001)  # on time again
    assert lag.spacing == 0.0


def replay_screens(width: int, paused_keys: bytes) -> Tuple[str, str, str]:
    """A replay over SSH on a ``width``-column window: the screen as it
    plays, after ``paused_keys`` (a pause), and after a space more."""
    from .screen import emulate

    async def scenario() -> Tuple[str, str, str]:
        link = Link()
        viewer = Viewer(
            link=link,
            incoming=asyncio.Queue(),
            window=lambda: (width, 24),
            new_screen=lambda write, size: Screen(write, size, ColorDepth.NONE, {"TERM": "xterm"}),
            look="xterm",
        )
        replay = asyncio.ensure_future(play_replay(viewer, GAME, "replay · seed 11"))

        async def screen_after(keys: bytes) -> str:
            if keys:
                viewer.incoming.put_nowait(Typed(keys))
            for _ in range(500):
                await asyncio.sleep(0.01)
                if link.frames() > 3:
                    break
            await asyncio.sleep(0.05)
            return "\n".join(emulate(b"".join(link.written), width, 24).display)

        playing = await screen_after(b"")
        paused = await screen_after(paused_keys)
        going = await screen_after(b" ")
        viewer.incoming.put_nowait(Typed(b"q"))
        await asyncio.wait_for(replay, 10)
        return playing, paused, going

    return asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_served_replays_key_line_says_its_own_keys_and_paused_while_paused_and_no_best() -> None:
    # Issue 40 item 10: the key line said "replay · Ctrl-C stops" (the local
    # piped replay's), against the caption; nothing said "paused"; the
    # header's Best was the replay's running score.
    playing, paused, going = replay_screens(80, b" ")
    for screen in (playing, paused, going):
        assert "Ctrl-C" not in screen, screen
        assert "Best" not in screen, screen
        assert "q leave" in screen, screen
    assert "+ - speed" in playing and "space pause" in playing, playing
    assert "paused" not in playing, playing
    assert "paused" in paused and "space play on" in paused, paused
    assert "paused" not in going, going
    assert "space pause" in going, going


@pytest.mark.parametrize("width", [40, 30])
def test_a_served_replays_key_line_shortens_to_narrow_windows_keeping_q_leave_and_paused(width: int) -> None:
    playing, paused, _ = replay_screens(width, b"+ ")
    assert "q leave" in playing, playing
    assert "paused" in paused and "q leave" in paused, paused
