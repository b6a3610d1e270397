"""The commands about records, none needing a terminal: ``stats
[--json]`` (the player's records and last games), ``leaderboard [DAY]
[--json]`` and ``keys ID`` (a ranked game's recording, once the secrecy
rule lets it be shown), ``races [--json]`` (the races kept). Each is given the server's context and the
:class:`~.link.Client`, nothing else."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from ..options.parser import EXIT_OK
from ..records.history import stats_document
from ..records.tally import BoardStats
from ..render.stats import stats_lines
from ..render.style import ColorDepth
from .context import ServeContext
from .daily import day_of
from .link import Client
from .race_records import LISTED, MINE, listed_races, race_line, races_document
from .race_replay import racing_lines
from .ranked import leaderboard_output
from .requests import REFUSED, KeysRequest, Leaderboard, Races, Stats
from .secrecy import Refused, Shown, facts_of_seed, keys_for, secret_seed, shown
from .store.base import Finished
from .store.races import recent_script

__all__ = ["keys_command", "leaderboard_command", "races_command", "stats_command"]


async def stats_command(context: ServeContext, client: Client, request: Stats) -> int:
    """``stats [--json]``: the player's records (``--stats``'s), then their
    last finished games with the ids ``replay`` and ``cast`` take."""
    player = await context.player(client.identity)
    # The statistics show each top game's seed: a game whose seed may not be
    # shown (the day's ranked deal, :mod:`.secrecy`) counts once the day is
    # over. Only today's ranked deal is known by its seed alone to be such a
    # game (facts_of_seed); the database aggregates the others, so a history
    # of any length is never read whole.
    today, viewer = day_of(context.now()), player.id if player is not None else None
    todays = secret_seed(context.daily_secret, today)
    public = shown(facts_of_seed(todays, viewer, context.daily_secret, today), viewer, today) is Shown.EVERYTHING
    stats: List[BoardStats] = []
    held, last = 0, []
    if player is not None:
        stats, held = await context.store.stats(player.id, NO_SEED if public else todays)
        last = (await context.store.history(player.id, LAST_LISTED))[::-1]
    if request.json:
        import json

        from .. import __version__

        document = {
            **stats_document(stats, __version__),
            "daily_held_back": held,
            "last_games": [_last_document(game) for game in last],
        }
        for line in json.dumps(document, indent=1).splitlines():
            client.say(line, stderr=False)
        return EXIT_OK
    width = client.window[0]
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
        client.say(line[:width], stderr=False)
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


async def keys_command(context: ServeContext, client: Client, request: KeysRequest) -> int:
    """``keys ID``: a ranked game's recording, once the secrecy rule lets it be shown; no terminal needed."""
    entry = await context.store.daily_by_id(request.entry)
    asking = await context.player(client.identity)
    try:
        recording = keys_for(entry, request.entry, context.now(), asking.id if asking is not None else None)
    except Refused as refused:
        return client.refuse(str(refused), REFUSED)
    client.link.write(recording)
    return EXIT_OK


async def leaderboard_command(context: ServeContext, client: Client, request: Leaderboard) -> int:
    """``leaderboard [DAY] [--json]``: no terminal needed."""
    player = await context.player(client.identity)
    me = player.id if player is not None else None
    lines = await leaderboard_output(context.store, context.now(), request.day, request.json, me)
    for line in lines:
        client.say(line, stderr=False)
    return EXIT_OK


async def races_command(context: ServeContext, client: Client, request: Races) -> int:
    """``races [--json]``: the player's recent races and the server's
    latest (:mod:`.race_records`), and those being run; no terminal needed."""
    player = await context.player(client.identity)
    me = player.id if player is not None else None
    races, players = await context.store.run_script(recent_script(me, MINE if me is not None else 0, LISTED))
    listed = listed_races(races, players)
    if request.json:
        for line in json.dumps(races_document(listed), indent=1).splitlines():
            client.say(line, stderr=False)
        return EXIT_OK
    width = client.window[0]
    mine = [race for race in listed if any(p["player"] == me for p in race["players"])] if me is not None else []
    lines: List[str] = []
    if mine:
        lines += ["Your last races:", *(race_line(race) for race in mine), ""]
    lines += ["The server's latest races:", *(race_line(race) for race in listed)] if listed else ["No race yet."]
    lines += racing_lines(context.races, context.far_races, width)
    for line in lines:
        client.say(line[:width], stderr=False)
    return EXIT_OK
