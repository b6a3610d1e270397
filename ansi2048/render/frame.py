"""Frames (pure): a :class:`View` of the session in, the lines of one frame
out, for a terminal of a given size; and the plain summary for pipes."""

from __future__ import annotations

import textwrap
import unicodedata
from dataclasses import dataclass, replace
from functools import cache
from typing import List, Optional, Sequence, Tuple

from ..engine import Direction, biggest_tile
from ..session import Session, Status
from .color import mix
from .motion import Phase, Sprite
from .palette import Palette, TilePair, classic
from .style import BOLD, PLAIN, ColorDepth, Span, fit, merge_spans, paint, style

__all__ = [
    "BIG",
    "COMPACT",
    "LAYOUTS",
    "MEDIUM",
    "NARROW",
    "Layout",
    "View",
    "frame_lines",
    "help_lines",
    "layout_for",
    "summary_text",
]

Board = Tuple[Tuple[int, ...], ...]


# -- the view and the layouts ---------------------------------------------------


@dataclass(frozen=True)
class View:
    """Everything one frame shows."""

    board: Board  # rows of tiles, 0 = empty
    spawned: Optional[Tuple[int, int]]  # (row, col) of the newest tile: it must stand apart
    score: int
    best: int
    moves: int
    goal: int
    seed: int
    status: Status
    over: bool = False  # no move left; may go with status WON ("won, and no moves left")
    note: str = ""  # one extra line, e.g. "replay 12/300" or a warning
    replay: bool = False  # keys come from a pipe: the keys line says how to stop instead
    reached: bool = False  # a tile has reached the goal (the banner may be gone)
    ending: str = ""  # play has ended: this line instead of the keys, and no key offered
    gained: int = 0  # points the last move made: "+N" beside the score, briefly
    hint: Optional[Direction] = None  # the AI's suggested move (t), on the note line
    stuck: bool = False  # a hint was asked for and no move changes the board
    autoplay: int = 0  # the AI is playing, this many moves a second (p); 0: it is not
    assisted: bool = False  # the AI played or hinted in this game: its score is no best

    @classmethod
    def of(cls, session: Session, note: str = "", replay: bool = False) -> View:
        """What the screen shows of ``session``."""
        game = session.game
        return cls(
            board=game.board,
            spawned=game.spawned,
            score=game.score,
            best=session.best,
            moves=game.moves,
            goal=game.goal,
            seed=game.seed,
            status=session.status,
            over=game.over,
            note=note,
            replay=replay,
            reached=game.won,
            assisted=session.assisted,
        )


@dataclass(frozen=True)
class Layout:
    """The board's geometry: tiles of ``tile_width`` x ``tile_height``,
    ``col_gap`` grid columns between tiles and beside the board, one grid
    line above and below it, and ``row_gap`` grid lines between rows of tiles
    (0 in the compact layouts: rows touch). A terminal cell is about twice
    as tall as it is wide, so two columns look as wide as one line is tall:
    the layouts with a row gap take two columns between tiles, for gaps that
    look even both ways."""

    name: str
    tile_width: int
    tile_height: int
    row_gap: int
    col_gap: int = 1

    def board_size(self, rows: int, cols: int) -> Tuple[int, int]:
        """(width, height) of the board including its border."""
        width = cols * (self.tile_width + self.col_gap) + self.col_gap
        height = rows * self.tile_height + (rows - 1) * self.row_gap + 2
        return width, height

    def tile_origin(self, row: int, col: int) -> Tuple[int, int]:
        """(line, column) of a tile's top-left cell, relative to the board's."""
        return 1 + row * (self.tile_height + self.row_gap), self.col_gap + col * (self.tile_width + self.col_gap)

    @property
    def number_line(self) -> int:
        """The line within a tile that holds its number."""
        return self.tile_height // 2


