"""Frames (pure): a :class:`View` of the session in, the lines of one frame
out, for a terminal of a given size; and the plain summary for pipes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional, Sequence, Tuple

from ..game.engine import Board, Direction, biggest_tile
from ..game.keys import Action
from ..game.session import Session, Status
from .board import (
    ASCII,
    BIG,
    COMPACT,
    HUGE,
    LARGE,
    LAYOUTS,
    MEDIUM,
    NARROW,
    UNICODE,
    Glyphs,
    Layout,
    board_lines,
    dimmed,
    overlay,
)
from .keymap import ReplayKeys, Restart, keys_line
from .lines import Frame, Line, line_of, piece
from .motion import Sprite
from .moving import sprite_board_lines
from .notice import one_line
from .palette import Palette, TilePair, classic
from .style import BOLD, PLAIN, ColorDepth, Span, fit, paint, printable, shorter_wordings, style

__all__ = [
    "BIG",
    "COMPACT",
    "HUGE",
    "LARGE",
    "LAYOUTS",
    "MEDIUM",
    "NARROW",
    "Layout",
    "View",
    "build_frame",
    "frame_lines",
    "layout_for",
    "summary_text",
]


# Lines of text around the board of a few frames (see .lines on bounded caches).
_TEXT_CACHED = 512


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
    replay: bool = False  # keys come from a pipe: the keys line says how to stop instead, no best (none is kept)
    replay_keys: ReplayKeys = ReplayKeys.PIPED  # a replay's: what its watcher's keys do
    reached: bool = False  # a tile has reached the goal (the banner may be gone)
    ending: str = ""  # play has ended: this line instead of the keys, and no key offered
    gained: int = 0  # points the last move made: "+N" beside the score, briefly
    hint: Optional[Direction] = None  # the AI's suggested move (t), on the note line
    stuck: bool = False  # a hint was asked for and no move changes the board
    autoplay: int = 0  # the AI is playing, this many moves a second (p); 0: it is not
    assisted: bool = False  # the AI played or hinted in this game: its score is no best
    day: str = ""  # the daily game's date (--daily): said in the header instead of the seed
    undo: bool = True  # False for --no-undo: u is not offered
    ranked: bool = False  # a ranked daily game over SSH: r ends it (asked twice) instead of starting another
    suspends: bool = False  # Ctrl-Z suspends to the shell (a POSIX terminal; not the Windows console, nor SSH)
    guest: bool = False  # nothing is kept: a server's player without a key
    # The config's keys, (character, action): the key line and the help name the keys that
    # really work, taken-over ones dropped. offers: a server's other commands and who the
    # player is there (the help's rows).
    bindings: Tuple[Tuple[str, Action], ...] = ()
    offers: Tuple[Tuple[str, str], ...] = ()

    @property
    def restart(self) -> Restart:
        """What ``r`` does here: the key line and the help say it."""
        if self.ranked:
            return Restart.END
        return Restart.DAY if self.day else Restart.NEW

    @classmethod
    def of(
        cls,
        session: Session,
        note: str = "",
        replay: bool = False,
        *,
        day: str = "",
        ranked: bool = False,
        ending: str = "",
        gained: int = 0,
        hint: Optional[Direction] = None,
        stuck: bool = False,
        autoplay: int = 0,
        bindings: Tuple[Tuple[str, Action], ...] = (),
        suspends: bool = False,
        guest: bool = False,
        replay_keys: ReplayKeys = ReplayKeys.PIPED,
        offers: Tuple[Tuple[str, str], ...] = (),
    ) -> View:
        """What the screen shows of ``session``, and of the loop around it
        (in one go: a frozen view built, then replaced, costs twice its ~8 us)."""
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
            replay_keys=replay_keys,
            reached=game.won,
            assisted=session.assisted,
            undo=session.undo,
            day=day,
            ranked=ranked,
            ending=ending,
            gained=gained,
            hint=hint,
            stuck=stuck,
            autoplay=autoplay,
            bindings=bindings,
            suspends=suspends,
            guest=guest,
            offers=offers,
        )


# Lines around the board: the header above; status, note and keys below. The note's line is
# there whether a note shows or not: the layout, the size "too small" asks for and the frame's
# height must not change when a note comes or goes (the first frame's greeting goes at the first key).
_TEXT_LINES = 4


def _needs(view: View, layout: Layout) -> Tuple[int, int]:
    """The smallest terminal (width, height) that shows ``view`` in ``layout``:
    lines strictly narrower than the terminal, and a free last row."""
    rows = len(view.board)
    cols = len(view.board[0]) if rows else 0
    width, height = layout.board_size(rows, cols)
    return width + 1, height + _TEXT_LINES + 1


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


# The hint's arrow per direction; ASCII has none that reads as one, the word says it.
_HINT_ARROWS = {Direction.LEFT: "←", Direction.UP: "↑", Direction.DOWN: "↓", Direction.RIGHT: "→"}


# -- the text around the board --------------------------------------------------


def _title(goal: int) -> str:
    """The board's title: the game's name when the goal is 2048, else the
    goal named as one (a bare "8" would read as a score)."""
    return "2048" if goal == 2048 else f"goal {goal}"


@lru_cache(maxsize=_TEXT_CACHED)
def _header_line(
    goal: int, score: int, gained: int, best: Optional[int], moves: int, day: str, seed: int, assisted: bool, limit: int
) -> Line:
    """The line above the board: the title, the score (and the last move's
    points), the best (None: none kept), the moves, the seed or the day; what fits."""
    return line_of(fit(_header(goal, score, gained, best, moves, day, seed, assisted), limit))


def _header(
    goal: int, scored: int, gained: int, best_now: Optional[int], moved: int, day: str, seed_now: int, assisted: bool
) -> List[List[Span]]:
    title = (_title(goal), BOLD)
    score = [("Score ", PLAIN), (str(scored), BOLD)]
    if gained:
        score.append((f" +{gained}", BOLD))
    best = [] if best_now is None else [("  Best ", PLAIN), (str(best_now), BOLD)]
    moves = [("  Moves ", PLAIN), (str(moved), BOLD)]
    seed = [("  Daily ", PLAIN), (day, PLAIN)] if day else [("  Seed ", PLAIN), (str(seed_now), PLAIN)]
    gap = ("  ", PLAIN)
    variants = [
        [title, gap, *score, *best, *moves, *seed],
        [title, gap, *score, *best, *moves],
        [*score, *best, *moves],
        [*score, *best],
        score,
    ]
    if not assisted:
        return variants
    # Said where the best is: this game's score does not count for it. It matters more than anything but the
    # score: the seed, the moves and the best go first; the score alone, last, is all a window too narrow shows.
    return [*([*variant, ("  assisted", PLAIN)] for variant in variants), score]


def _banner(view: View, glyphs: Glyphs, palette: Palette) -> Optional[Tuple[List[str], TilePair]]:
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


@lru_cache(maxsize=_TEXT_CACHED)
def _status_line(
    status: Status,
    game_over: bool,
    replay: bool,
    ending: str,
    reached: int,
    goal: int,
    rows: int,
    cols: int,
    glyphs: Glyphs,
    limit: int,
) -> Line:
    """The line under the board: what to do next, or the goal. ``reached``
    the biggest tile once the goal is reached (0 before)."""
    dot = glyphs.dot
    won = status is Status.WON
    over = game_over or status is Status.OVER
    # Key hints only while keys work: not in a replay, not once play has ended.
    keys = not replay and not ending
    if over:
        texts = [f"no moves left {dot} u undo {dot} r new game", "u undo, r new game", "u undo, r new"] if keys else []
    elif won:
        texts = [f"any move plays on {dot} r new game", "any move plays on", "play on"] if keys else []
    elif reached:
        texts = _going_on(reached, rows, cols, dot)
    else:
        texts = [f"Join the tiles, get to {goal}!", f"Get to {goal}!"]
    return line_of(fit([[(text, PLAIN)] for text in texts] or [[("", PLAIN)]], limit))


def _going_on(reached: int, rows: int, cols: int, dot: str) -> List[str]:
    """The status once the goal is reached and play goes on: the next tile
    to make, or the end of the road on a board that can hold no bigger.
    ``reached``: the goal at least (an undo may have taken the goal tile back)."""
    target = reached * 2
    if target > biggest_tile(rows, cols):
        return [f"You reached {reached}, the biggest a {rows}x{cols} board holds!", f"You reached {reached}!"]
    return [
        f"You reached {reached} {dot} keep going for {target}",
        f"Reached {reached} {dot} next {target}",
        f"Next: {target}",
    ]


@lru_cache(maxsize=_TEXT_CACHED)
def _note_line(hint: Optional[Direction], stuck: bool, autoplay: int, text: str, glyphs: Glyphs, limit: int) -> Line:
    """The note line: the hint or autoplay's pace, then the note (a warning,
    say), shortest last; the AI's part stays when the note does not fit."""
    dot = glyphs.dot
    ai = ""
    if hint is not None:
        word = hint.value
        ai = f"hint: {word}" if glyphs is ASCII else f"hint: {_HINT_ARROWS[hint]} {word}"
    elif stuck:
        ai = "hint: no move changes the board"
    elif autoplay:
        ai = f"autoplay {autoplay}/s {dot} p or any move takes over"
    words, _, more = text.partition("\n")  # a message's later lines (a path) go first, then clauses
    wordings = [printable(one_line(text))] * bool(more) + shorter_wordings(printable(one_line(words)))
    variants = [[(f"{ai} {dot} {wording}" if ai else wording, PLAIN)] for wording in wordings if wording or not ai]
    variants += [[(ai, PLAIN)]] if ai else []
    return line_of(fit(variants, limit))


