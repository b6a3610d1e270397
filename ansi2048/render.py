"""What the player sees: state in, text out (pure, no I/O).

``frame_lines`` turns a :class:`View` into the lines of one frame for a
terminal of a given size; ``Repainter`` wraps successive frames in the escape
codes that redraw them in place; ``summary_text`` is the final board for a
pipe or a log. Colour comes in four depths (:class:`ColorDepth`), chosen once
by ``choose_depth`` from the mode, the environment and the console.

Every glyph used is single-width, so a line's visible width is its length once
the escape codes are stripped (:func:`visible_width`). Frame lines are kept
strictly narrower than the terminal: a line that fills the last column leaves
the cursor in a pending-wrap state that breaks the cursor-up arithmetic of the
next repaint.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from .game import Session, Status

__all__ = [
    "BIG",
    "COMPACT",
    "ERASE_DOWN",
    "ERASE_LINE",
    "HIDE_CURSOR",
    "LAYOUTS",
    "MEDIUM",
    "NARROW",
    "SGR_RESET",
    "SHOW_CURSOR",
    "ColorDepth",
    "Layout",
    "Repainter",
    "View",
    "choose_depth",
    "frame_lines",
    "layout_for",
    "nearest_xterm256",
    "summary_text",
    "visible_width",
]

Rgb = Tuple[int, int, int]
Board = Tuple[Tuple[int, ...], ...]

SGR_RESET = "\x1b[0m"
ERASE_LINE = "\x1b[K"  # from the cursor to the end of the line
ERASE_DOWN = "\x1b[J"  # from the cursor to the end of the screen
HIDE_CURSOR = "\x1b[?25l"
SHOW_CURSOR = "\x1b[?25h"

# CSI sequences (SGR, cursor moves, private modes) and two-byte escapes.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def visible_width(text: str) -> int:
    """Columns ``text`` takes on screen: its length without escape sequences.

    Exact because the renderer only emits single-width glyphs."""
    return len(_ESCAPE.sub("", text))


# -- colour depth -------------------------------------------------------------


class ColorDepth(Enum):
    """How many colours the terminal shows. Values order the depths, so a
    depth can be capped (the legacy Windows console takes at most BASIC)."""

    NONE = 0  # no escape codes at all
    BASIC = 1  # SGR 30-37, 40-47, 90-97, 100-107: what colorama converts
    EXTENDED = 2  # xterm 256 colours (38;5;n)
    TRUE = 3  # 24-bit (38;2;r;g;b)


_MODES = ("auto", "always", "never")


def choose_depth(mode: str, is_tty: bool, env: Mapping[str, str], legacy_console: bool = False) -> ColorDepth:
    """The colour depth for ``--color mode`` on a stream.

    ``auto`` gives colour only to a terminal, and honours ``NO_COLOR`` (any
    non-empty value) and ``TERM=dumb``. ``always`` is the user asking
    explicitly, so it overrides those, still taking the depth from the hints:
    ``COLORTERM=truecolor|24bit`` (or Windows Terminal's ``WT_SESSION``) ->
    TRUE, ``TERM=*256color*`` -> EXTENDED,
    otherwise BASIC, the depth every ANSI terminal has. ``legacy_console``
    (colorama had to wrap the stream) caps the depth at BASIC, because
    colorama garbles 256-colour and 24-bit codes there.
    """
    if mode not in _MODES:
        raise ValueError(f"color mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if mode == "never":
        return ColorDepth.NONE
    term = env.get("TERM", "")
    if mode == "auto" and (not is_tty or env.get("NO_COLOR") or term == "dumb"):
        return ColorDepth.NONE
    # Windows Terminal sets WT_SESSION, not COLORTERM, and has 24-bit colour.
    if env.get("COLORTERM", "").lower() in ("truecolor", "24bit") or env.get("WT_SESSION"):
        depth = ColorDepth.TRUE
    elif "256color" in term:
        depth = ColorDepth.EXTENDED
    else:
        depth = ColorDepth.BASIC
    if legacy_console and depth.value > ColorDepth.BASIC.value:
        depth = ColorDepth.BASIC
    return depth


# -- 256 colours ----------------------------------------------------------------

# The xterm 256-colour palette beyond the 16 system colours (whose actual
# colours vary by terminal, so they are never chosen): a 6x6x6 cube at these
# channel levels (index 16 + 36r + 6g + b), then a 24-step grey ramp (index
# 232 + i, level 8 + 10i).
_CUBE_LEVELS = (0, 95, 135, 175, 215, 255)
_GREY_LEVELS = tuple(8 + 10 * i for i in range(24))


def _xterm_rgb(index: int) -> Rgb:
    if index >= 232:
        level = 8 + 10 * (index - 232)
        return (level, level, level)
    r, rest = divmod(index - 16, 36)
    g, b = divmod(rest, 6)
    return (_CUBE_LEVELS[r], _CUBE_LEVELS[g], _CUBE_LEVELS[b])


def _distance(a: Rgb, b: Rgb) -> int:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2


def _nearest_level(value: int, levels: Sequence[int]) -> int:
    # The first of equally near levels: the lower one, which keeps ties on the
    # lowest palette index, like a brute-force min over the indices would.
    return min(range(len(levels)), key=lambda i: abs(levels[i] - value))


def nearest_xterm256(rgb: Rgb, exclude: FrozenSet[int] = frozenset()) -> int:
    """The xterm colour index (16-255) nearest to ``rgb`` in RGB space,
    skipping the indices in ``exclude``; ties go to the lowest index.

    Without exclusions it is computed, not searched: squared distance is a sum
    over channels, so the nearest cube colour takes the nearest level per
    channel, and the nearest grey is the ramp level nearest the channel mean.
    """
    if exclude:
        candidates = [i for i in range(16, 256) if i not in exclude]
        if not candidates:
            raise ValueError("every colour is excluded")
        return min(candidates, key=lambda i: _distance(rgb, _xterm_rgb(i)))
    r, g, b = (_nearest_level(channel, _CUBE_LEVELS) for channel in rgb)
    cube = 16 + 36 * r + 6 * g + b
    # sum((c - g)^2) over the channels is (3g - sum(c))^2 / 3 + a constant.
    total = sum(rgb)
    grey = 232 + min(range(len(_GREY_LEVELS)), key=lambda i: abs(3 * _GREY_LEVELS[i] - total))
    return cube if _distance(rgb, _xterm_rgb(cube)) <= _distance(rgb, _xterm_rgb(grey)) else grey


# -- the palette ----------------------------------------------------------------


@dataclass(frozen=True)
class _Color:
    """One palette entry: its 24-bit colour, and the 16-colour SGR foreground
    code (30-37, 90-97; +10 as a background) picked by hand for BASIC, where
    "nearest" would turn most tiles the same yellow."""

    rgb: Rgb
    basic: int


def _color(hex_rgb: int, basic: int) -> _Color:
    return _Color(((hex_rgb >> 16) & 0xFF, (hex_rgb >> 8) & 0xFF, hex_rgb & 0xFF), basic)


@dataclass(frozen=True, eq=False)
class _Style:
    """A text style. Made only through ``_style``, which returns one object
    per distinct style, so styles compare and hash by identity: a field-wise
    dataclass ``__eq__`` per span was most of a frame's cost."""

    fg: Optional[_Color] = None
    bg: Optional[_Color] = None
    bold: bool = False
    underline: bool = False


def _style(
    fg: Optional[_Color] = None, bg: Optional[_Color] = None, bold: bool = False, underline: bool = False
) -> _Style:
    # Positional into the cache, so every spelling of a style is one entry.
    return _interned_style(fg, bg, bold, underline)


@cache
def _interned_style(fg: Optional[_Color], bg: Optional[_Color], bold: bool, underline: bool) -> _Style:
    return _Style(fg, bg, bold, underline)


_PLAIN = _style()
_BOLD = _style(bold=True)

# The original game's colours (gabrielecirulli/2048), with a 16-colour pick
# per tile that keeps neighbouring values apart: light backgrounds take black
# text, dark ones bright white.
_DARK = 0x776E65
_LIGHT = 0xF9F6F2
_EMPTY_BG = _color(0xCDC1B4, 37)  # light grey
_GRID_BG = _color(0xBBADA0, 90)  # dark grey
_EMPTY_FG = _color(_DARK, 30)
# value: (background, text)
_TILES: Dict[int, Tuple[_Color, _Color]] = {
    2: (_color(0xEEE4DA, 97), _color(_DARK, 30)),
    4: (_color(0xEDE0C8, 93), _color(_DARK, 30)),
    8: (_color(0xF2B179, 33), _color(_LIGHT, 97)),
    16: (_color(0xF59563, 91), _color(_LIGHT, 30)),
    32: (_color(0xF67C5F, 31), _color(_LIGHT, 97)),
    64: (_color(0xF65E3B, 35), _color(_LIGHT, 97)),
    128: (_color(0xEDCF72, 95), _color(_LIGHT, 30)),
    256: (_color(0xEDCC61, 96), _color(_LIGHT, 30)),
    512: (_color(0xEDC850, 36), _color(_LIGHT, 97)),
    1024: (_color(0xEDC53F, 94), _color(_LIGHT, 97)),
    2048: (_color(0xEDC22E, 92), _color(_LIGHT, 30)),
}
_BEYOND = (_color(0x3C3A32, 30), _color(_LIGHT, 97))  # every tile above 2048


def _tile_colors(value: int) -> Tuple[_Color, _Color]:
    if not value:
        return _EMPTY_BG, _EMPTY_FG
    return _TILES.get(value, _BEYOND)


# Squared RGB distance the board's 256-colour backgrounds keep from each
# other (30): two steps of the grey ramp, so the grid and the empty cells
# never land on neighbouring greys; any two cube colours are further apart.
_MIN_SEPARATION = 30**2


@cache
def _xterm_table() -> Dict[Rgb, int]:
    """256-colour indices for the board's backgrounds, grid first, then the
    empty cell, then the tiles in order: each the nearest one that keeps
    clear of those already taken. Plain nearest maps 256, 512 and 1024
    (near-identical yellows) to one colour, and the grid and the empty cells
    to greys one step apart; distinct things should look distinct."""
    taken: List[int] = []
    table: Dict[Rgb, int] = {}
    for color in (_GRID_BG, _EMPTY_BG, *(bg for bg, _ in _TILES.values()), _BEYOND[0]):
        crowded = frozenset(
            i for i in range(16, 256) if any(_distance(_xterm_rgb(i), _xterm_rgb(t)) < _MIN_SEPARATION for t in taken)
        )
        index = nearest_xterm256(color.rgb, crowded | frozenset(taken))
        table[color.rgb] = index
        taken.append(index)
    return table


def _xterm_index(rgb: Rgb) -> int:
    index = _xterm_table().get(rgb)
    return nearest_xterm256(rgb) if index is None else index


@cache
def _sgr(style: _Style, depth: ColorDepth) -> str:
    """One complete SGR sequence for ``style``: it starts from a reset, so
    no attribute leaks from the span before it."""
    codes = ["0"]
    if style.bold:
        codes.append("1")
    # Underline (4) is not among what colorama converts: BASIC goes without.
    if style.underline and depth is not ColorDepth.BASIC:
        codes.append("4")
    for color, base in ((style.fg, 38), (style.bg, 48)):
        if color is None:
            continue
        if depth is ColorDepth.TRUE:
            codes.append("{};2;{};{};{}".format(base, *color.rgb))
        elif depth is ColorDepth.EXTENDED:
            codes.append(f"{base};5;{_xterm_index(color.rgb)}")
        else:
            codes.append(str(color.basic + (10 if base == 48 else 0)))
    return "\x1b[" + ";".join(codes) + "m"


Span = Tuple[str, _Style]


def _paint(spans: Sequence[Span], depth: ColorDepth) -> str:
    """Spans as text: SGR only where the style changes, and a reset at the end
    so ERASE_LINE after the line clears with the default background."""
    if depth is ColorDepth.NONE:
        return "".join(text for text, _ in spans)
    out: List[str] = []
    current = _PLAIN
    for text, style in spans:
        if not text:
            continue
        if style is not current:  # styles are interned: identity is equality
            out.append(_sgr(style, depth))
            current = style
        out.append(text)
    if current != _PLAIN:
        out.append(SGR_RESET)
    return "".join(out)


def _width(spans: Sequence[Span]) -> int:
    return sum(len(text) for text, _ in spans)


def _fit(variants: Sequence[Sequence[Span]], limit: int) -> List[Span]:
    """The first variant (longest first) that fits in ``limit`` columns, else
    the last one cut to fit."""
    for spans in variants:
        if _width(spans) <= limit:
            return list(spans)
    out: List[Span] = []
    room = limit
    for text, style in variants[-1]:
        if room <= 0:
            break
        out.append((text[:room], style))
        room -= len(text[:room])
    return out


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
        )


