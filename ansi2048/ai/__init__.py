"""The 2048 AI: hints and autoplay for any board.

    from ansi2048.ai import Player, best_move
    best_move(game)                 # a Direction, or None when no move changes the board
    player = Player()               # holds the loaded network; reuse it across moves
    player.best_move(game.board, goal=game.goal)

4x4 boards: expectimax over an n-tuple network trained by self-play
(:mod:`ansi2048.ai.ntuple`, ``scripts/train_ai.py``), one chance level deep,
two when 5 cells or fewer are empty. Any other shape, or a 4x4 board holding a
tile above 32768, or a 4x4 board when the weights file is missing or damaged:
heuristic expectimax with iterative deepening under a node budget
(:mod:`ansi2048.ai.heuristic`).

Both are deterministic by default: the same board and settings give the same
move, on every machine. ``time_budget`` (seconds, measured with ``clock``,
default ``time.perf_counter``) replaces that with a cap for callers who prefer
a bound on time to reproducibility: on 4x4 the greedy move (four network
evaluations), then deeper and deeper searches while the clock allows, the
clock read at every chance node, the deepest complete search answering; the
heuristic search likewise abandons the depth the clock runs out in. The move
comes at most one chance node (about a millisecond in CPython) after the cap.
``level=2`` searches one level deeper wherever 5 cells or fewer are empty.

Nothing is loaded at import time: the weights load (and their checksum is
checked) on the first 4x4 hint, with the 65536-entry move tables: about 0.2 s
in CPython (``Player.network()`` does it ahead), then cached for the process;
a hint after that takes ~4 ms on average. A missing or damaged file gives one
:class:`WeightsWarning` through :mod:`warnings` and sets ``Player.warning``;
the heuristic search then plays 4x4 too.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Callable, Dict, Optional, Sequence, Tuple, Union

from ansi2048.game.engine import MAX_SIDE, MIN_SIDE, Direction

if TYPE_CHECKING:
    from ansi2048.game.engine import Game

    from .ntuple import Network

__all__ = ["DEFAULT_WEIGHTS", "Player", "WeightsWarning", "best_move", "load_network"]

DEFAULT_WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ntuple4x4.bin")

BoardLike = Sequence[Sequence[int]]

# The deepest a capped search goes: depth 4 takes about a second in CPython on
# a crowded board, and each level more is ~12x the time and the memory of its
# memo, which a long cap (up to 60 s) must not fill.
_MAX_TIMED_DEPTH = 4


class WeightsWarning(UserWarning):
    """The 4x4 network could not be loaded; the heuristic search plays instead."""


# path -> the network, or the reason it could not be loaded (so the warning
# is given once per path and a bad file is not re-read at every hint).
_networks: Dict[str, Union[Network, str]] = {}
# The shipped weights are about 2.7 MB; a file far bigger is not weights.
MAX_WEIGHTS_BYTES = 64 << 20


def load_network(path: Optional[str] = None) -> Tuple[Optional[Network], Optional[str]]:
    """(network, None), or (None, reason) with one :class:`WeightsWarning` the
    first time a path fails. Cached per path for the process."""
    path = path or DEFAULT_WEIGHTS
    cached = _networks.get(path)
    if cached is None:
        from ..storage.files import read_regular
        from .ntuple import WeightsError, load_network as parse

        try:
            # Never a FIFO (the first hint would wait forever), nor unbounded.
            cached = parse(read_regular(path, MAX_WEIGHTS_BYTES, follow=True))
        except (OSError, WeightsError, KeyError, TypeError, ValueError) as exc:
            cached = f"AI weights unusable ({exc}); hints use the heuristic search instead\n{path}"
            warnings.warn(cached, WeightsWarning, stacklevel=3)
        _networks[path] = cached
    if isinstance(cached, str):
        return None, cached
    return cached, None


def _board_of(position: Union[Game, BoardLike]) -> Tuple[Tuple[Tuple[int, ...], ...], bool, Optional[int]]:
    board = getattr(position, "board", position)
    rows = tuple(tuple(int(v) for v in row) for row in board)  # type: ignore[union-attr]
    if not MIN_SIDE <= len(rows) <= MAX_SIDE or not MIN_SIDE <= len(rows[0]) <= MAX_SIDE:
        raise ValueError(f"board must be {MIN_SIDE} to {MAX_SIDE} rows and columns")
    if any(len(row) != len(rows[0]) for row in rows):
        raise ValueError("board rows must all have the same length")
    over = bool(getattr(position, "over", False))
    goal = getattr(position, "goal", None)
    return rows, over, goal if isinstance(goal, int) else None


class Player:
    """An AI player: settings plus the cached network; ``best_move`` per position.

    ``level`` 1 (default) meets the hint latency target; 2 searches deeper on
    4x4 where the game is decided (slower, stronger) and doubles the heuristic
    budget. ``weights`` names another weights file (tests use it);
    ``node_budget`` replaces the heuristic search's budget (work units, see
    :data:`ansi2048.ai.heuristic.DEFAULT_BUDGET`).
    """

    def __init__(
        self,
        level: int = 1,
        time_budget: Optional[float] = None,
        clock: Optional[Callable[[], float]] = None,
        weights: Optional[str] = None,
        node_budget: Optional[int] = None,
    ) -> None:
        if level not in (1, 2):
            raise ValueError("level must be 1 or 2")
        self.level = level
        self.time_budget = time_budget
        self.clock = clock
        self.weights = weights
        self.node_budget = node_budget
        self.warning: Optional[str] = None
        self._loaded = False
        self._network: Optional[Network] = None

    def network(self) -> Optional[Network]:
        """The 4x4 network, loading it (and the move tables) on first use; None,
        and ``warning`` set, if unusable. Call it early to take the one-off
        ~0.2 s off the first hint."""
        if not self._loaded:
            self._network, self.warning = load_network(self.weights)
            self._loaded = True
            if self._network is not None:
                from .bitboard import row_tables

                row_tables()  # the search's other one-off cost, so a caller can warm up with one call
        return self._network

    def best_move(self, position: Union[Game, BoardLike], goal: Optional[int] = None) -> Optional[Direction]:
        """The suggested move for a :class:`~ansi2048.game.engine.Game` or a board
        (rows of tile values, 0 = empty); None if no move changes the board.

        With a ``goal`` (default: the game's), a move that makes the first tile
        of at least ``goal`` is taken at once.
        """
        from . import heuristic

        rows, over, game_goal = _board_of(position)
        if over:
            return None
        goal = goal if goal is not None else game_goal
        ranks = heuristic.to_ranks(rows)
        slid = heuristic.moves(ranks)
        options = [i for i, (after, _) in enumerate(slid) if after != ranks]
        if not options:
            return None
        if goal:
            target = goal.bit_length() - 1
            if max(max(row) for row in ranks) < target:
                for i in options:
                    if max(max(row) for row in slid[i][0]) >= target:
                        return Direction(heuristic.MOVE_NAMES[i])
        if len(options) == 1:
            return Direction(heuristic.MOVE_NAMES[options[0]])
        clock = self.clock
        if self.time_budget is not None and clock is None:
            import time

            clock = time.perf_counter
        choice = -1
        if len(rows) == 4 and len(rows[0]) == 4:
            choice = self._network_move(rows, clock)
        if choice < 0:
            budget = self.node_budget or heuristic.DEFAULT_BUDGET * self.level
            choice, _ = heuristic.choose(ranks, budget=budget, clock=clock, time_budget=self.time_budget)
        return Direction(heuristic.MOVE_NAMES[choice])

    def _network_move(self, rows: Tuple[Tuple[int, ...], ...], clock: Optional[Callable[[], float]]) -> int:
        from .bitboard import encode, row_tables
        from .search import Deadline, choose, search_depth

        b = encode([v for row in rows for v in row])
        if b is None:
            return -1  # a tile above 32768: the exact generic search takes it
        net = self.network()
        if net is None:
            return -1
        tables = row_tables()
        if clock is None or self.time_budget is None:
            return choose(b, net, tables, search_depth(b, self.level))[0]
        # A cap, not a target: the greedy move (four evaluations) first, then
        # deeper and deeper while the clock allows; the clock is read at every
        # chance node, so the move comes at most one chance node (about a
        # millisecond) after the cap. The deepest complete search answers.
        deadline = clock() + self.time_budget
        choice = choose(b, net, tables, 0)[0]
        for depth in range(1, _MAX_TIMED_DEPTH + 1):
            try:
                choice = choose(b, net, tables, depth, clock, deadline)[0]
            except Deadline:
                break
        return choice


_default: Optional[Player] = None


def best_move(
    position: Union[Game, BoardLike],
    goal: Optional[int] = None,
    level: int = 1,
    time_budget: Optional[float] = None,
    clock: Optional[Callable[[], float]] = None,
) -> Optional[Direction]:
    """``Player(level, time_budget, clock).best_move(position, goal)``, with the
    default player's network cached across calls."""
    global _default
    if _default is None:
        _default = Player()
    player = _default
    if (level, time_budget, clock) != (1, None, None):
        player = Player(level, time_budget, clock)
    return player.best_move(position, goal)
