"""A session's commands other than its games: ``stats``, ``leaderboard``
and ``keys`` (no terminal needed), ``cast [ID]`` (a file written to the
client), and ``watch`` and ``replay [ID]`` (the session as a viewer:
:func:`as_viewer`, drawn for its own window and colour depth)."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

import asyncssh

from ..options.context import Options
from ..options.parser import EXIT_ERROR, EXIT_OK
from ..play.screen import Screen, wants_motion
from ..records.history import stats_document
from ..records.tally import BoardStats
from ..render.stats import stats_lines
from ..render.style import ColorDepth
from ..render.themes import THEMES
from .channel import SAID_IDLE_CLOSED, SAID_SLOW, Viewer
from .commands import NEEDS_TERMINAL, NO_TERMINAL, KeysRequest, Leaderboard, Replay, Watch
from .daily import day_of
from .game import SAID_STOPPING, SAID_STOPPING_VIEWER
from .live import LiveGame, WatchFull
from .names import display_name
from .race_replay import race_playback, racing_lines
from .ranked import leaderboard_output
from .replay import SAID_LEFT, CastClient, Playback, play_replay, stream_cast
from .secrecy import (
    Refused,
    Shown,
    facts_of_seed,
    keys_for,
    live_secret_line,
    published,
    secret_line,
    secret_seed,
    shown,
)
from .store.base import Finished, Player, Prefs
from .watch import Refusal, no_game_of, watch_session

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

    look = (depth, prefs.theme, env["TERM"] == "dumb")
    # A viewer that stops reading is dropped after the watchers' own stall (--watcher-stalled-seconds).
    session.rules.stalled_seconds = session.server.watch_stall
    return Viewer(session.link, session.incoming, lambda: session.window, screen, look)


async def watch_command(session: SessionChannel, request: Watch) -> int:
    """``watch [NAME]``: a player named who is not playing is told first,
    then a session without a terminal."""
    player = await session.player()
    refusal = _watch_refusal(session, player)
    if request.name is not None:
        game = session.server.live.find(request.name)
        refused = f"watch: {no_game_of(request.name)}" if game is None else refusal(game)
        if refused is not None:
            return session.refuse(refused, REFUSED)
    if not session.has_terminal:
        return session.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    viewer = as_viewer(session, player.prefs if player else Prefs())
    try:
        races = partial(racing_lines, session.server.races)  # races are watched by a player's name
        said = await watch_session(viewer, session.server.live, request.name, refusal, races)
    except WatchFull as full:  # as replay_command says it: a refusal, status 1
        return session.refuse(str(full), "too many viewers", EXIT_ERROR)
    _said_as_viewer(session, said)
    return EXIT_OK


def _watch_refusal(session: SessionChannel, player: Optional[Player]) -> Refusal:
    """Why ``player`` may not watch a live game now (the secrecy rule)."""
    viewer = player.id if player is not None else None

    def refusal(game: LiveGame) -> Optional[str]:
        if shown(game.facts, viewer, day_of(session.server.now())) is not Shown.NOTHING:
            return None
        return f"watch: {live_secret_line(game.name, game.facts.day)}"

    return refusal


def _said_as_viewer(session: SessionChannel, said: str) -> None:
    """A watch's or a replay's last line, and how it ended in the log."""
    if said:
        # A viewer's own game is not what the server keeps for it: the plain words.
        session.say(SAID_STOPPING_VIEWER if said == SAID_STOPPING else said, stderr=False)
    if said in VIEWER_ENDINGS:
        session.ended(VIEWER_ENDINGS[said])


# How a session ended in the log: an id or a name refused (unknown, another
# player's, a day not over), and a viewer's endings other than "done".
REFUSED = "refused"
VIEWER_ENDINGS = {
    SAID_SLOW: "client not reading",
    SAID_IDLE_CLOSED: "idle",
    SAID_STOPPING: "server stopping",
    SAID_LEFT: "client left",
}


async def replay_command(session: SessionChannel, request: Replay) -> int:
    """``replay [ID]`` / ``cast [ID]``: a finished game (:func:`_replayed`),
    refused first if the id names none; then ``replay`` needs a terminal,
    ``cast`` none. Either takes one of the server's viewer places."""
    player = await session.player()
    try:
        playback, title = await _replayed(session, player, request)
    except Refused as refused:
        return session.refuse(str(refused), REFUSED)
    if not request.cast and not session.has_terminal:
        return session.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    prefs = player.prefs if player is not None else Prefs()
    live = session.server.live
    try:
        live.take()  # a cast is counted as a replay is: each holds a thread (--max-watchers)
    except WatchFull as full:
        return session.refuse(str(full), "too many viewers", EXIT_ERROR)
    try:
        if request.cast:
            await _cast(session, playback, prefs)
            return EXIT_OK
        caption = f"replay · {title} · + - speed, space pauses, q leaves"
        animate = wants_motion(Options(animation=prefs.animation is not False), session.client_env())
        said = await play_replay(as_viewer(session, prefs), playback, caption, animate)
    finally:
        live.give_back()
    _said_as_viewer(session, said)
    return EXIT_OK


