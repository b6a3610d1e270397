"""The board in the middle of a move (pure): the empty board, each tile
drawn where it is on this frame (between cells while it slides).

A frame of motion is built from pieces it has built before: a tile's lines
for its value and phase (:func:`_sprite_runs`), and each grid piece with the
parts of tiles over it at their offsets (:func:`_overlaid`). A move's
tiles stop at the same few fractions of a cell on every move (the frames'
times are fixed), so those pieces come back from move to move and game to
game; only the pieces a tile covers are rebuilt, the rest stay the very
pieces of the empty board (a diff skips them by identity), and a line drawn
alike is one object within a frame and from frame to frame
(:func:`_drawn_line`). Drawing cell by cell instead was most of what a key
with motion cost (benchmarks/render.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from .board import BoardLook, Glyphs, Layout, board_lines, board_look, tile_line
from .color import mix
from .lines import Line, Piece, cells_of, piece
from .motion import Phase, Sprite
from .palette import Palette, TilePair
from .style import ColorDepth, merge_spans, style

__all__ = ["sprite_board_lines"]

# The caches' bounds (see .lines on why each is bounded): a sprite's lines per
# (value, phase) of a few looks; a grid piece with tiles over it, per offset
# (a few offsets per distance slid, a few tiles, a few looks); the empty board
# per board shape and look; a tile's lines placed, per column (a few
# dozen columns, a few tiles, a few looks); board lines with tiles over them
# (the rows of a few moves: a move's tiles that do not slide, and rows that
# come back).
_SPRITES_CACHED = 1024
_OVERLAID_CACHED = 4096
_EMPTY_CACHED = 64
_PLACED_CACHED = 4096
_LINES_CACHED = 4096

# A tile over grid pieces: (its column relative to the piece's first, its run).
_Over = Tuple[int, Piece]


@lru_cache(maxsize=_SPRITES_CACHED)
def _sprite_runs(value: int, phase: Phase, look: BoardLook) -> Tuple[int, Tuple[Piece, ...]]:
    """How a tile of ``value`` in ``phase`` is drawn: the column it starts
    at relative to its cell's, and its run of cells on each of its lines."""
    layout, depth, glyphs, palette = look.layout, look.depth, look.glyphs, look.palette
    colors: Optional[TilePair] = None
    if phase is Phase.APPEARING and depth is not ColorDepth.NONE:
        # Half faded in from the empty cell's colours: the original's "appear".
        (bg, fg), (empty_bg, _) = palette.tile(value), palette.empty
        colors = (mix(empty_bg, bg, 0.5), mix(empty_bg, fg, 0.5))
    lines = range(layout.tile_height)
    tiles = [tile_line(value, False, line, layout, depth, glyphs, palette, colors) for line in lines]
    shift = 0
    if phase is Phase.POPPED and depth is not ColorDepth.NONE:
        # The pop: a column wider each side, over the gap, bold.
        shift = -1
        pad = (" ", style(None, palette.tile(value)[0]))
        bold = [[(text, style(cell.fg, cell.bg, True)) for text, cell in tile.spans] for tile in tiles]
        tiles = [piece(merge_spans([pad, *spans, pad])) for spans in bold]
    # A tile's blank lines are one object, so that the lines they make are
    # built once a frame (and a repaint finds their change once).
    runs: List[Piece] = []
    for tile in tiles:
        runs.append(next((same for same in runs if same == tile), tile))
    return shift, tuple(runs)


@lru_cache(maxsize=_OVERLAID_CACHED)
def _overlaid(base: Piece, overs: Tuple[_Over, ...]) -> Piece:
    """``base`` with each run of ``overs`` drawn over it in turn (clipped to it)."""
    cells = cells_of((base,))
    for offset, run in overs:
        first, last = max(0, offset), min(base.width, offset + run.width)
        if first < last:
            cells[first:last] = cells_of((run,))[first - offset : last - offset]
    return piece(merge_spans(cells))


@dataclass(frozen=True, eq=False)
class _Empty:
    """The empty board, hashed by identity (one object per shape and look
    while cached: a cheap key); ``first[y]``, the first line that is the very
    object of line ``y`` (a row's blank lines are one)."""

    lines: Tuple[Line, ...]
    first: Tuple[int, ...]