# Tried in this order; the first that fits the terminal wins. BIG holds
# 6-digit numbers with a space each side (7 digits still fit) and keeps the
# new tile's marker on its own line; the others are one line tall, the last
# so that a 10x10 board fits an 80-column terminal.
BIG = Layout("big", 8, 3, 1, 2)
MEDIUM = Layout("medium", 7, 1, 1, 2)
COMPACT = Layout("compact", 7, 1, 0)
NARROW = Layout("narrow", 6, 1, 0)
LAYOUTS = (BIG, MEDIUM, COMPACT, NARROW)

# Lines around the board: the header above; status and keys below (+ note).
_HEADER_LINES = 1


def _has_note(view: View) -> bool:
    return bool(view.note or view.hint or view.stuck or view.autoplay)


def _text_lines(view: View) -> int:
    return _HEADER_LINES + 2 + (1 if _has_note(view) else 0)


def _needs(view: View, layout: Layout) -> Tuple[int, int]:
    """The smallest terminal (width, height) that shows ``view`` in ``layout``:
    lines strictly narrower than the terminal, and a free last row."""
    rows = len(view.board)
    cols = len(view.board[0]) if rows else 0
    width, height = layout.board_size(rows, cols)
    return width + 1, height + _text_lines(view) + 1


def layout_for(view: View, width: int, height: int) -> Optional[Layout]:
    """The layout ``frame_lines`` uses for ``view`` on a ``width`` x
    ``height`` terminal (the board starts on line 1, column 0), or None when
    the terminal is too small for any."""
    for layout in LAYOUTS:
        need_width, need_height = _needs(view, layout)
        if width >= need_width and height >= need_height:
            return layout
    return None


# -- glyphs ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Glyphs:
    marker: str  # in the new tile's corner
    arrows: str
    dot: str  # separates the key hints
    dash: str
    frame: str  # the new tile's outline in a tall tile: corners, then the rules


# Glyphs that the Windows console fonts (Consolas, Lucida Console) have and
# that are single-width in non-CJK locales; NONE depth keeps to ASCII, since
# a pipe or a log may not be UTF-8.
_UNICODE = _Glyphs(marker="•", arrows="←↑↓→", dot="·", dash="—", frame="┌┐└┘─│")
_ASCII = _Glyphs(marker="*", arrows="arrows", dot="-", dash="-", frame="++++-|")
# The hint's arrow per direction; ASCII has none that reads as one, the word says it.
_HINT_ARROWS = {Direction.LEFT: "←", Direction.UP: "↑", Direction.DOWN: "↓", Direction.RIGHT: "→"}


def _label(value: int, room: int) -> str:
    """A tile's number in at most ``room`` columns: digits when they fit,
    else the power of two ("2^20"), which fits any tile of any layout."""
    text = str(value)
    if len(text) <= room:
        return text
    if value > 0 and value & (value - 1) == 0:
        text = f"2^{value.bit_length() - 1}"
    return text if len(text) <= room else text[: room - 1] + "+"


def _clean(text: str) -> str:
    """``text`` with anything that is not one printing, single-width column
    (control codes, combining marks, wide characters) replaced by '?', so a
    note cannot break the line-width arithmetic."""
    return "".join("?" if _unprintable(char) else char for char in text)


# Controls, formats, surrogates, combining marks, line and paragraph separators.
_ZERO_WIDTH = frozenset(("Cc", "Cf", "Cs", "Mn", "Me", "Zl", "Zp"))


def _unprintable(char: str) -> bool:
    return unicodedata.category(char) in _ZERO_WIDTH or unicodedata.east_asian_width(char) in ("W", "F")


# -- the board ------------------------------------------------------------------


