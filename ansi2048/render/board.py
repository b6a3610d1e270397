"""The board (pure): its geometry (:class:`Layout`), its tiles line by
line, and the board under a win or game-over message (faded, the message
on it); :mod:`.moving` draws it in the middle of a move."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from ..game.engine import Board
from .color import contrast_ratio, mix, shown_rgb
from .lines import Canvas, Line, Piece, piece
from .palette import RAMP, Palette, TilePair, basic_text, hue_keeping_xterm, separated_xterm
from .style import PLAIN, Color, ColorDepth, Rgb, Span, Style, merge_spans, style

__all__ = [
    "ASCII",
    "BIG",
    "COMPACT",
    "HUGE",
    "LARGE",
    "LAYOUTS",
    "MEDIUM",
    "NARROW",
    "UNICODE",
    "BoardLook",
    "Glyphs",
    "Layout",
    "board_lines",
    "board_look",
    "dimmed",
    "overlay",
    "tile_line",
]


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


# Tried in this order; the first that fits the terminal wins: tiles grow
# with the window (HUGE and LARGE, BIG's shape scaled up: a 4x4 board takes
# LARGE from 59x30, HUGE from 75x38). BIG holds
# 6-digit numbers with a space each side (7 digits still fit) and keeps the
# new tile's marker on its own line; the others are one line tall, the last
# so that a 10x10 board fits an 80-column terminal.
HUGE = Layout("huge", 16, 7, 1, 2)
LARGE = Layout("large", 12, 5, 1, 2)
BIG = Layout("big", 8, 3, 1, 2)
MEDIUM = Layout("medium", 7, 1, 1, 2)
COMPACT = Layout("compact", 7, 1, 0)
NARROW = Layout("narrow", 6, 1, 0)
LAYOUTS = (HUGE, LARGE, BIG, MEDIUM, COMPACT, NARROW)


@dataclass(frozen=True)
class Glyphs:
    marker: str  # in the new tile's corner
    arrows: str
    dot: str  # separates the key hints
    dash: str
    frame: str  # the new tile's outline in a tall tile: corners, then the rules


# Glyphs that the Windows console fonts (Consolas, Lucida Console) have and
# that are single-width in non-CJK locales; NONE depth keeps to ASCII, since
# a pipe or a log may not be UTF-8.
UNICODE = Glyphs(marker="•", arrows="←↑↓→", dot="·", dash="—", frame="┌┐└┘─│")
ASCII = Glyphs(marker="*", arrows="arrows", dot="-", dash="-", frame="++++-|")


def tile_label(value: int, room: int) -> str:
    """A tile's number in at most ``room`` columns: digits when they fit,
    else the power of two ("2^20"), which fits any tile of any layout."""
    text = str(value)
    if len(text) <= room:
        return text
    if value > 0 and value & (value - 1) == 0:
        text = f"2^{value.bit_length() - 1}"
    return text if len(text) <= room else text[: room - 1] + "+"


# -- the board ------------------------------------------------------------------

# The caches' bounds (see .lines on why each is bounded): board rows of a few
# frames (a move changes some rows and leaves the others, and a game goes back
# to the same rows often); tiles' lines; and what depends on the layout,
# depth, glyphs and palette only (a few dozen combinations in use).
_ROWS_CACHED = 1024
_TILES_CACHED = 4096
_LOOKS_CACHED = 256


@lru_cache(maxsize=_TILES_CACHED)
def tile_line(
    value: int,
    new: bool,
    line: int,
    layout: Layout,
    depth: ColorDepth,
    glyphs: Glyphs,
    palette: Palette,
    colors: Optional[TilePair] = None,
) -> Piece:
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
    # Without colour a wider gap pads the tile on its left ("| " before it,
    # see _gap): the outline leaves as much on its right, centred between the bars.
    box = width - (layout.col_gap - 1 if plain else 0)
    if line == layout.number_line:
        room = box - 2 if outlined else width - (1 if marker_here else 0)
        if value:
            text = tile_label(value, room)
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
        margin = [(" ", base)] * (width - box)
        if line == 0:
            cells = [(top_left + rule * (box - 2) + top_right, edge_style), *margin]
        elif line == layout.tile_height - 1:
            cells = [(bottom_left + rule * (box - 2) + bottom_right, edge_style), *margin]
        else:
            cells[0] = cells[box - 1] = (side, edge_style)
    if marker_here:
        cells[0] = (glyphs.marker, edge_style)
    return piece(merge_spans(cells))


@lru_cache(maxsize=_LOOKS_CACHED)
def _gap(layout: Layout, depth: ColorDepth, palette: Palette) -> Piece:
    """The grid between two tiles (and at the board's edges)."""
    if depth is ColorDepth.NONE:
        # No backgrounds to draw the grid with: ASCII lines, same geometry.
        # A wider gap draws its bar in its first column: "| 2 | 4 |".
        return piece([("|" + " " * (layout.col_gap - 1), PLAIN)])
    # A text colour that the gaps never show, the tiles' usual one: going
    # from a tile to a gap then changes only the background.
    return piece([(" " * layout.col_gap, _grid_style(palette))])


def _grid_style(palette: Palette) -> Style:
    return style(palette.empty[1], palette.grid)


@lru_cache(maxsize=_LOOKS_CACHED)
def _rule(cols: int, layout: Layout, depth: ColorDepth, palette: Palette) -> Line:
    """A grid line across the board: above, below and between its rows, cut
    where the tiles' columns are, as the board in motion is (so the two compare equal)."""
    width, _ = layout.board_size(1, cols)
    if depth is ColorDepth.NONE:
        pad = " " * (layout.col_gap - 1)
        text = "+" + ("-" * (layout.tile_width + layout.col_gap - 1) + "+") * cols + pad
        return _pieces([(char, PLAIN) for char in text], layout)
    return _pieces([(" ", _grid_style(palette))] * width, layout)


@dataclass(frozen=True, eq=False)
class BoardLook:
    """How the board is drawn: one object per combination (:func:`board_look`),
    hashed by identity, so a row's cache key is cheap to hash."""

    layout: Layout
    depth: ColorDepth
    glyphs: Glyphs
    palette: Palette


@lru_cache(maxsize=_LOOKS_CACHED)
def board_look(layout: Layout, depth: ColorDepth, glyphs: Glyphs, palette: Palette) -> BoardLook:
    """The one :class:`BoardLook` of this combination (the board's rows and the motion's sprites key on it)."""
    return BoardLook(layout, depth, glyphs, palette)


@lru_cache(maxsize=_ROWS_CACHED)
def _row_lines(row: Tuple[int, ...], new: int, look: BoardLook) -> Tuple[Line, ...]:
    """The lines of one row of tiles, ``new`` the column of the new tile (-1: none)."""
    layout, depth, glyphs, palette = look.layout, look.depth, look.glyphs, look.palette
    gap = _gap(layout, depth, palette)
    lines: List[Line] = []
    for line in range(layout.tile_height):
        pieces = [gap]
        for c, value in enumerate(row):
            pieces.append(tile_line(value, c == new, line, layout, depth, glyphs, palette))
            pieces.append(gap)
        # A tile's blank lines make equal lines: one object for them all, so a
        # repaint diffs each once (it tells them apart by identity).
        built = tuple(pieces)
        lines.append(next((same for same in lines if same == built), built))
    return tuple(lines)


def board_lines(
    board: Board,
    spawned: Optional[Tuple[int, int]],
    layout: Layout,
    depth: ColorDepth,
    glyphs: Glyphs,
    palette: Palette,
) -> List[Line]:
    """The board's lines: the grid, and each tile (``spawned`` the new one);
    each tile line and each gap one piece, the rules one piece each."""
    cols = len(board[0]) if board else 0
    rule = _rule(cols, layout, depth, palette)
    look = board_look(layout, depth, glyphs, palette)
    lines: List[Line] = [rule]
    for r, row in enumerate(board):
        if r:
            lines.extend([rule] * layout.row_gap)
        new = spawned[1] if spawned is not None and spawned[0] == r else -1
        lines.extend(_row_lines(row, new, look))
    lines.append(rule)
    return lines


def _pieces(cells: Sequence[Span], layout: Layout) -> Line:
    """A line drawn cell by cell, cut back into pieces where the grid's
    columns and the tiles' meet, so that a diff rewrites only the tiles that
    changed."""
    step = layout.tile_width + layout.col_gap
    cuts = [0]
    while cuts[-1] < len(cells):
        at = cuts[-1]
        cuts.append(at + (layout.col_gap if (at % step) == 0 else layout.tile_width))
    return tuple(piece(merge_spans(cells[start:end])) for start, end in zip(cuts, cuts[1:]))


@lru_cache(maxsize=_LOOKS_CACHED)
def dimmed(palette: Palette) -> Palette:
    """``palette`` faded toward its grid colour: the board under a message.

    The tiles fade; their numbers fade only as far as they still read at
    _FADED_TEXT_CONTRAST on the faded tile (at 24 bits and 256 colours), else
    they take black or white. 16
    colours cannot blend: every tile takes the grid's colour and its number
    the code that reads best on it on the common terminal palettes."""
    grid = palette.grid
    text_code = basic_text(grid.basic, palette.empty[1].basic)

    def readable(bg: Color, text: Color) -> bool:
        return all(contrast_ratio(b, t) >= _FADED_TEXT_CONTRAST for b, t in _shown_pairs(bg, text))

    faded = {id(pair): mix(pair[0], grid, _DIM) for pair in (palette.empty, *palette.tiles.values(), palette.beyond)}
    stand_ins = _faded_xterm(palette, list(faded.values()))

    def dim(pair: TilePair) -> TilePair:
        bg = replace(faded[id(pair)], basic=grid.basic, xterm=stand_ins[faded[id(pair)].rgb])
        for amount in (_DIM, 0.4, 0.2, 0.0):
            text = mix(pair[1], grid, amount) if amount else pair[1]
            if readable(bg, text):
                break
        else:
            # Black or white, whichever reads better, at each depth on its own.
            inks = [max(_INKS, key=lambda ink: contrast_ratio(*_shown_pairs(bg, ink)[at])) for at in (0, 1)]
            text = replace(inks[0], xterm=inks[1].xterm)
        return bg, replace(text, basic=text_code)

    return replace(
        palette,
        tiles={value: dim(pair) for value, pair in palette.tiles.items()},
        beyond=dim(palette.beyond),
        empty=dim(palette.empty),
    )


def _faded_xterm(palette: Palette, faded: List[Color]) -> Dict[Rgb, int]:
    """The 256-colour stand-ins of the faded tiles, chosen together by the
    tiles' own rule (:func:`separated_xterm`: the hue kept, each apart from
    the others): one by one, the nearest of each, 4, 8 and 16 took one
    colour and 128 to 2048 another. Hotter as the tiles grow where that can
    be kept too (the dark themes' faded tiles are too close for both); alone
    by that rule for a theme whose faded colours cannot all be told apart."""
    ramp = [mix(palette.tiles[value][0], palette.grid, _DIM).rgb for value in RAMP if value in palette.tiles]
    for kept in (ramp, []):
        try:
            return separated_xterm([color.rgb for color in faded], ramp=kept, found={})
        except ValueError:
            pass
    return {color.rgb: hue_keeping_xterm(color.rgb) for color in faded}


_INKS = (Color.of(0x000000, 30), Color.of(0xFFFFFF, 97))


def _shown_pairs(bg: Color, text: Color) -> List[Tuple[Rgb, Rgb]]:
    pairs = []
    for depth in (ColorDepth.TRUE, ColorDepth.EXTENDED):
        shown_bg, shown_text = shown_rgb(bg, depth), shown_rgb(text, depth)
        assert shown_bg is not None and shown_text is not None
        pairs.append((shown_bg, shown_text))
    return pairs


# How far the board fades toward the grid under a win or game-over message.
_DIM = 0.6
# The contrast a faded number keeps (WCAG AA for text): the game's 3:1
# looked dim beside the message, on a board that is all dim.
_FADED_TEXT_CONTRAST = 4.5


def overlay(
    board: Sequence[Line], texts: Sequence[str], colors: TilePair, layout: Layout, depth: ColorDepth
) -> List[Line]:
    """The message in a box over the middle of the board, inside its border:
    never wider than the board."""
    canvas = Canvas(board)
    width = canvas.width
    # Inside the grid border: ASCII draws it as one bar at each edge (and a
    # wider gap's padding after the right one); colours as gap-wide columns.
    start = 1 if depth is ColorDepth.NONE else layout.col_gap
    inner = width - layout.col_gap - start
    text = next((t for t in texts if len(t) + 2 <= inner), texts[-1][: max(0, inner - 2)])
    # The box's place: three lines over the middle of the board if no
    # tile's number is under them (the board stays readable), else the
    # message alone on the grid line nearest the middle (a gap between rows,
    # or the border: a small board, or rows that touch).
    height = canvas.height
    step = layout.tile_height + layout.row_gap
    tile_rows = (height - 2 + layout.row_gap) // step if height >= 2 else 0
    numbers = {1 + row * step + layout.number_line for row in range(tile_rows)}
    tiles = {1 + row * step + line for row in range(tile_rows) for line in range(layout.tile_height)}
    middle = height // 2
    top = max(1, middle - 1) if height >= 5 else max(0, middle - 1)
    if not numbers & {top, top + 1, top + 2} and top + 2 < height:
        if depth is ColorDepth.NONE:
            rule = "+" + "-" * (inner - 2) + "+"
            rows = [rule, "|" + text.center(inner - 2) + "|", rule]
        else:
            rows = [" " * inner, text.center(inner), " " * inner]
    else:
        grid_lines = [line for line in range(height) if line not in tiles]
        top = min(grid_lines, key=lambda line: (abs(line - (height - 1) / 2), -line))
        text = next((t for t in texts if len(t) + 2 <= inner), texts[-1][: max(0, inner - 2)])
        rows = [f" {text} ".center(inner, "-" if depth is ColorDepth.NONE else " ")]
    # BASIC has no bold: the legacy console would make the dark text lighter.
    box_style = PLAIN if depth is ColorDepth.NONE else style(colors[1], colors[0], depth is not ColorDepth.BASIC)
    for offset, row in enumerate(rows):
        canvas.put(top + offset, start, piece([(row, box_style)]))
    return canvas.lines()
