"""Interactive play: the keyboard game on a terminal, kept between runs.

The loop is given its console (``terminal.open_console`` by default) and
its clock through the :class:`~.context.Context`, so tests drive it
in-process with a scripted console and a fake clock."""

from __future__ import annotations

from contextlib import suppress
from typing import IO, Any, Callable, ContextManager, List, Optional

from .context import Context, Options
from .engine import Game, default_goal
from .keys import Action, KeyDecoder
from .limits import DEFAULT_SIZE
from .screen import Screen, color_depth, palette_for
from .session import Session
from .storage import Keeper
from .terminal.console import Console, ScreenHooks
from .terminal.signals import Hangup, shield_hangups

__all__ = ["BEST_WRITE_INTERVAL", "BestWriter", "OpenConsole", "play_terminal"]

# Seconds between writes of a rising best score during play: a write costs
# up to ~10 ms here, which the next key should not wait for.
BEST_WRITE_INTERVAL = 1.0

EXIT_OK = 0

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

    keeper = Keeper(ctx.env, rows, cols, goal, ctx.warn)
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
            seed = options.seed if options.seed is not None else ctx.random_seed()
            game = Game(rows, cols, goal, seed)
            keeper.begin(game)
            recorder.start(game.seed, rows, cols, goal)
        session = Session(game, keeper.best())
        for message in keeper.drain_warnings():
            ctx.warn(message)
        keeper.warn = recorder.warn = notes.append  # from here on the board is up: warn on it
        greeting = _resumed_note(game.moves) if resumed is not None and not options.new else ""
        status = _loop(session, ctx, keeper, notes, open_console, greeting)
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
    if options.rows is not None:
        command += f" --size {rows}" if rows == cols else f" --size {rows}x{cols}"
    if options.goal is not None:
        command += f" --goal {options.goal}"
    return f"game kept for next time: {command} resumes it"


def _loop(
    session: Session, ctx: Context, keeper: Keeper, notes: List[str], open_console: OpenConsole, greeting: str = ""
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
                for action in console.read_actions(decoder):
                    if not screen.fits and action is not Action.QUIT:
                        continue  # no playing blind while the board cannot be shown
                    outcome = session.apply(action)
                    ctx.recorder.action(action)
                    if outcome.moved:
                        keeper.append(action)  # saved before the frame shows it
                    if session.quit:
                        break
                screen.note = notes[-1] if notes else ""
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
                with suppress(OSError, Hangup):  # the window may be gone already
                    screen.close()
    return EXIT_OK