@dataclass(frozen=True)
class Layout:
    """The board's geometry: tiles of ``tile_width`` x ``tile_height``, one
    grid column between tiles and around the board, and ``row_gap`` grid lines
    between rows of tiles (0 in the compact layouts: rows touch)."""

    name: str
    tile_width: int
    tile_height: int
    row_gap: int

    def board_size(self, rows: int, cols: int) -> Tuple[int, int]:
        """(width, height) of the board including its border."""
        width = cols * (self.tile_width + 1) + 1
        height = rows * self.tile_height + (rows - 1) * self.row_gap + 2
        return width, height

    def tile_origin(self, row: int, col: int) -> Tuple[int, int]:
        """(line, column) of a tile's top-left cell, relative to the board's."""
        return 1 + row * (self.tile_height + self.row_gap), 1 + col * (self.tile_width + 1)

    @property
    def number_line(self) -> int:
        """The line within a tile that holds its number."""
        return self.tile_height // 2


# Tried in this order; the first that fits the terminal wins. BIG holds
# 6-digit numbers with a space each side (7 digits still fit) and keeps the
# new tile's marker on its own line; the others are one line tall, the last
# so that a 10x10 board fits an 80-column terminal.
BIG = Layout("big", 8, 3, 1)
MEDIUM = Layout("medium", 7, 1, 1)
COMPACT = Layout("compact", 7, 1, 0)
NARROW = Layout("narrow", 6, 1, 0)
LAYOUTS = (BIG, MEDIUM, COMPACT, NARROW)

