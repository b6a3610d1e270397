"""Interactive play: the keyboard game on a terminal, kept between runs.

The loop is given its console (``terminal.open_console`` by default) and
its clock through the :class:`~.context.Context`, so tests drive it
in-process with a scripted console and a fake clock."""

from __future__ import annotations

from contextlib import suppress
from typing import IO, Any, Callable, ContextManager, List, Optional, Tuple

from .autoplay import Advisor, Pilot
from .context import Context, Options
from .engine import Direction, Game, default_goal
from .history import utc_date, utc_timestamp
from .keys import Action, KeyDecoder, move_action
from .limits import DEFAULT_SIZE
from .records import Record, daily_seed
from .screen import Screen, color_depth, palette_for
from .session import Played, Run, Session
from .storage import Keeper
from .terminal.console import Console, ScreenHooks
from .terminal.signals import Hangup, shield_hangups

__all__ = ["BEST_WRITE_INTERVAL", "NO_UNDO_NOTE", "BestWriter", "GameKeeper", "OpenConsole", "play_terminal"]

# Seconds between writes of a rising best score during play: a write costs
# up to ~10 ms here, which the next key should not wait for.
BEST_WRITE_INTERVAL = 1.0

EXIT_OK = 0

# Shown for one frame when u is pressed in a game without undo.
NO_UNDO_NOTE = "undo is off (--no-undo)"

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

    def offer(self, best: int) -> int:
        """Write ``best`` if it is higher and the interval has passed; the
        best to show (another game may have stored a higher one)."""
        if best > self.stored and self._clock() - self._written_at >= self._interval:
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
        resumed = keeper.resume()
        if resumed is not None and (
            options.seed is not None
            or (daily is not None and (options.new or _run_seed(resumed.runs, resumed.game) != daily_seed(daily)))
        ):
            # --seed asks for another game, and a daily save may hold another
            # day's game (or --new asks for today's afresh): the unfinished
            # one is kept aside.
            keeper.set_aside()
            resumed = None
        undo = not options.no_undo
        if resumed is not None:
            session = Session(resumed.game, keeper.best(), resumed.runs, undo=undo)
            recorder.start(resumed.seed, rows, cols, goal, resumed.keys)
            if options.new:
                # A new game as the `r` key starts one: `u` brings the old back.
                games.keep(session.apply(Action.RESTART).ended)
                keeper.append(Action.RESTART)
                recorder.action(Action.RESTART)
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
        greeting = _resumed_note(session.game.moves) if resumed is not None and not options.new else ""
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
    decoder = KeyDecoder(comments=False, extra=ctx.options.bindings)
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
        )
        screen.note = greeting  # until the first key: then the latest warning, if any
        try:
            screen.show(session)
            while True:
                refused = False
                for action in console.read_actions(decoder):
                    if not screen.fits and action is not Action.QUIT:
                        continue  # no playing blind while the board cannot be shown
                    outcome = session.apply(action)
                    if outcome.refused:
                        # Not recorded: replayed where undo is on, it would undo.
                        refused = True
                        continue
                    ctx.recorder.action(action)
                    if outcome.moved:
                        keeper.append(action)  # saved before the frame shows it
                    games.keep(outcome.ended)
                    if session.quit:
                        break
                screen.note = NO_UNDO_NOTE if refused else notes[-1] if notes else ""
                if session.quit:
                    # The last frame says where the game went, not keys that no longer work.
                    game = session.game
                    screen.show(session, ending=_farewell(ctx.options, game.rows, game.cols, keeper.saving))
                    break
                # One frame for everything read at once: typed-ahead keys are
                # all played, and the screen catches up in a single repaint.
                screen.show(session)
                session.best = best.offer(session.best)
        finally:
            # A second signal must not cut the saving and the restore short.
            with shield_hangups():
                best.flush(session.best)
                _keep_at_exit(session, keeper, games)
                with suppress(OSError, Hangup):  # the window may be gone already
                    screen.close()
    return EXIT_OK


def _keep_at_exit(session: Session, keeper: Keeper, games: GameKeeper) -> None:
    """Quitting a finished game (won, or over) ends it: into the history.
    An unfinished one stays in its save, to be resumed; its score may
    still be the best without undo or AI."""
    game = session.game
    if session.quit and (game.over or game.won):
        games.keep(session.played())
    elif game.moves and not (session.used_undo or session.assisted):
        keeper.record_unaided(game.score)


class _Assist:
    """The AI's keys in the keyboard game: ``t`` the hint, ``p`` autoplay,
    ``+``/``-`` its pace. The AI is made on the first of them (never at
    start-up); the first hint or autoplayed move marks the game assisted,
    in the session (no best from it) and in the save (it stays so)."""

    def __init__(self, session: Session, ctx: Context, keeper: Keeper, timed: bool) -> None:
        self._session = session
        self._ctx = ctx
        self._keeper = keeper
        self._timed = timed  # the console can wait for a key with a timeout: autoplay works
        self._advisor: Optional[Advisor] = None
        self.pilot = Pilot(ctx.clock)
        self.hint: Optional[Direction] = None
        self.stuck = False  # the hint found no move that changes the board
        self.note = ""  # for the next frame only: the AI's warning, or why autoplay cannot run

    def _move(self) -> Optional[Direction]:
        if self._advisor is None:
            self._advisor = Advisor(self._ctx.options, self._say)
        session = self._session
        if not session.assisted:
            session.assisted = True
            self._keeper.mark_assisted()
        return self._advisor.move(session.game)

    def _say(self, message: str) -> None:
        self.note = message

    def start(self) -> None:
        if self._timed:
            self.pilot.start()
        else:
            self.note = "autoplay needs a console that can wait for keys"

    def key(self, action: Action) -> None:
        """One of the AI's keys (never a game's)."""
        if action is Action.HINT:
            self.hint = self._move()
            self.stuck = self.hint is None
        elif action is Action.AUTOPLAY:
            if self.pilot.playing:
                self.pilot.stop()
            else:
                self.start()
        elif action is Action.FASTER:
            self.pilot.faster()
        elif action is Action.SLOWER:
            self.pilot.slower()

    def next_key(self) -> None:
        """A key came, or the AI moved: the hint and the one-frame note go."""
        self.hint, self.stuck, self.note = None, False, ""

    def autoplayed(self) -> Optional[Action]:
        """The AI's next move, as its key; None, and autoplay off, when no move is left."""
        direction = self._move()
        if direction is None:
            self.pilot.stop()
            return None
        self.pilot.moved()
        return move_action(direction)

    def show(self, screen: Screen) -> None:
        screen.hint, screen.stuck = self.hint, self.stuck
        screen.autoplay = self.pilot.pace if self.pilot.playing else 0
        if self.note:
            screen.note = self.note
