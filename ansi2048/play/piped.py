"""Piped play: a stream of keys in, read as it arrives; out, JSON Lines for a
bot (``--json``), frames on a terminal, or the final board and a summary.

Piped games never touch the data directory: a replay is pure."""

from __future__ import annotations

import json
import os
import stat
from contextlib import ExitStack, suppress
from dataclasses import replace
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .. import __version__
from ..game.engine import Game, check_goal, check_size, default_goal
from ..game.keys import Action
from ..game.limits import DEFAULT_SIZE
from ..game.protocol import start_event
from ..game.session import Session
from ..loop.events import Draw, Key, Keys, KeysEnded, Tick
from ..loop.state import Play, Settings
from ..loop.step import next_due, start, step
from ..options.context import Context, Options
from ..options.parser import EXIT_OK
from ..records.recording import Assisted, FirstLine, Header, Item
from ..records.replay import Steps, body_decoder, finish, newer_rules
from ..render.cast import HEADLESS_SIZE, REPLAY_STEP
from ..render.frame import View, summary_text
from ..render.motion import SETTLE_SECONDS
from ..render.style import choose_depth
from ..terminal import quiet_terminal
from ..terminal.signals import hangup_signals, shield_hangups
from ..terminal.streams import ChunkReader, isatty, terminal_size, write_all
from .performer import BestWriter, BlockingDriver, NoStore, Performer
from .screen import Screen, color_depth, palette_for, wants_motion

__all__ = ["PipedDriver", "daily_options", "json_writer", "piped_steps", "play_piped", "resolve_game", "write_summary"]


class _Given:
    """Keys given whole (``--replay-best``), read as a pipe is: one chunk, then the end."""

    def __init__(self, data: bytes) -> None:
        self._data: Optional[bytes] = data

    def read(self, timeout: Optional[float] = None) -> bytes:
        data, self._data = self._data or b"", None
        return data


def _read_first_line(reader: Union[ChunkReader, _Given]) -> Tuple[Optional[Header], bytes]:
    """The recording header at the start of the input, if there is one, and
    the bytes read past it. Waits as long as the input takes to say (no
    timeout: a recording piped in late is still a recording)."""
    first = FirstLine()
    while True:
        data = reader.read()
        rest = first.feed(data) if data else first.finish()
        if rest is not None:
            return first.header, rest


def daily_options(ctx: Context) -> Options:
    """The run's options, with ``--daily`` made the seed it stands for:
    today's (UTC) game, in every mode. Like ``--seed``, it wins over a
    recording's header."""
    options = ctx.options
    if not options.daily:
        return options
    from ..records.history import daily_seed
    from ..storage.history_file import utc_date

    return replace(options, seed=daily_seed(utc_date(ctx.now())))


def resolve_game(
    options: Options, header: Optional[Header], random_seed: Callable[[], int], warn: Callable[[str], None]
) -> Game:
    """Explicit options win over the recording's header, which wins over defaults."""
    h = header or Header()
    rows, cols, goal = options.rows, options.cols, options.goal
    newer = newer_rules(h)
    if newer:  # (a ranked game's verification refuses it: recorded under other rules)
        warn(f"this recording was {newer}: replayed by this version's rules, it may not end as it did")
    for name in h.bad:
        if name != "seed":  # said below, with the seed played instead
            warn(f"ignoring the header's {name}: malformed")
    if rows is None and h.rows is not None and h.cols is not None:
        try:
            check_size(h.rows, h.cols)
            rows, cols = h.rows, h.cols
        except ValueError as error:
            warn(f"ignoring the header's size {h.rows}x{h.cols} ({error})")
    if goal is None and h.goal is not None:
        try:
            check_goal(h.goal, rows or DEFAULT_SIZE, cols or DEFAULT_SIZE)
            goal = h.goal
        except ValueError as error:
            warn(f"ignoring the header's goal {h.goal} ({error})")
    seed = options.seed if options.seed is not None else h.seed
    if seed is None:
        seed = random_seed()
        if header is not None:
            why = "malformed seed" if "seed" in h.bad else "no usable seed"
            warn(f"{why} in the header; playing seed {seed}")
    rows, cols = rows or DEFAULT_SIZE, cols or DEFAULT_SIZE
    return Game(rows, cols, goal or default_goal(rows, cols), seed)


def json_writer(stdout: IO[str]) -> Callable[[Dict[str, Any]], None]:
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


def play_piped(ctx: Context, keys: Optional[bytes] = None, day: str = "") -> int:
    """Play the keys on stdin, or ``keys`` (a recording) if given. ``day``:
    the game is that day's served daily game, whose seed is not to be shown
    (a cast of it over SSH): the title, caption and header name the day."""
    return finish(piped_steps(ctx, keys, day))


