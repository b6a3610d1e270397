"""Every session channel under the same rules (issue 34): idle, unsent
output and a stalled reader end whatever runs on it (a game, the watch
list, a replay, the take-over prompt) or nothing at all
(:class:`~ansi2048.serve.limits.ChannelRules`, applied by serve/guard.py);
and each session's slots are given back when it ends."""

from __future__ import annotations

import asyncio
import io
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ansi2048.serve.limits import Breach, ChannelRules, Limits

RULES = Limits(idle_seconds=10.0, stalled_seconds=2.0, unsent_bytes=1000)


def test_the_rules_idle_stalled_and_unsent() -> None:
    rules = ChannelRules(RULES, 100.0)
    assert rules.breach(105.0, 0) is None
    assert rules.next_look(105.0, 0) == 110.0  # the idle limit
    rules.typed(106.0)
    assert rules.breach(115.9, 0) is None
    assert rules.breach(116.0, 0) is Breach.IDLE
    rules = ChannelRules(RULES, 100.0)
    assert rules.breach(101.0, 500) is None  # held from now on
    assert 101.0 < rules.next_look(101.0, 500) <= 103.0  # looked at again soon while held
    assert rules.breach(102.0, 10) is None
    assert rules.breach(102.5, 0) is None  # drained: the stall starts again
    assert rules.breach(103.0, 10) is None
    assert rules.breach(104.9, 10) is None
    assert rules.breach(105.0, 10) is Breach.SLOW  # held 2 s
    assert ChannelRules(RULES, 100.0).breach(100.0, 1001) is Breach.SLOW  # too much held, at once
    rules = ChannelRules(RULES, 100.0)
    for tick in range(10):  # a frame on its way at every look, but all taken before each next frame
        assert rules.breach(100.0 + tick, 10) is None
        rules.wrote(100.0 + tick + 0.5, 0, 10)
    rules = ChannelRules(RULES, 100.0)
    for tick in range(20):  # a slow reader behind a full pipe (a cast to a slow link): it takes some each time
        rules.typed(100.0 + tick)  # playing on (a cast would be idle by then: not what this shows)
        rules.wrote(100.0 + tick, 900 - tick * 10, 950)
        assert rules.breach(100.5 + tick, 940 - tick * 10) is None
    # It last took some by the look at 119.5; then nothing for 2 s:
    assert rules.breach(121.0, 950) is None and rules.breach(121.4, 950) is None
    assert rules.breach(121.5, 950) is Breach.SLOW
    rules = ChannelRules(RULES, 100.0)
    rules.rested(108.0)  # saving paused until then: no key could play
    assert rules.breach(117.0, 0) is None and rules.breach(118.0, 0) is Breach.IDLE


if sys.platform == "win32":  # pragma: no cover
    pytest.skip("the server is for POSIX hosts", allow_module_level=True)
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import TIGHT, MemoryStore, ServerThread, Terminal, logged, session_class  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

IDLE = 1.0
# A wait bound: what is waited for comes at IDLE (plus a look's delay); this only bounds a broken server.
BOUND = 20.0


def limits(**changes: Any) -> Limits:
    return replace(TIGHT, **{"idle_seconds": IDLE, **changes})


async def bare_channel(conn: Any) -> Any:
    """A session channel that asks for nothing: no pty, no shell, no command
    (asyncssh's client always asks for one: its channel's own open)."""
    from asyncssh.channel import SSHClientChannel

    chan = SSHClientChannel(conn, asyncio.get_running_loop(), "strict", None, "strict", 2 * 1024 * 1024, 32768)
    (await chan._open(b"session")).check_end()
    return chan


async def until(served: ServerThread, wanted: Any) -> None:
    end = time.monotonic() + BOUND
    while not served.call(wanted()) and time.monotonic() < end:
        await asyncio.sleep(0.05)


async def _sessions_of(served: ServerThread) -> int:
    return sum(served.server.context.admission.sessions.values())


