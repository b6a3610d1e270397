"""The JSON Lines protocol a bot plays over (pure): one object per line, the
start first, then exactly one per action key. Field meanings are in the
README's ``--json`` section; this module is their one definition."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from .engine import Game
from .keys import Action

__all__ = ["ACTION_NAMES", "event", "start_event"]

# The names bots see in the "action" field.
ACTION_NAMES = {
    Action.UP: "up",
    Action.DOWN: "down",
    Action.LEFT: "left",
    Action.RIGHT: "right",
    Action.UNDO: "undo",
    Action.RESTART: "restart",
    Action.QUIT: "quit",
}


def event(game: Game, action: str, moved: bool, spawn: Optional[Tuple[int, int]]) -> Dict[str, Any]:
    """One object: the state after ``action`` ("start" for the first)."""
    return {
        "action": action,
        "moved": moved,
        "board": [list(row) for row in game.board],
        "score": game.score,
        "moves": game.moves,
        "won": game.won,
        "over": game.over,
        "spawn": list(spawn) if spawn is not None else None,
        "seed": game.seed,
    }


def start_event(game: Game, version: str) -> Dict[str, Any]:
    """The first object: the starting board, plus the game's shape and the version."""
    start = event(game, "start", False, None)
    start.update(rows=game.rows, cols=game.cols, goal=game.goal, version=version)
    return start
