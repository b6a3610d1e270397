"""The AI at play: the hint and autoplay's player for the keyboard game
(headless ``--autoplay`` games are :mod:`.headless`).

The AI (:mod:`ansi2048.ai`) is imported on the first hint or autoplayed
move, never at start-up. Its moves are played as their keys, so they are
saved, recorded (``--record``) and reported (``--json``) exactly as typed
ones: a recording of an autoplayed game replays identically."""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Callable, Optional

from ..game.engine import Board, Direction, Game
from ..loop.state import DEFAULT_PACE, PACES
from ..loop.step import LOADING_NOTE
from ..options.context import Options

if TYPE_CHECKING:
    from ..ai import Player

__all__ = ["DEFAULT_PACE", "LOADING_NOTE", "PACES", "Advisor"]


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
                from ..ai import Player, WeightsWarning

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