@cache
def _tile_line(
    value: int,
    new: bool,
    line: int,
    layout: Layout,
    depth: ColorDepth,
    glyphs: _Glyphs,
    palette: Palette,
    colors: Optional[TilePair] = None,
) -> Tuple[Span, ...]:
    """Line ``line`` of one tile, exactly ``layout.tile_width`` columns;
    ``colors`` (background, text) instead of the palette's, for a tile
    fading in.

    Cached: a board repeats few distinct tiles, and building spans per cell
    per frame was most of the render time (benchmarks/render.py)."""
    width = layout.tile_width
    plain = depth is ColorDepth.NONE
    bg, fg = colors or palette.tile(value)
    # BASIC keeps bold for the new tile: on the legacy console bold means a
    # brighter text colour, which would cost contrast on every light tile.
    bold = not plain and (new or depth is not ColorDepth.BASIC)
    # The blanks of a tile share its number's weight (invisible on a blank):
    # one style across the tile, so painting it changes style once, not three times.
    base = PLAIN if plain else style(fg, bg, bold)
    number_style = PLAIN if plain else style(fg, bg, bold, new)
    # The new tile is outlined where the tile is tall enough (findable at a
    # glance on a busy board, in every depth); a one-line tile gets its
    # number bracketed and the marker in its corner instead.
    outlined = new and layout.tile_height >= 3
    marker_here = new and line == 0 and not outlined
    edge_style = PLAIN if plain else style(fg, bg, True)
    cells: List[Span] = [(" ", base)] * width
    if line == layout.number_line:
        room = width - (2 if outlined else 1 if marker_here else 0)
        if value:
            text = _label(value, room)
            if new and not outlined and len(text) + 2 <= room:
                text = f"[{text}]"
        else:
            text = "." if plain else ""
        left = (width - len(text)) // 2
        if marker_here and left == 0:
            left = 1
        for offset, char in enumerate(text):
            cells[left + offset] = (char, number_style)
    if outlined:
        top_left, top_right, bottom_left, bottom_right, rule, side = tuple(glyphs.frame)
        if line == 0:
            cells = [(top_left + rule * (width - 2) + top_right, edge_style)]
        elif line == layout.tile_height - 1:
            cells = [(bottom_left + rule * (width - 2) + bottom_right, edge_style)]
        else:
            cells[0] = cells[-1] = (side, edge_style)
    if marker_here:
        cells[0] = (glyphs.marker, edge_style)
    return tuple(merge_spans(cells))


def _board_lines(view: View, layout: Layout, depth: ColorDepth, glyphs: _Glyphs, palette: Palette) -> List[List[Span]]:
    rows = len(view.board)
    cols = len(view.board[0]) if rows else 0
    width, _ = layout.board_size(rows, cols)
    if depth is ColorDepth.NONE:
        # No backgrounds to draw the grid with: ASCII lines, same geometry.
        # A wider gap draws its bar in its first column: "| 2 | 4 |".
        pad = " " * (layout.col_gap - 1)
        rule: List[Span] = [("+" + ("-" * (layout.tile_width + layout.col_gap - 1) + "+") * cols + pad, PLAIN)]
        gap: Span = ("|" + pad, PLAIN)
    else:
        # A text colour that the gaps never show, the tiles' usual one: going
        # from a tile to a gap then changes only the background.
        grid = style(palette.empty[1], palette.grid)
        rule = [(" " * width, grid)]
        gap = (" " * layout.col_gap, grid)
    lines: List[List[Span]] = [rule]
    for r, row in enumerate(view.board):
        if r:
            lines.extend([rule] * layout.row_gap)
        for line in range(layout.tile_height):
            spans: List[Span] = [gap]
            for c, value in enumerate(row):
                spans.extend(_tile_line(value, view.spawned == (r, c), line, layout, depth, glyphs, palette))
                spans.append(gap)
            lines.append(merge_spans(spans))
    lines.append(rule)
    return lines


def _cells(spans: Sequence[Span]) -> List[Span]:
    """One (character, style) per column."""
    return [(char, span_style) for text, span_style in spans for char in text]


