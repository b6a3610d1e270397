"""A race's screens (pure): the lobby, the countdown, the race itself (the
player's own board, and every opponent's name, score, biggest tile, moves
and board in miniature where the window has room, beside the board or
below it), and the result table.

Each builder takes the window's size and gives the frame's lines, each at
most ``width`` columns wide, and at most ``height`` of them: a window too
small for the boards shows the numbers alone, and the smallest still its
first lines. Only the player's own board is in colour (the game's own
:func:`~.board.board_lines`); names come in as they may be shown
(:func:`~ansi2048.serve.names.display_name`'s work, not this module's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from ..game.race import Progress, RaceSettings
from .board import ASCII, COMPACT, MEDIUM, NARROW, UNICODE, Layout, board_lines, tile_label
from .codes import visible_width
from .lines import painted
from .palette import Palette
from .style import ColorDepth

__all__ = [
    "RACE_KEYS",
    "RaceScreen",
    "Racer",
    "countdown_lines",
    "expired_line",
    "lobby_lines",
    "race_lines",
    "result_lines",
    "settings_line",
    "waited_line",
    "waiting_lines",
    "words",
]

# The key line of a race: what a player may do, and what a race has not
# (the shorter for a narrower window).
RACE_KEYS = "arrows/wasd/hjkl move · q leaves · no undo, hint or autoplay in a race"
SHORTER_KEYS = (
    "arrows move · q leaves · no undo/hint/autoplay",
    "q leaves · no undo, hint or autoplay",
    "q leaves · no undo",
    "q leaves",
)
# A miniature board's cell: a tile's number in MINI_CELL - 1 columns.
MINI_CELL = 5
# Columns between the player's board and the opponents beside it, and between their cards.
GUTTER = 2
# A card is at least this wide: its numbers' line must be readable.
CARD_WIDTH = 32


@dataclass(frozen=True)
class Racer:
    """One player's game as a race's screen shows it."""

    name: str
    score: int = 0
    biggest: int = 0
    moves: int = 0
    cells: Tuple[int, ...] = ()  # row by row; () before the race has begun
    away: bool = False  # dropped: may connect again while the race lasts
    left: bool = False  # quit the race: keeps their place by what they had
    stuck: bool = False  # their board can move no more


@dataclass(frozen=True)
class RaceScreen:
    """What one player's screen shows during a race."""

    rows: int
    cols: int
    goal: int
    me: Racer
    others: Tuple[Racer, ...]
    seconds_left: Optional[float]  # None: a replay's, which has no clock
    note: str = ""
    spawned: Optional[Tuple[int, int]] = None  # the player's newest tile
    title: str = ""  # a watcher's or a replay's screen ("Watching a race"): ``me`` is then no "you"


def _clock(seconds: float) -> str:
    whole = max(0, int(seconds + 0.999))  # 0:01 is shown until the last second is over
    return f"{whole // 60}:{whole % 60:02d}"


def _cut(text: str, width: int) -> str:
    """Plain ``text`` in at most ``width`` columns."""
    if len(text) <= width:
        return text
    return text[: width - 1] + "~" if width >= 4 else text[: max(0, width)]


def _fit(lines: Sequence[str], width: int, height: int) -> List[str]:
    return [_cut(line, width) for line in lines[: max(0, height)]]


def _state(racer: Racer) -> str:
    return " (left)" if racer.left else " (away)" if racer.away else " (no moves)" if racer.stuck else ""


def card_title(racer: Racer) -> str:
    """An opponent on one line: name, score, biggest tile, moves."""
    return _forms(racer, "")[0]


def _forms(racer: Racer, you: str) -> Tuple[str, ...]:
    """A player's line, in fewer and fewer words (down to the name alone)."""
    name, r = f"{racer.name}{you}{_state(racer)}", racer
    return (
        f"{name}  {_numbers(racer)}",
        f"{name}  {r.score} · tile {r.biggest} · {r.moves} moves",
        f"{name}  {r.score} · tile {r.biggest}",
        f"{name}  {r.score}",
        name,
    )


def _player_lines(racers: Sequence[Racer], you: str, width: int) -> List[str]:
    """A line per player (the first is the screen's own: ``you`` after its
    name), all in the most words with which every one fits ``width``
    (if there are none: each in as many as fit it)."""
    forms = [_forms(racer, you if index == 0 else "") for index, racer in enumerate(racers)]
    for level in range(len(forms[0]) - 1 if forms else 0):  # a name alone only where the numbers do not fit
        if all(len(form[level]) <= width for form in forms):
            return [form[level] for form in forms]
    return [_first_fitting(form, width) for form in forms]


def _numbers(racer: Racer) -> str:
    return f"score {racer.score}  tile {racer.biggest}  moves {racer.moves}"


def keys_line(width: int) -> str:
    """The race's key line for a window ``width`` wide."""
    return _first_fitting((RACE_KEYS, *SHORTER_KEYS), width)


def _first_fitting(lines: Sequence[str], width: int) -> str:
    """The first of ``lines`` (the longest first) that fits in ``width`` columns (none: the last, cut)."""
    return next((line for line in lines if len(line) <= width), _cut(lines[-1], width))


