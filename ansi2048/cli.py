"""Command line: options, then wiring of the pure core to the streams.

Modes, chosen from what stdin and stdout are:
- stdin and stdout a terminal (and no ``--json``): interactive play, in raw
  mode for the whole session, with the game kept between runs;
- otherwise a stream of keys, read as they arrive: with ``--json`` one JSON
  object per action key; with stdout a terminal the game is shown as frames;
  otherwise the final board and a summary are printed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import IO, Any, Callable, List, Mapping, NoReturn, Optional, Sequence, Tuple, cast

from . import __version__
from .engine import MAX_GOAL, MAX_SEED_DIGITS, MAX_SIDE, MIN_GOAL, MIN_SIDE, Game
from .game import ACTION_NAMES, Outcome, Session, event
from .keys import Action, KeyDecoder
from .recording import BOM, Header, format_header, parse_header
from .terminal import Hangup

__all__ = ["Options", "main", "parse_options"]

DEFAULT_SIZE = 4
DEFAULT_GOAL = 2048
# How long a pipe may stay silent before the game starts without a header:
# long enough for `cat game.keys |` to deliver its first line, short enough
# that a bot waiting for the start object does not notice.
HEADER_WAIT = 0.5
_MAX_HEADER = 4096
# Seconds between writes of a rising best score during play (see _terminal_loop).
BEST_WRITE_INTERVAL = 1.0

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

_KEYS_HELP = """\
keys:
  w a s d, h j k l (vim), arrow keys   move up / left / down / right (capitals too)
  u                                    undo (the same move then spawns the same tile)
  r                                    new game (undo brings the old one back)
  q, Ctrl-C                            quit (the game is kept for next time)

piped keys: the same characters; '#' starts a comment to the end of the line;
  anything else is ignored. A recording's first line (# ansi2048 seed=... size=...
  goal=...) sets up the game it was recorded from, so `ansi2048 < game.keys` replays it.
