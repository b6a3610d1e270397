"""One whole game played headless by the AI: ``--autoplay`` with stdout not
a terminal, or ``--json``. It reads no input, and keeps nothing in the data
directory (no history, no best score): a script may play thousands of AI
games without filling the player's records; ``--record`` or ``--json`` keep
a game.

On a terminal standard error, a progress line (moves, score, biggest tile)
is rewritten in place and cleared at the end. Ctrl-C stops the game between
two moves and still prints the summary (exit status 130)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import IO, Any, Callable, Iterator, Optional

from .. import __version__
from ..game.engine import Game
from ..game.protocol import start_event
from ..game.session import Session
from ..loop.events import AIMoved, AskAI, Tick
from ..loop.state import Play, Settings
from ..loop.step import next_due, start
from ..options.context import Context
from ..options.parser import EXIT_OK
from ..render.cast import HEADLESS_SIZE
from ..render.style import choose_depth
from ..terminal.streams import isatty, terminal_size
from .advisor import DEFAULT_PACE, Advisor
from .performer import BestWriter, BlockingDriver, NoStore, Performer
from .screen import Screen, palette_for

__all__ = ["EXIT_INTERRUPTED", "HeadlessDriver", "play_headless", "progress_text"]

EXIT_INTERRUPTED = 128 + 2  # Ctrl-C (SIGINT), as shells report it

# The progress line is rewritten at most this often: a move on a small board
# takes a millisecond, and a terminal write per move would cost more than it.
PROGRESS_INTERVAL = 0.1


def progress_text(game: Game) -> str:
    """The progress line's text: the summary's numbers, so far."""
    return f"autoplay: moves {game.moves}  score {game.score}  biggest {game.biggest}"


class _Progress:
    """The progress line on standard error, if that is a terminal (a log
    file or a pipe gets none): rewritten in place with a carriage return and
    padding, no control sequence, so even a dumb terminal shows it right."""

    def __init__(self, stream: Optional[IO[str]], clock: Callable[[], float]) -> None:
        self._stream = stream if stream is not None and isatty(stream) else None
        self._clock = clock
        self._due = 0.0
        self._shown = 0  # characters on the line now

    def show(self, game: Game, now: bool = False) -> None:
        """The line for ``game``, unless one was written less than
        PROGRESS_INTERVAL ago (``now``: whatever the time)."""
        if self._stream is None:
            return
        time = self._clock()
        if time < self._due and not now:
            return
        self._due = time + PROGRESS_INTERVAL
        width = self._width()
        text = progress_text(game)[:width]  # never wraps: \r must reach its start
        # Padded over what the last line left, but never past the window's
        # width now (it may have narrowed): padding that wraps leaves text.
        self._write("\r" + text.ljust(min(self._shown, width)))
        self._shown = len(text)

    def clear(self) -> None:
        if self._stream is not None and self._shown:
            self._write("\r" + " " * min(self._shown, self._width()) + "\r")
            self._shown = 0

    def _width(self) -> int:
        """The columns a line may take without wrapping: the window's, less one."""
        assert self._stream is not None
        try:
            columns, _ = terminal_size(self._stream.fileno())
        except (OSError, ValueError):  # no descriptor (a stand-in stream)
            columns = 80
        return max(0, columns - 1)

    def _write(self, text: str) -> None:
        assert self._stream is not None
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            self._stream = None  # standard error went away: the game goes on without it


class _Interrupt:
    """Ctrl-C for a headless game: it stops the game between two moves. At
    once while the AI thinks or a ``--delay`` passes (nothing has changed
    yet), otherwise once the move in hand is applied, recorded and reported,
    so the board, the recording and the JSON end on the same whole move. A
    Ctrl-C is never lost. SIGINT ignored by whoever started us (a background
    job) stays ignored."""

    def __init__(self) -> None:
        self.requested = False
        self._abortable = False

    def _handle(self, signum: int, frame: Optional[FrameType]) -> None:
        self.requested = True
        if self._abortable:
            raise KeyboardInterrupt

    @contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # only the main thread may set handlers: KeyboardInterrupt as usual
            return
        previous: Any = signal.getsignal(signal.SIGINT)
        if previous is not signal.default_int_handler:
            yield
            return
        signal.signal(signal.SIGINT, self._handle)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    @contextmanager
    def abortable(self) -> Iterator[None]:
        """A block Ctrl-C may cut short (KeyboardInterrupt)."""
        self._abortable = True
        try:
            if self.requested:
                raise KeyboardInterrupt
            yield
        finally:
            self._abortable = False


