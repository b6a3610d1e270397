"""``race`` and ``races``, parsed and checked (pure; no socket here), as
:mod:`.commands` parses the others: ``race [--size N] [--goal G]
[--players N] [--minutes M]`` joins the next lobby of those settings,
``race NAME`` the lobby NAME waits in; ``races [--json]`` lists races."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable, List, Optional, Union

from ..game.engine import default_goal
from ..game.limits import DEFAULT_SIZE
from ..game.race import (
    DEFAULT_MINUTES,
    DEFAULT_PLAYERS,
    MAX_MINUTES,
    MAX_PLAYERS,
    MIN_MINUTES,
    MIN_PLAYERS,
    RaceSettings,
)
from ..options.parser import _goal, _size
from .commands import CommandError, _Parser, printable

__all__ = ["RaceRequest", "Races", "parse_race_command"]


@dataclass(frozen=True)
class RaceRequest:
    """``race``: the settings of the lobby to join, or (``friend``) the
    name of a player whose lobby to join, whatever its settings."""

    settings: RaceSettings
    friend: Optional[str] = None


@dataclass(frozen=True)
class Races:
    """``races [--json]``: the player's recent races and the server's latest."""

    json: bool = False


def _bounded(low: int, high: int) -> Callable[[str], int]:
    def number(text: str) -> int:
        if not text.isascii() or not text.isdigit() or len(text) > 3 or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"expected a number from {low} to {high}, got {printable(text)!r}")
        return int(text)

    return number


def parse_race_command(name: str, args: List[str]) -> Union[RaceRequest, Races]:
    """``race ...`` or ``races ...``; :class:`~.commands.CommandError` (one line) if bad."""
    if name == "races":
        parser = _Parser(prog="races", add_help=False)
        parser.add_argument("--json", action="store_true")
        return Races(parser.parse_args(args).json)
    parser = _Parser(prog="race", add_help=False)
    parser.add_argument("friend", metavar="NAME", nargs="?")
    parser.add_argument("--size", type=_size)
    parser.add_argument("--goal", type=_goal)
    parser.add_argument("--players", type=_bounded(MIN_PLAYERS, MAX_PLAYERS), default=DEFAULT_PLAYERS)
    parser.add_argument("--minutes", type=_bounded(MIN_MINUTES, MAX_MINUTES), default=DEFAULT_MINUTES)
    parsed = parser.parse_args(args)
    if parsed.friend is not None and (parsed.size or parsed.goal or len(args) > 1):
        raise CommandError("race: NAME joins that player's lobby as it is: no options with it")
    rows, cols = parsed.size or (DEFAULT_SIZE, DEFAULT_SIZE)
    goal = parsed.goal or default_goal(rows, cols)
    try:
        settings = RaceSettings(rows, cols, goal, parsed.players, parsed.minutes)
    except ValueError as error:
        raise CommandError(f"race: argument --goal: {error}") from None
    return RaceRequest(settings, parsed.friend)
