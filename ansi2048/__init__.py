"""ansi2048: the 2048 game for any ANSI terminal, playable over pipes too.

>>> from ansi2048 import Game, Direction
>>> game = Game(rows=4, cols=4, goal=2048, seed=7)
>>> game.move(Direction.LEFT) in (True, False)
True

The house is a functional core and an imperative shell. The core is pure:
it does no I/O, reads no clock or environment, and imports no terminal,
file or platform module (``tests/test_architecture.py`` checks it).

Core (pure):

- ``limits``     the numbers that bound a game (sizes, goals, seeds)
- ``engine``     the rules: board, in-place slide, seeded spawns, undo, and
  each tile's path in a move (for the animation)
- ``keys``       bytes to actions, one decoder for keyboard and pipes
- ``session``    the state machine around a game: win, best, quit, runs
- ``events``     the loop's vocabulary: the events it takes, the effects it gives
- ``state``      the loop's state as values, and ``view``: the one builder of
  what a screen shows, from the state alone
- ``turns``      the keys of one step played on the game (typed, a chunk of a
  pipe, or the AI's move), and the keyboard's own keys among them
- ``loop``       every mode's loop as a state machine: (state, event) in,
  (state, effects) out; keys, timers, resizes and the AI's answers; the one
  motion model
- ``protocol``   the JSON Lines objects a bot reads (``--json``)
- ``recording``  the recording format, header splitting, replay, the writer
- ``records``    history records, statistics, the top 10, the daily seed
- ``render``     frames: ``codes`` (control codes), ``style`` (colour depths,
  SGR, spans), ``color`` (CIEDE2000, contrast), ``palette`` and ``themes``,
  ``lines`` (frames as values), ``board`` (layouts, tiles, the board moving
  or under a message), ``frame`` (views, the text around), ``keymap``,
  ``help``, ``motion`` (where tiles are during a move), ``repaint`` (in
  place, only the pieces that changed), ``stats`` (``--stats``)
- ``cast``       asciicast v2 files of the frames (``--cast``)
- ``ai``         the AI: n-tuple network expectimax (4x4), heuristic
  expectimax (any board); its weights are package data, loaded on first use

Between (values, and a screen driven through given functions):

- ``context``    the options and the run's context (streams, clock, ...)
- ``screen``     the loop's views drawn through given ``write`` and ``size``

Shell:

- ``options``      the command line (light: ``--help`` loads no game)
- ``completion``   ``--completion``: shell completion scripts from the parser
- ``cli``          ``main``: picks the play mode, turns failures into exit codes
- ``piped``        keys from a pipe: replays, bots (JSON Lines), summaries; its
  driver feeds the loop a chunk of keys at a time, or key by key at
  ``--delay``'s pace
- ``performer``    does the loop's effects (frames, the save, ``--record``,
  the history, the bests) through a screen and a store given to it, and
  gives back the events that answer them: shared by every driver, whatever
  it waits on; its docstring is the driver's contract
- ``interactive``  the keyboard game: resuming, and its blocking driver, which
  waits for keys and timers and asks the AI
- ``autoplay``     the AI at play: its player for hints and autoplay
- ``headless``     one whole game played by the AI, reading no input; its
  driver feeds the loop autoplay's timer and the AI's moves
- ``storage``      the data directory: one board's save, best scores and
  history (``BoardStore``, the keyboard game's ``PlayStore``)
- ``saves``        the saved game: appended key by key, streamed to resume
- ``files``        every path opened: only regular files read, and bounded;
  replacing, locking, setting aside; the output sink of ``--record``/``--cast``
- ``config``       the config file: option defaults and extra keys
- ``userdirs``     the user's config and data directories (XDG on Linux
  without importing platformdirs)
- ``history``      the history file of finished games, and UTC dates
- ``records_cli``  ``--stats`` and ``--replay-best``
- ``terminal``     raw mode, keys, size, signals; POSIX or Windows, chosen once;
  a console over any byte streams (``console.stream_console``)
- ``serve``        ``ansi2048 serve``: the game over SSH (asyncssh, loaded only
  there): the server, each player's session driving the same loop, the AI in
  a pool of processes, and ``store``, the games in SQLite or PostgreSQL

Importing the package loads nothing but this docstring: ``Game`` and
``Direction`` are fetched from ``engine`` on first use, so
``ansi2048 --version`` starts as fast as Python does.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing typing costs ~6 ms of every start-up,
# --version's included. mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .engine import Direction, Game

__all__ = ["Direction", "Game", "__version__"]

__version__ = "0.3.0"


def __getattr__(name: str) -> Any:
    # PEP 562: the engine is imported when Game or Direction is first asked for.
    if name in ("Game", "Direction"):
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