def _sprite_board_lines(
    view: View, sprites: Sequence[Sprite], layout: Layout, depth: ColorDepth, glyphs: _Glyphs, palette: Palette
) -> List[List[Span]]:
    """The board in the middle of a move: the empty board, then each tile
    drawn where it is on this frame (between cells while it slides)."""
    rows = len(view.board)
    cols = len(view.board[0]) if rows else 0
    empty = replace(view, board=((0,) * cols,) * rows, spawned=None)
    canvas = [_cells(spans) for spans in _board_lines(empty, layout, depth, glyphs, palette)]
    width = len(canvas[0])
    step_y, step_x = layout.tile_height + layout.row_gap, layout.tile_width + layout.col_gap
    for sprite in sprites:
        top = 1 + round(sprite.row * step_y)
        left = layout.col_gap + round(sprite.col * step_x)
        colors: Optional[TilePair] = None
        if sprite.phase is Phase.APPEARING and depth is not ColorDepth.NONE:
            # Half faded in from the empty cell's colours: the original's "appear".
            (bg, fg), (empty_bg, _) = palette.tile(sprite.value), palette.empty
            colors = (mix(empty_bg, bg, 0.5), mix(empty_bg, fg, 0.5))
        for line in range(layout.tile_height):
            tile = _cells(_tile_line(sprite.value, False, line, layout, depth, glyphs, palette, colors))
            if sprite.phase is Phase.POPPED and depth is not ColorDepth.NONE:
                # The pop: a column wider each side, over the gap, bold.
                pad = (" ", style(None, palette.tile(sprite.value)[0]))
                tile = [pad] + [(char, style(cell.fg, cell.bg, True)) for char, cell in tile] + [pad]
                start = left - 1
            else:
                start = left
            for offset, cell in enumerate(tile):
                if 0 <= start + offset < width:
                    canvas[top + line][start + offset] = cell
    return [merge_spans(line) for line in canvas]


# -- the text around the board --------------------------------------------------


def _title(goal: int) -> str:
    """The board's title: the game's name when the goal is 2048, else the
    goal named as one (a bare "8" would read as a score)."""
    return "2048" if goal == 2048 else f"goal {goal}"


def _header(view: View) -> List[List[Span]]:
    title = (_title(view.goal), BOLD)
    score = [("Score ", PLAIN), (str(view.score), BOLD)]
    if view.gained:
        score.append((f" +{view.gained}", BOLD))
    best = [("  Best ", PLAIN), (str(view.best), BOLD)]
    moves = [("  Moves ", PLAIN), (str(view.moves), BOLD)]
    seed = [("  Seed ", PLAIN), (str(view.seed), PLAIN)]
    gap = ("  ", PLAIN)
    variants = [
        [title, gap, *score, *best, *moves, *seed],
        [title, gap, *score, *best, *moves],
        [*score, *best, *moves],
        [*score, *best],
        score,
    ]
    if not view.assisted:
        return variants
    # Said where the best is: this game's score does not count for it.
    marked: List[List[Span]] = []
    for variant in variants:
        marked += [[*variant, ("  assisted", PLAIN)], variant]
    return marked


def _banner(view: View, glyphs: _Glyphs, palette: Palette) -> Optional[Tuple[List[str], TilePair]]:
    """The win or game-over message (variants, longest first) and its
    colours, or None while neither is up."""
    goal = view.goal
    won = view.status is Status.WON
    over = view.over or view.status is Status.OVER
    if won and over:
        return [f"You reached {goal}! Game over", "Won! Game over", "Game over"], palette.won
    if won:
        return [f"You reached {goal}!", "You won!", "Won!"], palette.won
    if over:
        return ["Game over", "Over"], palette.over
    return None


