"""What a client asks the server for: the command of ``ssh host COMMAND``
parsed and checked (pure; no socket here).

``play`` takes the local command's options that make sense remotely, checked
by the local parser's own value checks (:mod:`ansi2048.options.parser`): one way to
say what a good size or goal is."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from typing import NoReturn, Optional, Union

from ..options.parser import THEME_CHOICES, _goal, _size
from ..render.style import ColorDepth

__all__ = [
    "COLOR_DEPTHS",
    "NEEDS_TERMINAL",
    "CommandError",
    "Help",
    "PlayRequest",
    "Stats",
    "help_text",
    "parse_command",
    "printable",
]

# --color's choices over SSH, and the depth each one names: the client's
# terminal is far away, so "auto" is the default (TERM and COLORTERM say),
# and "never" is NO_COLOR's job.
COLOR_DEPTHS = {"16": ColorDepth.BASIC, "256": ColorDepth.EXTENDED, "24bit": ColorDepth.TRUE}

# Said to ``ssh -T host`` (or ``ssh host play``): the game needs a terminal.
NEEDS_TERMINAL = "this is a game for a terminal: connect with ssh -t (see: ssh HOST help)"


class CommandError(Exception):
    """A command the server does not know, or a bad argument: one line."""


@dataclass(frozen=True)
class PlayRequest:
    """``play``'s options; None where the player said nothing (their
    remembered choice, or the default, applies)."""

    rows: Optional[int] = None
    cols: Optional[int] = None
    goal: Optional[int] = None
    theme: Optional[str] = None
    color: Optional[str] = None  # a key of COLOR_DEPTHS
    animation: Optional[bool] = None
    new: bool = False


@dataclass(frozen=True)
class Stats:
    json: bool = False


@dataclass(frozen=True)
class Help:
    pass


Command = Union[PlayRequest, Stats, Help]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse repeats the client's words: they must not reach a
        # terminal as control codes, even the client's own.
        raise CommandError(printable(f"{self.prog}: {message}", 200))

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise CommandError(f"{self.prog}: {message or 'see: help'}".strip())


def _play_parser() -> _Parser:
    parser = _Parser(prog="play", add_help=False)
    parser.add_argument("--size", type=_size)
    parser.add_argument("--goal", type=_goal)
    parser.add_argument("--theme", choices=THEME_CHOICES)
    parser.add_argument("--color", choices=tuple(COLOR_DEPTHS))
    animation = parser.add_mutually_exclusive_group()
    animation.add_argument("--no-animation", dest="animation", action="store_false", default=None)
    animation.add_argument("--animation", dest="animation", action="store_true", default=None)
    parser.add_argument("--new", action="store_true")
    return parser


def _stats_parser() -> _Parser:
    parser = _Parser(prog="stats", add_help=False)
    parser.add_argument("--json", action="store_true")
    return parser


def parse_command(command: Optional[str]) -> Command:
    """The command of an exec request (None: a shell request, which plays).
    :class:`CommandError` for anything else."""
    if command is None:
        return PlayRequest()
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise CommandError(f"cannot read the command: {error}") from None
    if not words:
        return PlayRequest()
    name, args = words[0], words[1:]
    if name == "help":
        if args:
            raise CommandError("help takes no arguments")
        return Help()
    if name == "stats":
        return Stats(_stats_parser().parse_args(args).json)
    if name != "play":
        raise CommandError(f"unknown command {printable(name)!r} (see: help)")
    parsed = _play_parser().parse_args(args)
    rows, cols = parsed.size if parsed.size else (None, None)
    if parsed.goal is not None:
        from ..game.engine import check_goal
        from ..game.limits import DEFAULT_SIZE

        try:
            check_goal(parsed.goal, rows or DEFAULT_SIZE, cols or DEFAULT_SIZE)
        except ValueError as error:
            raise CommandError(f"play: argument --goal: {error}") from None
    return PlayRequest(rows, cols, parsed.goal, parsed.theme, parsed.color, parsed.animation, parsed.new)


def printable(text: str, longest: int = 40) -> str:
    """A client's words as they may be repeated (to them, or in the log):
    printable ASCII, short."""
    kept = "".join(ch if " " <= ch <= "~" else "?" for ch in text)
    return kept if len(kept) <= longest else kept[: longest - 3] + "..."


def help_text(port: int) -> str:
    """What ``help`` says: the commands, as typed on the client."""
    ssh = f"ssh -t -p {port} HOST" if port != 22 else "ssh -t HOST"
    return (
        "ansi2048 over SSH: 2048 in your terminal, your game kept under your SSH key.\n"
        f"  {ssh}                  play: your game, resumed\n"
        f"  {ssh} play [OPTIONS]   options (theme, colour, motion kept):\n"
        "      --size N|RxC  --goal G  --theme " + "|".join(THEME_CHOICES) + "\n"
        "      --color " + "|".join(COLOR_DEPTHS) + "  --no-animation | --animation  --new\n"
        f"  {ssh} stats [--json]   your records\n"
        f"  {ssh} help             this list\n"
        "Keys: arrows, w a s d or h j k l move; u undo; r new game; t hint; p autoplay;\n"
        "? help; q or Ctrl-C quits, your game kept. Without a key you play as a guest:\n"
        "nothing is kept. Your own key for the game: ssh -o IdentitiesOnly=yes -i KEY\n"
    )
