"""The AI at play: the hint and autoplay's player for the keyboard game, and
one whole game played headless (``--autoplay`` with stdout not a terminal,
or ``--json``).

The AI (:mod:`ansi2048.ai`) is imported on the first hint or autoplayed
move, never at start-up. Its moves are played as their keys, so they are
saved, recorded (``--record``) and reported (``--json``) exactly as typed
ones: a recording of an autoplayed game replays identically."""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Callable, Optional

from . import __version__
from .cast import HEADLESS_SIZE
from .cli import EXIT_OK
from .context import Context, Options
from .engine import Board, Direction, Game
from .history import utc_date
from .keys import move_action
from .loop import DEFAULT_PACE, LOADING_NOTE, PACES
from .protocol import ACTION_NAMES, event, start_event
from .records import daily_seed
from .render.style import choose_depth
from .screen import Screen, palette_for
from .session import Session

if TYPE_CHECKING:
    from .ai import Player

__all__ = ["DEFAULT_PACE", "LOADING_NOTE", "PACES", "Advisor", "play_headless"]


class Advisor:
    """The AI for one run, with ``--ai-time`` as its per-move budget: made on
    first use, or ahead of it on a thread of its own (:meth:`warm_up`); a
    weights problem is said once, through ``warn``, and the heuristic search
    plays on."""

    def __init__(self, options: Options, warn: Callable[[str], None]) -> None:
        self._time = options.ai_time
        self._warn = warn
        self._player: Optional[Player] = None
        self._warned = False
        self._making = threading.Lock()  # the player is made once, by whichever thread comes first

    @property
    def ready(self) -> bool:
        """The AI is loaded: a move costs only its search."""
        return self._player is not None

    def warm_up(self, board: Board) -> None:
        """Load the AI now, on a daemon thread (nothing waits for it at exit),
        by asking it for a move on ``board`` (a snapshot): every one-off cost
        (imports, the 4x4 weights and tables: ~0.2 s of CPU) is paid there,
        so the first hint is as quick as later ones. A move asked for
        meanwhile waits for it."""
        threading.Thread(target=self._made, args=(board,), name="ansi2048-ai", daemon=True).start()

    def _made(self, board: Optional[Board] = None) -> Player:
        with self._making:
            if self._player is None:
                from .ai import Player, WeightsWarning

                # Said through ``warn`` instead: on the note line, not across the board.
                warnings.filterwarnings("ignore", category=WeightsWarning)
                # --ai-time: the stronger search, deepening while time remains.
                player = Player(level=2, time_budget=self._time) if self._time else Player()
                if board is not None:
                    player.best_move(board)
                self._player = player
            return self._player

    def move(self, game: Game) -> Optional[Direction]:
        """The AI's move for ``game``; None when no move changes the board."""
        player = self._made()
        direction = player.best_move(game)
        if player.warning and not self._warned:
            self._warned = True
            self._warn(player.warning)
        return direction


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