def _status(view: View, glyphs: _Glyphs) -> List[List[Span]]:
    """The line under the board: what to do next, or the goal."""
    dot = glyphs.dot
    won = view.status is Status.WON
    over = view.over or view.status is Status.OVER
    # Key hints only while keys work: not in a replay, not once play has ended.
    keys = not view.replay and not view.ending
    if over:
        texts = [f"no moves left {dot} u undo {dot} r new game", "u undo, r new game", "u undo, r new"] if keys else []
        return [[(text, PLAIN)] for text in texts] or [[("", PLAIN)]]
    if won:
        texts = [f"any move plays on {dot} r new game", "any move plays on", "play on"] if keys else []
        return [[(text, PLAIN)] for text in texts] or [[("", PLAIN)]]
    if view.reached:
        return [[(text, PLAIN)] for text in _going_on(view, dot)]
    return [[(f"Join the tiles, get to {view.goal}!", PLAIN)], [(f"Get to {view.goal}!", PLAIN)]]


@cache
def _dimmed(palette: Palette) -> Palette:
    """``palette`` faded toward its grid colour: the board under a message."""

    def dim(pair: TilePair) -> TilePair:
        return mix(pair[0], palette.grid, _DIM), mix(pair[1], palette.grid, _DIM)

    return replace(
        palette,
        tiles={value: dim(pair) for value, pair in palette.tiles.items()},
        beyond=dim(palette.beyond),
        empty=dim(palette.empty),
    )


# How far the board fades toward the grid under a win or game-over message.
_DIM = 0.6


