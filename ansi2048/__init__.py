"""ansi2048: the 2048 game for any ANSI terminal, playable over pipes too.

>>> from ansi2048 import Game, Direction
>>> game = Game(rows=4, cols=4, goal=2048, seed=7)
>>> game.move(Direction.LEFT) in (True, False)
True

The house is a functional core and an imperative shell, one subpackage per
role, each importing only from itself and the layers below it (listed here
from the bottom up; ``tests/test_architecture.py`` checks both rules). The
core is pure: it does no I/O, reads no clock or environment, and imports no
terminal, file or platform module.

Core (pure):

- ``game``     the rules: ``limits`` (the numbers that bound a game),
  ``spawns`` (a seed's generator state, SplitMix64, the spawn
  rule), ``engine`` (board, in-place slide, undo, each tile's path in a
  move), ``keys`` (bytes to actions, one decoder for keyboard, pipes and
  SSH), ``session`` (the state machine around a game: win, best, quit,
  runs), ``protocol`` (the JSON Lines objects a bot reads, ``--json``),
  ``race`` (a race's rules: its lobby, its ends, its order)
- ``records``  ``recording`` (the recording format, header splitting,
  replay, the writer), ``replay`` (a recording's header rule and its one
  reading, replayed through the engine, and ``verdict``: a ranked game's
  verification, which the local ``--json`` replay reads alike) and
  ``history`` (history records and their JSON
  lines, the statistics and top 10 of a list of them, the daily seed) and
  ``tally`` (a board's statistics counted a record at a time, in bounded
  memory)
- ``render``   frames: ``codes`` (control codes), ``style`` (colour depths,
  SGR, spans), ``color`` (CIEDE2000, contrast), ``palette`` and ``themes``,
  ``lines`` (frames as values), ``board`` (layouts, tiles, the board under
  a message), ``moving`` (the board moving, from cached pieces), ``frame``
  (views, the text around), ``keymap``, ``help``, ``motion`` (where tiles
  are during a move), ``repaint`` (in
  place, only the pieces that changed), ``stats`` (``--stats``), ``cast``
  (asciicast v2 files of the frames, ``--cast``), ``notice`` (warnings laid
  out within 80 columns, each path on a line of its own)
- ``loop``     every mode's loop as a state machine: ``events`` (the events
  it takes, the effects it gives), ``state`` (the state as values, and
  ``view``: the one builder of what a screen shows), ``turns`` (the keys of
  one step played on the game), ``step`` ((state, event) in, (state,
  effects) out; keys, timers, resizes, the AI's answers; the one motion
  model)

Shell:

- ``storage``   the local data directory: ``data_dir`` (one board's save,
  best scores and history: ``BoardStore``, the keyboard game's
  ``PlayStore``), ``save_file`` (the saved game, appended key by key,
  streamed to resume), ``history_file`` (finished games, UTC dates),
  ``files`` (every path opened: only regular files read, and bounded;
  replacing, locking, setting aside; the sink of ``--record``/``--cast``),
  ``userdirs`` (the user's directories, XDG on Linux without platformdirs)
- ``terminal``  raw mode, keys, size, signals; POSIX or Windows, chosen once;
  a console over any byte streams (``console.stream_console``)
- ``ai``        the AI: n-tuple network expectimax (4x4), heuristic
  expectimax (any board); its weights are package data, loaded on first use
- ``options``   what the user asked for: ``parser`` (the command line; light:
  ``--help`` loads no game), ``config`` (the config file), ``context`` (the
  options and the run's context: streams, clock, ...), ``completion``
  (shell completion scripts from the parser)
- ``play``      the ways of playing, each a driver of the loop:
  ``performer`` (does the loop's effects through a screen and a store given
  to it, shared by every driver; its docstring is a driver's contract),
  ``screen`` (views drawn through given ``write`` and ``size``),
  ``keyboard`` (the keyboard game: resuming, its blocking driver),
  ``piped`` (replays, bots, summaries), ``headless`` (a whole game played
  by the AI), ``advisor`` (the AI at play, for hints and autoplay),
  ``stats`` (``--stats`` and ``--replay-best``)
- ``serve``     ``ansi2048 serve``: the game over SSH (asyncssh, loaded only
  there), in layers (docs/design.md): ``cli`` (its options), ``settings``
  (their defaults, one source), ``server`` (builds the one ``context``, the
  host key, listening and stopping; ``run``), ``workers``, ``backup``, ``moderation`` (``--ban``, ``--remove-entry``),
  ``log`` (written by a thread: never blocking the games), ``connection`` (a
  client: its key or a guest's login, admission), ``accounting`` (its line in
  the log), ``kexguess`` (Dropbear's wrong key-exchange guess ignored, as RFC
  4253 says), ``ssh_channel`` (one session channel: asyncssh's callbacks,
  the command it runs), ``guard`` (the limits every channel goes through),
  ``commands`` (the one table of commands: parser, help, entry points),
  ``requests`` (each command's request, parsed), ``play_commands`` (``play``,
  ``daily``: the claim, taking a game over, the game to its end),
  ``viewer_commands`` (``watch``, ``replay``, ``cast``), ``record_commands``
  (``stats``, ``leaderboard``, ``keys``, ``races``), ``race_session``
  (``race``: a racer's screen and keys; a race watched), ``race_hall`` (the
  lobbies and races, their results verified and kept), ``race_friends``
  (who waits for a friend to race: ``race NAME``), ``race_records`` (the
  races listed), ``race_replay`` (a race played back), ``link`` (what a command has of its
  channel: the ``Client``, the link, what comes in, a viewer), ``context``
  (what every handler is given: store, pool, live games, limits, clocks,
  log), ``game`` (a player's game: ``GameDriver``, the loop's asynchronous
  driver, composed of its channel's side, the server's side and the
  rules it plays by), ``game_parts`` (its timings, its claim on the game,
  the escape wait, asking the AI), ``saving`` (the driver's saving: when
  keys are written, frames held until they are, a pause, what ends play),
  ``keeping`` (where a game is kept, a guest's nowhere; opening it),
  ``pauses`` (saving paused server-wide), ``metrics`` and ``metrics_page``
  (its numbers; ``--metrics``'s page and ``/health``), ``live`` (games
  published to their watchers), ``watch`` and ``watch_list`` (watching them), ``replay`` and
  ``replay_clock`` (finished games played back; a cast streamed), ``daily``,
  ``ranked_game``, ``ranked`` and ``verify`` (the day's game: its rules,
  the rules the driver plays it by, opening it, its leaderboard, its check),
  ``secrecy`` (the one rule on what of a game anyone may see before its day
  is over), ``limits`` (what a stranger may hold), ``names`` (a client's
  words made safe), ``pool`` (the AI in a pool of processes), ``store``, the
  games in SQLite or PostgreSQL, and ``web``, the browser door (``--http``;
  aiohttp, loaded only there): a page whose WebSocket is an ordinary session
- ``cli``       ``main``: picks the play mode, turns failures into exit codes

Importing the package loads nothing but this docstring: ``Game`` and
``Direction`` are fetched from ``game.engine`` on first use, so
``ansi2048 --version`` starts as fast as Python does.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing typing costs ~6 ms of every start-up,
# --version's included. mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .game.engine import Direction, Game

__all__ = ["Direction", "Game", "__version__"]

__version__ = "0.3.0"


def __getattr__(name: str) -> Any:
    # PEP 562: the engine is imported when Game or Direction is first asked for.
    if name in ("Game", "Direction"):
        from .game import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
