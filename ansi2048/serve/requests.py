"""What a client asks the server for, as values: each command's request
(:data:`Request`) and the parser of its arguments (pure; no socket here).
:mod:`.commands` names them in its one table, with what runs each.

``play`` takes the local command's options that make sense remotely, checked
by the local parser's own value checks (:mod:`ansi2048.options.parser`): one way to
say what a good size or goal is."""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from typing import Callable, List, NoReturn, Optional, Union

from ..game.race import MAX_MINUTES, MAX_PLAYERS, MIN_MINUTES, MIN_PLAYERS, RaceSettings
from ..options.parser import THEME_CHOICES, argument_type, goal_argument, size_argument
from ..render.style import ColorDepth
from .names import printable

__all__ = [
    "COLOR_DEPTHS",
    "GAME_ID",
    "NEEDS_TERMINAL",
    "NO_TERMINAL",
    "REFUSED",
    "CommandError",
    "Daily",
    "Help",
    "KeysRequest",
    "Leaderboard",
    "LinkRequest",
    "PlayRequest",
    "RaceRequest",
    "Races",
    "Replay",
    "Request",
    "Stats",
    "Watch",
    "parse_cast",
    "parse_daily",
    "parse_help",
    "parse_keys",
    "parse_leaderboard",
    "parse_link",
    "parse_links",
    "parse_play",
    "parse_replay",
    "parse_stats",
    "parse_unlink",
    "parse_watch",
]

# --color's choices over SSH, and the depth each one names: the client's
# terminal is far away, so "auto" is the default (TERM and COLORTERM say),
# and "never" is NO_COLOR's job.
COLOR_DEPTHS = {"16": ColorDepth.BASIC, "256": ColorDepth.EXTENDED, "24bit": ColorDepth.TRUE}

# Said to ``ssh -T host`` (or ``ssh host play``): the game needs a terminal.
NEEDS_TERMINAL = "this is a game for a terminal: connect with ssh -t (see: ssh HOST help)"
# How such a session ended, in the log (what it named was checked first).
NO_TERMINAL = "needs a terminal"
# How a session ended in the log when what it named was refused (an unknown
# id or name, another player's game, a day not over).
REFUSED = "refused"


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
    private: Optional[bool] = None  # --private / --public: whether others may watch (kept)


@dataclass(frozen=True)
class Stats:
    json: bool = False


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Daily:
    """``daily``: play the day's game (:mod:`.ranked`)."""


@dataclass(frozen=True)
class Leaderboard:
    day: Optional[str] = None  # YYYY-MM-DD; None: today
    json: bool = False


@dataclass(frozen=True)
class KeysRequest:
    entry: int  # a ranked daily game's id


@dataclass(frozen=True)
class Watch:
    """``watch``: the list of games being played; ``watch NAME``: that player's."""

    name: Optional[str] = None


@dataclass(frozen=True)
class Replay:
    """``replay [ID]`` (on a terminal) or ``cast [ID]`` (asciicast v2 on
    standard output): a finished game by its id (:data:`GAME_ID`), or the
    player's last finished game."""

    game: Optional[int] = None  # None: the player's last finished game
    daily: bool = False  # game is a ranked daily game's id (the leaderboard's); else one of the player's own
    cast: bool = False
    race: bool = False  # game is a finished race's id (races': r3), all its boards or ``player``'s
    player: Optional[str] = None


# A game's id as the lists show it, the one rule of replay and cast: a ranked
# daily game's is its number on the leaderboard (as keys takes it), one of
# the player's own games' is g and its number in stats' list, a race's r and
# its number in races' list. ASCII digits only (str.isdigit() takes '²'),
# few enough for any database's integer.
GAME_ID = re.compile(r"([gr]?)([0-9]{1,18})")


@dataclass(frozen=True)
class LinkRequest:
    """``link``, ``links`` or ``unlink N``: browsers playing as this key's player (serve/web/link_commands.py)."""

    action: str
    number: int = 0  # unlink's


