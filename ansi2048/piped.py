"""Piped play: a stream of keys in, read as it arrives; out, JSON Lines for a
bot (``--json``), frames on a terminal, or the final board and a summary.

Piped games never touch the data directory: a replay is pure."""

from __future__ import annotations

import json
import os
import stat
from contextlib import ExitStack, suppress
from typing import IO, Any, Callable, Dict, List, Optional, Tuple

from . import __version__
from .context import Context, Options
from .engine import Game, check_goal, check_size
from .keys import Action
from .limits import DEFAULT_GOAL, DEFAULT_SIZE
from .protocol import ACTION_NAMES, event, start_event
from .recording import BodyDecoder, Header, Item, Reseed, apply_item, split_header, strip_bom
from .render.frame import View, summary_text
from .screen import Screen, color_depth
from .session import Session
from .terminal import quiet_terminal
from .terminal.signals import hangup_signals, shield_hangups
from .terminal.streams import ChunkReader, isatty, terminal_size, write_all

__all__ = ["HEADER_WAIT", "play_piped", "resolve_game"]

# How long a pipe may stay silent before the game starts without a header:
# long enough for `cat game.keys |` to deliver its first line, short enough
# that a bot waiting for the start object does not notice.
HEADER_WAIT = 0.5
_MAX_HEADER = 4096

EXIT_OK = 0


def _read_header(reader: ChunkReader, wait: Optional[float]) -> Tuple[Optional[Header], bytes]:
    """The recording header at the start of the input, if one comes in time,
    and the bytes read past it."""
    data = reader.read(timeout=wait)
    if not data:
        return None, b""
    data = strip_bom(data)
    while data.startswith(b"#") and b"\n" not in data and len(data) < _MAX_HEADER:
        more = reader.read()
        if not more:
            break
        data += more
    return split_header(data)


def resolve_game(
    options: Options, header: Optional[Header], random_seed: Callable[[], int], warn: Callable[[str], None]
) -> Game:
    """Explicit options win over the recording's header, which wins over defaults."""
    h = header or Header()
    rows, cols, goal = options.rows, options.cols, options.goal
    if rows is None and h.rows is not None and h.cols is not None:
        try:
            check_size(h.rows, h.cols)
            rows, cols = h.rows, h.cols
        except ValueError as error:
            warn(f"ignoring the header's size {h.rows}x{h.cols} ({error})")
    if goal is None and h.goal is not None:
        try:
            check_goal(h.goal)
            goal = h.goal
        except ValueError as error:
            warn(f"ignoring the header's goal {h.goal} ({error})")
    seed = options.seed if options.seed is not None else h.seed
    if seed is None:
        seed = random_seed()
        if header is not None:
            warn(f"the header has no usable seed; playing seed {seed} instead")
    return Game(rows or DEFAULT_SIZE, cols or DEFAULT_SIZE, goal or DEFAULT_GOAL, seed)


def _json_writer(stdout: IO[str]) -> Callable[[Dict[str, Any]], None]:
    dumps = json.JSONEncoder(separators=(",", ":")).encode

    def emit(obj: Dict[str, Any]) -> None:
        stdout.write(dumps(obj) + "\n")
        stdout.flush()

    return emit


def _is_regular_file(stream: IO[Any]) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def play_piped(ctx: Context) -> int:
    options, stdout = ctx.options, ctx.stdout
    reader = ChunkReader(ctx.stdin.fileno())
    header, pending = _read_header(reader, None if _is_regular_file(ctx.stdin) else HEADER_WAIT)
    game = resolve_game(options, header, ctx.random_seed, ctx.warn)
    session = Session(game)
    ctx.recorder.start(game.seed, game.rows, game.cols, game.goal)
    decoder = BodyDecoder()

    screen: Optional[Screen] = None
    emit_json = _json_writer(stdout)
    if options.json:
        emit_json(start_event(game, __version__))
    elif isatty(stdout):
        out_fd = stdout.fileno()
        screen = Screen(
            lambda text: write_all(out_fd, text.encode("utf-8", "replace")),
            lambda: terminal_size(out_fd),
            color_depth(options, stdout, ctx.env),
            ctx.env,
            replay=True,
        )
        screen.note = f"replay · seed {game.seed}"

    def take(actions: List[Item]) -> bool:
        """Apply actions; False once the game is quit."""
        for action in actions:
            if options.delay and (screen is not None or options.json):
                ctx.sleep(options.delay)
            outcome = apply_item(session, action)
            ctx.recorder.action(action)
            if options.json:
                name = ACTION_NAMES[Action.RESTART if isinstance(action, Reseed) else action]
                emit_json(event(game, name, outcome.moved, outcome.spawn))
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
        if going:
            take(decoder.finish())

    if screen is None:
        play()
    else:
        # Drawing on a terminal: restore it (cursor, echo) whatever ends the
        # replay, shielded from a second signal while doing so.
        with hangup_signals():
            restore = ExitStack()
            try:
                restore.enter_context(quiet_terminal(stdout.fileno()))
                screen.show(session)
                play()
            finally:
                with shield_hangups():
                    with suppress(OSError):
                        screen.close()
                    restore.close()
    if not options.json and screen is None:
        stdout.write(summary_text(View.of(session), color_depth(options, stdout, ctx.env)))
        stdout.flush()
    return EXIT_OK
