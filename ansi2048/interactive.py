"""Interactive play: the keyboard game on a terminal, kept between runs.

The loop is given its console (``terminal.open_console`` by default) and
its clock through the :class:`~.context.Context`, so tests drive it
in-process with a scripted console and a fake clock."""

from __future__ import annotations

from contextlib import suppress
from typing import IO, Any, Callable, ContextManager, List, Optional, Tuple

from .autoplay import LOADING_NOTE, Assist
from .context import Context, Options
from .engine import Game, Slide, default_goal, trace_move
from .history import utc_date, utc_timestamp
from .keys import Action, KeyDecoder
from .limits import DEFAULT_SIZE
from .recording import Item, Reseed
from .records import Record, daily_seed
from .render.motion import SETTLE_SECONDS
from .render.repaint import ERASE_LINE
from .screen import Motion, Screen, color_depth, palette_for, wants_motion
from .session import Played, Run, Session
from .storage import Keeper
from .terminal.console import Console, ScreenHooks
from .terminal.signals import Hangup, shield_hangups

__all__ = [
    "BEST_WRITE_INTERVAL",
    "NO_UNDO_NOTE",
    "PROGRESS_AFTER",
    "BestWriter",
    "GameKeeper",
    "OpenConsole",
    "ResumeProgress",
    "play_terminal",
]

# Seconds between writes of a rising best score during play: a write costs
# up to ~10 ms here, which the next key should not wait for.
BEST_WRITE_INTERVAL = 1.0
# Seconds a resume may take before it says how far it is.
PROGRESS_AFTER = 1.0

EXIT_OK = 0

# Shown for one frame when u is pressed in a game without undo.
NO_UNDO_NOTE = "undo is off (--no-undo)"
# Shown while the AI loads, on the first t or p (ASCII: any depth).

OpenConsole = Callable[[IO[Any], IO[Any], ScreenHooks], ContextManager[Console]]


class BestWriter:
    """Writes a rising best score at most once per ``interval`` seconds of
    ``clock``, and whatever is left at the end (``flush``). If the game is
    killed in between, resuming its save recovers the best it reached."""

    def __init__(
        self,
        store: Callable[[int], int],
        clock: Callable[[], float],
        stored: int,
        interval: float = BEST_WRITE_INTERVAL,
    ) -> None:
        self._store = store  # writes a best, returns the best now stored
        self._clock = clock
        self._interval = interval
        self.stored = stored
        self._written_at = clock()

    def offer(self, best: int, urgent: bool = False) -> int:
        """Write ``best`` if it is higher and the interval has passed (or
        ``urgent``: nothing else would recover it after a kill); the best to
        show (another game may have stored a higher one)."""
        if best > self.stored and (urgent or self._clock() - self._written_at >= self._interval):
            self.stored = self._store(best)
            self._written_at = self._clock()
        return max(best, self.stored)

    def flush(self, best: int) -> None:
        if best > self.stored:
            self.stored = self._store(best)


