"""The command line: options parsed and checked, ``--help`` and ``--version``.

Kept light on purpose: ``ansi2048 --version`` and ``--help`` import only this
module and argparse, none of the game (see benchmarks/startup.py). The value
checks call the engine's own, which is imported only when a value is given.
"""

from __future__ import annotations

import argparse
import functools  # (imported by re and argparse already: free)
import re

from .. import __version__
from ..game.limits import DEFAULT_SIZE, MAX_SEED_DIGITS, MAX_SIDE, MIN_SIDE

# Not typing's: importing typing costs --help and --version ~6 ms; mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NoReturn, Optional, Sequence, Tuple, TypeVar

    from .context import Options

    T = TypeVar("T")

__all__ = [
    "COMPLETION_SHELLS",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "REPLAY_DELAY",
    "THEME_CHOICES",
    "argument_type",
    "build_parser",
    "goal_argument",
    "parse_options",
    "size_argument",
]

# Exit statuses, here for every play mode (this module is light to import).
EXIT_OK = 0
EXIT_ERROR = 1  # the environment failed (a full disk, ...) or a crash, said in one line
EXIT_USAGE = 2  # a bad command line (and a bad --record file)

TOP_GAMES = 10  # the top list per board (records.TOP, not imported: keep this light)
REPLAY_DELAY = 0.05  # seconds between keys of --replay-best on a terminal, unless --delay

# The names of render.themes.THEMES, spelled here so that --help need not
# load the renderer (tests/test_themes.py checks that the two agree).
THEME_CHOICES = ("classic", "dark", "high-contrast")

# The shells --completion writes a script for (completion.py's writers; a test
# checks that the two agree).
COMPLETION_SHELLS = ("bash", "zsh", "fish")

_KEYS_HELP = """\
keys, as on the screen:
  arrow keys, w a s d, h j k l  move (capitals too)
  u                             undo (the same move then spawns the same tile)
  r                             new game (u brings the old one back)
  q, Ctrl-C                     quit (the game is kept for next time)
  t                             hint: the AI's move, shown, not played
  p                             the AI plays (p again or a move takes over);
                                + and - change its pace. Games the AI played
                                or hinted in do not raise the best score
  ?                             help: the keys, the rules, what the marks mean
  Ctrl-Z                        suspend (fg comes back to the game)
  more keys, a default theme, size and goal: the config file (--config-path)

ansi2048 serve: the game over SSH, for anyone with ssh (ansi2048 serve --help)

piped keys: the same characters; '#' starts a comment to the end of the line;
  anything else is ignored. A recording's first line
  (# ansi2048 seed=... size=... goal=...) sets up the game it was recorded
  from, so `ansi2048 < game.keys` replays it.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, no usage dump: name the option and what it takes.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _bad(allowed: str, text: str) -> argparse.ArgumentTypeError:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return argparse.ArgumentTypeError(f"expected {allowed}, got {shown!r}")


def argument_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse`` as an argparse type: the ValueError it raises (its reason,
    in one line) is the option's error, where argparse would say only
    "invalid value". ``parse`` may import what it needs when it is called,
    so that a parser's module stays light to import."""

    @functools.wraps(parse)
    def parsed(text: str) -> T:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parsed


@argument_type
def size_argument(text: str) -> Tuple[int, int]:
    """``--size``'s value checked (argparse's type): the local command's and ``ssh HOST play``'s."""
    from ..game.engine import parse_size  # the one check, shared with the config file

    return parse_size(text)


@argument_type
def goal_argument(text: str) -> int:
    """``--goal``'s value checked (argparse's type), as :func:`size_argument`."""
    from ..game.engine import parse_goal

    return parse_goal(text)


def _seed(text: str) -> int:
    if not re.fullmatch(f"\\s*[0-9]{{1,{MAX_SEED_DIGITS}}}\\s*", text):
        raise _bad(f"a whole number >= 0 of at most {MAX_SEED_DIGITS} digits", text)
    return int(text)


def _rank(text: str) -> int:
    if not re.fullmatch(r"\s*[0-9]{1,2}\s*", text) or not 1 <= int(text) <= TOP_GAMES:
        raise _bad(f"a place in the top {TOP_GAMES}, 1 to {TOP_GAMES}", text)
    return int(text)


def _delay(text: str) -> float:
    try:
        delay = float(text)
    except ValueError:
        delay = -1.0
    if not 0 <= delay <= 60:  # also rejects nan and inf
        raise _bad("seconds from 0 to 60", text)
    return delay