def play_headless(ctx: Context) -> int:
    """The AI plays one whole game, to game over, reading no input: one JSON
    object per move with ``--json`` (the protocol's, the start first), the
    final board and summary otherwise. 130 if Ctrl-C stopped it first."""
    from .piped import daily_options, json_writer, resolve_game, write_summary

    options = daily_options(ctx)
    game = resolve_game(options, None, ctx.random_seed, ctx.warn)
    # No history is written: its runs need not keep the keys (memory stays
    # flat however long the game; a 5x5 game runs to tens of thousands of moves).
    session = Session(game, keep_keys=False)
    session.assist()
    ctx.recorder.start(game.seed, game.rows, game.cols, game.goal)
    emit = json_writer(ctx.stdout) if options.json else None
    if emit is not None:
        emit(start_event(game, __version__))
    # Not between JSON lines on the same terminal: each would land on its line.
    progress = _Progress(None if emit is not None and isatty(ctx.stdout) else ctx.stderr, ctx.clock)

    def warn(message: str) -> None:
        progress.clear()  # a warning on a line of its own
        ctx.warn(message)

    screen: Optional[Screen] = None
    if ctx.cast is not None:
        # --cast: the game as a terminal would show it, a frame per move at
        # autoplay's default pace (or --delay; 0: the time the AI took).
        ctx.cast.step = 1.0 / DEFAULT_PACE if options.delay is None else options.delay
        title = f"ansi2048 --autoplay {game.rows}x{game.cols} seed {game.seed}"
        frames = ctx.cast.tee(lambda text: None, lambda: HEADLESS_SIZE, title)
        depth = choose_depth(options.color, True, ctx.env)
        screen = Screen(frames, lambda: HEADLESS_SIZE, depth, ctx.env, palette=palette_for(options))
    # The AI's keys are not typed by a watcher: they play as a replay's do.
    settings = Settings(animate=False, can_wait=True, replay=True, report=emit is not None)
    caption = f"autoplay, seed {game.seed}" if screen is not None else ""
    play = Play(
        session,
        settings,
        HEADLESS_SIZE,
        note=caption,
        warning=caption,
        ai_loaded=True,  # (loaded on the first move, with no frame to say so)
        saving=False,
        recording=options.record is not None,
    )
    store = NoStore()
    performer = Performer(screen, store, ctx.recorder, BestWriter(store.record_best, ctx.clock, 0), report=emit)
    driver = HeadlessDriver(play, performer, Advisor(options, warn), ctx.sleep, options.delay or 0.0)
    progress.show(game, now=True)
    try:
        driver.run(progress)
    finally:
        progress.clear()
    if screen is not None:
        screen.close()
    if emit is None:
        write_summary(ctx.stdout, session, options, ctx.env)
    return EXIT_INTERRUPTED if driver.interrupted else EXIT_OK


class HeadlessDriver(BlockingDriver):
    """The loop driven by the AI alone (see :mod:`.performer` for the
    contract): autoplay's timer comes due at once (or ``delay`` seconds
    apart), the AI's answer is awaited, and Ctrl-C stops it between two
    moves (:class:`_Interrupt`)."""

    def __init__(
        self, play: Play, performer: Performer, advisor: Advisor, sleep: Callable[[float], None], delay: float
    ) -> None:
        super().__init__(play, performer)
        self._advisor = advisor
        self._sleep = sleep
        self._delay = delay
        self._interrupt = _Interrupt()

    @property
    def interrupted(self) -> bool:
        return self._interrupt.requested

    def run(self, progress: _Progress) -> None:
        """Until the AI finds no move, or Ctrl-C."""
        game = self.play.session.game
        with self._interrupt.installed():
            self.play, effects = start(self.play, 0.0, autoplay=True)
            self.do(effects)
            while not self._interrupt.requested and not game.over:  # (over: no move changes the board)
                due = next_due(self.play)
                if due is None:
                    break  # autoplay stopped: the AI found no move
                # No clock: the game's time is autoplay's, so every move is due at once.
                self.feed(Tick(due))
                progress.show(game)

    def ask(self, effect: AskAI) -> Optional[AIMoved]:
        """The AI's move, after ``delay``; None if Ctrl-C came first (at
        once: nothing has changed yet)."""
        try:
            with self._interrupt.abortable():
                direction = self._advisor.move(self.play.session.game)
                if direction is not None and self._delay:
                    self._sleep(self._delay)
        except KeyboardInterrupt:
            self._interrupt.requested = True
            return None
        # The game's time is autoplay's own: the move is made when it was due.
        pilot = self.play.pilot
        return AIMoved(effect.purpose, direction, pilot.due if pilot is not None else 0.0)
