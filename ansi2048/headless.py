"""One whole game played headless by the AI: ``--autoplay`` with stdout not
a terminal, or ``--json``. It reads no input."""

from __future__ import annotations

from typing import Optional

from . import __version__
from .autoplay import DEFAULT_PACE, Advisor
from .cast import HEADLESS_SIZE
from .context import Context
from .history import utc_date
from .keys import move_action
from .protocol import ACTION_NAMES, event, start_event
from .records import daily_seed
from .render.style import choose_depth
from .screen import Screen, palette_for
from .session import Session

__all__ = ["play_headless"]

EXIT_OK = 0


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