# Lines around the board: the header above; status and keys below (+ note).
_HEADER_LINES = 1


def _text_lines(view: View) -> int:
    return _HEADER_LINES + 2 + (1 if view.note else 0)


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


# Glyphs that the Windows console fonts (Consolas, Lucida Console) have and
# that are single-width in non-CJK locales; NONE depth keeps to ASCII, since
# a pipe or a log may not be UTF-8.
_UNICODE = _Glyphs(marker="•", arrows="←↑↓→", dot="·", dash="—")
_ASCII = _Glyphs(marker="*", arrows="arrows", dot="-", dash="-")


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
    value: int, new: bool, line: int, layout: Layout, depth: ColorDepth, glyphs: _Glyphs
) -> Tuple[Span, ...]:
    """Line ``line`` of one tile, exactly ``layout.tile_width`` columns.

    Cached: a board repeats few distinct tiles, and building spans per cell
    per frame was most of the render time (benchmarks/render.py)."""
    width = layout.tile_width
    plain = depth is ColorDepth.NONE
    bg, fg = _tile_colors(value)
    base = _PLAIN if plain else _style(fg, bg)
    # BASIC keeps bold for the new tile: on the legacy console bold means a
    # brighter text colour, which would cost contrast on every light tile.
    bold = not plain and (new or depth is not ColorDepth.BASIC)
    number_style = _PLAIN if plain else _style(fg, bg, bold, new)
    marker_here = new and line == 0
    cells: List[Span] = [(" ", base)] * width
    if line == layout.number_line:
        room = width - 1 if marker_here else width
        if value:
            text = _label(value, room)
            # No colour to set it apart: brackets as well as the corner marker.
            if plain and new and len(text) + 2 <= room:
                text = f"[{text}]"
        else:
            text = "." if plain else ""
        left = (width - len(text)) // 2
        if marker_here and left == 0:
            left = 1
        for offset, char in enumerate(text):
            cells[left + offset] = (char, number_style)
    if marker_here:
        cells[0] = (glyphs.marker, _PLAIN if plain else _style(fg, bg, True))
    return tuple(_merge(cells))