def _too_small(view: View, width: int, height: int) -> List[str]:
    """A plain message naming the smallest terminal that fits, wrapped over
    the lines there are, shortened when even that does not fit; after the
    view's ending, if it has one."""
    limit, room = width - 1, height - 1
    if limit < 1 or room < 1:
        return []
    import textwrap  # here: only a window too small needs it, not start-up

    # The line said instead of the keys first (where the game went; a watcher's, whose game), by its parts if long.
    parts = [view.ending] if len(view.ending) <= limit else view.ending.split(" · ")
    ending = [line for part in parts for line in textwrap.wrap(part, limit)][:room]
    room -= len(ending)
    need_width, need_height = _needs(view, LAYOUTS[-1])
    need = f"{need_width}x{need_height}"  # below, "need WxH" and "have WxH" are held whole by no-break spaces
    variants = [
        f"terminal too small: need\xa0{need}, have\xa0{width}x{height}",
        f"too small: need\xa0{need}",
        f"need\xa0{need}",
        need,
    ]
    for text in variants:
        lines = [line.replace("\xa0", " ") for line in textwrap.wrap(text, limit, break_long_words=False)]
        if len(lines) <= room and all(len(line) <= limit for line in lines):
            return ending + lines
    return ending  # not even the size fits: nothing, rather than half a number


