"""The session state machine: actions in, outcomes out (pure, no I/O).

Playing -> Won (a banner, once, when a tile first reaches the goal; any move
keeps going) -> Over (no move changes the board; ``r`` restarts, ``u`` undoes).
Moves on a finished board change nothing by the rules, so Over needs no guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional, Tuple

from .engine import Game
from .keys import Action

__all__ = ["Outcome", "Session", "Status"]


class Status(Enum):
    PLAYING = "playing"
    WON = "won"  # the win banner is up; the next key takes it down
    OVER = "over"


@dataclass(frozen=True)
class Outcome:
    """What one action key did."""

    action: Action
    moved: bool  # did this key change the board
    spawn: Optional[Tuple[int, int]]  # (row, col) of the tile this key spawned


class Session:
    """A game plus what the screen needs beyond the rules: the win banner,
    the best score, and whether the player has quit."""

    def __init__(self, game: Game, best: int = 0) -> None:
        self.game = game
        self.best = max(best, game.score)
        self.quit = False
        self._celebrating = False

    @property
    def status(self) -> Status:
        # "If the winning move also ends the game, still say won."
        if self._celebrating:
            return Status.WON
        if self.game.over:
            return Status.OVER
        return Status.PLAYING

    def restart(self, seed: int) -> Outcome:
        """Restart into ``seed``, undoably, as ``r`` restarts into a drawn one."""
        self._celebrating = False
        self.game.restart(seed)
        return Outcome(Action.RESTART, True, self.game.spawned)

    def apply(self, action: Action) -> Outcome:
        game = self.game
        was_won = game.won
        self._celebrating = False
        spawn: Optional[Tuple[int, int]] = None
        direction = action.direction
        if direction is not None:
            moved = game.move(direction)
            if moved:
                spawn = game.spawned
                self._celebrating = game.won and not was_won
        elif action is Action.UNDO:
            moved = game.undo()
        elif action is Action.RESTART:
            game.restart()
            moved = True
            spawn = game.spawned
        elif action is Action.QUIT:
            moved = False
            self.quit = True
        else:
            raise ValueError(f"unknown action {action!r}")
        if game.score > self.best:
            self.best = game.score
        return Outcome(action, moved, spawn)
