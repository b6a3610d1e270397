"""``--stats`` and ``--replay-best`` (the shell): your records read from the
history file, drawn by :mod:`.render.stats`, or one top game replayed
through the piped replay (:mod:`.piped`), as ``ansi2048 < game.keys`` would."""

from __future__ import annotations

import dataclasses
import json
from typing import IO, Any, Optional

from .. import __version__
from ..game.engine import default_goal
from ..game.limits import DEFAULT_SIZE
from ..options.context import Context
from ..options.parser import EXIT_OK, REPLAY_DELAY
from ..records.history import Record, config_key, stats_document, unaided_key
from ..records.recording import format_header
from ..records.tally import Board, BoardStats, Fetch, Tally
from ..render.stats import stats_lines
from ..storage.data_dir import DataDir, data_dir
from ..storage.files import reason
from ..storage.history_file import History
from ..terminal.streams import isatty, terminal_size
from .piped import play_piped
from .screen import color_depth

__all__ = ["HistoryChanged", "NoSuchGame", "replay_best", "show_stats"]


class NoSuchGame(Exception):
    """``--replay-best N`` asks for a place the top list does not have."""


class HistoryChanged(Exception):
    """A record shown could not be read back: the file changed meanwhile."""


def can_encode(stream: IO[Any], text: str) -> bool:
    """``stream``'s encoding has every character of ``text``."""
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def show_stats(ctx: Context) -> int:
    options, stdout = ctx.options, ctx.stdout
    data = DataDir(data_dir(ctx.env))
    history = data.history
    stats = [_with_kept_best(board, data) for board in _tally(history, ctx, None).stats(_fetcher(history))]
    for warning in data.warnings:
        ctx.warn(warning)
    if options.json:
        stdout.write(json.dumps(stats_document(stats, __version__), indent=1) + "\n")
    elif not stats:
        from ..render.notice import notice_lines

        stdout.write("\n".join(notice_lines("", f"No finished games yet. They will be kept in\n{history.path}")) + "\n")
    else:
        tty = isatty(stdout)
        width = terminal_size(stdout.fileno())[0] if tty else 80
        # Plain text on a pipe, in block characters if its encoding has them.
        ascii_only = not can_encode(stdout, "▁▂▃▄▅▆▇█·")
        lines = stats_lines(stats, color_depth(options, stdout, ctx.env), width, ascii_only)
        stdout.write("\n".join(lines) + "\n")
    stdout.flush()
    return EXIT_OK


def _with_kept_best(board: BoardStats, data: DataDir) -> BoardStats:
    """``board`` with the best the header shows (the best scores file): a
    score reached and then undone was reached, and the history keeps only
    each game's last score (see :class:`BoardStats`)."""
    key = config_key(board.rows, board.cols, board.goal)
    try:
        best, unaided = data.best(key), data.best(unaided_key(key))
    except OSError:  # no lock to be had (a read-only folder): the history's own
        return board
    if best <= board.best and unaided <= board.best_unaided:
        return board
    return dataclasses.replace(board, best=max(board.best, best), best_unaided=max(board.best_unaided, unaided))


def _tally(history: History, ctx: Context, only: Optional[Board]) -> Tally:
    """The history read through once (``only``: one board's games)."""
    counted = Tally(only)
    for where, record in history.records(ctx.warn):
        counted.add(record, where)
    return counted


def _fetcher(history: History) -> Fetch:
    """Reads back the few records shown. The file can have changed since
    (a game ended meanwhile appends; anything else is an outside hand)."""

    def fetch(where: int) -> Record:
        try:
            return history.fetch(where)
        except (OSError, ValueError) as error:
            raise HistoryChanged(f"the history {history.path} changed while it was read ({reason(error)})") from None

    return fetch


def replay_best(ctx: Context) -> int:
    """Replay the Nth game of the top list for the board of ``--size``/``--goal``."""
    options = ctx.options
    assert options.replay_best is not None
    rows, cols = options.rows or DEFAULT_SIZE, options.cols or DEFAULT_SIZE
    goal = options.goal or default_goal(rows, cols)  # as play picks it
    history = DataDir(data_dir(ctx.env)).history
    top = _tally(history, ctx, (rows, cols, goal)).top((rows, cols, goal), _fetcher(history))
    rank = options.replay_best
    if rank > len(top):
        raise NoSuchGame(
            f"argument --replay-best: your top list for {rows}x{cols} to {goal} has {len(top)} "
            f"game{'s' if len(top) != 1 else ''} (see ansi2048 --stats)"
        )
    game = top[rank - 1]
    keys = format_header(game.seed, rows, cols, goal, __version__).encode("ascii") + game.keys.encode("ascii")
    if options.delay is None and isatty(ctx.stdout) and not options.json:
        ctx = dataclasses.replace(ctx, options=dataclasses.replace(options, delay=REPLAY_DELAY))
    return play_piped(ctx, keys)