class GameKeeper:
    """Puts finished games in the history, dated by ``now``. A game can end
    more than once (game over, then r): the same game with the same keys is
    kept once. ``daily`` marks the day's game (the one from its seed)."""

    def __init__(self, keeper: Keeper, now: Callable[[], float], daily: Optional[str]) -> None:
        self._keeper = keeper
        self._now = now
        self._daily = daily
        self._last: Optional[Played] = None

    def keep(self, played: Optional[Played]) -> None:
        if played is None or played == self._last:
            return
        self._last = played
        daily = self._daily if self._daily is not None and played.seed == daily_seed(self._daily) else None
        self._keeper.keep(Record.of(played, utc_timestamp(self._now()), daily))


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
        from .terminal import open_console as platform_console

        open_console = platform_console
    options, recorder = ctx.options, ctx.recorder
    rows, cols = options.rows or DEFAULT_SIZE, options.cols or DEFAULT_SIZE
    goal = options.goal or default_goal(rows, cols)
    notes: List[str] = []  # shown under the board once play has started

    # The daily game: today's (UTC) date is its seed, for everyone.
    daily = utc_date(ctx.now()) if options.daily else None
    keeper = Keeper(ctx.env, rows, cols, goal, ctx.warn, daily)
    games = GameKeeper(keeper, ctx.now, daily)
    try:
        progress = ResumeProgress(ctx.stdout, ctx.clock)
        resumed = keeper.resume(progress)
        progress.end()
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
            session = Session(resumed.game, keeper.best(), resumed.runs, undo=undo)
            recorder.start(resumed.seed, rows, cols, goal, resumed.items())
            if options.new or restart_seed is not None:
                # A new game as the `r` key starts one, `u` brings the old one
                # back; --seed (or the day) names the new game's seed, saved
                # as a directive.
                restart: Item = Action.RESTART if restart_seed is None else Reseed(restart_seed)
                games.keep(session.restart(restart_seed).ended)
                keeper.append(restart)
                recorder.action(restart)
        else:
            if daily is not None:
                seed = daily_seed(daily)
            else:
                seed = options.seed if options.seed is not None else ctx.random_seed()
            game = Game(rows, cols, goal, seed)
            keeper.begin(game)
            recorder.start(game.seed, rows, cols, goal)
            session = Session(game, keeper.best(), undo=undo)
        for message in keeper.drain_warnings():
            ctx.warn(message)
        keeper.warn = recorder.warn = notes.append  # from here on the board is up: warn on it
        restarted = options.new or restart_seed is not None
        greeting = _resumed_note(session.game.moves) if resumed is not None and not restarted else ""
        status = _loop(session, ctx, keeper, games, notes, open_console, greeting)
        if on_end is not None:
            on_end(session)
        return status
    finally:
        keeper.close()


def _resumed_note(moves: int) -> str:
    """The note on the first frame of a resumed game (ASCII: any depth)."""
    return f"resumed your game: {moves} move{'' if moves == 1 else 's'}"


def _farewell(options: Options, rows: int, cols: int, kept: bool) -> str:
    """The last frame's line instead of the keys, once the player quits:
    where the game went, and the command that brings it back."""
    if not kept:
        return "this game could not be saved (see the warning above)"
    command = "ansi2048"
    if options.daily:
        command += " --daily"
    if options.rows is not None:
        command += f" --size {rows}" if rows == cols else f" --size {rows}x{cols}"
    if options.goal is not None:
        command += f" --goal {options.goal}"
    return f"game kept for next time: {command} resumes it"


def _run_seed(runs: Optional[Tuple[Run, List[Run]]], game: Game) -> int:
    """The seed the game on the board started from."""
    return runs[0].seed if runs is not None else game.seed