def _ai_time(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 60:  # also rejects nan and inf
        raise _bad("seconds above 0, up to 60", text)
    return seconds


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """The raw formatter (it keeps the epilog's columns), given the width
    itself: asked for none, argparse imports shutil to measure it (and bz2,
    lzma with it, ~5 ms of every start-up), for each option added, although
    only --help prints anything. The same rule as shutil's: $COLUMNS, else
    the terminal's width, else 80."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: Optional[int] = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    import os
    import sys

    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout (AttributeError: None), or not a terminal
        return 80


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ansi2048",
        # Wrapped by hand: the raw formatter keeps the epilog's columns.
        description="Play 2048 in the terminal, or over pipes: replay recorded keys,\nor let a bot play with --json.",
        epilog=_KEYS_HELP,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--size",
        type=size_argument,
        metavar="N|RxC",
        help=f"board size: 4 or 3x5 (rows x cols, {MIN_SIDE}..{MAX_SIDE}; default 4)",
    )
    parser.add_argument(
        "--goal",
        type=goal_argument,
        metavar="G",
        help="winning tile, a power of two from 8 to what the board can hold; "
        "default 2048, or 2^(cells-1) on boards of under 12 cells (3x3: 256)",
    )
    parser.add_argument(
        "--seed", type=_seed, metavar="N", help="seed for the tiles, any whole number >= 0 (default: random)"
    )
    parser.add_argument(
        "--record", metavar="FILE", help="write the keys you play to FILE, replayable with: ansi2048 < FILE"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per line: the start, then one per key"
    )
    parser.add_argument(
        "--delay",
        type=_delay,
        metavar="SECONDS",
        help=f"pause between piped keys, to watch a replay (default 0; {REPLAY_DELAY} when --replay-best draws)",
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours: auto (on a terminal, unless NO_COLOR or TERM=dumb), always, never",
    )
    parser.add_argument(
        "--new", action="store_true", help="start a new game instead of resuming the saved one (u brings it back)"
    )
    parser.add_argument("--theme", choices=THEME_CHOICES, help="colours of the board (default classic)")
    parser.add_argument(
        "--cast", metavar="FILE", help="write the game as an asciicast v2 file (asciinema play, agg) to FILE"
    )
    parser.add_argument("--no-animation", dest="animation", action="store_false", help="no tile animations")
    parser.add_argument(
        "--config-path",
        action=_ConfigPath,
        help="print where the config file is read from (theme, size, goal, keys) and exit",
    )
    parser.add_argument(
        "--completion",
        action=_Completion,
        choices=COMPLETION_SHELLS,
        metavar="SHELL",
        help="print the completion script for SHELL (bash, zsh or fish) and exit",
    )
    parser.add_argument(
        "--daily", action="store_true", help="today's game (UTC date): the same tiles for everyone, its own best"
    )
    parser.add_argument("--no-undo", action="store_true", help="hard mode: u does nothing in this game")
    parser.add_argument(
        "--autoplay",
        action="store_true",
        help="the AI plays; not on a terminal (or --json): one whole game, headless",
    )
    parser.add_argument(
        "--ai-time",
        type=_ai_time,
        metavar="SECONDS",
        help="the AI thinks up to SECONDS a move, searching deeper (hint, autoplay)",
    )
    parser.add_argument(
        "--stats", action="store_true", help="show your records: games, best scores, charts (--json: as JSON)"
    )
    parser.add_argument(
        "--replay-best",
        type=_rank,
        metavar="N",
        help=f"replay the Nth of your top {TOP_GAMES} games on this --size/--goal",
    )
    return parser


class _ConfigPath(argparse.Action):
    """Prints the config file's path and exits, like --version."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: Optional[str] = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        import os
        import sys

        from .config import config_path

        sys.stdout.write(config_path(os.environ) + "\n")
        parser.exit(0)


class _Completion(argparse.Action):
    """Prints the shell completion script, written from this very parser, and exits."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, shell: object, *args: object) -> None:
        import sys

        from .completion import completion_script, write_script  # only now: it is not needed to play

        try:
            write_script(completion_script(str(shell), parser), sys.stdout)
        except (OSError, ValueError) as error:  # stdout closed, its reader gone, a full disk: as cli.main says it
            parser.exit(1, f"{parser.prog}: error: cannot write the completion script: {error}\n")
        parser.exit(0)


def parse_options(argv: Optional[Sequence[str]]) -> Options:
    """The options in ``argv``; ``--help``, ``--version`` and bad options exit here."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for option, given in (("--replay-best", args.replay_best is not None), ("--daily", args.daily)):
        if given and args.seed is not None:
            parser.error(f"argument {option}: not allowed with argument --seed (it picks the game)")
    if args.autoplay:
        for option, given in (("--stats", args.stats), ("--replay-best", args.replay_best is not None)):
            if given:
                parser.error(f"argument --autoplay: not allowed with argument {option}")
    from .context import Options  # only now: --help and --version never need it

    rows, cols = args.size if args.size else (None, None)
    if args.goal is not None:
        from ..game.engine import check_goal

        try:
            check_goal(args.goal, rows or DEFAULT_SIZE, cols or DEFAULT_SIZE)
        except ValueError as error:
            parser.error(f"argument --goal: {error}")
    return Options(
        rows=rows,
        cols=cols,
        goal=args.goal,
        seed=args.seed,
        record=args.record,
        json=args.json,
        delay=args.delay,
        color=args.color,
        new=args.new,
        theme=args.theme,
        cast=args.cast,
        animation=args.animation,
        stats=args.stats,
        replay_best=args.replay_best,
        daily=args.daily,
        no_undo=args.no_undo,
        autoplay=args.autoplay,
        ai_time=args.ai_time,
    )