def mini_board(cells: Sequence[int], rows: int, cols: int) -> List[str]:
    """A board in miniature: a line per row, each tile's number in
    ``MINI_CELL - 1`` columns (as the board labels one too big: 2^17)."""
    lines = []
    for row in range(rows):
        values = cells[row * cols : (row + 1) * cols] if cells else [0] * cols
        lines.append(
            "".join(tile_label(value, MINI_CELL - 1).rjust(MINI_CELL) if value else "    ." for value in values)
        )
    return lines


def _own_board(
    screen: RaceScreen, width: int, height: int, depth: ColorDepth, palette: Palette
) -> Tuple[List[str], int]:
    """The player's own board in the largest layout that fits: its painted
    lines and their width (none fits: the miniature, plain)."""
    board = tuple(tuple(screen.me.cells[r * screen.cols : (r + 1) * screen.cols]) for r in range(screen.rows))
    glyphs = ASCII if depth is ColorDepth.NONE else UNICODE
    layout: Layout
    for layout in (MEDIUM, COMPACT, NARROW):
        board_width, board_height = layout.board_size(screen.rows, screen.cols)
        if board_width <= width and board_height <= height:
            lines = board_lines(board, screen.spawned, layout, depth, glyphs, palette)
            return [painted(line, depth) for line in lines], board_width
    mini = mini_board(screen.me.cells, screen.rows, screen.cols)
    return mini, screen.cols * MINI_CELL


