"""The viewers' commands: ``watch [NAME]`` and ``replay [ID]`` (the client
as a viewer: :func:`as_viewer`, drawn for its own window and colour depth),
and ``cast [ID]`` (a file written to the client). Each is given the
server's context and the :class:`~.link.Client`, nothing else."""

from __future__ import annotations

import shlex
from dataclasses import replace
from functools import partial
from typing import Callable, Optional, Tuple

from ..options.context import Options
from ..options.parser import EXIT_ERROR, EXIT_OK
from ..play.screen import Screen, wants_motion
from ..render.themes import THEMES
from .context import ServeContext
from .daily import day_of
from .far_live import FAR_LISTED_SECONDS
from .game import SAID_STOPPING, SAID_STOPPING_VIEWER
from .link import SAID_IDLE_CLOSED, SAID_SLOW, Client, Viewer
from .live import LiveGame, WatchFull
from .names import display_name, printable
from .play_commands import color_depth
from .race_replay import in_viewer_place, race_playback, racing_lines, read_race, replay_race
from .race_session import watch_race
from .relay import relay_session
from .replay import SAID_LEFT, CastClient, Playback, play_replay, stream_cast
from .requests import NEEDS_TERMINAL, NO_TERMINAL, REFUSED, Replay, Watch
from .secrecy import (
    Refused,
    Shown,
    facts_of_seed,
    live_secret_line,
    published,
    secret_line,
    shown,
)
from .store.base import Player, Prefs
from .watch import Refusal, no_game_of, watch_session

__all__ = ["as_viewer", "replay_command", "watch_command"]


def as_viewer(context: ServeContext, client: Client, prefs: Prefs) -> Viewer:
    """This client as a watcher's or a replay's: its channel, keys and
    window; screens drawn for its size and colour depth."""
    env = client.client_env()
    depth = color_depth(prefs.color, env)
    palette = THEMES[prefs.theme or "classic"]

    def screen(write: Callable[[str], None], size: Callable[[], Tuple[int, int]]) -> Screen:
        return Screen(write, size, depth, env, palette=palette())

    look = (depth, prefs.theme, env["TERM"] == "dumb")
    # A viewer that stops reading is dropped after the watchers' own stall (--watcher-stalled-seconds).
    client.stalls_after(context.watch_stall)
    return Viewer(client.link, client.incoming, lambda: client.window, screen, look)


async def watch_command(context: ServeContext, client: Client, request: Watch) -> int:
    """``watch [NAME]``: a player named who is not playing is told first,
    then a session without a terminal."""
    racing = context.races.racing(request.name) if context.races is not None and request.name else None
    if racing is not None:
        return await watch_race(context, client, racing)  # every board of the race NAME is in
    far = context.far_races
    elsewhere = await far.racing_named(request.name) if far is not None and request.name else None
    if elsewhere is not None and client.has_terminal:  # NAME races on another server: watched there
        status = await relay_session(
            client, elsewhere, context.daily_secret, f"watch {shlex.quote(request.name or '')}"
        )
        if status is not None:
            client.ended("relayed")
            return status
    player = await context.player(client.identity)
    refusal = _watch_refusal(context, player)
    if request.name is not None:
        # A game just begun on another server is listed here a moment later.
        game = await context.live.find_soon(request.name, FAR_LISTED_SECONDS)
        refused = f"watch: {no_game_of(printable(request.name))}" if game is None else refusal(game)
        if refused is not None:
            return client.refuse(refused, REFUSED)
    if not client.has_terminal:
        return client.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    viewer = as_viewer(context, client, player.prefs if player else Prefs())
    try:
        races = partial(racing_lines, context.races, context.far_races)  # races are watched by a player's name
        said = await watch_session(viewer, context.live, request.name, refusal, races)
    except WatchFull as full:  # as replay_command says it: a refusal, status 1
        return client.refuse(str(full), "too many viewers", EXIT_ERROR)
    _said_as_viewer(client, said)
    return EXIT_OK


def _watch_refusal(context: ServeContext, player: Optional[Player]) -> Refusal:
    """Why ``player`` may not watch a live game now (the secrecy rule)."""
    viewer = player.id if player is not None else None

    def refusal(game: LiveGame) -> Optional[str]:
        if shown(game.facts, viewer, day_of(context.now())) is not Shown.NOTHING:
            return None
        return f"watch: {live_secret_line(game.name, game.facts.day)}"

    return refusal


def _said_as_viewer(client: Client, said: str) -> None:
    """A watch's or a replay's last line, and how it ended in the log."""
    if said:
        # A viewer's own game is not what the server keeps for it: the plain words.
        client.say(SAID_STOPPING_VIEWER if said == SAID_STOPPING else said, stderr=False)
    if said in VIEWER_ENDINGS:
        client.ended(VIEWER_ENDINGS[said])


