"""Interactive play: the keyboard game on a terminal, kept between runs.

The loop's decisions are the pure state machine of :mod:`.loop`; here is its
blocking terminal driver, which waits for events, answers the AI's effect
and has the :mod:`.performer` do the others. It is given its
console (``terminal.open_console`` by default, or any console over byte
streams: :func:`.terminal.console.stream_console`) and its clock through the
:class:`~.context.Context`, so tests play it in-process over in-memory
streams and a fake clock."""

from __future__ import annotations

from contextlib import suppress
from typing import IO, Any, Callable, ContextManager, List, Optional, Tuple

from ..game.engine import Game, default_goal
from ..game.keys import Action, KeyDecoder
from ..game.limits import DEFAULT_SIZE
from ..game.session import Run, Session
from ..loop.events import AIMoved, AIReady, AskAI, Event, Keys, Resized, Suspended, Tick
from ..loop.state import Play, Settings
from ..loop.step import closing_effects, next_due, start, step
from ..options.context import Context, Options
from ..options.parser import EXIT_OK
from ..records.history import daily_seed
from ..records.recording import Item, Reseed
from ..render.repaint import ERASE_LINE
from ..storage.data_dir import BoardStore
from ..storage.history_file import utc_date
from ..storage.save_file import Resumed
from ..terminal.console import Console, ScreenHooks
from ..terminal.signals import Hangup, shield_hangups
from .advisor import Advisor
from .performer import BestWriter, BlockingDriver, Performer
from .screen import Screen, color_depth, palette_for, wants_motion

__all__ = [
    "PROGRESS_AFTER",
    "OpenConsole",
    "ResumeProgress",
    "TerminalDriver",
    "play_terminal",
    "resumed_note",
]

# Seconds a resume may take before it says how far it is.
PROGRESS_AFTER = 1.0

OpenConsole = Callable[[IO[Any], IO[Any], ScreenHooks], ContextManager[Console]]