def piped_steps(ctx: Context, keys: Optional[bytes] = None, day: str = "") -> Steps[int]:
    """:func:`play_piped` a key at a time: it yields after each key played
    (a cast made on a server's event loop runs other work between them)."""
    # Given keys (--replay-best) are a recording whose header names its game.
    options, stdout = (daily_options(ctx) if keys is None else ctx.options), ctx.stdout
    reader: Union[ChunkReader, _Given] = _Given(keys) if keys is not None else ChunkReader(ctx.stdin.fileno())
    emit_json = json_writer(stdout)
    game, header, pending = _game_of(ctx, options, reader, emit_json if options.json else None, given=keys is not None)
    session = Session(game, undo=not options.no_undo, keep_keys=False)
    ctx.recorder.start(game.seed, game.rows, game.cols, game.goal)
    # Frames go to a terminal to watch, or only into the --cast file.
    watching = isatty(stdout) and not options.json
    named = f"daily {day}" if day else f"seed {game.seed}"
    screen, size = _replay_screen(ctx, options, game, watching, f"ansi2048 replay {game.rows}x{game.cols} {named}")
    delay = options.delay or 0.0
    settings = Settings(
        # A replay watched slowly enough (--delay) shows its moves moving too.
        animate=watching and delay >= SETTLE_SECONDS and wants_motion(options, ctx.env),
        can_wait=False,
        replay=True,
        report=options.json,
        day=day,
        day_seed=game.seed if day else None,
    )
    caption = f"replay · {named}" if screen is not None else ""
    # No save; and without --record, no key need go to the recorder.
    recording = options.record is not None
    play = Play(session, settings, size(), note=caption, warning=caption, saving=False, recording=recording)
    store = NoStore()
    performer = Performer(
        screen,
        store,
        ctx.recorder,
        BestWriter(store.record_best, ctx.clock, 0),
        report=emit_json if options.json else None,
    )
    # Keys are played one by one (a frame or a report each, at --delay's
    # pace) unless nothing is shown or told: then a whole chunk of the pipe
    # goes in one step (``ansi2048 < keys``: a key costs its move and little else).
    one_by_one = screen is not None or options.json or delay > 0
    cast = ctx.cast

    def unwatched() -> bool:
        return not watching and cast is not None and cast.stopped

    def unseen(now: float, count: int) -> int:
        # Frames drawn for the cast alone that its viewer would not see (see
        # CastWriter.coalesced); on a terminal, every frame is drawn for it.
        return cast.coalesced(now, count) if cast is not None and not watching else 0

    driver = PipedDriver(
        play, performer, ctx.clock, ctx.sleep, delay if (watching or options.json) else 0.0, unwatched, unseen
    )

    def play_keys() -> Steps[None]:
        # A game's recording is read as the verification of a ranked game
        # reads it (records/replay.py): one reading, so ``ansi2048 --json <
        # game.keys`` ends on the board the server ranked or refused.
        decoder = body_decoder(header)
        driver.start()
        yield from driver.key_steps(decoder.feed(pending), one_by_one)
        while not driver.over:
            data = reader.read()
            if not data:
                break
            yield from driver.key_steps(decoder.feed(data), one_by_one)
        yield from driver.key_steps(decoder.finish(), one_by_one)
        driver.end()

    if not watching:
        yield from play_keys()
        if screen is not None:  # drawn for the cast alone
            screen.close()
    else:
        assert screen is not None
        # Drawing on a terminal: restore it (cursor, echo) whatever ends the
        # replay, shielded from a second signal while doing so.
        with hangup_signals():
            restore = ExitStack()
            try:
                restore.enter_context(quiet_terminal(stdout.fileno()))
                finish(play_keys())
            finally:
                with shield_hangups():
                    with suppress(OSError):
                        screen.close()
                    restore.close()
    if not options.json and not watching:
        write_summary(stdout, session, options, ctx.env)
    return EXIT_OK


