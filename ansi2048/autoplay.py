"""The AI at play: the hint and autoplay's player for the keyboard game, and
one whole game played headless (``--autoplay`` with stdout not a terminal,
or ``--json``).

The AI (:mod:`ansi2048.ai`) is imported on the first hint or autoplayed
move, never at start-up. Its moves are played as their keys, so they are
saved, recorded (``--record``) and reported (``--json``) exactly as typed
ones: a recording of an autoplayed game replays identically."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Callable, Optional

from . import __version__
from .cast import HEADLESS_SIZE
from .context import Context, Options
from .engine import Direction, Game
from .history import utc_date
from .keys import Action, move_action
from .options import EXIT_OK
from .protocol import ACTION_NAMES, event, start_event
from .recording import ASSISTED
from .records import daily_seed
from .render.style import choose_depth
from .screen import Screen, palette_for
from .session import Session
from .storage import Keeper

if TYPE_CHECKING:
    from .ai import Player

__all__ = ["DEFAULT_PACE", "LOADING_NOTE", "PACES", "Advisor", "Assist", "Pilot", "play_headless"]

# On the note line while the AI loads (the first hint takes ~0.2 s on 4x4).
LOADING_NOTE = "loading the AI..."


# Autoplay's paces, moves a second: + and - step through them. 4 is
# watchable (a move's slide and spawn can be followed); 16 is a blur.
PACES = (1, 2, 4, 8, 16)
DEFAULT_PACE = 4


class Advisor:
    """The AI for one run: made (and its weights loaded) on first use, with
    ``--ai-time`` as its per-move budget; a weights problem is said once,
    through ``warn``, and the heuristic search plays on."""

    def __init__(self, options: Options, warn: Callable[[str], None]) -> None:
        self._time = options.ai_time
        self._warn = warn
        self._player: Optional[Player] = None
        self._warned = False

    def move(self, game: Game) -> Optional[Direction]:
        """The AI's move for ``game``; None when no move changes the board."""
        if self._player is None:
            from .ai import Player

            # --ai-time: the stronger search, deepening while time remains.
            self._player = Player(level=2, time_budget=self._time) if self._time else Player()
        from .ai import WeightsWarning

        with warnings.catch_warnings():
            # Said through ``warn`` instead: on the note line, not across the board.
            warnings.simplefilter("ignore", WeightsWarning)
            direction = self._player.best_move(game)
        if self._player.warning and not self._warned:
            self._warned = True
            self._warn(self._player.warning)
        return direction