async def _cast(session: SessionChannel, playback: Playback, prefs: Prefs) -> None:
    """The game's asciicast streamed to the client (:func:`~.replay.stream_cast`);
    how it ended, if not whole, in the log."""
    link = session.link
    assert link is not None
    client = CastClient(link, lambda: link.gone, session.server.clock, session.server.watch_stall)
    theme, now = prefs.theme or "classic", int(session.server.now())
    session.if_lost = VIEWER_ENDINGS[SAID_LEFT]  # said at once if the client goes
    try:
        said = await stream_cast(client, playback, session.cast_env(), theme, now)
    finally:
        session.if_lost = None
    if said and said != SAID_LEFT:  # a client gone has said so already
        session.ended(VIEWER_ENDINGS[said])


async def _replayed(session: SessionChannel, player: Optional[Player], request: Replay) -> Tuple[Playback, str]:
    """The game ``request`` names and its title on the caption, or
    :class:`Refused` (one line): a ranked daily game as the secrecy rule
    lets the viewer see it (:func:`published`), or one of the player's own
    games (another player's is not found, never shown); a game of the day's
    deal without its seed."""
    server = session.server
    store, name, viewer = server.store, "cast" if request.cast else "replay", player.id if player else None
    if request.race:  # one player's board of a finished race (serve/race_replay.py)
        return await race_playback(store, request, name)
    if request.daily:
        assert request.game is not None
        entry, showing = published(await store.daily_by_id(request.game), request.game, server.now(), name, viewer)
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
    facts = facts_of_seed(record.seed, player.id, server.daily_secret, day_of(server.now()))
    showing = shown(facts, viewer, day_of(server.now()))
    if showing is Shown.NOTHING:  # never: one's own game; the rule decides all the same
        raise Refused(secret_line(name, "this game", facts.day))
    if showing is not Shown.EVERYTHING:
        playback = replace(playback, day=facts.day)
    return playback, record.date


async def stats_command(session: SessionChannel, as_json: bool) -> int:
    """``stats [--json]``: the player's records (``--stats``'s), then their
    last finished games with the ids ``replay`` and ``cast`` take."""
    player = await session.player()
    # The statistics show each top game's seed: a game whose seed may not be
    # shown (the day's ranked deal, :mod:`.secrecy`) counts once the day is
    # over. Only today's ranked deal is known by its seed alone to be such a
    # game (facts_of_seed); the database aggregates the others, so a history
    # of any length is never read whole.
    server = session.server
    today, viewer = day_of(server.now()), player.id if player is not None else None
    todays = secret_seed(server.daily_secret, today)
    public = shown(facts_of_seed(todays, viewer, server.daily_secret, today), viewer, today) is Shown.EVERYTHING
    stats: List[BoardStats] = []
    held, last = 0, []
    if player is not None:
        stats, held = await server.store.stats(player.id, NO_SEED if public else todays)
        last = (await server.store.history(player.id, LAST_LISTED))[::-1]
    if as_json:
        import json

        from .. import __version__

        document = {
            **stats_document(stats, __version__),
            "daily_held_back": held,
            "last_games": [_last_document(game) for game in last],
        }
        for line in json.dumps(document, indent=1).splitlines():
            session.say(line, stderr=False)
        return EXIT_OK
    width = session.window[0]
    if stats:
        # Over SSH the top games have no --replay-best: replay takes the ids listed below.
        lines = stats_lines(stats, ColorDepth.NONE, width, replayable=False)
    else:
        guest = " (as a guest, nothing is kept: connect with an SSH key)" if player is None else ""
        lines = [f"No finished games yet.{guest}" if not last else "No finished games counted yet."]
    if held:
        lines.append(f"{held} of today's daily games count once the day is over (its tiles are secret).")
    if last:
        lines += ["", "Your last games (replay ID, cast ID):", *(_last_line(game) for game in last)]
    for line in lines:
        session.say(line[:width], stderr=False)
    return EXIT_OK


# stats lists this many of the player's last games, with their ids.
NO_SEED = -1  # held back from stats when no seed is: no game has it
LAST_LISTED = 5


def _last_line(game: Finished) -> str:
    record = game.record
    size = f"{record.rows}x{record.cols}"
    when = record.date.replace("T", " ").rstrip("Z")[:16]
    return f"  g{game.id:<6} {when}  {size:>5}  score {record.score:>6}  tile {record.biggest:>5}  moves {record.moves}"


def _last_document(game: Finished) -> Dict[str, Any]:
    # No seed: a served daily game's is the day's, secret until the day is over.
    record = game.record
    return {
        "id": f"g{game.id}",
        "date": record.date,
        "size": f"{record.rows}x{record.cols}",
        "goal": record.goal,
        "score": record.score,
        "biggest": record.biggest,
        "moves": record.moves,
    }


async def daily_command(session: SessionChannel, command: Union[Leaderboard, KeysRequest]) -> int:
    """``leaderboard`` and ``keys``: no terminal needed."""
    server = session.server
    if isinstance(command, KeysRequest):
        entry = await server.store.daily_by_id(command.entry)
        asking = await session.player()
        try:
            recording = keys_for(entry, command.entry, server.now(), asking.id if asking is not None else None)
        except Refused as refused:
            return session.refuse(str(refused), REFUSED)
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
