"""``--stats`` drawn (pure): per board a headline, the biggest tiles as a bar
chart, the recent scores as a sparkline and the top 10, as lines of text.

Bars take their tile's colour from the palette; at depth NONE the text has
no escape codes. ``ascii_only`` swaps the block characters for ASCII, for
streams that cannot encode them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from ..game.engine import default_goal
from ..game.limits import DEFAULT_SIZE
from ..records.history import Record
from ..records.tally import BoardStats
from .palette import Palette, classic
from .style import BOLD, PLAIN, ColorDepth, Span, paint, style

__all__ = ["BAR_WIDTH", "sparkline", "stats_lines"]

BAR_WIDTH = 30  # the longest bar, in columns, when the terminal has room
_SEED_ROOM = 20  # a 64-bit seed (what r draws) in full; longer --seed values are cut


@dataclass(frozen=True)
class _Glyphs:
    bar: str
    levels: str  # the sparkline, lowest to highest
    dot: str


_UNICODE = _Glyphs(bar="█", levels="▁▂▃▄▅▆▇█", dot="·")
_ASCII = _Glyphs(bar="#", levels="_.-=+*#@", dot="-")


def sparkline(values: Sequence[int], levels: str) -> str:
    """One character per value, its height scaled from the lowest value
    (the first level) to the highest (the last); all equal: the middle."""
    if not values:
        return ""
    low, high = min(values), max(values)
    top = len(levels) - 1
    if high == low:
        return levels[top // 2] * len(values)
    return "".join(levels[round((value - low) * top / (high - low))] for value in values)


def _board_name(board: BoardStats) -> str:
    return f"{board.rows}x{board.cols} to {board.goal}"


def _replay_command(board: BoardStats) -> str:
    command = "ansi2048 --replay-best N"
    if (board.rows, board.cols) != (DEFAULT_SIZE, DEFAULT_SIZE):
        size = str(board.rows) if board.rows == board.cols else f"{board.rows}x{board.cols}"
        command += f" --size {size}"
    if board.goal != default_goal(board.rows, board.cols):  # --replay-best picks it as play does
        command += f" --goal {board.goal}"
    return command


def _median(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.1f}"


def _short(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 3] + "..."


def _marks(game: Record) -> str:
    marks = [name for name, used in (("undo", game.undo), ("assisted", game.ai)) if used]
    if game.daily:
        marks.append("daily")
    return " ".join(marks)


def _board_lines(
    board: BoardStats, depth: ColorDepth, width: int, glyphs: _Glyphs, palette: Palette, replayable: bool
) -> List[str]:
    d = glyphs.dot
    headline: List[Span] = [(_board_name(board), BOLD), (f": {board.played} played {d} {board.won} won", PLAIN)]
    # An assisted game (the AI hinted or played) sets no best but is counted
    # in the rest, as the header says of it: said so, the median of games
    # the best leaves out does not read as a contradiction.
    if board.best or board.assisted < board.played:
        scores: List[Span] = [("  best ", PLAIN), (str(board.best), BOLD)]
        if board.best_unaided != board.best:
            scores.append((f" ({board.best_unaided} without undo or AI)", PLAIN))
    else:
        scores = [("  no best: every game assisted", PLAIN)]
    scores.append((f" {d} median {_median(board.median)}", PLAIN))
    if board.assisted and board.assisted < board.played:
        scores.append((f" {d} {board.assisted} assisted, no best", PLAIN))
    lines = [paint(headline, depth), paint(scores, depth), ""]

    lines.append(paint([("  Biggest tile", BOLD)], depth))
    label_width = max(len(str(tile)) for tile, _ in board.tiles)
    most = max(count for _, count in board.tiles)
    room = max(1, min(BAR_WIDTH, width - label_width - 14))
    for tile, count in board.tiles:
        length = max(1, round(count * room / most))
        bar_style = style(fg=palette.tile(tile)[0])
        label = f"    {str(tile).rjust(label_width)} "
        lines.append(paint([(label, PLAIN), (glyphs.bar * length, bar_style), (f" {count}", PLAIN)], depth))

    recent = board.recent
    lines.append(paint([(f"  Recent scores (last {len(recent)}, oldest first)", BOLD)], depth))
    shown = recent[-max(1, width - 30) :]
    lines.append(f"    {sparkline(shown, glyphs.levels)}  low {min(shown)}, high {max(shown)}")

    top: List[Span] = [(f"  Top {len(board.top)}", BOLD)]
    if replayable:
        top.append((f" (replay one: {_replay_command(board)})", PLAIN))
    lines.append(paint(top, depth))
    lines.append("     #   score   tile  moves  date        seed")
    for rank, game in enumerate(board.top, 1):
        row = f"    {rank:>2} {game.score:>7} {game.biggest:>6} {game.moves:>6}  {game.date[:10]:<10}  "
        marks = _marks(game)
        marks = f"  {marks}" if marks else ""
        # The seed takes the room left on the line (a 64-bit one, as r draws, whole at 80 columns).
        room = max(4, min(_SEED_ROOM, width - 1 - len(row) - len(marks)))
        lines.append(row + _short(str(game.seed), room) + marks)
    return lines


def stats_lines(
    stats: Sequence[BoardStats],
    depth: ColorDepth,
    width: int = 80,
    ascii_only: bool = False,
    palette: Optional[Palette] = None,
    replayable: bool = True,
) -> List[str]:
    """``--stats`` as lines (no newlines), for a terminal ``width`` wide.
    ``replayable``: the top games can be replayed with ``--replay-best``
    where the lines are read (the local game; not over SSH, whose player has
    no such command)."""
    glyphs = _ASCII if ascii_only else _UNICODE
    palette = palette or classic()
    games = sum(board.played for board in stats)
    boards = len(stats)
    counted = f"{games} game{'s' if games != 1 else ''} on {boards} board{'s' if boards != 1 else ''}"
    lines = [paint([(f"Your records: {counted}", BOLD)], depth)]
    for board in stats:
        lines.append("")
        lines.extend(_board_lines(board, depth, width, glyphs, palette, replayable))
    return lines