def _merge(cells: Sequence[Span]) -> List[Span]:
    out: List[Span] = []
    for text, style in cells:
        if out and out[-1][1] is style:
            out[-1] = (out[-1][0] + text, style)
        else:
            out.append((text, style))
    return out


def _board_lines(view: View, layout: Layout, depth: ColorDepth, glyphs: _Glyphs) -> List[List[Span]]:
    rows = len(view.board)
    cols = len(view.board[0]) if rows else 0
    width, _ = layout.board_size(rows, cols)
    if depth is ColorDepth.NONE:
        # No backgrounds to draw the grid with: ASCII lines, same geometry.
        rule: List[Span] = [("+" + ("-" * layout.tile_width + "+") * cols, _PLAIN)]
        gap: Span = ("|", _PLAIN)
    else:
        grid = _style(None, _GRID_BG)
        rule = [(" " * width, grid)]
        gap = (" ", grid)
    lines: List[List[Span]] = [rule]
    for r, row in enumerate(view.board):
        if r:
            lines.extend([rule] * layout.row_gap)
        for line in range(layout.tile_height):
            spans: List[Span] = [gap]
            for c, value in enumerate(row):
                spans.extend(_tile_line(value, view.spawned == (r, c), line, layout, depth, glyphs))
                spans.append(gap)
            lines.append(_merge(spans))
    lines.append(rule)
    return lines