class ResumeProgress:
    """Says how far a long resume is, on one line of the terminal before the
    board is up; silent if the resume takes less than ``PROGRESS_AFTER``."""

    def __init__(self, stream: IO[str], clock: Callable[[], float]) -> None:
        self._stream = stream
        self._clock = clock
        self._started = clock()
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        if self._clock() - self._started < PROGRESS_AFTER:
            return
        percent = min(100, done * 100 // max(total, 1))
        if percent != self._shown:
            self._shown = percent
            self._write(f"\rresuming your saved game: {percent}%")

    def end(self) -> None:
        if self._shown >= 0:
            self._write("\r" + ERASE_LINE)

    def _write(self, text: str) -> None:
        with suppress(OSError):
            self._stream.write(text)
            self._stream.flush()


def play_terminal(
    ctx: Context, open_console: Optional[OpenConsole] = None, on_end: Optional[Callable[[Session], None]] = None
) -> int:
    """Resume or start the game for this board and play it on the terminal;
    ``on_end`` is given the session once the terminal is handed back."""
    if open_console is None:
        from ..terminal import open_console as platform_console

        open_console = platform_console
    options, recorder = ctx.options, ctx.recorder
    rows, cols = options.rows or DEFAULT_SIZE, options.cols or DEFAULT_SIZE
    goal = options.goal or default_goal(rows, cols)
    notes: List[str] = []  # shown under the board once play has started

    # The daily game: today's (UTC) date is its seed, for everyone.
    daily = utc_date(ctx.now()) if options.daily else None
    store = BoardStore(ctx.env, rows, cols, goal, ctx.warn, daily, ctx.now)
    try:
        progress = ResumeProgress(ctx.stdout, ctx.clock)
        resumed = store.resume(progress)
        progress.end()
        if store.put_aside is not None:  # an earlier day's daily game, unfinished: it ends here
            store.add_to_history(store.put_aside.game)
            notes.append(store.put_aside.note)
        if (
            resumed is not None
            and daily is not None
            and (options.new or _run_seed(resumed.runs, resumed.game) != daily_seed(daily))
        ):
            # The daily save holds another day's game (or --new asks for
            # today's afresh): today's starts as a restart into today's seed,
            # so `u` still brings the other one back.
            restart_seed: Optional[int] = daily_seed(daily)
        else:
            restart_seed = options.seed
        undo = not options.no_undo
        if resumed is not None:
            session = Session(resumed.game, store.best(), resumed.runs, undo=undo)
            if options.new or restart_seed is not None:
                # A new game as the `r` key starts one, `u` brings the old one
                # back; --seed (or the day) names the new game's seed, saved
                # as a directive.
                restart: Item = Action.RESTART if restart_seed is None else Reseed(restart_seed)
                store.add_to_history(session.restart(restart_seed).ended)
                store.append(restart)
            record_from = _start_recording(ctx, session, resumed)
        else:
            if daily is not None:
                seed = daily_seed(daily)
            else:
                seed = options.seed if options.seed is not None else ctx.random_seed()
            game = Game(rows, cols, goal, seed)
            store.begin(game)
            recorder.start(game.seed, rows, cols, goal)
            session = Session(game, store.best(), undo=undo)
            record_from = 0
        for message in store.drain_warnings():
            ctx.warn(message)
        store.warn = recorder.warn = notes.append  # from here on the board is up: warn on it
        restarted = options.new or restart_seed is not None
        if resumed is not None and not restarted:
            greeting = resumed_note(session.game.moves)
        else:
            # A note from before the board was up (an earlier day's daily
            # game set aside) greets the first frame.
            greeting = notes[-1] if notes else ""
        status = _loop(session, ctx, store, notes, open_console, greeting, daily, record_from)
        if on_end is not None:
            on_end(session)
        return status
    finally:
        with shield_hangups():  # a second signal must not cut the closing short either
            store.close()


def _start_recording(ctx: Context, session: Session, resumed: Resumed) -> int:
    """``--record`` over a resumed game begins with the game on the board:
    its seed in the header, then the keys that brought it where it is, so
    the header names the game the keys replay (not a game the save left
    behind). The runs behind it (an undo back into them stops the
    recording): the number returned."""
    game = session.game
    if resumed.runs is None:  # the save says nothing of its games: all of it
        ctx.recorder.start(resumed.seed, game.rows, game.cols, game.goal, resumed.items())
        return 0
    run, behind = session.runs()
    ctx.recorder.start(run.seed, game.rows, game.cols, game.goal, [Action(key) for key in run.keys])
    return len(behind)


def resumed_note(moves: int) -> str:
    """The note on the first frame of a resumed game (ASCII: any depth);
    none for a game of no move yet, which is no game to speak of resuming
    (a first connection's, a game quit before its first key)."""
    return f"resumed your game: {moves} move{'' if moves == 1 else 's'}" if moves else ""


def _command(program: str, options: Options, rows: int, cols: int) -> str:
    """The command that plays this board again (said on quitting), started
    as ``program`` started this game."""
    command = program
    if options.daily:
        command += " --daily"
    if options.rows is not None:
        command += f" --size {rows}" if rows == cols else f" --size {rows}x{cols}"
    if options.goal is not None:
        command += f" --goal {options.goal}"
    return command


def _run_seed(runs: Optional[Tuple[Run, List[Run]]], game: Game) -> int:
    """The seed the game on the board started from."""
    return runs[0].seed if runs is not None else game.seed


def _loop(
    session: Session,
    ctx: Context,
    store: BoardStore,
    notes: List[str],
    open_console: OpenConsole,
    greeting: str = "",
    daily: Optional[str] = None,
    record_from: int = 0,
) -> int:
    driver: Optional[TerminalDriver] = None

    def redraw() -> None:
        if driver is not None:
            driver.resized()

    def leave() -> None:
        if driver is not None:
            driver.feed(Suspended())

    with open_console(ctx.stdin, ctx.stdout, ScreenHooks(redraw, leave)) as console:
        write = console.write
        if ctx.cast is not None:
            game = session.game
            write = ctx.cast.tee(write, console.size, f"ansi2048 {game.rows}x{game.cols} seed {game.seed}")
        screen = Screen(
            write,
            console.size,
            color_depth(ctx.options, ctx.stdout, ctx.env, console.legacy),
            ctx.env,
            legacy=console.legacy,
            palette=palette_for(ctx.options),
        )
        game = session.game
        settings = Settings(
            animate=animates(ctx, console),
            can_wait=console.key_ready is not None,
            command=_command(ctx.program, ctx.options, game.rows, game.cols),
            day=daily or "",
            day_seed=daily_seed(daily) if daily is not None else None,
            record_from=record_from,
            bindings=tuple((key.decode("ascii"), action) for key, action in ctx.options.bindings),
            suspends=console.suspends,
        )
        play = Play(session, settings, console.size(), note=greeting, saving=store.saving)
        best = BestWriter(store.record_best, ctx.clock, session.best)
        driver = TerminalDriver(play, ctx, console, Performer(screen, store, ctx.recorder, best, notes))
        try:
            driver.start()
            driver.run()
        finally:
            # A second signal must not cut the saving and the restore short.
            with shield_hangups():
                for effect in closing_effects(driver.play):
                    driver.performer.perform(effect)
                with suppress(OSError, Hangup):  # the window may be gone already
                    screen.close()
    for message in driver.said_in_full:
        ctx.warn(message)
    return EXIT_OK


class TerminalDriver(BlockingDriver):
    """The blocking terminal driver (see :mod:`.performer` for the
    contract): waits for the next event (a key, or the timer
    :func:`.loop.next_due` sets), steps the state machine, answers the AI's
    effect by asking it, and has ``performer`` do the rest, in order."""

    def __init__(self, play: Play, ctx: Context, console: Console, performer: Performer) -> None:
        super().__init__(play, performer)
        self.console = console
        self._ctx = ctx
        self._ai_warning: List[str] = []
        self.said_in_full: List[str] = []  # warnings to repeat in full below the board at the end
        self._advisor = Advisor(ctx.options, self._ai_warning.append)
        self._decoder = KeyDecoder(comments=False, extra=ctx.options.bindings, assist=True)
        self._redrawn = False  # the console redrew during the last read

    def start(self) -> None:
        self.play, effects = start(self.play, self._ctx.clock(), self._ctx.options.autoplay)
        self.do(effects)
        # Once the first frame is out (it must not wait for this), the AI
        # loads in the background: the first hint is then as quick as later ones.
        self._advisor.warm_up(self.play.session.game.board)

    def run(self) -> None:
        """Until the player quits: wait for a key, or for the next timer."""
        clock, key_ready, size = self._ctx.clock, self.console.key_ready, self.console.size
        while not self.play.over:
            if size() != self.play.size:
                # The window's size is the truth: a console that cannot say
                # it changed (Windows while autoplay waits, a stream) is
                # followed all the same.
                self.feed(Resized(size()))
                continue
            due = next_due(self.play)
            if due is not None and key_ready is not None and not key_ready(max(0.0, due - clock())):
                self.feed(Tick(clock()))
                continue
            self._redrawn = False
            actions = self.console.read_actions(self._decoder)
            if actions or not self._redrawn:
                # (No actions after a resize: no key was typed. Keys that
                # are no action still close the help.)
                self.feed(Keys(tuple(actions), clock()))

    def resized(self) -> None:
        """The console says the window changed size, or is back from a suspend."""
        self._redrawn = True
        self.feed(Resized(self.console.size()))

    def feed(self, event: Event) -> None:
        if not self.play.ai_loaded and self._advisor.ready:
            self.play, _ = step(self.play, AIReady())
        super().feed(event)

    def ask(self, effect: AskAI) -> AIMoved:
        """The AI's answer, at once: this driver may block while it thinks
        (a hint takes milliseconds; autoplay waits for it anyway)."""
        direction = self._advisor.move(self.play.session.game)
        # Its warning in full (file, reason) is said once the terminal
        # is handed back; the board says it in a form that fits.
        warning = self._ai_warning[-1] if self._ai_warning else ""
        self.said_in_full += self._ai_warning
        self._ai_warning[:] = []
        return AIMoved(effect.purpose, direction, self._ctx.clock(), warning)


def animates(ctx: Context, console: Console) -> bool:
    """Whether moves are shown moving: as :func:`.screen.wants_motion` says,
    and where frames can be timed and cut short (the legacy Windows console
    cannot repaint them cheaply)."""
    return wants_motion(ctx.options, ctx.env) and not console.legacy and console.key_ready is not None
