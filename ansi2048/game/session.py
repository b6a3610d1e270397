"""The session state machine: actions in, outcomes out (pure, no I/O).

Playing -> Won (a banner, once, when a tile first reaches the goal; any move
keeps going) -> Over (no move changes the board; ``r`` restarts, ``u`` undoes).
Moves on a finished board change nothing by the rules, so Over needs no guard.

The session also follows *the game on the board from its start* (a
:class:`Run`): the seed it began from and the keys that changed something
since, so a finished game can be kept in the history and replayed exactly,
and whether undo or the AI helped. ``r`` starts a new run; undoing that
``r`` brings the previous run back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import List, NamedTuple, Optional, Tuple

from .engine import UNDO_DEPTH, Game
from .keys import Action

__all__ = ["Outcome", "Played", "Run", "Session", "Status"]


class Status(Enum):
    PLAYING = "playing"
    WON = "won"  # the win banner is up; the next key takes it down
    OVER = "over"


class Outcome(NamedTuple):
    """What one action key did. A NamedTuple, not a frozen dataclass: one is
    made per key, and a frozen dataclass costs three times as much to make
    (a replay's every key; benchmarks/replay.py)."""

    action: Action
    moved: bool  # did this key change the board
    spawn: Optional[Tuple[int, int]]  # (row, col) of the tile this key spawned
    ended: Optional[Played] = None  # the game this key finished (game over) or left (r)
    refused: bool = False  # undo pressed with undo off (--no-undo)


@dataclass
class Run:
    """One game *in progress*, from its start: the seed it began with and
    the action keys that changed something since (keys that changed nothing
    replay as nothing, so they are left out); with ``seed`` they recreate
    the game. Mutable, grown key by key, and with what undo needs
    (``depth``); :meth:`Session.played` freezes it, with the board's
    result, into a :class:`Played`."""

    seed: int
    keys: List[str] = field(default_factory=list)
    used_undo: bool = False
    assisted: bool = False  # the AI played or hinted in this game
    depth: int = 0  # moves undo can step back before it reaches the r that began the run


@dataclass(frozen=True)
class Played:
    """A game as it ended (or was left): what the history keeps of it. The
    history's line (:class:`~.records.Record`) is this, dated by the shell."""

    rows: int
    cols: int
    goal: int
    seed: int
    keys: str  # from the game's start: with ``seed`` they replay it
    score: int
    moves: int
    biggest: int
    won: bool
    over: bool
    undo: bool  # undo stepped back a move
    ai: bool  # the AI played or hinted

    @property
    def board(self) -> Tuple[int, int, int]:
        return (self.rows, self.cols, self.goal)

    @property
    def unaided(self) -> bool:
        return not (self.undo or self.ai)


class Session:
    """A game plus what the screen needs beyond the rules: the win banner,
    the best score, and whether the player has quit.

    Only the game's own keys are applied (``Action.game``): the AI's keys
    (hint, autoplay) are the shell's, which marks the run ``assisted``."""

    def __init__(
        self,
        game: Game,
        best: int = 0,
        runs: Optional[Tuple[Run, List[Run]]] = None,
        undo: bool = True,
        keep_keys: bool = True,
    ) -> None:
        self.game = game
        self.quit = False
        self.undo = undo  # False for --no-undo: ``u`` is refused
        # False where no game is kept in the history (piped replays): the
        # runs then hold no keys, so memory stays flat however long the game.
        self._keep_keys = keep_keys
        # A resumed game brings its runs (``runs()`` of the session that
        # replayed the save); otherwise the game on the board starts here.
        self.run, self._left = runs if runs is not None else (Run(game.seed), [])
        # A resumed game the AI helped in has a score that is no best.
        self.best = best if self.run.assisted else max(best, game.score)
        self._celebrating = False

    @property
    def used_undo(self) -> bool:
        """Undo stepped back a move in the game on the board."""
        return self.run.used_undo

    @property
    def assisted(self) -> bool:
        """The AI played or hinted in the game on the board."""
        return self.run.assisted

    @assisted.setter
    def assisted(self, value: bool) -> None:
        self.run.assisted = value

    def runs(self) -> Tuple[Run, List[Run]]:
        """The game on the board's run and those ``r`` left (undo brings them
        back): what a session resuming this game starts from."""
        return self.run, self._left

    def played(self) -> Played:
        """The game on the board as the history keeps it."""
        game, run = self.game, self.run
        return Played(
            rows=game.rows,
            cols=game.cols,
            goal=game.goal,
            seed=run.seed,
            keys="".join(run.keys),
            score=game.score,
            moves=game.moves,
            biggest=game.biggest,
            won=game.won,
            over=game.over,
            undo=run.used_undo,
            ai=run.assisted,
        )

    @property
    def status(self) -> Status:
        # "If the winning move also ends the game, still say won."
        if self._celebrating:
            return Status.WON
        if self.game.over:
            return Status.OVER
        return Status.PLAYING

    def restart(self, seed: Optional[int] = None) -> Outcome:
        """Restart, undoably: into ``seed`` (``--seed`` over a saved game), or
        as ``r`` does, into a seed drawn from the game's generator. The game
        left, if it was played, is reported as ended; its run is kept for undo."""
        self._celebrating = False
        game = self.game
        ended = self.played() if game.moves else None  # a game never played is not worth keeping
        game.restart(seed)
        self._left.append(self.run)
        del self._left[:-UNDO_DEPTH]  # the engine cannot undo further back either
        self.run = Run(game.seed)
        return Outcome(Action.RESTART, True, game.spawned, ended)

    def assist(self) -> Outcome:
        """The AI helps (a hint, or its move) in the game on the board: from
        now on its score raises no best. Nothing on the board changes."""
        self.run.assisted = True
        return Outcome(Action.HINT, False, None)

    def apply(self, action: Action) -> Outcome:
        game = self.game
        was_won = game.won
        self._celebrating = False
        spawn: Optional[Tuple[int, int]] = None
        ended: Optional[Played] = None
        run = self.run
        direction = action.direction
        if direction is not None:
            moved = game.move(direction)
            if moved:
                spawn = game.spawned
                self._celebrating = game.won and not was_won
                run.depth += 1
                if self._keep_keys:
                    run.keys.append(action.value)
                if game.over:
                    ended = self.played()
        elif action is Action.UNDO:
            if not self.undo:
                return Outcome(action, False, None, refused=True)
            moved = game.undo()
            if moved:
                if run.depth == 0 and self._left:
                    # That undid the r which began this run: the game it left is back.
                    self.run = self._left.pop()
                else:
                    run.depth = max(0, run.depth - 1)
                    run.used_undo = True
                    if self._keep_keys:
                        run.keys.append(action.value)
        elif action is Action.RESTART:
            return self.restart()
        elif action is Action.QUIT:
            moved = False
            self.quit = True
        else:
            raise ValueError(f"unknown action {action!r}")
        # A game the AI played or hinted in does not raise the best score.
        if game.score > self.best and not self.run.assisted:
            self.best = game.score
        return Outcome(action, moved, spawn, ended)
