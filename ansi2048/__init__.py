"""ansi2048: the 2048 game for any ANSI terminal, playable over pipes too.

>>> from ansi2048 import Game, Direction
>>> game = Game(rows=4, cols=4, goal=2048, seed=7)
>>> game.move(Direction.LEFT) in (True, False)
True
"""

from .engine import Direction, Game

__all__ = ["Direction", "Game", "__version__"]

__version__ = "0.1.0"
