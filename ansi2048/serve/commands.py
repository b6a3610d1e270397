"""The commands a client may give (``ssh HOST COMMAND``), in one table
(:data:`COMMANDS`): each a :class:`Command` with its name, the parser of its
arguments (:mod:`.requests`), its one entry point (``run``: given the
server's context, the client's channel and the request) and its lines in
``help``. The parser, ``help`` and the "did you mean" of an unknown command
all read this table, and the channel runs what it finds there: a command
added here is in all of them at once (tests/test_architecture.py checks
that every one is in the help).

A new command: its request and parser in :mod:`.requests`, its ``run`` in a
module of its own (or with its kind: :mod:`.play_commands`,
:mod:`.viewer_commands`, :mod:`.record_commands`), one entry below."""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, Generic, List, Optional, Tuple, TypeVar

from ..options.parser import EXIT_OK, THEME_CHOICES
from . import requests
from .context import ServeContext
from .link import Client
from .names import printable
from .play_commands import daily_command, play_command
from .race_session import race
from .record_commands import keys_command, leaderboard_command, races_command, stats_command
from .requests import COLOR_DEPTHS, CommandError, Help, Request
from .viewer_commands import replay_command, watch_command
from .web.link_commands import link_command

__all__ = ["COMMANDS", "Command", "help_text", "parse_command", "read_command"]

R = TypeVar("R")


@dataclass(frozen=True)
class Command(Generic[R]):
    """One command: ``parse`` makes its request of the words after its
    name (:class:`~.requests.CommandError`: one line); ``run`` runs it on a
    client's channel, its exit status; ``usage``: its lines in ``help``,
    where ``{ssh}`` is ``ssh -t [-p PORT] HOST``, ``{plain}`` the same without
    ``-t`` and ``{port}`` the port ("": said in another command's lines, which
    name it)."""

    name: str
    parse: Callable[[List[str]], R]
    run: Callable[[ServeContext, Client, R], Awaitable[int]]
    usage: str


async def _help(context: ServeContext, client: Client, request: Help) -> int:
    for line in help_text(context.port).splitlines():
        client.say(line, stderr=False)
    return EXIT_OK


# In help's order. room for more: the browser's own commands.
COMMANDS: Tuple[Command[Any], ...] = (
    Command(
        "play",
        requests.parse_play,
        play_command,
        "  {ssh}                  play: your game, resumed\n"
        "  {ssh} play [OPTIONS]   options (theme, colour, motion kept):\n"
        "      --size N|RxC  --goal G  --theme " + "|".join(THEME_CHOICES) + "\n"
        "      --color " + "|".join(COLOR_DEPTHS) + "  --no-animation | --animation  --new\n"
        "      --private | --public (may others watch? public by default; kept)\n",
    ),
    Command(
        "watch",
        requests.parse_watch,
        watch_command,
        "  {ssh} watch [NAME]     the games played now, live (or NAME's)\n",
    ),
    Command(
        "replay",
        requests.parse_replay,
        replay_command,
        "  {ssh} replay [ID]      your last finished game, or game ID:\n"
        "      yours as stats lists them (g7), or a ranked daily game's on the\n"
        "      leaderboard (12) once its day is over (yours at once, without\n"
        "      its seed); + - speed, space, q\n",
    ),
    Command(
        "cast",
        requests.parse_cast,
        replay_command,
        "  {plain} cast [ID] > game.cast   the same as an asciicast v2 file\n",
    ),
    Command(
        "stats", requests.parse_stats, stats_command, "  {ssh} stats [--json]   your records, your last games' ids\n"
    ),
    Command(
        "race",
        requests.parse_race,
        race,
        "  {ssh} race [OPTIONS]   race others on one deal, live; no undo,\n"
        "      hint or autoplay: --size N  --goal G  --players 2-8  --minutes 1-30;\n"
        "      race NAME: NAME's lobby, or wait until NAME is in one\n",
    ),
    Command(
        "races",
        requests.parse_races,
        races_command,
        "  ssh -p {port} HOST races [--json]   your races and the latest;\n"
        "      replay rN [NAME], cast rN [NAME] play them back\n",
    ),
    Command(
        "daily",
        requests.parse_daily,
        daily_command,
        "  {ssh} daily            the day's game, the same tiles for all;\n"
        "      your first of the day (UTC) is ranked: no undo; a hint or autoplay\n"
        "      unranks it (asked first); r twice ends it for good\n",
    ),
    Command(
        "leaderboard",
        requests.parse_leaderboard,
        leaderboard_command,
        "  ssh -p {port} HOST leaderboard [YYYY-MM-DD] [--json]   top 10, your rank\n",
    ),
    Command(
        "keys",
        requests.parse_keys,
        keys_command,
        "  ssh -p {port} HOST keys ID   a ranked game's keys once its day is over;\n"
        "      ansi2048 --json < game.keys replays it. * on the board: key timing no\n"
        "      person types (100+ keys, gaps under 0.25 s varying under 20%)\n",
    ),
    Command(
        "link",
        requests.parse_link,
        link_command,
        "  ssh -p {port} HOST link   a one-time code: the server's web page, given it,\n"
        "      plays as you; links lists your browsers, unlink N unlinks one\n",
    ),
    Command("links", requests.parse_links, link_command, ""),
    Command("unlink", requests.parse_unlink, link_command, ""),
    Command("help", requests.parse_help, _help, "  {ssh} help             this list\n"),
)
BY_NAME: Dict[str, Command[Any]] = {command.name: command for command in COMMANDS}


def read_command(line: Optional[str]) -> Tuple[Command[Any], Request]:
    """The command of an exec request (None: a shell request, which
    plays) and its request; :class:`~.requests.CommandError` for anything
    else, with the command it may have meant."""
    if line is None:
        return BY_NAME["play"], requests.PlayRequest()
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise CommandError(f"cannot read the command: {error}") from None
    if not words:
        return BY_NAME["play"], requests.PlayRequest()
    name, args = words[0], words[1:]
    command = BY_NAME.get(name)
    if command is None:
        meant = difflib.get_close_matches(name, list(BY_NAME), n=1)
        maybe = f"did you mean {meant[0]!r}? " if meant else ""
        raise CommandError(f"unknown command {printable(name)!r} ({maybe}see: help)")
    return command, command.parse(args)


def parse_command(line: Optional[str]) -> Request:
    """The request of an exec request's command (:func:`read_command`)."""
    return read_command(line)[1]


def help_text(port: int) -> str:
    """What ``help`` says: the commands, as typed on the client."""
    ssh = f"ssh -t -p {port} HOST" if port != 22 else "ssh -t HOST"
    plain = ssh.replace("-t ", "")
    usages = "".join(command.usage.format(ssh=ssh, plain=plain, port=port) for command in COMMANDS)
    return (
        "ansi2048 over SSH: 2048 in your terminal, your game kept under your SSH key.\n"
        + usages
        + "Keys: arrows, w a s d or h j k l move; u undo; r new game; t hint; p autoplay;\n"
        "? help; q or Ctrl-C quits, your game kept. Without a key you play as a guest:\n"
        "nothing is kept. Your own key for the game: ssh -o IdentitiesOnly=yes -i KEY\n"
    )