"""


@dataclass(frozen=True)
class Options:
    rows: Optional[int] = None
    cols: Optional[int] = None
    goal: Optional[int] = None
    seed: Optional[int] = None
    record: Optional[str] = None
    json: bool = False
    delay: float = 0.0
    color: str = "auto"
    new: bool = False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, no usage dump: name the option and what it takes.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _bad(allowed: str, text: str) -> argparse.ArgumentTypeError:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return argparse.ArgumentTypeError(f"expected {allowed}, got {shown!r}")


def _size(text: str) -> Tuple[int, int]:
    # At most 3 digits a side: anything longer is out of range anyway, and
    # int() of thousands of digits would fail with an unrelated message.
    match = re.fullmatch(r"\s*([0-9]{1,3})\s*(?:[xX×]\s*([0-9]{1,3})\s*)?", text)
    allowed = f"N or RxC with sides from {MIN_SIDE} to {MAX_SIDE}"
    if not match:
        raise _bad(allowed, text)
    rows = int(match.group(1))
    cols = int(match.group(2)) if match.group(2) else rows
    if not (MIN_SIDE <= rows <= MAX_SIDE and MIN_SIDE <= cols <= MAX_SIDE):
        raise _bad(allowed, text)
    return rows, cols


def _goal(text: str) -> int:
    allowed = f"a power of two from {MIN_GOAL} to {MAX_GOAL}"
    if not re.fullmatch(r"\s*[0-9]{1,12}\s*", text):
        raise _bad(allowed, text)
    goal = int(text)
    if not (MIN_GOAL <= goal <= MAX_GOAL and goal & (goal - 1) == 0):
        raise _bad(allowed, text)
    return goal


def _seed(text: str) -> int:
    if not re.fullmatch(f"\\s*[0-9]{{1,{MAX_SEED_DIGITS}}}\\s*", text):
        raise _bad(f"a whole number >= 0 of at most {MAX_SEED_DIGITS} digits", text)
    return int(text)


def _delay(text: str) -> float:
    try:
        delay = float(text)
    except ValueError:
        delay = -1.0
    if not 0 <= delay <= 60:  # also rejects nan and inf
        raise _bad("seconds from 0 to 60", text)
    return delay


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ansi2048",
        description="Play 2048 in the terminal, or over pipes: replay recorded keys, or let a bot play with --json.",
        epilog=_KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--size", type=_size, metavar="N|RxC", help="board size: 4 or 3x5 (rows x cols, 2..10; default 4)"
    )
    parser.add_argument("--goal", type=_goal, metavar="G", help="winning tile, a power of two 8..2**31 (default 2048)")
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
        "--delay", type=_delay, metavar="SECONDS", default=0.0, help="pause between piped keys, to watch a replay"
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
    return parser


def parse_options(argv: Optional[Sequence[str]]) -> Options:
    args = build_parser().parse_args(argv)
    rows, cols = args.size if args.size else (None, None)
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
    )


def _usage_error(message: str, stderr: IO[str]) -> int:
    stderr.write(f"ansi2048: error: {message}\n")
    return EXIT_USAGE


def _isatty(stream: IO[Any]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _same_file(a: IO[Any], path: str) -> bool:
    try:
        return os.path.samefile(a.fileno(), path)
    except (OSError, ValueError, TypeError, AttributeError):
        return False


# -- recording --------------------------------------------------------------


class RecordError(Exception):
    """The --record file cannot be written at the start: a bad option."""


class Recorder:
    """Writes the header and one character per action key, flushed as it goes,
    so a killed game still leaves a usable recording. A write that fails
    mid-game (a full disk) stops the recording with one warning; the game
    goes on."""

    def __init__(self, stream: Optional[IO[str]], warn: Callable[[str], None]) -> None:
        self._stream = stream
        self.warn = warn

    def start(self, seed: int, rows: int, cols: int, goal: int, keys: bytes = b"") -> None:
        """The header, and the keys already played (a resumed game is recorded whole)."""
        if self._stream is not None:
            try:
                self._stream.write(format_header(seed, rows, cols, goal, __version__))
                self._stream.write(keys.decode("ascii", "replace"))
                self._stream.flush()
            except OSError as error:
                raise RecordError(f"cannot write {self._stream.name!r}: {error.strerror or error}") from None

    def action(self, action: Action) -> None:
        if self._stream is not None:
            try:
                self._stream.write(action.value)
                self._stream.flush()
            except OSError as error:
                self.warn(f"cannot write the recording ({error.strerror or error}); recording stopped")
                self._drop()

    def close(self) -> None:
        if self._stream is not None:
            with suppress(OSError):
                self._stream.write("\n")
            self._drop()

    def _drop(self) -> None:
        assert self._stream is not None
        with suppress(OSError):
            self._stream.close()
        self._stream = None


# -- output -------------------------------------------------------------------


class Screen:
    """Draws the session as frames on a terminal, repainted in place."""

    def __init__(
        self,
        write: Callable[[str], None],
        size: Callable[[], Tuple[int, int]],
        depth: Any,
        env: Mapping[str, str],
        legacy: bool = False,
        replay: bool = False,
    ) -> None:
        from .render import Repainter

        self._write = write
        self._size = size
        self._depth = depth
        self._replay = replay
        # TERM=dumb cannot move the cursor: frames then follow each other.
        in_place = env.get("TERM") != "dumb"
        self._repainter = Repainter(hide_cursor=in_place and not legacy, in_place=in_place)
        self.note = ""
        self.fits = True  # the last frame showed the board, not "too small"

    def show(self, session: Session) -> None:
        from .render import View, frame_lines, layout_for

        width, height = self._size()
        view = View.of(session, self.note, self._replay)
        self.fits = layout_for(view, width, height) is not None
        self._write(self._repainter.frame(frame_lines(view, self._depth, width, height), width))

    def close(self) -> None:
        """Leave the final frame on screen, the cursor shown, below it."""
        self._write(self._repainter.close())


def _color_depth(options: Options, stream: IO[Any], env: Mapping[str, str], legacy: bool = False) -> Any:
    from .render import choose_depth

    return choose_depth(options.color, _isatty(stream), env, legacy_console=legacy)


# -- piped play ---------------------------------------------------------------


def _read_header(reader: Any, wait: Optional[float]) -> Tuple[Optional[Header], bytes]:
    """The recording header at the start of the input, if one comes in time,
    and the bytes read past it."""
    data = reader.read(timeout=wait)
    if not data:
        return None, b""
    if data.startswith(BOM):  # as Notepad saves UTF-8
        data = data[len(BOM) :]
    while data.startswith(b"#") and b"\n" not in data and len(data) < _MAX_HEADER:
        more = reader.read()
        if not more:
            break
        data += more
    first, _newline, rest = data.partition(b"\n")
    header = parse_header(first.decode("utf-8", "replace"))
    if header is None:
        return None, data
    return header, rest


def _resolve(
    options: Options, header: Optional[Header], random_seed: Callable[[], int], warn: Callable[[str], None]
) -> Game:
    """Explicit options win over the recording's header, which wins over defaults."""
    h = header or Header()
    rows, cols, goal = options.rows, options.cols, options.goal
    if rows is None and h.rows is not None and h.cols is not None:
        if MIN_SIDE <= h.rows <= MAX_SIDE and MIN_SIDE <= h.cols <= MAX_SIDE:
            rows, cols = h.rows, h.cols
        else:
            warn(f"ignoring the header's size {h.rows}x{h.cols} (sides must be {MIN_SIDE}..{MAX_SIDE})")
    if goal is None and h.goal is not None:
        if MIN_GOAL <= h.goal <= MAX_GOAL and h.goal & (h.goal - 1) == 0:
            goal = h.goal
        else:
            warn(f"ignoring the header's goal {h.goal} (a power of two {MIN_GOAL}..{MAX_GOAL})")
    seed = options.seed if options.seed is not None else h.seed
    if seed is None:
        seed = random_seed()
        if header is not None:
            warn(f"the header has no usable seed; playing seed {seed} instead")
    return Game(rows or DEFAULT_SIZE, cols or DEFAULT_SIZE, goal or DEFAULT_GOAL, seed)