@dataclass(frozen=True)
class RaceRequest:
    """``race [--size N] [--goal G] [--players N] [--minutes M]``: the
    settings of the lobby to join; ``race NAME`` (``friend``): the lobby
    that player is in, whatever its settings, or a wait until they are in
    one (serve/race_session.py, serve/race_friends.py)."""

    settings: RaceSettings
    friend: Optional[str] = None

    def line(self) -> str:
        """The command asking for this again (what a player relayed to the
        server holding their race runs there: serve/relay.py)."""
        if self.friend is not None:
            return f"race {shlex.quote(self.friend)}"
        s = self.settings
        return f"race --size {s.rows}x{s.cols} --goal {s.goal} --players {s.players} --minutes {s.minutes}"


@dataclass(frozen=True)
class Races:
    """``races [--json]``: the player's recent races and the server's latest (serve/race_commands.py)."""

    json: bool = False


Request = Union[
    PlayRequest, Stats, Help, Daily, Leaderboard, KeysRequest, Watch, Replay, LinkRequest, RaceRequest, Races
]


class _Parser(argparse.ArgumentParser):
    def __init__(self, prog: str) -> None:
        super().__init__(prog=prog, add_help=False)

    def error(self, message: str) -> NoReturn:
        # argparse repeats the client's words: they must not reach a
        # terminal as control codes, even the client's own.
        raise CommandError(printable(f"{self.prog}: {message}", 200))

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise CommandError(f"{self.prog}: {message or 'see: help'}".strip())


def parse_play(args: List[str]) -> PlayRequest:
    """``play [OPTIONS]``."""
    parser = _Parser("play")
    parser.add_argument("--size", type=size_argument)
    parser.add_argument("--goal", type=goal_argument)
    parser.add_argument("--theme", choices=THEME_CHOICES)
    parser.add_argument("--color", choices=tuple(COLOR_DEPTHS))
    animation = parser.add_mutually_exclusive_group()
    animation.add_argument("--no-animation", dest="animation", action="store_false", default=None)
    animation.add_argument("--animation", dest="animation", action="store_true", default=None)
    parser.add_argument("--new", action="store_true")
    private = parser.add_mutually_exclusive_group()
    private.add_argument("--private", dest="private", action="store_true", default=None)
    private.add_argument("--public", dest="private", action="store_false", default=None)
    parsed = parser.parse_args(args)
    rows, cols = parsed.size if parsed.size else (None, None)
    if parsed.goal is not None:
        from ..game.engine import check_goal
        from ..game.limits import DEFAULT_SIZE

        try:
            check_goal(parsed.goal, rows or DEFAULT_SIZE, cols or DEFAULT_SIZE)
        except ValueError as error:
            raise CommandError(f"play: argument --goal: {error}") from None
    return PlayRequest(
        rows, cols, parsed.goal, parsed.theme, parsed.color, parsed.animation, parsed.new, parsed.private
    )


def parse_help(args: List[str]) -> Help:
    if args:
        raise CommandError("help takes no arguments")
    return Help()


def parse_stats(args: List[str]) -> Stats:
    """``stats [--json]``."""
    parser = _Parser("stats")
    parser.add_argument("--json", action="store_true")
    return Stats(parser.parse_args(args).json)


def parse_daily(args: List[str]) -> Daily:
    _Parser("daily").parse_args(args)
    return Daily()


def parse_leaderboard(args: List[str]) -> Leaderboard:
    """``leaderboard [YYYY-MM-DD] [--json]``."""
    parser = _Parser("leaderboard")
    parser.add_argument("day", nargs="?", type=day_argument)
    parser.add_argument("--json", action="store_true")
    parsed = parser.parse_args(args)
    return Leaderboard(parsed.day, parsed.json)


def parse_keys(args: List[str]) -> KeysRequest:
    """``keys ID``."""
    parser = _Parser("keys")
    parser.add_argument("entry", metavar="ID", type=entry_argument)  # its name in errors, as the docs write it
    return KeysRequest(parser.parse_args(args).entry)


