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
import textwrap
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
    client's channel, its exit status; ``usage``: its lines in ``help``
    ("": said in another command's lines, which name it), each
    ``{ssh} SYNOPSIS  DESCRIPTION`` (the command needs a terminal: ``ssh -t``)
    or ``{plain} ...`` (it needs none), two spaces at least before the
    description, which may go on over further lines (:func:`help_text`
    groups, aligns and wraps them; a `quoted part` is never broken)."""

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
        "  {ssh} (no command)     play: your game, resumed\n"
        "  {ssh} play [OPTIONS]   a game with options (theme, colour, motion kept):\n"
        "      `--size N|RxC` `--goal G` `--theme " + "|".join(THEME_CHOICES) + "`\n"
        "      `--color " + "|".join(COLOR_DEPTHS) + "` `--no-animation | --animation` `--new`\n"
        "      `--private | --public` (may others watch? public by default; kept)\n",
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
        "      its seed); + - speed, space pauses, q leaves\n",
    ),
    Command(
        "cast",
        requests.parse_cast,
        replay_command,
        "  {plain} cast [ID] > game.cast   a game replay [ID] plays, as an asciicast v2 file\n",
    ),
    Command(
        "stats", requests.parse_stats, stats_command, "  {plain} stats [--json]   your records, your last games' ids\n"
    ),
    Command(
        "race",
        requests.parse_race,
        race,
        "  {ssh} race [OPTIONS]   race others on one deal, live; no undo, hint or autoplay:\n"
        "      `--size N` `--goal G` `--players 2-8` `--minutes 1-30`;\n"
        "      race NAME: NAME's lobby, or wait until NAME is in one\n",
    ),
    Command(
        "races",
        requests.parse_races,
        races_command,
        "  {plain} races [--json]   your races and the latest;\n"
        "      `replay rN [NAME]`, `cast rN [NAME]` play them back\n",
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
        "  {plain} leaderboard [YYYY-MM-DD] [--json]   the day's top 10, and your rank\n",
    ),
    Command(
        "keys",
        requests.parse_keys,
        keys_command,
        "  {plain} keys ID   a ranked game's keys once its day is over;\n"
        "      `ansi2048 --json < game.keys` replays it. * on the board: key timing no\n"
        "      person types (100+ keys, `gaps under 0.25 s` varying under 20%)\n",
    ),
    Command(
        "link",
        requests.parse_link,
        link_command,
        "  {plain} link   a one-time code: the server's web page, given it,\n"
        "      plays as you; links lists your browsers, unlink N unlinks one\n",
    ),
    Command("links", requests.parse_links, link_command, ""),
    Command("unlink", requests.parse_unlink, link_command, ""),
    Command("help", requests.parse_help, _help, "  {plain} help             this list\n"),
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


# help's width, and where its descriptions start (a longer command has
# its description on the next line, as argparse's help does).
HELP_WIDTH = 80
HELP_COLUMN = 25


def help_text(port: int) -> str:
    """What ``help`` says: the commands as typed on the client, those that
    need a terminal (``ssh -t``) first, then those that need none, each
    group under the ``ssh`` command line that gives them; the descriptions
    in one column, wrapped to 80 columns."""
    plain = f"ssh -p {port} HOST" if port != 22 else "ssh HOST"
    terminal = plain.replace("ssh ", "ssh -t ", 1)
    rows = [row for command in COMMANDS for row in _usage_rows(command.usage)]
    text = ["ansi2048 over SSH: 2048 in your terminal, your game kept under your SSH key."]
    indent = " " * HELP_COLUMN
    groups = (("{ssh}", f"On a terminal: {terminal} COMMAND"), ("{plain}", f"No terminal needed: {plain} COMMAND"))
    for marker, heading in groups:
        text += ["", heading]
        for synopsis, description in (row[1:] for row in rows if row[0] == marker):
            first = f"  {synopsis}".ljust(HELP_COLUMN)
            if len(first) > HELP_COLUMN:
                text.append(first.rstrip())
                first = indent
            text += _wrapped(description, first, indent)
    closing = (
        "Keys in a game: arrows, w a s d or h j k l move; u undo; r new game; t hint; p autoplay;"
        " ? help; q or Ctrl-C quits, your game kept. Without an SSH key you play as a guest:"
        " nothing is kept. With several keys, give the game's:"
    )
    own_key = plain.replace("ssh ", "ssh -o IdentitiesOnly=yes -i ~/.ssh/KEY ", 1)
    return "\n".join([*text, "", *_wrapped(closing, "", ""), f"  {own_key}"]) + "\n"


def _wrapped(text: str, first: str, indent: str) -> List[str]:
    """``text`` wrapped to help's width, its `quoted parts` unbroken (and unquoted)."""
    parts = text.split("`")
    joined = "".join(part.replace(" ", "\xa0") if index % 2 else part for index, part in enumerate(parts))
    wrapper = textwrap.TextWrapper(HELP_WIDTH, first, indent, break_long_words=False, break_on_hyphens=False)
    return [line.replace("\xa0", " ") for line in wrapper.wrap(joined)]


def _usage_rows(usage: str) -> List[Tuple[str, str, str]]:
    """A :class:`Command`'s ``usage`` as its rows: (its marker, ``{ssh}`` or
    ``{plain}``; the synopsis; the description, its lines joined)."""
    rows: List[Tuple[str, str, str]] = []
    for line in usage.splitlines():
        marker, _, rest = line.strip().partition(" ")
        if marker in ("{ssh}", "{plain}"):
            synopsis, _, description = rest.strip().partition("  ")
            rows.append((marker, synopsis, " ".join(description.split())))
        elif rows:  # the description goes on
            rows[-1] = (*rows[-1][:2], f"{rows[-1][2]} {' '.join(line.split())}")
    return rows
