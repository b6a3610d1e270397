"""A session's commands other than its games: ``stats``, ``leaderboard``
and ``keys`` (no terminal needed), ``cast N`` (a file written to the
client), and ``watch`` and ``replay N`` (the session as a viewer:
:func:`as_viewer`, drawn for its own window and colour depth)."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import TYPE_CHECKING, Callable, Tuple, Union

import asyncssh

from ..game.engine import Game
from ..options.context import Options
from ..options.parser import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from ..play.screen import Screen, wants_motion
from ..records.history import board_stats, stats_document
from ..render.stats import stats_lines
from ..render.style import ColorDepth
from ..render.themes import THEMES
from .channel import Viewer
from .commands import KeysRequest, Leaderboard, Replay, Watch
from .live import WatchFull
from .ranked import KeysRefused, keys_for, leaderboard_output
from .replay import cast_text, play_replay
from .store.base import Prefs
from .watch import watch_session

if TYPE_CHECKING:
    from .session import SessionChannel  # which imports this module, to run its commands

__all__ = ["as_viewer", "daily_command", "replay_command", "stats_command", "watch_command"]


def as_viewer(session: SessionChannel, prefs: Prefs) -> Viewer:
    """This session as a watcher's or a replay's: its channel, keys and
    window; screens drawn for its size and colour depth."""
    assert session.link is not None
    env = session.client_env()
    depth = session.color_depth(prefs.color, env)
    palette = THEMES[prefs.theme or "classic"]

    def screen(write: Callable[[str], None], size: Callable[[], Tuple[int, int]]) -> Screen:
        return Screen(write, size, depth, env, palette=palette())

    chan = session.chan
    assert chan is not None
    look = (depth, prefs.theme, env["TERM"] == "dumb")
    viewer = Viewer(session.link, session.incoming, lambda: session.window, screen, look, session.server.watch_stall)
    viewer.drop = chan.abort
    return viewer


async def watch_command(session: SessionChannel, request: Watch) -> int:
    player = await session.player()
    said = await watch_session(
        as_viewer(session, player.prefs if player else Prefs()), session.server.live, request.name
    )
    if said:
        session.say(said, stderr=False)
    return EXIT_OK


async def replay_command(session: SessionChannel, request: Replay) -> int:
    """``replay N`` / ``cast N``: the player's Nth latest finished game."""
    player = await session.player()
    records = await session.server.store.history(player.id, request.number) if player is not None else []
    if len(records) < request.number:
        kept = f"you have {len(records)} finished game{'s' if len(records) != 1 else ''}"
        session.say(f"ansi2048: no such game: {kept if player else 'a guest has none (connect with an SSH key)'}")
        return EXIT_USAGE
    record = records[0]  # the newest ``number``, oldest first: the Nth latest
    game = Game(record.rows, record.cols, record.goal, record.seed)
    prefs = player.prefs if player is not None else Prefs()
    if request.cast:
        assert session.chan is not None
        env = session.client_env()
        text = await asyncio.get_running_loop().run_in_executor(
            None, cast_text, game, record.keys, env, prefs.theme or "classic", int(session.server.now())
        )
        session.chan.write(text.encode("utf-8"))
        return EXIT_OK
    live = session.server.live
    try:
        live.take()
    except WatchFull as full:
        session.say(f"ansi2048: {full}")
        return EXIT_ERROR
    try:
        caption = f"replay · {record.date} · + - speed, space pauses, q leaves"
        animate = wants_motion(Options(animation=prefs.animation is not False), session.client_env())
        said = await play_replay(as_viewer(session, prefs), game, record.keys, caption, animate)
    finally:
        live.give_back()
    if said:
        session.say(said, stderr=False)
    return EXIT_OK


async def stats_command(session: SessionChannel, as_json: bool) -> int:
    player = await session.player()
    records = await session.server.store.history(player.id) if player is not None else []
    stats = board_stats(records)
    if as_json:
        import json

        from .. import __version__

        for line in json.dumps(stats_document(stats, __version__), indent=1).splitlines():
            session.say(line, stderr=False)
    elif not stats:
        guest = " (as a guest, nothing is kept: connect with an SSH key)" if player is None else ""
        session.say(f"No finished games yet.{guest}", stderr=False)
    else:
        for line in stats_lines(stats, ColorDepth.NONE, session.window[0]):
            session.say(line, stderr=False)
    return EXIT_OK


async def daily_command(session: SessionChannel, command: Union[Leaderboard, KeysRequest]) -> int:
    """``leaderboard`` and ``keys``: no terminal needed."""
    server = session.server
    if isinstance(command, KeysRequest):
        entry = await server.store.daily_by_id(command.entry)
        try:
            recording = keys_for(entry, command.entry, server.now())
        except KeysRefused as refused:
            session.say(f"ansi2048: {refused}")
            return EXIT_USAGE
        assert session.chan is not None
        with suppress(OSError, asyncssh.Error):
            session.chan.write(recording)
        return EXIT_OK
    player = await session.player()
    me = player.id if player is not None else None
    lines = await leaderboard_output(server.store, server.now(), command.day, command.json, me)
    for line in lines:
        session.say(line, stderr=False)
    return EXIT_OK