def _loop(
    session: Session,
    ctx: Context,
    keeper: Keeper,
    games: GameKeeper,
    notes: List[str],
    open_console: OpenConsole,
    greeting: str = "",
) -> int:
    decoder = KeyDecoder(comments=False, extra=ctx.options.bindings, assist=True)
    screen: Optional[Screen] = None
    best = BestWriter(keeper.record_best, ctx.clock, session.best)

    def redraw() -> None:
        if screen is not None:
            screen.show(session)

    def leave() -> None:
        if screen is not None:
            screen.close()

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
            bindings=tuple((key.decode("ascii"), action) for key, action in ctx.options.bindings),
        )
        screen.note = greeting  # until the first key: then the latest warning, if any
        motion = Motion(console.key_ready, ctx.clock) if animates(ctx, console) else None
        helping = False  # the help screen is up
        assist = Assist(session, ctx, keeper, console.key_ready)

        def loading() -> None:
            assert screen is not None
            screen.note = LOADING_NOTE
            screen.show(session)

        assist.loading = loading
        if ctx.options.autoplay:
            assist.start()
        try:
            assist.show(screen)
            screen.show(session)
            while True:
                if helping:
                    # Any key closes the help and is used up doing so.
                    console.read_actions(decoder)
                    helping = False
                    screen.show(session)
                    continue
                refused = False
                stuck = ""  # a move that changed nothing: say so
                gained = 0
                pilot = assist.pilot
                if pilot.playing and screen.fits and not assist.key_ready(pilot.wait()):
                    # No key came before the AI's next move was due: it plays,
                    # as if its key had been typed.
                    move = assist.autoplayed()
                    actions = [move] if move is not None else []
                    autoplayed = True
                else:
                    actions = console.read_actions(decoder)
                    if actions:
                        assist.next_key()
                    autoplayed = False
                typed_at = ctx.clock()
                # One move read alone is shown moving; typed-ahead keys are
                # all played and the screen catches up in a single frame.
                # Autoplay's moves move too, when its pace leaves them the time.
                animated = (
                    motion is not None
                    and len(actions) == 1
                    and screen.fits
                    and (not autoplayed or 1.0 / pilot.pace >= SETTLE_SECONDS)
                )
                slides: Tuple[Slide, ...] = ()
                for action in actions:
                    if not screen.fits and action is not Action.QUIT:
                        continue  # no playing blind while the board cannot be shown
                    if not action.game:
                        if action is Action.HELP:
                            helping = True
                        else:
                            assist.key(action)  # the AI's keys: never the game's, nor saved or recorded
                        continue
                    if not autoplayed:
                        assist.took_over()  # any typed key of the game takes control back
                    game = session.game
                    before, score = game.cells, game.score
                    outcome = session.apply(action)
                    if outcome.refused:
                        # Not recorded: replayed where undo is on, it would undo.
                        refused = True
                        continue
                    ctx.recorder.action(action)
                    if outcome.moved:
                        keeper.append(action)  # saved before the frame shows it
                    games.keep(outcome.ended)
                    direction = action.direction
                    if direction is not None:
                        gained = game.score - score
                        stuck = "" if outcome.moved else f"can't move {direction.value}"
                        if animated and outcome.moved:
                            slides = trace_move(before, game.rows, game.cols, direction)
                    if session.quit:
                        break
                if helping:
                    screen.show_help(session)
                    continue
                screen.note = NO_UNDO_NOTE if refused else stuck or (notes[-1] if notes else "")
                assist.show(screen)
                if session.quit:
                    # The last frame says where the game went, not keys that no longer work.
                    game = session.game
                    screen.show(session, ending=_farewell(ctx.options, game.rows, game.cols, keeper.saving))
                    break
                if motion is not None and animated:
                    motion.play(screen, session, slides, typed_at, gained, shake=bool(stuck))
                screen.show(session, gained=gained)
                # Written at once when no later key will come to write it (the
                # game is over) or no save holds it meanwhile.
                session.best = best.offer(session.best, urgent=session.game.over or not keeper.saving)
                if motion is not None and gained and not pilot.playing:
                    # (While the AI plays, its next move comes first.)
                    motion.fade_gain(screen, session, typed_at)
        finally:
            # A second signal must not cut the saving and the restore short.
            with shield_hangups():
                best.flush(session.best)
                _keep_at_exit(session, keeper, games)
                with suppress(OSError, Hangup):  # the window may be gone already
                    screen.close()
    return EXIT_OK


def animates(ctx: Context, console: Console) -> bool:
    """Whether moves are shown moving: as :func:`.screen.wants_motion` says,
    and where frames can be timed and cut short (the legacy Windows console
    cannot repaint them cheaply)."""
    return wants_motion(ctx.options, ctx.env) and not console.legacy and console.key_ready is not None


def _keep_at_exit(session: Session, keeper: Keeper, games: GameKeeper) -> None:
    """Quitting a finished game (won, or over) ends it: into the history.
    An unfinished one stays in its save, to be resumed; its score may
    still be the best without undo or AI."""
    game = session.game
    if session.quit and (game.over or game.won):
        games.keep(session.played())
    elif game.moves and not (session.used_undo or session.assisted):
        keeper.record_unaided(game.score)