def _start_event(game: Game) -> dict:  # type: ignore[type-arg]
    start = event(game, "start", False, None)
    start.update(rows=game.rows, cols=game.cols, goal=game.goal, version=__version__)
    return start


def play_piped(
    options: Options,
    stdin: IO[Any],
    stdout: IO[str],
    warn: Callable[[str], None],
    env: Mapping[str, str],
    recorder: Recorder,
    random_seed: Callable[[], int],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    from .terminal import ChunkReader, hangup_signals, quiet_terminal, shield_hangups, terminal_size, write_all

    reader = ChunkReader(stdin.fileno())
    regular_file = _is_regular_file(stdin)
    header, pending = _read_header(reader, None if regular_file else HEADER_WAIT)
    game = _resolve(options, header, random_seed, warn)
    session = Session(game)
    recorder.start(game.seed, game.rows, game.cols, game.goal)
    decoder = KeyDecoder(comments=True)

    screen: Optional[Screen] = None
    if options.json:
        emit_json = _json_writer(stdout)
        emit_json(_start_event(game))
    elif _isatty(stdout):
        out_fd = stdout.fileno()
        screen = Screen(
            lambda text: write_all(out_fd, text.encode("utf-8", "replace")),
            lambda: terminal_size(out_fd),
            _color_depth(options, stdout, env),
            env,
            replay=True,
        )
        screen.note = f"replay · seed {game.seed}"

    def take(actions: List[Action]) -> bool:
        """Apply actions; False once the game is quit."""
        for action in actions:
            if options.delay and (screen is not None or options.json):
                sleep(options.delay)
            outcome: Outcome = session.apply(action)
            recorder.action(action)
            if options.json:
                emit_json(event(game, ACTION_NAMES[action], outcome.moved, outcome.spawn))
            elif screen is not None:
                screen.show(session)
            if session.quit:
                return False
        return True

    def play() -> None:
        going = take(decoder.feed(pending))
        while going:
            data = reader.read()
            if not data:
                break
            going = take(decoder.feed(data))

    if screen is None:
        play()
    else:
        # Drawing on a terminal: restore it (cursor, echo) whatever ends the replay.
        with hangup_signals(), quiet_terminal(stdout.fileno()):
            try:
                screen.show(session)
                play()
            finally:
                shield_hangups()
                with suppress(OSError):
                    screen.close()
    if not options.json and screen is None:
        from .render import View, summary_text

        stdout.write(summary_text(View.of(session), _color_depth(options, stdout, env)))
        stdout.flush()
    return EXIT_OK


def _json_writer(stdout: IO[str]) -> Callable[[Any], None]:
    dumps = json.JSONEncoder(separators=(",", ":")).encode

    def emit(obj: Any) -> None:
        stdout.write(dumps(obj) + "\n")
        stdout.flush()

    return emit


def _is_regular_file(stream: IO[Any]) -> bool:
    import stat

    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


# -- interactive play ---------------------------------------------------------


def play_terminal(
    options: Options,
    stdin: IO[Any],
    stdout: IO[str],
    warn: Callable[[str], None],
    env: Mapping[str, str],
    recorder: Recorder,
    random_seed: Callable[[], int],
) -> int:
    from .storage import Keeper
    from .terminal import open_console

    rows, cols, goal = options.rows or DEFAULT_SIZE, options.cols or DEFAULT_SIZE, options.goal or DEFAULT_GOAL
    notes: List[str] = []  # shown under the board once play has started

    keeper = Keeper(env, rows, cols, goal, warn)
    try:
        resumed = keeper.resume()
        if resumed is not None and options.seed is not None:
            # --seed asks for another game: the unfinished one is kept aside.
            keeper.set_aside()
            resumed = None
        if resumed is not None:
            game = resumed.game
            recorder.start(resumed.seed, rows, cols, goal, resumed.keys)
            if options.new:
                # A new game as the `r` key starts one: `u` brings the old back.
                game.restart()
                keeper.append(Action.RESTART)
                recorder.action(Action.RESTART)
        else:
            seed = options.seed if options.seed is not None else random_seed()
            game = Game(rows, cols, goal, seed)
            keeper.begin(game)
            recorder.start(game.seed, rows, cols, goal)
        session = Session(game, keeper.best())
        for message in keeper.drain_warnings():
            warn(message)
        keeper.warn = recorder.warn = notes.append  # from here on the board is up: warn on it
        return _terminal_loop(session, options, stdin, stdout, env, recorder, keeper, notes, open_console)
    finally:
        keeper.close()


def _terminal_loop(
    session: Session,
    options: Options,
    stdin: IO[Any],
    stdout: IO[str],
    env: Mapping[str, str],
    recorder: Recorder,
    keeper: Any,
    notes: List[str],
    open_console: Any,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    from .terminal import ScreenHooks, shield_hangups

    decoder = KeyDecoder(comments=False)
    screen: Optional[Screen] = None
    stored_best = session.best
    best_written_at = clock()

    def redraw() -> None:
        if screen is not None:
            screen.show(session)

    def leave() -> None:
        if screen is not None:
            screen.close()

    with open_console(stdin, stdout, ScreenHooks(redraw, leave)) as console:
        screen = Screen(
            console.write,
            console.size,
            _color_depth(options, stdout, env, console.legacy),
            env,
            legacy=console.legacy,
        )
        try:
            screen.show(session)
            while True:
                for action in console.read_actions(decoder):
                    if not screen.fits and action is not Action.QUIT:
                        continue  # no playing blind while the board cannot be shown
                    outcome = session.apply(action)
                    recorder.action(action)
                    if outcome.moved:
                        keeper.append(action)  # saved before the frame shows it
                    if session.quit:
                        break
                screen.note = notes[-1] if notes else ""
                # One frame for everything read at once: typed-ahead keys are
                # all played, and the screen catches up in a single repaint.
                screen.show(session)
                if session.quit:
                    break
                # The best score is written at most once a second (a write
                # costs up to ~10 ms here) and at the end; if the game is
                # killed in between, resuming the save recovers it.
                if session.best > stored_best and clock() - best_written_at >= BEST_WRITE_INTERVAL:
                    stored_best = keeper.record_best(session.best)
                    session.best = max(session.best, stored_best)
                    best_written_at = clock()
        finally:
            shield_hangups()
            if session.best > stored_best:
                keeper.record_best(session.best)
            with suppress(OSError, Hangup):  # the window may be gone already
                screen.close()
    return EXIT_OK


# -- entry point --------------------------------------------------------------


def _random_seed() -> int:
    return int.from_bytes(os.urandom(4), "big")


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_options(argv)
    # Optional: under pythonw (no console) these are None.
    stdin = cast(Optional[IO[Any]], sys.stdin)
    stdout = cast(Optional[IO[str]], sys.stdout)
    stderr = sys.stderr
    env = os.environ
    if stdin is None or stdout is None:
        stderr.write("ansi2048: error: no standard input or output\n")
        return EXIT_ERROR
    record_stream: Optional[IO[str]] = None
    if options.record is not None:
        if _same_file(stdin, options.record):
            return _usage_error(f"argument --record: {options.record!r} is the input being replayed", stderr)
        try:
            record_stream = open(options.record, "w", encoding="ascii", newline="\n")  # noqa: SIM115
        except OSError as error:
            return _usage_error(f"argument --record: cannot write {options.record!r}: {error.strerror}", stderr)

    def warn(message: str) -> None:
        stderr.write(f"ansi2048: warning: {message}\n")
        stderr.flush()

    recorder = Recorder(record_stream, warn)
    try:
        # The keyboard game needs a terminal on both ends; anything else
        # (a pipe, a file, --json for a bot) is a stream of keys.
        if _isatty(stdin) and _isatty(stdout) and not options.json:
            return play_terminal(options, stdin, stdout, warn, env, recorder, _random_seed)
        return play_piped(options, stdin, stdout, warn, env, recorder, _random_seed)
    except RecordError as error:
        return _usage_error(f"argument --record: {error}", stderr)
    except BrokenPipeError:
        # The reader of our output left (a bot exited, `| head`): not an error.
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        return 128 + 2
    except Hangup as hangup:
        return 128 + hangup.signum
    except Exception as error:  # the one place that turns a crash into one line
        if env.get("ANSI2048_DEBUG"):
            raise
        stderr.write(f"ansi2048: error: {type(error).__name__}: {error} (ANSI2048_DEBUG=1 shows the traceback)\n")
        return EXIT_ERROR
    finally:
        recorder.close()


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at devnull so that flush cannot
    # raise a second BrokenPipeError.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