@lru_cache(maxsize=_EMPTY_CACHED)
def _empty_board(rows: int, cols: int, look: BoardLook) -> _Empty:
    empty = ((0,) * cols,) * rows
    lines = tuple(board_lines(empty, None, look.layout, look.depth, look.glyphs, look.palette))
    return _Empty(lines, tuple(next(k for k, same in enumerate(lines) if same is line) for line in lines))


def _cover(left: int, run_width: int, look: BoardLook, width: int) -> Tuple[Tuple[int, int], ...]:
    """The pieces of a board line that a run of ``run_width`` columns from
    column ``left`` touches (clipped to the board's ``width``): (index,
    the run's column relative to the piece's first) each. Every board line is
    cut alike: a gap's piece, then a tile's, and so on."""
    gap, tile = look.layout.col_gap, look.layout.tile_width
    first, last = max(0, left), min(width, left + run_width)
    if first >= last:
        return ()
    cell, inside = divmod(first, gap + tile)
    index = 2 * cell + (inside >= gap)
    start = cell * (gap + tile) + (gap if inside >= gap else 0)
    cover = []
    while start < last:
        cover.append((index, left - start))
        start += gap if index % 2 == 0 else tile
        index += 1
    return tuple(cover)


@dataclass(frozen=True, eq=False)
class _Placed:
    """A tile's line placed on a board line: the pieces it covers
    (:func:`_cover`), and its run. Hashed by identity (one object per
    tile, line and column while cached: a board line's key is cheap)."""

    cover: Tuple[Tuple[int, int], ...]
    run: Piece


@lru_cache(maxsize=_PLACED_CACHED)
def _placed(value: int, phase: Phase, column: int, look: BoardLook, width: int) -> Tuple[_Placed, ...]:
    """A tile of ``value`` in ``phase`` placed at ``column`` of its cell on
    a board ``width`` columns wide: each of its lines, one object for equal
    lines (see :func:`_sprite_runs`)."""
    shift, runs = _sprite_runs(value, phase, look)
    cover = _cover(column + shift, runs[0].width, look, width)
    placed: Dict[int, _Placed] = {}
    return tuple(placed.setdefault(id(run), _Placed(cover, run)) for run in runs)


@lru_cache(maxsize=_LINES_CACHED)
def _drawn_line(empty: _Empty, y: int, overs: Tuple[_Placed, ...]) -> Line:
    """Line ``y`` of the ``empty`` board (the first of its equal lines) with
    runs drawn over the pieces they cover, later ones over earlier ones: a
    piece a run covers exactly is that run, the others it touches are
    rebuilt. One object per line drawn alike, within a frame (a row's blank
    lines) and from frame to frame (tiles that stay): a repaint skips it by
    identity, or finds its change once."""
    line = empty.lines[y]
    touched: Dict[int, List[_Over]] = {}
    for over in overs:
        run = over.run
        for index, offset in over.cover:
            if index in touched:
                touched[index].append((offset, run))
            else:
                touched[index] = [(offset, run)]
    pieces = list(line)
    for index, runs in touched.items():
        offset, run = runs[-1]
        if offset == 0 and run.width == pieces[index].width:
            pieces[index] = run  # the last run covers the piece exactly: it is that run
        else:
            pieces[index] = _overlaid(line[index], tuple(runs))
    return tuple(pieces)


def sprite_board_lines(
    rows: int,
    cols: int,
    sprites: Sequence[Sprite],
    layout: Layout,
    depth: ColorDepth,
    glyphs: Glyphs,
    palette: Palette,
) -> List[Line]:
    """The board in the middle of a move: the empty board, then each tile
    drawn where it is on this frame (between cells while it slides)."""
    look = board_look(layout, depth, glyphs, palette)
    empty = _empty_board(rows, cols, look)
    lines = list(empty.lines)
    height = len(lines)
    width, _ = layout.board_size(1, cols)
    step_y, step_x = layout.tile_height + layout.row_gap, layout.tile_width + layout.col_gap
    drawn: Dict[int, List[_Placed]] = {}
    for sprite in sprites:
        placed = _placed(sprite.value, sprite.phase, layout.col_gap + round(sprite.col * step_x), look, width)
        for y, over in enumerate(placed, 1 + round(sprite.row * step_y)):
            overs = drawn.get(y)
            if overs is None:
                drawn[y] = [over]
            else:
                overs.append(over)
    first = empty.first
    for y, overs in drawn.items():
        if 0 <= y < height:
            lines[y] = _drawn_line(empty, first[y], tuple(overs))
    return lines