# -- the text around the board --------------------------------------------------


def _header(view: View) -> List[List[Span]]:
    title = (str(view.goal), _BOLD)
    score = [("Score ", _PLAIN), (str(view.score), _BOLD)]
    best = [("  Best ", _PLAIN), (str(view.best), _BOLD)]
    moves = [("  Moves ", _PLAIN), (str(view.moves), _BOLD)]
    seed = [("  Seed ", _PLAIN), (str(view.seed), _PLAIN)]
    gap = ("  ", _PLAIN)
    return [
        [title, gap, *score, *best, *moves, *seed],
        [title, gap, *score, *best, *moves],
        [*score, *best, *moves],
        [*score, *best],
        score,
    ]


def _status(view: View, glyphs: _Glyphs, depth: ColorDepth) -> List[List[Span]]:
    goal, dash = view.goal, glyphs.dash
    won = view.status is Status.WON
    over = view.over or view.status is Status.OVER
    if won and over:
        texts = [
            f"You reached {goal}! Game over {dash} r new game, u undo, q quit",
            f"You reached {goal}! Game over: r new, u undo, q quit",
            f"Reached {goal}! Game over: r, u, q",
            "Won! Game over",
        ]
        colors = _TILES[2048]
    elif won:
        texts = [
            f"You reached {goal}! Any move keeps going, r new game, q quit",
            f"You reached {goal}! Keep going, r new, q quit",
            f"You reached {goal}!",
            "You won!",
        ]
        colors = _TILES[2048]
    elif over:
        texts = [
            f"Game over {dash} r new game, u undo, q quit",
            "Game over: r new, u undo, q quit",
            "Game over",
        ]
        colors = (_TILES[2][0], _color(_DARK, 30))
    else:
        return [[(f"Join the tiles, get to {goal}!", _PLAIN)], [(f"Get to {goal}!", _PLAIN)]]
    if depth is ColorDepth.NONE:
        return [[(text, _PLAIN)] for text in texts]
    # A banner: the text on the goal tile's (won) or a light tile's (over) colours.
    style = _style(colors[1], colors[0], True)
    return [[(f" {text} ", style)] for text in texts]


def _keys(glyphs: _Glyphs, replay: bool) -> List[List[Span]]:
    a, d = glyphs.arrows, glyphs.dot
    if replay:  # the keyboard does not play a replay: only Ctrl-C stops it
        return [[("replay " + d + " Ctrl-C stops", _PLAIN)], [("Ctrl-C stops", _PLAIN)]]
    texts = [
        f"{a} / wasd / hjkl move {d} u undo {d} r new game {d} q quit",
        f"{a} wasd hjkl move {d} u undo {d} r new {d} q quit",
        f"{a} move {d} u undo {d} r new {d} q quit",
        f"u undo {d} r new {d} q quit",
        "q quit",
    ]
    return [[(text, _PLAIN)] for text in texts]


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
    view: View, depth: ColorDepth, width: int, height: int, *, ascii_only: Optional[bool] = None
) -> List[str]:
    """The frame for a ``width`` x ``height`` terminal, one string per line,
    without newlines. Every line's visible width is < ``width`` and there are
    at most ``height - 1`` lines (the last row stays free for the cursor).

    ``ascii_only`` picks ASCII glyphs for the marker, arrows and dashes; by
    default they are ASCII exactly when ``depth`` is NONE.
    """
    layout = layout_for(view, width, height)
    if layout is None:
        return _too_small(view, width, height)
    if ascii_only is None:
        ascii_only = depth is ColorDepth.NONE
    glyphs = _ASCII if ascii_only else _UNICODE
    limit = width - 1
    lines = [_fit(_header(view), limit)]
    lines.extend(_board_lines(view, layout, depth, glyphs))
    lines.append(_fit(_status(view, glyphs, depth), limit))
    if view.note:
        lines.append(_fit([[(_clean(view.note), _PLAIN)]], limit))
    lines.append(_fit(_keys(glyphs, view.replay), limit))
    return [_paint(spans, depth) for spans in lines]


