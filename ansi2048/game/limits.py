"""The numbers that bound a game, in a module that imports nothing, so the
command line can show them in ``--help`` without loading the game.

The engine enforces them (:func:`ansi2048.game.engine.check_size`,
:func:`ansi2048.game.engine.check_goal`, and for text, the command line's and the
config file's alike, :func:`ansi2048.game.engine.parse_size` and
:func:`ansi2048.game.engine.parse_goal`); everything else refers to them."""

__all__ = ["DEFAULT_GOAL", "DEFAULT_SIZE", "MAX_GOAL", "MAX_SEED_DIGITS", "MAX_SIDE", "MIN_GOAL", "MIN_SIDE"]

MIN_SIDE = 2
MAX_SIDE = 10
MIN_GOAL = 8
MAX_GOAL = 2**31
DEFAULT_SIZE = 4
DEFAULT_GOAL = 2048
# Seeds are hashed from their decimal digits; CPython refuses int<->str
# conversions past 4300 digits, so seeds stay well inside that.
MAX_SEED_DIGITS = 1000