class PipedDriver(BlockingDriver):
    """The loop driven by keys from a pipe (see :mod:`.performer` for the
    contract): keys as they are read, ``delay`` seconds apart (0: as fast
    as they come), the motion's timers in between; the AI is never asked."""

    def __init__(
        self,
        play: Play,
        performer: Performer,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        delay: float,
        unwatched: Callable[[], bool] = lambda: False,
        unseen: Callable[[float, int], int] = lambda now, count: 0,
    ) -> None:
        super().__init__(play, performer)
        self._clock = clock
        self._sleep = sleep
        self._delay = delay
        # True once the frames are seen by nobody (drawn for a --cast alone,
        # which has stopped): from then on none is drawn, and keys are played
        # as piped play plays them, a run at a time.
        self._unwatched = unwatched
        # How many of the next frames, drawn at a moment, nobody would see (a
        # --cast's frames closer together than a viewer can see): their keys
        # are played as a run, undrawn.
        self._unseen = unseen
        self._last_key = clock()  # when the last key was played

    @property
    def over(self) -> bool:
        """No key plays any more (q, or the input ended)."""
        return self.play.over

    def start(self) -> None:
        self.play, effects = start(self.play, self._clock(), autoplay=False)
        self.do(effects)

    def keys(self, items: Sequence[Item], one_by_one: bool) -> None:
        """Play ``items`` (a save's mark, never decoded from a pipe, is skipped)."""
        finish(self.key_steps(items, one_by_one))

    def key_steps(self, items: Sequence[Item], one_by_one: bool) -> Steps[None]:
        """:meth:`keys`, yielding after each key played (or run of keys played at once)."""
        keys: List[Key] = [item for item in items if not isinstance(item, Assisted)]
        if not keys:
            return
        if not one_by_one:  # (after q, step plays nothing more)
            self.feed(Keys(tuple(keys), 0.0))
            yield
            return
        # Never among the unseen: the last key of what was read (the input may
        # pause after it, and the cast must show where the game is), nor q
        # (its frame, the last, comes at its own time).
        drawn = keys.index(Action.QUIT) if Action.QUIT in keys else len(keys) - 1
        index = 0
        while index < len(keys) and not self.over:
            if self._unwatched():
                self.performer.draw_nothing()
                if not self._delay:  # (--json reports each key, and keeps its steps one by one)
                    self.feed(Keys(tuple(keys[index:]), 0.0))
                    yield
                    return
            if self._delay:
                self._wait_until(self._last_key + self._delay)
                self._last_key += self._delay
            elif index < drawn:
                now = self._clock()
                unseen = self._unseen(now, drawn - index)
                if unseen:
                    self._feed_undrawn(Keys(tuple(keys[index : index + unseen]), now))
                    index += unseen
                    yield
                    continue  # (the next key's frame is one a viewer sees)
            self.feed(Keys((keys[index],), self._clock()))
            index += 1
            yield

    def _feed_undrawn(self, event: Keys) -> None:
        """``event`` stepped as :meth:`feed` does, its frames left undrawn:
        the next frame drawn shows the state it led to. Should it end the
        game, its last frame is drawn all the same: none comes after."""
        self.play, effects = step(self.play, event)
        self.do(effects if self.play.over else [effect for effect in effects if not isinstance(effect, Draw)])

    def end(self) -> None:
        """The input has ended: the last move's motion plays out, then the last frame."""
        while not self.over and self.play.moving is not None:
            due = next_due(self.play)
            assert due is not None  # a motion always has its next frame due
            self._sleep(max(0.0, due - self._clock()))
            self.feed(Tick(max(due, self._clock())))
        if not self.over:
            self.feed(KeysEnded())

    def _wait_until(self, moment: float) -> None:
        """Until ``moment``, the frames the loop's timers ask for (the
        motion, the "+N" fading), each at its time."""
        while True:
            due = next_due(self.play)
            if due is None or due > moment:
                break
            self._sleep(max(0.0, due - self._clock()))
            self.feed(Tick(max(due, self._clock())))
        self._sleep(max(0.0, moment - self._clock()))


def _game_of(
    ctx: Context,
    options: Options,
    reader: Union[ChunkReader, _Given],
    emit_json: Optional[Callable[[Dict[str, Any]], None]],
    given: bool,
) -> Tuple[Game, Optional[Header], bytes]:
    """The game the input is a recording of (its header's, else the options'),
    the header, and the bytes read past it; a bot (``emit_json``) is told the game."""
    if emit_json is not None and not given and not _is_regular_file(ctx.stdin):
        # A bot may wait for the start object before it sends a key: it comes
        # at once, and again for the game a recording header sets up.
        game = resolve_game(options, None, ctx.random_seed, ctx.warn)
        emit_json(start_event(game, __version__))
        header, pending = _read_first_line(reader)
        if header is not None:
            drawn = game.seed
            game = resolve_game(options, header, lambda: drawn, ctx.warn)
            emit_json(start_event(game, __version__))
        return game, header, pending
    # Nothing to show before the input says which game it is (a file or
    # given keys say at once): wait for it.
    header, pending = _read_first_line(reader)
    game = resolve_game(options, header, ctx.random_seed, ctx.warn)
    if emit_json is not None:
        emit_json(start_event(game, __version__))
    return game, header, pending


def _replay_screen(
    ctx: Context, options: Options, game: Game, watching: bool, title: str
) -> Tuple[Optional[Screen], Callable[[], Tuple[int, int]]]:
    """The screen a replay is drawn on: the terminal (``watching``), or only
    the ``--cast`` file, drawn as this terminal would show it; none without
    either. And the size it draws at."""
    out_fd = ctx.stdout.fileno() if watching else -1

    def write(text: str) -> None:
        if watching:
            write_all(out_fd, text.encode("utf-8", "replace"))

    def size() -> Tuple[int, int]:
        return terminal_size(out_fd) if watching else HEADLESS_SIZE

    if not watching and ctx.cast is None:
        return None, size
    depth = color_depth(options, ctx.stdout, ctx.env) if watching else choose_depth(options.color, True, ctx.env)
    frames: Callable[[str], None] = write
    if ctx.cast is not None:
        # --delay 0 is no pace at all: the cast keeps the time the replay took.
        ctx.cast.step = REPLAY_STEP if options.delay is None else options.delay
        frames = ctx.cast.tee(write, size, title)
    return Screen(frames, size, depth, ctx.env, palette=palette_for(options)), size


def write_summary(stdout: IO[str], session: Session, options: Options, env: Mapping[str, str]) -> None:
    """The final board and one line of numbers, for a pipe or a file."""
    stdout.write(summary_text(View.of(session), color_depth(options, stdout, env), palette_for(options)))
    stdout.flush()