# How a viewer's session ended in the log, other than "done".
VIEWER_ENDINGS = {
    SAID_SLOW: "client not reading",
    SAID_IDLE_CLOSED: "idle",
    SAID_STOPPING: "server stopping",
    SAID_LEFT: "client left",
}


async def replay_command(context: ServeContext, client: Client, request: Replay) -> int:
    """``replay [ID]`` / ``cast [ID]``: a finished game (:func:`_replayed`),
    refused first if the id names none; then ``replay`` needs a terminal,
    ``cast`` none. Either takes one of the server's viewer places."""
    if request.race and request.player is None and not request.cast:
        return await _race_replayed(context, client, request)  # every board of a race
    player = await context.player(client.identity)
    try:
        playback, title = await _replayed(context, player, request)
    except Refused as refused:
        return client.refuse(str(refused), REFUSED)
    if not request.cast and not client.has_terminal:
        return client.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    prefs = player.prefs if player is not None else Prefs()
    live = context.live
    try:
        live.take()  # a cast is counted as a replay is: each holds a thread (--max-watchers)
    except WatchFull as full:
        return client.refuse(str(full), "too many viewers", EXIT_ERROR)
    try:
        if request.cast:
            await _cast(context, client, playback, prefs)
            return EXIT_OK
        caption = f"replay · {title}"  # (its keys are on the key line)
        animate = wants_motion(Options(animation=prefs.animation is not False), client.client_env())
        said = await play_replay(as_viewer(context, client, prefs), playback, caption, animate)
    finally:
        live.give_back()
    _said_as_viewer(client, said)
    return EXIT_OK


async def _race_replayed(context: ServeContext, client: Client, request: Replay) -> int:
    """``replay rN``: every board of a finished race, side by side
    (:func:`~.race_replay.replay_race`), taking one of the server's viewer
    places as any replay does."""
    try:
        race = await read_race(context.store, request, "replay")
    except Refused as refused:
        return client.refuse(str(refused), REFUSED)

    async def show(prefs: Prefs) -> str:
        depth = color_depth(prefs.color, client.client_env())
        return await replay_race(as_viewer(context, client, prefs), race, depth, prefs.theme)

    return await in_viewer_place(context, client, show)


async def _cast(context: ServeContext, client: Client, playback: Playback, prefs: Prefs) -> None:
    """The game's asciicast streamed to the client (:func:`~.replay.stream_cast`);
    how it ended, if not whole, in the log."""
    cast_client = CastClient(client.link, client.gone, context.clock, context.watch_stall)
    theme, now = prefs.theme or "classic", int(context.now())
    client.if_lost(VIEWER_ENDINGS[SAID_LEFT])  # said at once if the client goes
    try:
        said = await stream_cast(cast_client, playback, client.cast_env(), theme, now)
    finally:
        client.if_lost(None)
    if said and said != SAID_LEFT:  # a client gone has said so already
        client.ended(VIEWER_ENDINGS[said])


async def _replayed(context: ServeContext, player: Optional[Player], request: Replay) -> Tuple[Playback, str]:
    """The game ``request`` names and its title on the caption, or
    :class:`Refused` (one line): a ranked daily game as the secrecy rule
    lets the viewer see it (:func:`published`), or one of the player's own
    games (another player's is not found, never shown); a game of the day's
    deal without its seed."""
    store, name, viewer = context.store, "cast" if request.cast else "replay", player.id if player else None
    if request.race:  # one player's board of a finished race (serve/race_replay.py)
        return await race_playback(store, request, name)
    if request.daily:
        assert request.game is not None
        entry, showing = published(await store.daily_by_id(request.game), request.game, context.now(), name, viewer)
        playback = Playback.of_recording(entry.recording)
        if playback is None:
            raise Refused(f"{name}: game {request.game} has no recording that replays")
        if showing is not Shown.EVERYTHING:
            playback = replace(playback, day=entry.day)
        return playback, f"{display_name(entry.name)}, daily game of {entry.day}"
    if player is None:
        raise Refused(f"{name}: a guest has no games kept (connect with an SSH key)")
    if request.game is None:
        last = await store.history(player.id, 1)
        if not last:
            raise Refused(f"{name}: you have no finished game yet")
        record = last[0].record
    else:
        found = await store.finished(player.id, request.game)
        if found is None:
            raise Refused(f"{name}: you have no game g{request.game} (stats lists yours)")
        record = found
    playback = Playback.of_record(record)
    facts = facts_of_seed(record.seed, player.id, context.daily_secret, day_of(context.now()))
    showing = shown(facts, viewer, day_of(context.now()))
    if showing is Shown.NOTHING:  # never: one's own game; the rule decides all the same
        raise Refused(secret_line(name, "this game", facts.day))
    if showing is not Shown.EVERYTHING:
        playback = replace(playback, day=facts.day)
    return playback, record.date