def _overlay(
    board: List[List[Span]], texts: Sequence[str], colors: TilePair, layout: Layout, depth: ColorDepth
) -> List[List[Span]]:
    """The message in a box over the middle of the board, inside its border:
    never wider than the board."""
    canvas = [_cells(spans) for spans in board]
    width = len(canvas[0])
    # Inside the grid border: ASCII draws it as one bar at each edge (and a
    # wider gap's padding after the right one); colours as gap-wide columns.
    start = 1 if depth is ColorDepth.NONE else layout.col_gap
    inner = width - layout.col_gap - start
    text = next((t for t in texts if len(t) + 2 <= inner), texts[-1][: max(0, inner - 2)])
    if depth is ColorDepth.NONE:
        rule = "+" + "-" * (inner - 2) + "+"
        rows = [rule, "|" + text.center(inner - 2) + "|", rule]
        box_style = PLAIN
    else:
        rows = [" " * inner, text.center(inner), " " * inner]
        # BASIC has no bold: the legacy console would make the dark text lighter.
        box_style = style(colors[1], colors[0], depth is not ColorDepth.BASIC)
    middle = len(canvas) // 2
    top = max(1, middle - len(rows) // 2) if len(canvas) >= len(rows) + 2 else max(0, middle - len(rows) // 2)
    for offset, row in enumerate(rows):
        line = top + offset
        if 0 <= line < len(canvas):
            for column, char in enumerate(row):
                canvas[line][start + column] = (char, box_style)
    return [merge_spans(line) for line in canvas]


def _going_on(view: View, dot: str) -> List[str]:
    """The status once the goal is reached and play goes on: the next tile
    to make, or the end of the road on a board that can hold no bigger."""
    # The goal at least: an undo may have taken the goal tile back.
    reached = max(view.goal, *(max(row) for row in view.board))
    rows, cols = len(view.board), len(view.board[0])
    target = reached * 2
    if target > biggest_tile(rows, cols):
        return [f"You reached {reached}, the biggest a {rows}x{cols} board holds!", f"You reached {reached}!"]
    return [
        f"You reached {reached} {dot} keep going for {target}",
        f"Reached {reached} {dot} next {target}",
        f"Next: {target}",
    ]


def _keys(glyphs: _Glyphs, replay: bool, ending: str) -> List[List[Span]]:
    a, d = glyphs.arrows, glyphs.dot
    if ending:  # no key works any more: say so instead
        return [[(_clean(ending), PLAIN)]]
    if replay:  # the keyboard does not play a replay: only Ctrl-C stops it
        return [[("replay " + d + " Ctrl-C stops", PLAIN)], [("Ctrl-C stops", PLAIN)]]
    texts = [
        f"{a} wasd hjkl {d} u undo {d} r new game {d} t hint {d} p autoplay {d} ? help {d} q quit",
        f"{a} move {d} u undo {d} r new {d} t hint {d} p autoplay {d} ? help {d} q quit",
        f"{a} wasd hjkl move {d} u undo {d} r new game {d} ? help {d} q quit",
        f"{a} move {d} u undo {d} r new {d} ? help {d} q quit",
        f"u undo {d} r new {d} ? help {d} q quit",
        f"? help {d} q quit",
        "q quit",
    ]
    return [[(text, PLAIN)] for text in texts]


def help_lines(
    goal: int, depth: ColorDepth, width: int, height: int, *, ascii_only: Optional[bool] = None
) -> List[str]:
    """The help screen (``?``): the keys in the order the key line gives
    them, the rules in two lines, what the marks mean. Within ``width`` x
    ``height`` like a frame: what does not fit is left off from the end,
    and the closing line always shows."""
    if ascii_only is None:
        ascii_only = depth is ColorDepth.NONE
    glyphs = _ASCII if ascii_only else _UNICODE
    rows: List[Tuple[str, str]] = [
        (f"{glyphs.arrows} wasd hjkl", "slide the tiles"),
        ("u", "undo (redoing a move brings the same tile)"),
        ("r", "new game (u brings the old one back)"),
        ("q, Ctrl-C", "quit: the game is kept for next time"),
        ("Ctrl-Z", "suspend to the shell; fg comes back"),
    ]
    marks = [
        (f"{glyphs.marker} in a corner", "the tile that just appeared"),
        ("+N by the score", "the last move's points"),
    ]
    column = max(len(key) for key, _ in rows + marks) + 3
    body: List[List[Span]] = [
        [("keys", BOLD)],
        *[[(f"  {key.ljust(column)}{text}", PLAIN)] for key, text in rows],
        [("", PLAIN)],
        [("rules", BOLD)],
        [("  Tiles slide as far as they go; two equal tiles merge into one.", PLAIN)],
        [(f"  After each move a 2 (or a 4) appears. Make the {goal} tile!", PLAIN)],
        [("", PLAIN)],
        [("marks", BOLD)],
        *[[(f"  {key.ljust(column)}{text}", PLAIN)] for key, text in marks],
    ]
    title = [(f"ansi2048 {glyphs.dash} help", BOLD)]
    closing = [("any key closes this help", BOLD)]
    room = height - 1
    lines = [title, [("", PLAIN)], *body[: max(0, room - 4)], [("", PLAIN)], closing]
    if len(lines) > room:
        lines = lines[-room:] if room > 0 else []
    return [paint(fit([spans], width - 1), depth) for spans in lines]


def _note(view: View, glyphs: _Glyphs) -> List[List[Span]]:
    """The note line: the hint or autoplay's pace, then the note (a warning,
    say), shortest last; the AI's part stays when the note does not fit."""
    dot = glyphs.dot
    ai = ""
    if view.hint is not None:
        word = view.hint.value
        ai = f"hint: {word}" if glyphs is _ASCII else f"hint: {_HINT_ARROWS[view.hint]} {word}"
    elif view.stuck:
        ai = "hint: no move changes the board"
    elif view.autoplay:
        ai = f"autoplay {view.autoplay}/s {dot} p or any move takes over"
    note = _clean(view.note)
    if not ai:
        return [[(note, PLAIN)]]
    if not note:
        return [[(ai, PLAIN)]]
    return [[(f"{ai} {dot} {note}", PLAIN)], [(ai, PLAIN)]]


def _too_small(view: View, width: int, height: int) -> List[str]:
    """A plain message naming the smallest terminal that fits, wrapped over
    the lines there are, shortened when even that does not fit."""
    limit, room = width - 1, height - 1
    if limit < 1 or room < 1:
        return []
    need_width, need_height = _needs(view, LAYOUTS[-1])
    need = f"{need_width}x{need_height}"
    variants = [
        f"terminal too small: need {need}, have {width}x{height}",
        f"too small: need {need}",
        f"need {need}",
        need,
    ]
    for text in variants:
        lines = textwrap.wrap(text, limit, break_long_words=False)
        if len(lines) <= room and all(len(line) <= limit for line in lines):
            return lines
    return [need[:limit]]


# -- frames -----------------------------------------------------------------------


def frame_lines(
    view: View,
    depth: ColorDepth,
    width: int,
    height: int,
    *,
    ascii_only: Optional[bool] = None,
    palette: Optional[Palette] = None,
    sprites: Optional[Sequence[Sprite]] = None,
    shake: int = 0,
) -> List[str]:
    """The frame for a ``width`` x ``height`` terminal, one string per line,
    without newlines. Every line's visible width is < ``width`` and there are
    at most ``height - 1`` lines (the last row stays free for the cursor).

    ``ascii_only`` picks ASCII glyphs for the marker, arrows and dashes; by
    default they are ASCII exactly when ``depth`` is NONE. ``palette``
    defaults to the original game's colours. ``sprites`` draws the board in
    the middle of a move (:mod:`.motion`) instead of ``view.board``;
    ``shake`` shifts the board that many columns right, where it fits (a
    move that changes nothing).
    """
    layout = layout_for(view, width, height)
    if layout is None:
        return _too_small(view, width, height)
    if ascii_only is None:
        ascii_only = depth is ColorDepth.NONE
    glyphs = _ASCII if ascii_only else _UNICODE
    palette = palette or classic()
    limit = width - 1
    rows = len(view.board)
    board_width, _ = layout.board_size(rows, len(view.board[0]) if rows else 0)
    lines = [fit(_header(view), limit)]
    banner = _banner(view, glyphs, palette) if sprites is None else None
    board_palette = _dimmed(palette) if banner is not None and depth is not ColorDepth.NONE else palette
    if sprites is None:
        board = _board_lines(view, layout, depth, glyphs, board_palette)
    else:
        board = _sprite_board_lines(view, sprites, layout, depth, glyphs, palette)
    if banner is not None:
        board = _overlay(board, banner[0], banner[1], layout, depth)
    shake = min(shake, limit - board_width)
    if shake > 0:
        board = [[(" " * shake, PLAIN), *line] for line in board]
    lines.extend(board)
    lines.append(fit(_status(view, glyphs), limit))
    if _has_note(view):
        lines.append(fit(_note(view, glyphs), limit))
    lines.append(fit(_keys(glyphs, view.replay, view.ending), limit))
    return [paint(spans, depth) for spans in lines]


def summary_text(view: View, depth: ColorDepth, palette: Optional[Palette] = None) -> str:
    """The final board for a pipe or a log, then one line of numbers.

    Right-aligned numbers, '.' for empty cells, a '*' after the newest tile
    (no colour can be assumed to show it). No escape codes at depth NONE;
    otherwise each cell is painted in its tile's colours."""
    palette = palette or classic()
    labels = [[str(value) if value else "." for value in row] for row in view.board]
    width = max((len(label) for row in labels for label in row), default=1)
    out: List[str] = []
    for r, row in enumerate(view.board):
        spans: List[Span] = []
        for c, value in enumerate(row):
            new = view.spawned == (r, c)
            if c:
                spans.append((" ", PLAIN))
            bg, fg = palette.tile(value)
            spans.append((labels[r][c].rjust(width) + ("*" if new else " "), style(fg, bg, new)))
        line = paint(spans, depth)
        out.append(line.rstrip() if depth is ColorDepth.NONE else line)
    biggest = max((max(row) for row in view.board if row), default=0)
    stats = f"score {view.score}  moves {view.moves}  biggest {biggest}  seed {view.seed}"
    if view.status is Status.WON or biggest >= view.goal:
        stats += "  won"
    if view.over or view.status is Status.OVER:
        stats += "  game over"
    out.append(stats)
    return "\n".join(out) + "\n"
