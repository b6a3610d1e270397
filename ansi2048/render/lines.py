"""Frames as values (pure): what a frame shows, kept as styled text until it
is written, so that the repainter compares values instead of reading back
the escape codes it wrote.

A :data:`Line` is a tuple of pieces; a :class:`Piece` spans (``(text,
Style)``) and their width, a run of columns that is built, compared and
rewritten as one: a tile's line, a gap, a word of the header. The builders make the
pieces that repeat (a tile, a board row, the key line) once and hand out the
same objects again, so an unchanged line is usually the very object of the
frame before, and comparing it costs an identity check. A :class:`Frame`
is the lines and the colour depth they are painted in.

The caches here are bounded (least recently used): a server paints frames
for hundreds of screens, and what one game repeats another may never show.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from .codes import visible_width
from .style import PLAIN, ColorDepth, Span, merge_spans, paint

__all__ = ["Canvas", "Frame", "Line", "Piece", "cells_of", "changed_part", "line_of", "line_width", "painted", "piece"]


class Piece(NamedTuple):
    """Columns of a line built and compared as one; made by :func:`piece`."""

    width: int  # kept: a diff adds up the widths of the pieces it skips
    spans: Tuple[Span, ...]


Line = Tuple[Piece, ...]


def piece(spans: Iterable[Span]) -> Piece:
    """The piece of ``spans``."""
    spans = tuple(spans)
    return Piece(sum(len(text) for text, _ in spans), spans)


def line_of(spans: Iterable[Span]) -> Line:
    """A line of text: each span its own piece (a diff rewrites from the
    first span that changed), empty spans left out."""
    return tuple(_span_piece(span) for span in spans if span[0])


# Spans of text lines: the words around the numbers ("Score ", "  Best ")
# are the same in every frame, and the numbers come back.
_SPAN_PIECES = 1024


@lru_cache(maxsize=_SPAN_PIECES)
def _span_piece(span: Span) -> Piece:
    """The piece of one span: one object per span, so a diff of lines of
    text finds the unchanged words by identity."""
    return Piece(len(span[0]), (span,))


@dataclass(frozen=True)
class Frame:
    """The lines of one frame and the depth they are painted in; ``raw``:
    lines painted elsewhere, their escape codes in their text."""

    lines: Tuple[Line, ...]
    depth: ColorDepth
    raw: bool = False

    @classmethod
    def of_text(cls, lines: Sequence[str]) -> Frame:
        """A frame of lines already painted (escape codes and all): each
        line one piece, written whole when it changes."""
        return cls(tuple((Piece(len(text), ((text, PLAIN),)),) for text in lines), ColorDepth.NONE, raw=True)

    def text(self) -> List[str]:
        """The lines as the terminal gets them."""
        return [painted(line, self.depth) for line in self.lines]


# Lines of a few frames: the board's rows and the text around them repeat
# from frame to frame and, across screens, from game to game.
_PAINTED_LINES = 2048


@lru_cache(maxsize=_PAINTED_LINES)
def painted(line: Line, depth: ColorDepth) -> str:
    """``line`` as text (see :func:`.style.paint`)."""
    return paint([span for part in line for span in part.spans], depth)


def line_width(line: Line, raw: bool = False) -> int:
    """Columns ``line`` takes on screen; ``raw`` text (:meth:`Frame.of_text`)
    is measured without its escape codes."""
    if raw:
        return visible_width(painted(line, ColorDepth.NONE))
    return sum(part.width for part in line)


# A piece's width, read without a Python-level call (a diff adds up a
# line's widths three times).
_width = attrgetter("width")


def changed_part(old: Line, new: Line, depth: ColorDepth) -> Optional[Tuple[int, str]]:
    """What turns ``old`` on screen into ``new``: the column to move the
    cursor to from the line's start, and the text of the pieces from the
    first that differs to the last (empty if none does); None if the lines'
    widths differ (the whole line is to be written, and the rest erased). A frame of motion changes
    a few tiles of a line, and the whole line costs ~300 bytes at 24-bit
    colour. Written from the default pen, which every line is left in."""
    count = min(len(old), len(new))
    first = 0
    while first < count and (old[first] is new[first] or old[first] == new[first]):
        first += 1
    if first == len(old) == len(new):
        return sum(map(_width, new)), ""
    old_last, new_last = len(old) - 1, len(new) - 1
    # Equal prefixes, equal pieces at the end: if what lies between is as
    # wide in both, it takes the same columns in both.
    while old_last > first and new_last > first and (old[old_last] is new[new_last] or old[old_last] == new[new_last]):
        old_last -= 1
        new_last -= 1
    middle = new[first : new_last + 1]
    if sum(map(_width, middle)) != sum(map(_width, old[first : old_last + 1])):
        return None
    column = sum(map(_width, new[:first]))
    # The same few tiles change together from frame to frame: the middle's
    # text is cached as a line's is.
    return column, painted(middle, depth)


def cells_of(line: Line) -> List[Span]:
    """One (character, style) per column."""
    return [(char, span_style) for part in line for text, span_style in part.spans for char in text]


class Canvas:
    """Lines to draw runs of cells over (a board in motion, a banner on the
    board). Only the pieces drawn on are rebuilt, and a run that covers a
    piece exactly is that piece; the rest stay the very pieces of ``base``
    (a diff then skips them at once)."""

    def __init__(self, base: Sequence[Line]) -> None:
        self._base = base
        self._runs: Dict[int, List[Tuple[int, Piece]]] = {}
        self.width = sum(part.width for part in base[0]) if base else 0
        self.height = len(base)

    def put(self, y: int, x: int, run: Piece) -> None:
        """Draw ``run`` from line ``y``, column ``x`` (clipped to the board)."""
        if 0 <= y < self.height:
            self._runs.setdefault(y, []).append((x, run))

    def lines(self) -> List[Line]:
        out: List[Line] = list(self._base)
        for y, runs in self._runs.items():
            line = self._base[y]
            starts = [0]
            for part in line:
                starts.append(starts[-1] + part.width)
            pieces: List[Piece] = list(line)
            cells: Optional[List[Span]] = None
            touched: Set[int] = set()
            for x, run in runs:
                if x in starts[:-1] and starts[starts.index(x) + 1] - x == run.width and cells is None:
                    pieces[starts.index(x)] = run  # exactly over one piece: it is that piece
                    continue
                if cells is None:
                    cells = cells_of(tuple(pieces))
                first, last = max(0, x), min(self.width, x + run.width)
                if first < last:
                    cells[first:last] = cells_of((run,))[first - x : last - x]
                    touched.update(k for k in range(len(line)) if starts[k] < last and first < starts[k + 1])
            if cells is not None:
                for k in touched:
                    pieces[k] = piece(merge_spans(cells[starts[k] : starts[k + 1]]))
            out[y] = tuple(pieces)
        return out