def test_8_bare_channels_are_closed_at_the_idle_limit_and_give_back_their_slots(tmp_path: Path) -> None:
    log = io.StringIO()
    with ServerThread(tmp_path, MemoryStore(), limits=limits(), log=log) as served:

        async def scenario() -> None:
            per_key = TIGHT.sessions_per_identity
            async with (
                await connect(served.port, client_key()) as conn,
                await connect(served.port, client_key()) as two,
            ):
                bare = [await bare_channel(one) for one in (conn, two) for _ in range(per_key)]
                assert len(bare) == TIGHT.sessions_per_address == 8
                assert served.call(_sessions_of(served)) == TIGHT.sessions_per_address
                async with await connect(served.port, client_key()) as three:
                    with pytest.raises(asyncssh.ChannelOpenError):  # the address's slots are all held
                        await bare_channel(three)

                async def none_held() -> bool:
                    return await _sessions_of(served) == 0

                await until(served, none_held)
                assert served.call(_sessions_of(served)) == 0
                for chan in bare:
                    await asyncio.wait_for(chan.wait_closed(), BOUND)
                # The slots are back: a game opens from the same address.
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                chan.write(b"q")
                await terminal.closed.wait()

        run(scenario())
    assert "channel: idle" in logged(log, lambda text: "channel: idle" in text)


def test_resizes_alone_do_not_keep_a_session_from_being_idle(tmp_path: Path) -> None:
    with ServerThread(tmp_path, MemoryStore(), limits=limits()) as served:

        async def scenario() -> None:
            async with await connect(served.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "watch")
                await terminal.shows("No game")
                end = time.monotonic() + BOUND
                size = 0
                while not terminal.closed.is_set() and time.monotonic() < end:
                    size += 1
                    chan.change_terminal_size(70 + size % 10, 20)  # a resize every 50 ms, no key
                    await asyncio.sleep(0.05)
                assert terminal.closed.is_set()
                assert "no key for a while" in terminal.text()

        run(scenario())


def test_the_watch_list_a_watcher_and_the_take_over_prompt_are_closed_when_idle(tmp_path: Path) -> None:
    with ServerThread(tmp_path, MemoryStore(), seeds=[7], limits=limits()) as served:
        key = client_key()

        async def scenario() -> None:
            async with await connect(served.port, key) as conn:
                player, player_terminal = await open_terminal(conn, "play --no-animation")
                await player_terminal.shows("Score")
                # (the player types, so the prompt and the watchers outlast it: the player is not idle)
                async with await connect(served.port, key) as other, await connect(served.port, None) as guest:
                    _, prompt = await open_terminal(other, "play --no-animation")
                    await prompt.shows("any other key: leave")
                    _, watching = await open_terminal(guest, "watch alice")
                    await watching.shows("Score")
                    _, listing = await open_terminal(guest, "watch")
                    await listing.shows("alice")
                    end = time.monotonic() + BOUND
                    terminals = (prompt, watching, listing)
                    while not all(t.closed.is_set() for t in terminals) and time.monotonic() < end:
                        player.write(b"a" if int(time.monotonic() * 10) % 2 else b"d")
                        await asyncio.sleep(0.1)
                    for terminal in terminals:
                        assert terminal.closed.is_set()
                        assert "no key for a while" in terminal.text()
                player.write(b"q")
                await player_terminal.closed.wait()

        run(scenario())


def session_class_not_reading(terminal: Terminal) -> Any:
    base = session_class(terminal)

    class NotReading(base):  # type: ignore[misc, valid-type]
        def connection_made(self, chan: Any) -> None:
            super().connection_made(chan)
            chan.pause_reading()

    return NotReading


def test_a_list_watcher_that_stops_reading_is_dropped(tmp_path: Path) -> None:
    log = io.StringIO()
    quick = limits(idle_seconds=60.0, stalled_seconds=0.5)
    with ServerThread(tmp_path, MemoryStore(), seeds=[7, 8, 9], limits=quick, log=log) as served:
        served.server.context = replace(served.server.context, watch_stall=0.5)

        async def scenario() -> None:
            players = []
            for n in range(3):  # games whose scores change: the list redraws
                conn = await connect(served.port, client_key(), user=f"p{n}")
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                players.append((conn, chan, terminal))
            async with await connect(served.port, None, user="stuck") as stuck_conn:
                stuck = Terminal()
                await stuck_conn.create_session(
                    session_class_not_reading(stuck), "watch", term_type="xterm", term_size=(80, 24), window=256
                )
                end = time.monotonic() + BOUND

                async def watchers_gone() -> bool:
                    return not any(s.has_terminal and s._command == "watch" for s in served.server.sessions)

                while time.monotonic() < end and not served.call(watchers_gone()):
                    for _, chan, _ in players:
                        chan.write(b"adws"[int(time.monotonic() * 20) % 4 :][:1])
                    await asyncio.sleep(0.05)
                assert served.call(watchers_gone())
            for conn, chan, terminal in players:
                chan.write(b"q")
                await terminal.closed.wait()
                conn.close()

        run(scenario())
    assert "watch: client not reading" in logged(log, lambda text: "watch: client not reading" in text)
