"""Interactive play: the keyboard game on a terminal, kept between runs.

The loop is given its console (``terminal.open_console`` by default) and
its clock through the :class:`~.context.Context`, so tests drive it
in-process with a scripted console and a fake clock."""

from __future__ import annotations

from contextlib import suppress
from typing import IO, Any, Callable, ContextManager, List, Optional

from .context import Context
from .engine import Game
from .keys import Action, KeyDecoder
from .limits import DEFAULT_GOAL, DEFAULT_SIZE
from .recording import Item, Reseed
from .render.repaint import ERASE_LINE
from .screen import Screen, color_depth
from .session import Session
from .storage import Keeper
from .terminal.console import Console, ScreenHooks
from .terminal.signals import Hangup, shield_hangups

__all__ = ["BEST_WRITE_INTERVAL", "PROGRESS_AFTER", "BestWriter", "OpenConsole", "ResumeProgress", "play_terminal"]

# Seconds between writes of a rising best score during play: a write costs
# up to ~10 ms here, which the next key should not wait for.
BEST_WRITE_INTERVAL = 1.0
# Seconds a resume may take before it says how far it is.
PROGRESS_AFTER = 1.0

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


def play_terminal(ctx: Context, open_console: Optional[OpenConsole] = None) -> int:
    """Resume or start the game for this board and play it on the terminal."""
    if open_console is None:
        from .terminal import open_console as platform_console

        open_console = platform_console
    options, recorder = ctx.options, ctx.recorder
    rows, cols = options.rows or DEFAULT_SIZE, options.cols or DEFAULT_SIZE
    goal = options.goal or DEFAULT_GOAL
    notes: List[str] = []  # shown under the board once play has started

    keeper = Keeper(ctx.env, rows, cols, goal, ctx.warn)
    try:
        progress = ResumeProgress(ctx.stdout, ctx.clock)
        resumed = keeper.resume(progress)
        progress.end()
        if resumed is not None:
            game = resumed.game
            recorder.start(resumed.seed, rows, cols, goal, resumed.items())
            if options.new or options.seed is not None:
                # A new game as the `r` key starts one, `u` brings the old one
                # back; --seed names the new game's seed, saved as a directive.
                restart: Item = Action.RESTART if options.seed is None else Reseed(options.seed)
                game.restart(options.seed)
                keeper.append(restart)
                recorder.action(restart)
        else:
            seed = options.seed if options.seed is not None else ctx.random_seed()
            game = Game(rows, cols, goal, seed)
            keeper.begin(game)
            recorder.start(game.seed, rows, cols, goal)
        session = Session(game, keeper.best())
        for message in keeper.drain_warnings():
            ctx.warn(message)
        keeper.warn = recorder.warn = notes.append  # from here on the board is up: warn on it
        return _loop(session, ctx, keeper, notes, open_console)
    finally:
        keeper.close()


def _loop(session: Session, ctx: Context, keeper: Keeper, notes: List[str], open_console: OpenConsole) -> int:
    decoder = KeyDecoder(comments=False)
    screen: Optional[Screen] = None
    best = BestWriter(keeper.record_best, ctx.clock, session.best)

    def redraw() -> None:
        if screen is not None:
            screen.show(session)

    def leave() -> None:
        if screen is not None:
            screen.close()

    with open_console(ctx.stdin, ctx.stdout, ScreenHooks(redraw, leave)) as console:
        screen = Screen(
            console.write,
            console.size,
            color_depth(ctx.options, ctx.stdout, ctx.env, console.legacy),
            ctx.env,
            legacy=console.legacy,
        )
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
                # One frame for everything read at once: typed-ahead keys are
                # all played, and the screen catches up in a single repaint.
                screen.show(session)
                if session.quit:
                    break
                # Written at once when no later key will come to write it (the
                # game is over) or no save holds it meanwhile.
                session.best = best.offer(session.best, urgent=session.game.over or not keeper.saving)
        finally:
            # A second signal must not cut the saving and the restore short.
            with shield_hangups():
                best.flush(session.best)
                with suppress(OSError, Hangup):  # the window may be gone already
                    screen.close()
    return EXIT_OK