def parse_watch(args: List[str]) -> Watch:
    """``watch [NAME]``."""
    if len(args) > 1:
        raise CommandError("watch takes one player's name at most")
    return Watch(args[0] if args else None)


def parse_replay(args: List[str], cast: bool = False) -> Replay:
    """``replay [ID]``."""
    name = "cast" if cast else "replay"
    found = GAME_ID.fullmatch(args[0]) if args else None
    race = found is not None and found.group(1) == "r"  # r3 NAME: one player's board of race r3
    if len(args) > (2 if race else 1) or (args and found is None):
        said = f"not a game's id: {printable(args[0])!r}" if found is None else "one game's id at most"
        raise CommandError(f"{name}: {said} (a leaderboard's, as 12, or one of yours in stats, as g7)")
    if found is None:
        return Replay(cast=cast)
    if race:
        player = args[1] if len(args) > 1 else None
        return Replay(int(found.group(2)), cast=cast, race=True, player=player)
    return Replay(int(found.group(2)), daily=not found.group(1), cast=cast)


def parse_cast(args: List[str]) -> Replay:
    """``cast [ID]``: as ``replay``'s."""
    return parse_replay(args, cast=True)


def parse_link(args: List[str]) -> LinkRequest:
    return _no_arguments("link", args)


def parse_links(args: List[str]) -> LinkRequest:
    return _no_arguments("links", args)


def parse_unlink(args: List[str]) -> LinkRequest:
    """``unlink N``."""
    if len(args) != 1 or not args[0].isascii() or not args[0].isdigit() or len(args[0]) > 6:
        raise CommandError("unlink: expected one browser's number, as links lists them")
    return LinkRequest("unlink", int(args[0]))


def parse_race(args: List[str]) -> RaceRequest:
    """``race [NAME] [--size N] [--goal G] [--players N] [--minutes M]``."""
    parser = _Parser("race")
    parser.add_argument("friend", metavar="NAME", nargs="?")
    parser.add_argument("--size", type=size_argument)
    parser.add_argument("--goal", type=goal_argument)
    parser.add_argument("--players", type=_bounded(MIN_PLAYERS, MAX_PLAYERS), default=RaceSettings.players)
    parser.add_argument("--minutes", type=_bounded(MIN_MINUTES, MAX_MINUTES), default=RaceSettings.minutes)
    parsed = parser.parse_args(args)
    if parsed.friend is not None and (parsed.size or parsed.goal or len(args) > 1):
        raise CommandError("race: NAME joins that player's lobby as it is: no options with it")
    from ..game.engine import default_goal

    rows, cols = parsed.size or (RaceSettings.rows, RaceSettings.cols)
    try:
        settings = RaceSettings(rows, cols, parsed.goal or default_goal(rows, cols), parsed.players, parsed.minutes)
    except ValueError as error:
        raise CommandError(f"race: argument --goal: {error}") from None
    return RaceRequest(settings, parsed.friend)


def parse_races(args: List[str]) -> Races:
    """``races [--json]``."""
    parser = _Parser("races")
    parser.add_argument("--json", action="store_true")
    return Races(parser.parse_args(args).json)


def _bounded(low: int, high: int) -> Callable[[str], int]:
    def number(text: str) -> int:
        if not text.isascii() or not text.isdigit() or len(text) > 3 or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"expected a number from {low} to {high}, got {printable(text)!r}")
        return int(text)

    return number


def _no_arguments(name: str, args: List[str]) -> LinkRequest:
    if args:
        raise CommandError(f"{name} takes no arguments")
    return LinkRequest(name)


@argument_type
def day_argument(text: str) -> str:
    from .daily import parse_day

    return parse_day(text)


def entry_argument(text: str) -> int:
    found = GAME_ID.fullmatch(text)
    if found is None or found.group(1) or int(text) == 0:  # ids count from 1
        raise argparse.ArgumentTypeError(f"expected a ranked game's id (a number), got {printable(text)!r}")
    return int(text)