# -- frames -----------------------------------------------------------------------


def build_frame(
    view: View,
    depth: ColorDepth,
    width: int,
    height: int,
    *,
    ascii_only: Optional[bool] = None,
    palette: Optional[Palette] = None,
    sprites: Optional[Sequence[Sprite]] = None,
    shake: int = 0,
) -> Frame:
    """The frame for a ``width`` x ``height`` terminal, as values: every
    line's visible width is < ``width`` and there are at most ``height - 1``
    lines (the last row stays free for the cursor).

    ``ascii_only`` picks ASCII glyphs for the marker, arrows and dashes; by
    default they are ASCII exactly when ``depth`` is NONE. ``palette``
    defaults to the original game's colours. ``sprites`` draws the board in
    the middle of a move (:mod:`.motion`) instead of ``view.board``;
    ``shake`` shifts the board that many columns right, where it fits (a
    move that changes nothing).
    """
    layout = layout_for(view, width, height)
    if layout is None:
        return Frame(tuple(line_of([(text, PLAIN)]) for text in _too_small(view, width, height)), depth)
    if ascii_only is None:
        ascii_only = depth is ColorDepth.NONE
    glyphs = ASCII if ascii_only else UNICODE
    palette = palette or classic()
    limit = width - 1
    rows = len(view.board)
    cols = len(view.board[0]) if rows else 0
    board_width, _ = layout.board_size(rows, cols)
    best = None if view.replay else view.best  # a replay keeps none (its "best" would be its score)
    lines: List[Line] = [
        _header_line(view.goal, view.score, view.gained, best, view.moves, view.day, view.seed, view.assisted, limit)
    ]
    banner = _banner(view, glyphs, palette) if sprites is None else None
    board_palette = dimmed(palette) if banner is not None and depth is not ColorDepth.NONE else palette
    if sprites is None:
        board = board_lines(view.board, view.spawned, layout, depth, glyphs, board_palette)
    else:
        board = sprite_board_lines(rows, cols, sprites, layout, depth, glyphs, palette)
    if banner is not None:
        board = overlay(board, banner[0], banner[1], layout, depth)
    shake = min(shake, limit - board_width)
    if shake > 0:
        indent = piece([(" " * shake, PLAIN)])
        board = [(indent, *line) for line in board]
    lines.extend(board)
    reached = max(view.goal, *(max(row) for row in view.board)) if view.reached and rows else 0
    lines.append(
        _status_line(view.status, view.over, view.replay, view.ending, reached, view.goal, rows, cols, glyphs, limit)
    )
    # The note's line is there, empty, without a note: a note that comes must not make the frame
    # taller (on a full screen that scrolls the board up a line; the bottom row stays blank after).
    lines.append(_note_line(view.hint, view.stuck, view.autoplay, view.note, glyphs, limit))
    replay = view.replay_keys if view.replay else None
    lines.append(keys_line(view.ending, replay, view.bindings, view.undo, glyphs, limit, view.restart))
    return Frame(tuple(lines), depth)


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
    """The frame of :func:`build_frame` as text, one string per line,
    without newlines."""
    frame = build_frame(
        view, depth, width, height, ascii_only=ascii_only, palette=palette, sprites=sprites, shake=shake
    )
    return frame.text()


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