def summary_text(view: View, depth: ColorDepth) -> str:
    """The final board for a pipe or a log, then one line of numbers.

    Right-aligned numbers, '.' for empty cells, a '*' after the newest tile
    (no colour can be assumed to show it). No escape codes at depth NONE;
    otherwise each cell is painted in its tile's colours."""
    labels = [[str(value) if value else "." for value in row] for row in view.board]
    width = max((len(label) for row in labels for label in row), default=1)
    out: List[str] = []
    for r, row in enumerate(view.board):
        spans: List[Span] = []
        for c, value in enumerate(row):
            new = view.spawned == (r, c)
            if c:
                spans.append((" ", _PLAIN))
            bg, fg = _tile_colors(value)
            style = _style(fg, bg, new)
            spans.append((labels[r][c].rjust(width) + ("*" if new else " "), style))
        line = _paint(spans, depth)
        out.append(line.rstrip() if depth is ColorDepth.NONE else line)
    biggest = max((max(row) for row in view.board if row), default=0)
    stats = f"score {view.score}  moves {view.moves}  biggest {biggest}  seed {view.seed}"
    if view.status is Status.WON or biggest >= view.goal:
        stats += "  won"
    if view.over or view.status is Status.OVER:
        stats += "  game over"
    out.append(stats)
    return "\n".join(out) + "\n"


# -- repainting ---------------------------------------------------------------------


class Repainter:
    """Builds what to write so each frame replaces the last one in place.

    Inline, like rich's live display: no alternate screen and no clearing, so
    the final board stays in the scrollback. It only remembers the height of
    the frame on screen; the caller writes each returned string in one write
    and flushes.
    """

    def __init__(self, hide_cursor: bool = True, in_place: bool = True) -> None:
        # hide_cursor is False on the legacy Windows console, where colorama
        # prints ESC[?25l literally instead of hiding the cursor. in_place is
        # False for TERM=dumb, which cannot move the cursor: frames then
        # follow each other down the screen, with no escape codes at all.
        self._in_place = in_place
        self._hide_cursor = hide_cursor and in_place
        self._hidden = False
        self._height = 0  # lines of the frame on screen; 0: none
        self._widths: List[int] = []  # their visible widths, for a resize

    def _rows_above(self, width: Optional[int]) -> int:
        """How far up the frame on screen starts, from its last line.

        Every line was narrower than the terminal when drawn. If the window
        has since become narrower, terminals that reflow (tmux, VTE, iTerm2,
        Windows Terminal) now show a long line on several rows: count them."""
        if width is None or width <= 0 or all(w < width for w in self._widths):
            return self._height - 1
        return sum(max(1, -(-w // width)) for w in self._widths) - 1

    def frame(self, lines: Sequence[str], width: Optional[int] = None) -> str:
        """Draw ``lines``; the cursor is left at the end of the last one.

        Going back up is relative (``\\r`` then ``ESC[nA``), so it still works
        after the first frame scrolled the screen; each line then erases the
        rest of the old line under it, and ``ESC[J`` what a taller frame left
        below. Lines are joined by ``\\n``: the terminal's output processing
        (ONLCR) makes that a carriage return too."""
        if not self._in_place:
            self._height = len(lines)
            return ("\n" if self._height else "") + "\n".join(lines) + "\n"
        out: List[str] = []
        rows_on_screen = 0
        if self._height:
            out.append("\r")
            up = self._rows_above(width)
            rows_on_screen = up + 1
            if up > 0:
                out.append(f"\x1b[{up}A")
        elif self._hide_cursor:
            out.append(HIDE_CURSOR)
            self._hidden = True
        out.append("\n".join(_closed(line) + ERASE_LINE for line in lines))
        if len(lines) < rows_on_screen:
            out.append(ERASE_DOWN)
        self._height = len(lines)
        self._widths = [visible_width(line) for line in lines]
        return "".join(out)

    def close(self) -> str:
        """What to write at exit: reset colours, show the cursor again, and
        end the frame's last line so the shell prompt comes below the board."""
        if not self._in_place:
            self.reset()
            return ""
        out = [SGR_RESET]
        if self._hidden:
            out.append(SHOW_CURSOR)
            self._hidden = False
        if self._height:
            out.append("\n")
        self.reset()
        return "".join(out)

    def reset(self) -> None:
        """Forget the frame on screen (something else was printed after it):
        the next frame is drawn from the cursor, as the first one was."""
        self._height = 0
        self._widths = []


def _closed(line: str) -> str:
    # ERASE_LINE fills with the current background: a line that leaves a
    # colour on would paint the rest of the row.
    if "\x1b[" in line and not line.endswith(SGR_RESET):
        return line + SGR_RESET
    return line