def _cards(others: Sequence[Racer], rows: int, cols: int, width: int, height: int) -> List[str]:
    """The opponents in ``width`` x ``height``: cards with their boards in
    miniature in as many columns as fit, if all fit so; else none."""
    if not others or width <= 0 or height <= 0:
        return []
    card_width = max(CARD_WIDTH, cols * MINI_CELL)
    per_row = max(1, (width + GUTTER) // (card_width + GUTTER))
    card_height = rows + 3  # name, numbers, board, a blank line between cards
    card_rows = -(-len(others) // per_row)
    if card_width <= width and card_rows * card_height - 1 <= height:
        lines: List[str] = []
        for start in range(0, len(others), per_row):
            group = others[start : start + per_row]
            blocks = [
                [
                    _cut(racer.name + _state(racer), card_width),
                    _cut(_numbers(racer), card_width),
                    *mini_board(racer.cells, rows, cols),
                ]
                for racer in group
            ]
            for index in range(rows + 2):
                lines.append((" " * GUTTER).join(block[index].ljust(card_width) for block in blocks).rstrip())
            lines.append("")
        return lines[:-1]
    return []


def race_lines(screen: RaceScreen, width: int, height: int, depth: ColorDepth, palette: Palette) -> List[str]:
    """A player's frame during the race: a header, their board, the
    opponents beside it (a wide window) or below it, the key line."""
    me = screen.me
    race = f"{screen.title or 'Race'} to {screen.goal}"
    left = f" · {_clock(screen.seconds_left)} left" if screen.seconds_left is not None else ""
    named = screen.title or "Race"
    clocks = (left[3:], left[3:-5]) if left else ()  # "4:40 left", "4:40"
    headers = (f"{race} · {screen.rows}x{screen.cols}{left}", f"{race}{left}", f"{named}{left}", *clocks)
    header = _first_fitting(headers, width)
    mine, *numbers = _player_lines((me, *screen.others), "" if screen.title else " (you)", width)
    top = [header, mine]
    bottom = words(screen.note, width) if screen.note else []
    if not screen.title:  # a replay's note says its own keys
        bottom.append(keys_line(width))
    room = height - len(top) - len(bottom)
    if room < screen.rows or width < 20:  # no room for a board: the numbers alone
        numbers = [header, mine, *numbers, *bottom]
        return _fit(numbers, width, height)
    board, board_width = _own_board(screen, width, room, depth, palette)
    beside = width - board_width - GUTTER
    lines = list(top)
    side: List[str] = []
    if beside >= CARD_WIDTH:  # cards beside the board, or a line each
        side = _cards(screen.others, screen.rows, screen.cols, beside, room)
        side = side or _player_lines(screen.others, "", beside)[:room]
    if side or not screen.others:
        for index in range(max(len(board), len(side))):
            left = board[index] if index < len(board) else ""
            pad = board_width - visible_width(left)
            right = side[index] if index < len(side) else ""
            lines.append(left + (" " * (pad + GUTTER) + right if right else ""))
    else:
        # Below the board: at least a line each under it (a smaller board, the miniature at the least).
        if room - len(screen.others) - 1 < screen.rows:  # not even that: the numbers alone, every opponent's
            return _fit([header, mine, *numbers, *bottom], width, height)
        if len(board) + 1 + len(screen.others) > room:
            board, _ = _own_board(screen, width, room - len(screen.others) - 1, depth, palette)
        below = room - len(board) - 1
        lines += board
        lines += ["", *(_cards(screen.others, screen.rows, screen.cols, width, below) or numbers[:below])]
    return [_cut(line, width) if not _painted(line) else line for line in lines] + _fit(bottom, width, len(bottom))


def _painted(line: str) -> bool:
    """``line`` has the board's escape codes (measured, never cut: it was laid out to fit)."""
    return "\x1b" in line


def settings_line(settings: RaceSettings) -> str:
    """A race's settings on one line."""
    s = settings
    return f"Race to {s.goal} on {s.rows}x{s.cols}, {s.players} players, {s.minutes} min"


def lobby_lines(
    settings: RaceSettings,
    names: Sequence[str],
    waiting_for: int,
    seconds_left: float,
    width: int,
    height: int,
) -> List[str]:
    """The lobby: the race's settings, who is there, how many are still awaited."""
    awaited = f"waiting for {waiting_for} more player{'s' if waiting_for != 1 else ''}"
    body = [
        settings_line(settings),
        f"In the lobby: {', '.join(names)}",
        f"{awaited} (the lobby closes in {_clock(seconds_left)} if nobody comes)",
        "",
    ]
    return _in_words(body, ["q leaves the lobby"], width, height)


def countdown_lines(settings: RaceSettings, names: Sequence[str], seconds: float, width: int, height: int) -> List[str]:
    """The countdown before the start, the same on every screen."""
    body = [
        settings_line(settings),
        f"Racing: {', '.join(names)}",
        "",
        f"Starting in {max(1, int(seconds + 0.999))}...",
        "",
    ]
    return _in_words(body, [keys_line(width)], width, height)


def _in_words(body: Sequence[str], last: Sequence[str], width: int, height: int) -> List[str]:
    """``body`` then ``last`` in whole words: ``last`` kept at the bottom
    (``body`` shortened for it) while the window has a line for ``body``."""
    above = [line for text in body for line in (words(text, width) if text else [""])]
    below = [line for text in last for line in words(text, width)]
    if height <= len(below):  # a tiny window: the first lines
        return (above + below)[: max(0, height)]
    return above[: height - len(below)] + below


# The result table's head (a window narrower than it has a line per player instead).
TABLE_HEAD = "rank  name               score    tile  moves"


@dataclass(frozen=True)
class Placed:
    """A player's line in the result table."""

    rank: int
    progress: Progress
    verified: bool


def result_lines(
    placed: Sequence[Placed], winner: Optional[str], how: str, width: int, height: int, note: str = ""
) -> List[str]:
    """The result table: rank, name, score, biggest tile, moves; a player
    whose keys did not replay to what they showed is not ranked; ``note``
    under it."""
    title = f"Race over ({how}): {winner} wins" if winner else f"Race over ({how}): no winner"
    if width < len(TABLE_HEAD):  # a narrow window: a line each, in as many words as fit
        rows = [_narrow_row(place, width) for place in placed]
        return (words(title, width) + rows + (["", *words(note, width)] if note else []))[: max(0, height)]
    lines = [title, TABLE_HEAD]
    for place in placed:
        p = place.progress
        rank = f"{place.rank:>4}" if place.verified else "   -"
        row = f"{rank}  {p.name:<16} {p.score:>7} {p.biggest:>7} {p.moves:>6}{'  (left)' if p.left else ''}"
        marks = ("",) if place.verified else ("  not ranked: keys did not replay", "  not ranked")
        lines.append(_first_fitting([row + mark for mark in marks], width))
    if note:
        lines += ["", note]
    return _fit(lines, width, height)


def _narrow_row(place: Placed, width: int) -> str:
    p = place.progress
    who = f"{f'{place.rank}.' if place.verified else '-'} {p.name}{' (left)' if p.left else ''}"
    mark = "" if place.verified else " (not ranked)"
    rows = (
        f"{who}  {p.score} · tile {p.biggest} · {p.moves} moves{mark}",
        f"{who}  {p.score}{mark}",
        f"{who}  {p.score}",
    )
    return _first_fitting(rows, width)


def expired_line(minutes: int) -> str:
    """Said when a lobby never filled."""
    return f"Nobody else came in {minutes} minutes: the lobby is closed."


def words(text: str, width: int) -> List[str]:
    """``text`` in lines of at most ``width`` columns, broken between whole
    words (a word longer than the window, alone: cut)."""
    import textwrap  # here: only the few screens of words need it, not a game's start

    return [_cut(line, width) for line in textwrap.wrap(text, max(1, width), break_long_words=False)] or [""]


def waiting_lines(friend: str, seconds_left: float, width: int, height: int) -> List[str]:
    """``race NAME`` while NAME is in no lobby: whom the player waits for, how long yet."""
    lines = [
        *words(f"Waiting for {friend} to start or join a race", width),
        *words(f"(you meet in their lobby; the wait ends in {_clock(seconds_left)})", width),
        "",
        *words("q stops waiting", width),
    ]
    return lines[: max(0, height)]


def waited_line(friend: str, minutes: int) -> str:
    """Said when the friend did not come."""
    return f"{friend} did not start or join a race in {minutes} minutes: the wait is over."