class Pilot:
    """Autoplay in the keyboard game: on or off, its pace, and when its next
    move is due by ``clock``. The loop waits for a key until then
    (``Console.key_ready``), so a key cuts the wait short and the pace holds
    whatever else is typed meanwhile."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.playing = False
        self.pace = DEFAULT_PACE  # moves a second, one of PACES
        self._due = 0.0

    def start(self) -> None:
        """Play, the first move at once."""
        self.playing = True
        self._due = self._clock()

    def stop(self) -> None:
        self.playing = False

    def faster(self) -> None:
        self._set_pace(PACES[min(PACES.index(self.pace) + 1, len(PACES) - 1)])

    def slower(self) -> None:
        self._set_pace(PACES[max(PACES.index(self.pace) - 1, 0)])

    def _set_pace(self, pace: int) -> None:
        # The move already waited for comes at the new pace too.
        self._due += 1.0 / pace - 1.0 / self.pace
        self.pace = pace

    def wait(self) -> float:
        """Seconds until the next move is due (0: now)."""
        return max(0.0, self._due - self._clock())

    def moved(self) -> None:
        """A move was played: the next is due one step of the pace after it
        was due, or after now if that is already past (no catching up in a
        burst after a slow frame)."""
        step = 1.0 / self.pace
        self._due = max(self._due + step, self._clock() + step / 2)


def play_headless(ctx: Context) -> int:
    """The AI plays one whole game, to game over, reading no input: one JSON
    object per move with ``--json`` (the protocol's, the start first), the
    final board and summary otherwise."""
    from .piped import json_writer, resolve_game, write_summary

    options = ctx.options
    random_seed = ctx.random_seed
    if options.daily:
        day = daily_seed(utc_date(ctx.now()))
        random_seed = lambda: day  # noqa: E731
    game = resolve_game(options, None, random_seed, ctx.warn)
    session = Session(game)
    session.assist()
    ctx.recorder.start(game.seed, game.rows, game.cols, game.goal)
    emit = json_writer(ctx.stdout) if options.json else None
    if emit is not None:
        emit(start_event(game, __version__))
    advisor = Advisor(options, ctx.warn)
    screen: Optional[Screen] = None
    if ctx.cast is not None:
        # --cast: the game as a terminal would show it, a frame per move at
        # autoplay's default pace (or --delay).
        ctx.cast.step = options.delay or 1.0 / DEFAULT_PACE
        title = f"ansi2048 --autoplay {game.rows}x{game.cols} seed {game.seed}"
        frames = ctx.cast.tee(lambda text: None, lambda: HEADLESS_SIZE, title)
        depth = choose_depth(options.color, True, ctx.env)
        screen = Screen(frames, lambda: HEADLESS_SIZE, depth, ctx.env, replay=True, palette=palette_for(options))
        screen.note = f"autoplay, seed {game.seed}"
        screen.show(session)
    while True:
        direction = advisor.move(game)
        if direction is None:
            break
        if options.delay:
            ctx.sleep(options.delay)
        action = move_action(direction)
        outcome = session.apply(action)
        ctx.recorder.action(action)
        if emit is not None:
            emit(event(game, ACTION_NAMES[action], outcome.moved, outcome.spawn))
        if screen is not None:
            screen.show(session)
    if screen is not None:
        screen.close()
    if emit is None:
        write_summary(ctx.stdout, session, options, ctx.env)
    return EXIT_OK


class Assist:
    """The AI's keys in the keyboard game: ``t`` the hint, ``p`` autoplay,
    ``+``/``-`` its pace. The AI is made on the first of them (never at
    start-up); the first hint or autoplayed move marks the game assisted,
    in the session (no best from it) and in the save (it stays so)."""

    def __init__(
        self, session: Session, ctx: Context, keeper: Keeper, key_ready: Optional[Callable[[float], bool]]
    ) -> None:
        self._session = session
        self._ctx = ctx
        self._keeper = keeper
        self._key_ready = key_ready  # waits for a key with a timeout: autoplay's timer
        self._advisor: Optional[Advisor] = None
        self.pilot = Pilot(ctx.clock)
        self.hint: Optional[Direction] = None
        self.stuck = False  # the hint found no move that changes the board
        self.note = ""  # for the next frame only: the AI's warning, or why autoplay cannot run
        # Called before the AI's first move: loading it takes a moment (about
        # 0.2 s on 4x4), so the screen says so at once.
        self.loading: Callable[[], None] = lambda: None

    def _move(self) -> Optional[Direction]:
        if self._advisor is None:
            self.loading()
            self._advisor = Advisor(self._ctx.options, self._say)
        session = self._session
        if not session.assisted:
            session.assist()
            self._keeper.append(ASSISTED)  # the save keeps it: resumed, the game stays assisted
        return self._advisor.move(session.game)

    def _say(self, message: str) -> None:
        self.note = message

    def key_ready(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a key; whether one came."""
        assert self._key_ready is not None  # autoplay only starts with it
        return self._key_ready(seconds)

    def start(self) -> None:
        if self._key_ready is not None:
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

    def took_over(self) -> None:
        """The player typed a key of the game: autoplay stops, the hint goes."""
        self.pilot.stop()
        self.hint, self.stuck = None, False

    def next_key(self) -> None:
        """A key came, or the AI moved: the hint and the one-frame note go."""
        self.hint, self.stuck, self.note = None, False, ""

    def autoplayed(self) -> Optional[Action]:
        """The AI's next move, as its key; None, and autoplay off, when no
        move is left. A hint goes (a note stays until a key is typed)."""
        self.hint, self.stuck = None, False
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
