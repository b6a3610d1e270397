"""The renderer, checked the way a user sees it: frames go through the same
repaint escapes a terminal gets, into the pyte VT100 emulator, and the tests
read the emulated screen back."""

from __future__ import annotations

import dataclasses
import functools
import random
import re
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

import pyte
import pytest
from hypothesis import given, settings, strategies as st

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Session, Status
from ansi2048.render.color import contrast_ratio
from ansi2048.render.frame import (
    BIG,
    COMPACT,
    HUGE,
    LARGE,
    LAYOUTS,
    MEDIUM,
    NARROW,
    Layout,
    View,
    frame_lines,
    layout_for,
    summary_text,
)
from ansi2048.render.repaint import Repainter, visible_width
from ansi2048.render.style import ColorDepth, choose_depth, nearest_xterm256

from .screen import NUMBER, dump, emitted_colours, find_header, parse_tile, read_board, terminal

DEPTHS = list(ColorDepth)
COLOUR_DEPTHS = [d for d in ColorDepth if d is not ColorDepth.NONE]
Board = Tuple[Tuple[int, ...], ...]
Cell = Tuple[str, str, str, bool, bool, bool]

# -- helpers ------------------------------------------------------------------


def make_view(
    board: Sequence[Sequence[int]],
    spawned: Optional[Tuple[int, int]] = None,
    status: Status = Status.PLAYING,
    over: bool = False,
    note: str = "",
    goal: int = 2048,
    score: int = 1234,
) -> View:
    return View(
        board=tuple(tuple(row) for row in board),
        spawned=spawned,
        score=score,
        best=99999,
        moves=321,
        goal=goal,
        seed=42,
        status=status,
        over=over,
        note=note,
    )


def tile_rect(layout: Layout, top: int, row: int, col: int) -> Iterator[Tuple[int, int]]:
    """Screen (y, x) of every cell of a tile; ``top`` is the header's line."""
    y0, x0 = layout.tile_origin(row, col)
    for dy in range(layout.tile_height):
        for dx in range(layout.tile_width):
            yield top + 1 + y0 + dy, x0 + dx


def cell(screen: pyte.Screen, y: int, x: int) -> Cell:
    char = screen.buffer[y][x]
    return (char.data, char.fg, char.bg, char.bold, char.underscore, char.reverse)


def render(view: View, depth: ColorDepth, width: int, height: int) -> pyte.Screen:
    screen, stream = terminal(width, height)
    stream.feed(Repainter().frame(frame_lines(view, depth, width, height)))
    return screen


def size_for(layout: Layout, view: View) -> Tuple[int, int]:
    """A terminal size whose chosen layout is ``layout``."""
    for width in range(10, 200):
        for height in range(5, 80):
            if layout_for(view, width, height) is layout:
                return width, height
    raise AssertionError(f"no terminal size picks {layout.name}")


# -- visible width ------------------------------------------------------------


def test_visible_width_ignores_escape_codes() -> None:
    assert visible_width("abc") == 3
    assert visible_width("\x1b[0;1;38;2;1;2;3;48;5;231mab\x1b[0m\x1b[K") == 2
    assert visible_width("\x1b[?25l\x1b[12A\rx") == 2  # the \r is a character; escapes are not
    assert visible_width("•·←↑↓→—") == 7


# -- colour depth ---------------------------------------------------------------

TRUE_ENV = {"COLORTERM": "truecolor", "TERM": "xterm-256color"}


@pytest.mark.parametrize(
    ("mode", "tty", "env", "legacy", "expected"),
    [
        ("never", True, TRUE_ENV, False, ColorDepth.NONE),
        ("never", False, {}, False, ColorDepth.NONE),
        ("auto", False, TRUE_ENV, False, ColorDepth.NONE),  # piped
        ("auto", True, TRUE_ENV, False, ColorDepth.TRUE),
        ("auto", True, {"COLORTERM": "24bit"}, False, ColorDepth.TRUE),
        ("auto", True, {"COLORTERM": "TrueColor"}, False, ColorDepth.TRUE),
        ("auto", True, {"WT_SESSION": "7a1b"}, False, ColorDepth.TRUE),
        ("auto", True, {"WT_SESSION": "7a1b"}, True, ColorDepth.BASIC),
        ("auto", True, {"TERM": "xterm-256color"}, False, ColorDepth.EXTENDED),
        ("auto", True, {"TERM": "screen-256color", "COLORTERM": "1"}, False, ColorDepth.EXTENDED),
        ("auto", True, {"TERM": "xterm"}, False, ColorDepth.BASIC),
        ("auto", True, {}, False, ColorDepth.BASIC),
        ("auto", True, {"TERM": "dumb"}, False, ColorDepth.NONE),
        ("auto", True, {**TRUE_ENV, "NO_COLOR": "1"}, False, ColorDepth.NONE),
        ("auto", True, {**TRUE_ENV, "NO_COLOR": ""}, False, ColorDepth.TRUE),  # empty NO_COLOR is unset
        ("auto", True, TRUE_ENV, True, ColorDepth.BASIC),  # legacy console: colorama converts 16 only
        ("auto", True, {"TERM": "xterm-256color"}, True, ColorDepth.BASIC),
        ("auto", True, {}, True, ColorDepth.BASIC),
        ("auto", False, {}, True, ColorDepth.NONE),
        ("always", False, {}, False, ColorDepth.BASIC),  # asked for colour, no hints: the safe 16
        ("always", False, TRUE_ENV, False, ColorDepth.TRUE),
        ("always", False, {"TERM": "xterm-256color"}, False, ColorDepth.EXTENDED),
        ("always", True, {**TRUE_ENV, "NO_COLOR": "1"}, False, ColorDepth.TRUE),  # explicit beats NO_COLOR
        ("always", True, {"TERM": "dumb"}, False, ColorDepth.BASIC),
        ("always", False, TRUE_ENV, True, ColorDepth.BASIC),
    ],
)
def test_choose_depth(mode: str, tty: bool, env: Dict[str, str], legacy: bool, expected: ColorDepth) -> None:
    assert choose_depth(mode, tty, env, legacy_console=legacy) is expected


def test_choose_depth_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="color mode"):
        choose_depth("sometimes", True, {})


# -- 256 colours ----------------------------------------------------------------


@functools.cache  # the brute-force searches ask for each colour thousands of times
def xterm_rgb(index: int) -> Tuple[int, int, int]:
    """The xterm palette from its definition (independent of the renderer)."""
    if index >= 232:
        grey = 8 + 10 * (index - 232)
        return (grey, grey, grey)
    levels = [0] + [55 + 40 * i for i in range(1, 6)]
    n = index - 16
    return (levels[n // 36], levels[n // 6 % 6], levels[n % 6])


def brute_nearest_distance(rgb: Tuple[int, int, int], exclude: Sequence[int] = ()) -> int:
    return min(distance(rgb, i) for i in range(16, 256) if i not in exclude)


def distance(rgb: Tuple[int, int, int], index: int) -> int:
    r, g, b = xterm_rgb(index)
    return (rgb[0] - r) ** 2 + (rgb[1] - g) ** 2 + (rgb[2] - b) ** 2


def test_nearest_xterm256_known_colours() -> None:
    assert nearest_xterm256((255, 255, 255)) == 231
    assert nearest_xterm256((0, 0, 0)) == 16
    assert nearest_xterm256((255, 0, 0)) == 196
    assert nearest_xterm256((128, 128, 128)) == 244  # grey ramp 128 beats cube 135
    assert nearest_xterm256((238, 238, 238)) == 255


@settings(max_examples=500)
@given(st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)))
def test_nearest_xterm256_is_nearest(rgb: Tuple[int, int, int]) -> None:
    index = nearest_xterm256(rgb)
    assert 16 <= index <= 255
    assert distance(rgb, index) == brute_nearest_distance(rgb)


@settings(max_examples=100)
@given(
    st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)),
    st.frozensets(st.integers(16, 255), max_size=60),
)
def test_nearest_xterm256_with_exclusions(rgb: Tuple[int, int, int], exclude: FrozenSet[int]) -> None:
    index = nearest_xterm256(rgb, exclude)
    assert index not in exclude
    assert distance(rgb, index) == brute_nearest_distance(rgb, sorted(exclude))


def test_nearest_xterm256_agrees_with_brute_force_at_every_level() -> None:
    # Every channel value, on the grey diagonal (grey ramp vs cube greys) and
    # off it: covers each midpoint where the nearest level flips.
    for v in range(256):
        for rgb in [(v, v, v), (v, 0, 0), (255, v, 128), (v, 200, 255 - v), (v, v + 7 if v < 249 else v, v)]:
            assert distance(rgb, nearest_xterm256(rgb)) == brute_nearest_distance(rgb), rgb


# -- palette ----------------------------------------------------------------------

# The original game's backgrounds (gabrielecirulli/2048, style/main.scss).
SPEC_BACKGROUNDS = {
    2: "eee4da",
    4: "ede0c8",
    8: "f2b179",
    16: "f59563",
    32: "f67c5f",
    64: "f65e3b",
    128: "edcf72",
    256: "edcc61",
    512: "edc850",
    1024: "edc53f",
    2048: "edc22e",
    4096: "3c3a32",
    0: "cdc1b4",
}
ALL_VALUES = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 0]
PALETTE_BOARD = [ALL_VALUES[0:4], ALL_VALUES[4:8], ALL_VALUES[8:12], [*ALL_VALUES[12:14], 2, 4]]


def tile_background(screen: pyte.Screen, layout: Layout, row: int, col: int) -> str:
    top = find_header(screen.display)
    y, x = next(tile_rect(layout, top, row, col))
    return str(screen.buffer[y][x + layout.tile_width - 1].bg)  # a corner that never holds text


def test_true_colour_uses_the_original_palette() -> None:
    view = make_view(PALETTE_BOARD)
    screen = render(view, ColorDepth.TRUE, 80, 30)
    layout = layout_for(view, 80, 30)
    assert layout is LARGE  # tiles grow with the window
    top = find_header(screen.display)
    for r, row in enumerate(PALETTE_BOARD):
        for c, value in enumerate(row):
            expected = SPEC_BACKGROUNDS[min(value, 4096)]
            assert tile_background(screen, layout, r, c) == expected, value
    # The grid: the border around the board.
    assert screen.buffer[top + 1][0].bg == "bbada0"


@pytest.mark.parametrize("depth", COLOUR_DEPTHS)
def test_every_value_has_its_own_background(depth: ColorDepth) -> None:
    view = make_view(PALETTE_BOARD)
    screen = render(view, depth, 80, 30)
    layout = layout_for(view, 80, 30)
    assert layout is not None
    top = find_header(screen.display)
    backgrounds: Dict[int, str] = {}
    for r, row in enumerate(PALETTE_BOARD):
        for c, value in enumerate(row):
            bg = tile_background(screen, layout, r, c)
            assert backgrounds.setdefault(min(value, 4096), bg) == bg  # same value, same colour
    grid = screen.buffer[top + 1][0].bg
    colours = [*backgrounds.values(), grid]
    assert "default" not in colours
    # 2..2048, the beyond-2048 colour, the empty cell and the grid: all
    # distinct; but at 16 colours only 13 of them carry a number readable on
    # every common terminal palette, so 2048 is as black as the tiles beyond.
    if depth is ColorDepth.BASIC:
        assert backgrounds[2048] == backgrounds[4096]
        del backgrounds[4096]
        colours = [*backgrounds.values(), grid]
    assert len(set(colours)) == len(colours) == (13 if depth is ColorDepth.BASIC else 14)


# -- the new tile -------------------------------------------------------------------


def new_tile_boards() -> List[Tuple[Board, Tuple[int, int]]]:
    """Boards where the newest tile's value is also on other tiles (in its
    row, its column and elsewhere), including 7-digit values."""
    return [
        (((2, 2, 4, 0), (2, 0, 8, 2), (16, 2, 4, 2), (0, 0, 2, 2)), (1, 0)),
        (((4, 4, 2, 0), (2, 0, 4, 4), (4, 2, 4, 2), (0, 4, 2, 4)), (2, 2)),
        (((1048576, 2, 1048576), (1048576, 8, 4), (2, 2, 1048576)), (1, 0)),
        (((131072, 131072), (131072, 2)), (0, 1)),
    ]


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
@pytest.mark.parametrize("case", range(len(new_tile_boards())))
def test_new_tile_stands_apart(depth: ColorDepth, layout: Layout, case: int) -> None:
    board, spawned = new_tile_boards()[case]
    view = make_view(board, spawned)
    width, height = size_for(layout, view)
    screen = render(view, depth, width, height)
    top = find_header(screen.display)

    def signature(row: int, col: int) -> Tuple[Cell, ...]:
        return tuple(cell(screen, y, x) for y, x in tile_rect(layout, top, row, col))

    value = board[spawned[0]][spawned[1]]
    others = {
        signature(r, c) for r, row in enumerate(board) for c, v in enumerate(row) if v == value and (r, c) != spawned
    }
    assert len(others) == 1, "tiles of one value should all look alike"
    assert signature(*spawned) not in others
    # And the marker does not hide the number.
    assert read_board(screen.display, layout, len(board), len(board[0])) == [list(row) for row in board]


@pytest.mark.parametrize("depth", COLOUR_DEPTHS)
def test_new_tile_differs_in_attributes_not_only_text(depth: ColorDepth) -> None:
    """Colour modes mark the new tile's number itself (bold/underline), not
    just a corner glyph that is easy to miss."""
    board, spawned = new_tile_boards()[0]
    view = make_view(board, spawned)
    screen = render(view, depth, 80, 30)
    top = find_header(screen.display)
    layout = layout_for(view, 80, 30)
    assert layout is not None
    y0, x0 = layout.tile_origin(*spawned)
    y1, x1 = layout.tile_origin(0, 0)  # another 2
    line = layout.number_line

    def digits(y: int, x: int) -> List[Cell]:
        return [
            cell(screen, top + 1 + y + line, x + dx)
            for dx in range(layout.tile_width)
            if screen.buffer[top + 1 + y + line][x + dx].data.isdigit()
        ]

    new, old = digits(y0, x0), digits(y1, x1)
    assert [c[0] for c in new] == [c[0] for c in old] == ["2"]
    assert new[0][3:] != old[0][3:]  # bold / underline / reverse


# -- a hundred frames through the emulator ------------------------------------------


def play_frames(depth: ColorDepth, width: int, height: int, seed: int, count: int = 100) -> None:
    """Play ``count`` random actions, repainting after each, and check the
    emulated screen after every frame."""
    screen, stream = terminal(width, height)
    prompt = [f"$ earlier output {i}" for i in range(height - 6)] + ["$ ansi2048"]
    stream.feed("\n".join(prompt) + "\n")  # start low on the screen: the first frame scrolls
    rng = random.Random(seed)
    session = Session(Game(4, 4, seed=seed))
    repainter = Repainter()
    actions = [Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT] * 6 + [Action.UNDO, Action.RESTART]
    for frame in range(count):
        note = f"replay {frame}/{count}" if frame % 7 < 3 else ""  # the frame grows and shrinks
        view = View.of(session, note)
        lines = frame_lines(view, depth, width, height)
        stream.feed(repainter.frame(lines))
        layout = layout_for(view, width, height)
        assert layout is not None
        display = screen.display
        top = find_header(display)
        game = session.game
        assert read_board(display, layout, game.rows, game.cols) == [list(row) for row in game.board]
        # In reading order too, without the layout's geometry.
        board_text = display[top + 1 : top + 1 + layout.board_size(game.rows, game.cols)[1]]
        on_screen = [parse_tile(match.group(0)) for line in board_text for match in NUMBER.finditer(line)]
        assert on_screen == [v for row in game.board for v in row if v]
        # The frame is all there is below the prompt: nothing left over from
        # a taller frame, and the cursor on the frame's last line.
        assert screen.cursor.y == top
        assert all(not line.strip() for line in display[top + len(lines) :]), dump(display)
        assert (note in display[top + len(lines) - 2]) if note else ("replay" not in dump(display))
        session.apply(rng.choice(actions))
    stream.feed(repainter.close())
    # The final board stays on screen, the prompt goes below it (scrolling
    # the board up a line if it ended on the bottom row).
    scrolled = max(0, top + len(lines) - (height - 1))
    assert layout is not None
    assert find_header(screen.display) == top - scrolled
    assert read_board(screen.display, layout, 4, 4) == [list(row) for row in view.board]
    assert screen.cursor.x == 0 and screen.cursor.y == top + len(lines) - scrolled


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize(("width", "height"), [(60, 24), (40, 14), (30, 11)])
def test_one_board_on_screen_after_a_hundred_frames(depth: ColorDepth, width: int, height: int) -> None:
    play_frames(depth, width, height, seed=width * height)


def test_no_colour_bleeds_past_the_lines() -> None:
    """ERASE_LINE paints with the current background: lines must end reset."""
    board, spawned = new_tile_boards()[0]
    for status, over in [(Status.PLAYING, False), (Status.WON, False), (Status.OVER, True), (Status.WON, True)]:
        view = make_view(board, spawned, status=status, over=over, note="a note")
        for depth in COLOUR_DEPTHS:
            lines = frame_lines(view, depth, 70, 30)
            screen = render(view, depth, 70, 30)
            for y, line in enumerate(lines):
                assert all(screen.buffer[y][x].bg == "default" for x in range(visible_width(line), 70))


def test_board_comes_back_after_too_small() -> None:
    view = make_view(new_tile_boards()[0][0], (1, 0))
    screen, stream = terminal(60, 24)
    repainter = Repainter()
    stream.feed(repainter.frame(frame_lines(view, ColorDepth.TRUE, 60, 24)))
    top = find_header(screen.display)
    message = frame_lines(view, ColorDepth.TRUE, 20, 5)
    stream.feed(repainter.frame(message))
    assert "too small" in message[0]
    assert [line.rstrip() for line in screen.display[top:]] == message + [""] * (24 - top - len(message))
    stream.feed(repainter.frame(frame_lines(view, ColorDepth.TRUE, 60, 24)))
    assert find_header(screen.display) == top
    assert "small" not in dump(screen.display)
    assert read_board(screen.display, BIG, 4, 4) == [list(row) for row in view.board]


def test_an_ending_in_parts_is_drawn_in_ascii_where_the_keys_are() -> None:
    # A watcher's last line ("watching NAME · q leaves") kept its "·" on an ASCII-only screen.
    view = dataclasses.replace(make_view(new_tile_boards()[0][0], (1, 0)), ending="watching alice · q leaves")
    assert frame_lines(view, ColorDepth.NONE, 80, 30)[-1].strip() == "watching alice - q leaves"
    assert frame_lines(view, ColorDepth.TRUE, 80, 30)[-1].strip().endswith("watching alice · q leaves")


def test_too_small_breaks_between_its_phrases_never_inside_one() -> None:
    # At 20x10 it read "need 30x11, have" over "20x10": the window's size cut in two.
    view = make_view(new_tile_boards()[0][0], (1, 0))
    assert frame_lines(view, ColorDepth.TRUE, 20, 10) == ["terminal too small:", "need 30x11,", "have 20x10"]
    assert frame_lines(view, ColorDepth.TRUE, 50, 3) == ["terminal too small: need 30x11, have 50x3"]


# -- the legacy Windows profile and plain output -----------------------------------

ALLOWED_SGR = {0, 1, 22, 39, 49, *range(30, 38), *range(40, 48), *range(90, 98), *range(100, 108)}
_CSI = re.compile(r"\x1b\[([0-?]*)([ -/]*)([@-~])")


def sample_views() -> Iterator[View]:
    for board, spawned in new_tile_boards():
        for status, over in [(Status.PLAYING, False), (Status.WON, False), (Status.OVER, True), (Status.WON, True)]:
            yield make_view(board, spawned, status=status, over=over)
            yield make_view(board, spawned, status=status, over=over, note="replay 1/2")
    yield make_view(PALETTE_BOARD, (3, 2))
    yield make_view([[0] * 10] * 10, None)


SIZES = [(80, 30), (60, 24), (40, 14), (34, 10), (20, 5), (200, 60), (3, 3), (1, 1)]


def test_basic_depth_is_what_colorama_converts() -> None:
    chunks = []
    for view in sample_views():
        repainter = Repainter(hide_cursor=False)
        for width, height in SIZES:
            chunks.append(repainter.frame(frame_lines(view, ColorDepth.BASIC, width, height)))
        chunks.append(repainter.close())
        chunks.append(summary_text(view, ColorDepth.BASIC))
    output = "".join(chunks)
    assert "?25" not in output
    sequences = _CSI.findall(output)
    assert output.count("\x1b") == len(sequences), "an escape that is not a CSI sequence"
    finals = {final for _, _, final in sequences}
    # colorama converts SGR, cursor moves A B C D, its position H, and erase J K (ansitowin32.py).
    assert finals <= {"m", "A", "B", "C", "H", "K", "J"}
    assert {"m", "A", "K", "J"} <= finals  # the test saw every kind (B: only repaints of changes)
    for params, intermediates, final in sequences:
        assert not intermediates and not params.startswith("?")
        if final == "m":
            assert {int(p) for p in params.split(";")} <= ALLOWED_SGR, params
        elif final in "ABC":
            assert params.isdigit()
        elif final == "H":
            assert params == ""  # the window's top-left: colorama counts from the window too
        else:
            assert params == ""


@pytest.mark.parametrize("depth", COLOUR_DEPTHS)
def test_colour_frames_use_their_own_depth(depth: ColorDepth) -> None:
    output = "".join(frame_lines(make_view(PALETTE_BOARD, (0, 0)), depth, 80, 30))
    assert ("38;2;" in output) is (depth is ColorDepth.TRUE)
    assert ("48;5;" in output) is (depth is ColorDepth.EXTENDED)
    if depth is ColorDepth.BASIC:
        assert ";4;" not in output and ";4m" not in output  # no underline: colorama drops it


def test_no_colour_means_no_escapes_and_ascii() -> None:
    for view in sample_views():
        for width, height in SIZES:
            for line in frame_lines(view, ColorDepth.NONE, width, height):
                assert "\x1b" not in line and line.isascii(), line
        text = summary_text(view, ColorDepth.NONE)
        assert "\x1b" not in text and text.isascii()


def test_ascii_only_in_colour() -> None:
    view = make_view(new_tile_boards()[0][0], (1, 0), status=Status.OVER, over=True)
    lines = frame_lines(view, ColorDepth.TRUE, 80, 30, ascii_only=True)
    assert all(line.isascii() for line in lines)
    assert not all(line.isascii() for line in frame_lines(view, ColorDepth.TRUE, 80, 30))


# -- sizes --------------------------------------------------------------------------


def big_board(rows: int, cols: int) -> Board:
    values = [1048576, 2, 131072, 0, 4096, 16777216, 2**101, 8]
    return tuple(tuple(values[(r * cols + c) % len(values)] for c in range(cols)) for r in range(rows))


@pytest.mark.parametrize("depth", DEPTHS)
def test_lines_fit_every_board_and_terminal(depth: ColorDepth) -> None:
    for rows in range(2, 11):
        for cols in range(2, 11):
            board = big_board(rows, cols)
            for status, over, note in [(Status.PLAYING, False, ""), (Status.WON, True, "a rather long note " * 5)]:
                view = make_view(board, (rows - 1, cols - 1), status, over, note, score=10**12)
                for width, height in [(20, 5), (40, 12), (80, 24), (100, 50), (130, 60), (300, 100), (82, 16)]:
                    lines = frame_lines(view, depth, width, height)
                    assert len(lines) <= height - 1
                    assert all(visible_width(line) < width for line in lines)
                    layout = layout_for(view, width, height)
                    if layout is not None:
                        assert len(lines) == layout.board_size(rows, cols)[1] + 4  # the note line, note or not
                        assert sum("Score" in line for line in lines) == 1


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 10),
    st.integers(2, 10),
    st.integers(0, 250),
    st.integers(0, 90),
    st.sampled_from(DEPTHS),
    st.data(),
)
def test_lines_fit_property(
    rows: int, cols: int, width: int, height: int, depth: ColorDepth, data: st.DataObject
) -> None:
    tile = st.sampled_from([0, 2, 4, 2048, 65536, 1048576, 2**40])
    # One draw for the whole board: each draw through st.data() has a fixed cost.
    cells = data.draw(st.lists(tile, min_size=rows * cols, max_size=rows * cols))
    board = [cells[row * cols : (row + 1) * cols] for row in range(rows)]
    spawned = data.draw(st.one_of(st.none(), st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1))))
    note = data.draw(st.text(max_size=30))
    view = make_view(board, spawned, note=note, score=data.draw(st.integers(0, 10**15)))
    lines = frame_lines(view, depth, width, height)
    assert len(lines) <= max(height - 1, 0)
    assert all(visible_width(line) < width for line in lines)


def test_layout_order_and_sizes() -> None:
    view = make_view([[0] * 4] * 4)
    # 4 tiles and 5 gaps: 2 columns a gap where rows have a 1-line gap, else 1.
    assert BIG.board_size(4, 4) == (4 * 8 + 5 * 2, 17)
    assert MEDIUM.board_size(4, 4) == (4 * 7 + 5 * 2, 9)
    assert COMPACT.board_size(4, 4) == (4 * 7 + 5, 6)
    assert NARROW.board_size(4, 4) == (4 * 6 + 5, 6)
    # Four lines of text (header; status, note, keys), the note's counted
    # whether it shows or not, and the free last row.
    assert layout_for(view, 43, 22) is BIG
    assert layout_for(view, 42, 22) is MEDIUM  # lines must stay narrower than the terminal
    assert layout_for(view, 43, 21) is MEDIUM  # and the last row stays free
    assert layout_for(view, 34, 11) is COMPACT
    assert layout_for(view, 30, 11) is NARROW
    assert layout_for(view, 29, 11) is None
    assert layout_for(view, 30, 10) is None
    # A 10x10 board fits the classic 80x24 terminal.
    assert layout_for(make_view([[0] * 10] * 10), 80, 24) is not None


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("note", ["", "replay 3/9"])
def test_too_small_names_the_size_that_fits(depth: ColorDepth, note: str) -> None:
    view = make_view(new_tile_boards()[0][0], (1, 0), note=note)
    lines = frame_lines(view, depth, 20, 5)
    assert 1 <= len(lines) <= 4
    text = " ".join(lines)
    assert "too small" in text
    assert all("\x1b" not in line for line in lines)
    match = re.search(r"need (\d+)x(\d+)", text)
    assert match, text
    need_width, need_height = int(match.group(1)), int(match.group(2))
    # Exactly the smallest size that shows the board.
    assert any("Score" in line for line in frame_lines(view, depth, need_width, need_height))
    assert not any("Score" in line for line in frame_lines(view, depth, need_width - 1, need_height))
    assert not any("Score" in line for line in frame_lines(view, depth, need_width, need_height - 1))


def test_too_small_on_a_tiny_terminal_still_fits() -> None:
    view = make_view([[2] * 10] * 10)
    for width, height in [(1, 1), (2, 2), (5, 2), (12, 3), (8, 40)]:
        lines = frame_lines(view, ColorDepth.TRUE, width, height)
        assert len(lines) <= height - 1 and all(len(line) < width for line in lines)
    assert re.search(r"\d+x\d+", " ".join(frame_lines(view, ColorDepth.TRUE, 8, 40)))


def test_the_last_frame_in_a_window_too_small_says_where_the_game_went() -> None:
    """Quitting in a window too small for the board: the last frame, left
    on screen, is the farewell (where the game was kept), not a size no key
    will ever need again."""
    ending = "game kept for next time: ansi2048 resumes it"
    view = dataclasses.replace(make_view([[2] * 4] * 4), ending=ending)
    for width, height, farewell in [(12, 6, 5), (30, 4, 2), (60, 3, 1)]:
        lines = frame_lines(view, ColorDepth.TRUE, width, height)
        assert len(lines) <= height - 1 and all(len(line) < width for line in lines)
        assert " ".join(lines[:farewell]) == ending  # first, whole
    # A window with no row to spare gets as much of it as it holds.
    assert ending.startswith(" ".join(frame_lines(view, ColorDepth.NONE, 12, 4)))
    # A row to spare: the size, after it.
    assert frame_lines(view, ColorDepth.NONE, 60, 4)[1:] == ["terminal too small: need 30x11, have 60x4"]


# -- banners and text -----------------------------------------------------------------


@pytest.mark.parametrize("depth", DEPTHS)
def test_banners(depth: ColorDepth) -> None:
    board = new_tile_boards()[0][0]

    def text(status: Status, over: bool, goal: int = 2048, width: int = 100) -> str:
        view = make_view(board, (1, 0), status=status, over=over, goal=goal)
        screen = render(view, depth, width, 40)
        return dump(screen.display)

    playing = text(Status.PLAYING, False)
    assert "Game over" not in playing and "You reached" not in playing
    assert "2048" in playing  # the goal is on screen
    won = text(Status.WON, False, goal=4096)
    assert "You reached 4096!" in won and "any move plays on" in won
    assert "Game over" not in won
    over = text(Status.OVER, True)
    assert "Game over" in over and "u undo" in over and "r new game" in over and "You reached" not in over
    both = text(Status.WON, True)
    assert "You reached 2048! Game over" in both
    # Narrow terminals keep the gist.
    assert "Game over" in text(Status.OVER, True, width=34)
    assert "2048!" in text(Status.WON, False, width=30)
    keys = text(Status.PLAYING, False)
    assert "u undo" in keys and "r new game" in keys and "q quit" in keys and "wasd" in keys


BANNERS = [(Status.WON, False), (Status.OVER, True), (Status.WON, True)]
MESSAGES = ("You reached", "You won!", "Won!", "Game over", "Over")


def message_lines(lines: Sequence[str]) -> List[int]:
    """The frame lines that hold the win or game-over message."""
    return [i for i, line in enumerate(lines) if any(m in re.sub(r"\x1b\[[0-9;]*m", "", line) for m in MESSAGES)]


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 2), (3, 5), (10, 10), (2, 10)])
def test_banners_stay_within_the_board(depth: ColorDepth, shape: Tuple[int, int]) -> None:
    rows, cols = shape
    board = [[2] * cols for _ in range(rows)]
    for status, over in BANNERS:
        for goal in (8, 2048, 2**31):
            view = make_view(board, status=status, over=over, goal=goal)
            for width, height in [(200, 60), (100, 40), (60, 30), (45, 24), (34, 20)]:
                layout = layout_for(view, width, height)
                if layout is None:
                    continue
                lines = frame_lines(view, depth, width, height)
                board_width, board_height = layout.board_size(rows, cols)
                on_board = message_lines(lines)
                # The message sits on the board (an overlay), as wide as the board at most.
                assert on_board and all(1 <= i <= board_height for i in on_board), (status, width, lines)
                assert all(visible_width(lines[i]) <= board_width for i in range(1, 1 + board_height))


def test_contrast_of_the_reported_banner() -> None:
    # White on gold, as the win banner was: 1.6:1.
    assert round(contrast_ratio((0xF9, 0xF6, 0xF2), (0xED, 0xC2, 0x2E)), 1) == 1.6
    assert round(contrast_ratio((0, 0, 0), (255, 255, 255)), 1) == 21.0


@pytest.mark.parametrize("depth", COLOUR_DEPTHS)
def test_banners_are_readable(depth: ColorDepth) -> None:
    for status, over in BANNERS:
        view = make_view(new_tile_boards()[0][0], status=status, over=over)
        lines = frame_lines(view, depth, 100, 40)
        (line,) = (lines[i] for i in message_lines(lines))
        cells = [(char, fg, bg) for char, fg, bg in emitted_colours(line) if char.isalpha()]
        assert cells, line
        for char, fg, bg in cells:
            assert -1 not in fg + bg, (status, line)  # both colours set
            assert contrast_ratio(fg, bg) >= 4.5, (status, char, fg, bg, contrast_ratio(fg, bg))


@pytest.mark.parametrize("depth", COLOUR_DEPTHS)
def test_the_board_dims_under_the_message(depth: ColorDepth) -> None:
    board = new_tile_boards()[0][0]
    playing = frame_lines(make_view(board), depth, 100, 40)
    over = frame_lines(make_view(board, status=Status.OVER, over=True), depth, 100, 40)
    top_row = 2  # the first line of tiles, above the message
    assert emitted_colours(playing[top_row]) != emitted_colours(over[top_row])
    assert re.sub(r"\x1b\[[0-9;]*m", "", playing[top_row]) == re.sub(r"\x1b\[[0-9;]*m", "", over[top_row])


def test_going_on_after_the_goal_names_the_next_tile() -> None:
    board = [[2048, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2], [0, 0, 0, 0]]
    view = View(
        board=tuple(tuple(row) for row in board),
        spawned=None,
        score=20000,
        best=20000,
        moves=900,
        goal=2048,
        seed=1,
        status=Status.PLAYING,
        reached=True,
    )
    text = dump(render(view, ColorDepth.NONE, 100, 40).display)
    assert "You reached 2048 - keep going for 4096" in text and "get to 2048" not in text
    # Through a session: the banner, then any move, then the next goal.
    board = [[1024, 1024, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]]
    session = Session(Game.from_board(board, goal=2048, seed=3))
    session.apply(Action.LEFT)
    assert session.status is Status.WON
    assert session.apply(Action.RIGHT).moved and session.status is Status.PLAYING
    status = frame_lines(View.of(session), ColorDepth.NONE, 60, 30)[-3]
    assert status == "You reached 2048 - keep going for 4096"
    # On a board that can hold nothing bigger, no impossible next goal.
    bigger = dataclasses.replace(view, board=((4096, 2, 0, 0), (0,) * 4, (0,) * 4, (0,) * 4))
    assert "You reached 4096 - keep going for 8192" in dump(render(bigger, ColorDepth.NONE, 100, 40).display)
    small = dataclasses.replace(view, board=((32, 16), (8, 4)))
    assert "the biggest a 2x2 board holds" in dump(render(small, ColorDepth.NONE, 60, 30).display)


def test_title_names_the_goal() -> None:
    header = render(make_view([[2, 0], [0, 4]], goal=8), ColorDepth.NONE, 60, 20).display[0]
    assert header.startswith("goal 8  Score")
    header = render(make_view([[2, 0], [0, 4]], goal=2048), ColorDepth.NONE, 60, 20).display[0]
    assert header.startswith("2048  Score")


def test_an_ended_replay_offers_no_keys() -> None:
    board = new_tile_boards()[0][0]
    for status, over in [(Status.PLAYING, False), *BANNERS]:
        view = make_view(board, status=status, over=over)
        ended = dataclasses.replace(view, replay=True, ending="end of replay")
        text = dump(render(ended, ColorDepth.NONE, 100, 40).display)
        assert "end of replay" in text
        for hint in ("q quit", "u undo", "r new", "Ctrl-C", "any move", "Any move", "Play on"):
            assert hint not in text, (status, text)


def test_note_is_shown_and_sanitised() -> None:
    view = make_view([[2, 0], [0, 4]], note="bad\x1b[31m\tname 漢字 e\u0301")
    for depth in DEPTHS:
        lines = frame_lines(view, depth, 40, 20)
        assert any("bad?[31m?name ?? e?" in line for line in lines)
        assert all(visible_width(line) < 40 for line in lines)


def test_header_shows_the_numbers() -> None:
    view = make_view([[2, 0], [0, 4]], score=5678)
    header = render(view, ColorDepth.TRUE, 60, 20).display[0]
    assert "Score 5678" in header and "Best 99999" in header and "Moves 321" in header


def test_a_replays_header_has_no_best_and_its_key_line_names_who_steers_it() -> None:
    # Issue 40 item 10: a replay keeps no best (its "Best" was its own
    # score); the local piped replay's keys (Ctrl-C) are not a served one's.
    from ansi2048.render.keymap import ReplayKeys

    piped = dataclasses.replace(make_view([[2, 0], [0, 4]], score=5678), replay=True)
    served = dataclasses.replace(piped, replay_keys=ReplayKeys.VIEWER)
    paused = dataclasses.replace(piped, replay_keys=ReplayKeys.PAUSED)
    texts = {view: frame_lines(view, ColorDepth.NONE, 60, 20) for view in (piped, served, paused)}
    assert all("Score 5678" in text[0] and "Best" not in text[0] for text in texts.values())
    assert "Ctrl-C stops" in texts[piped][-1]
    assert "space pause" in texts[served][-1] and "Ctrl-C" not in texts[served][-1]
    assert texts[paused][-1].startswith("paused") and "q leave" in texts[paused][-1]


# -- summary --------------------------------------------------------------------------


def test_summary_text_reads_back() -> None:
    board = ((0, 2, 1048576), (16, 0, 4), (2, 2, 8))
    view = make_view(board, (2, 1), status=Status.OVER, over=True, score=777)
    text = summary_text(view, ColorDepth.NONE)
    assert text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == 4
    widths = {len(line.rstrip("*")) for line in lines[:3]}
    cells = [line.split() for line in lines[:3]]
    assert [[0 if t == "." else int(t.rstrip("*")) for t in row] for row in cells] == [list(row) for row in board]
    assert [t for row in cells for t in row if t.endswith("*")] == ["2*"]
    assert cells[2][1] == "2*"
    assert len(widths) <= 2  # fixed-width columns
    assert lines[3].startswith("score 777  moves 321  biggest 1048576  seed 42")
    assert "game over" in lines[3] and "won" in lines[3]  # 1048576 is past the goal


def test_summary_flags() -> None:
    small = ((2, 4), (0, 8))
    playing = summary_text(make_view(small), ColorDepth.NONE).splitlines()[-1]
    assert "won" not in playing and "game over" not in playing
    assert "won" in summary_text(make_view(small, status=Status.WON), ColorDepth.NONE)
    assert "game over" in summary_text(make_view(small, status=Status.OVER, over=True), ColorDepth.NONE)


@pytest.mark.parametrize("depth", COLOUR_DEPTHS)
def test_summary_in_colour_has_the_same_text(depth: ColorDepth) -> None:
    view = make_view(PALETTE_BOARD, (1, 1), status=Status.WON, over=True)
    coloured = summary_text(view, depth)
    assert "\x1b[" in coloured
    plain = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert [line.rstrip() for line in plain.splitlines()] == summary_text(view, ColorDepth.NONE).splitlines()
    assert all(line.endswith("\x1b[0m") for line in coloured.splitlines()[:-1])


# -- the repainter ----------------------------------------------------------------------


def test_repainter_sequences() -> None:
    repainter = Repainter()
    first = repainter.frame(["a", "bb", "ccc"])
    # Every frame ends with ESC[J (FRAME_END): it clears what a taller frame
    # left below, and tells a reader of the output that the frame is whole.
    # Then back to the frame's top row, where the cursor waits for the next
    # (a window made shorter then cuts the frame's bottom, never pushes its
    # header into the terminal's history).
    assert first == "\x1b[?25la\x1b[K\nbb\x1b[K\nccc\x1b[K\x1b[J\r\x1b[2A"
    second = repainter.frame(["x"])
    assert second == "\rx\x1b[K\x1b[J"  # from the top row: no way up; one line: no way back
    third = repainter.frame(["y", "z"])
    assert third == "\ry\x1b[K\nz\x1b[K\x1b[J\r\x1b[1A"
    assert repainter.close() == "\x1b[0m\x1b[?25h\r\x1b[1B\n"  # down past the frame for the prompt
    assert repainter.close() == "\x1b[0m"  # nothing more to end


def test_repainter_reset_and_no_hide() -> None:
    repainter = Repainter(hide_cursor=False)
    assert repainter.frame(["a", "b"]) == "a\x1b[K\nb\x1b[K\x1b[J\r\x1b[1A"
    repainter.reset()
    assert repainter.frame(["c"]) == "c\x1b[K\x1b[J"
    assert "?25" not in repainter.close()


def test_repainter_closes_open_colour_before_erasing() -> None:
    out = Repainter(hide_cursor=False).frame(["\x1b[41mred"])
    assert out == "\x1b[41mred\x1b[0m\x1b[K\x1b[J"


def test_repainter_never_clears_the_screen() -> None:
    repainter = Repainter()
    view = make_view(PALETTE_BOARD, (0, 0))
    output = "".join(repainter.frame(frame_lines(view, d, w, h)) for d in DEPTHS for w, h in SIZES) + repainter.close()
    for forbidden in ("\x1b[2J", "\x1b[3J", "\x1b[H", "\x1b[1;1H", "?1049", "?47h", "\x1bc"):
        assert forbidden not in output


def test_a_narrowed_reflowing_terminal_still_gets_one_board() -> None:
    # tmux, VTE and Windows Terminal reflow long lines when the window gets
    # narrower; the repainter must go up over every row the old frame takes.
    game = Game(seed=5)
    session = Session(game)
    repainter = Repainter()
    wide = frame_lines(View.of(session), ColorDepth.NONE, 60, 30)
    first = repainter.frame(wide, 60)
    # Emulate a reflow to 20 columns: the old frame's lines, rewrapped.
    reflowed = [line[i : i + 20] for line in wide for i in range(0, max(1, len(line)), 20)]
    screen, stream = terminal(20, 40)
    stream.feed("\n".join(reflowed))
    assert first  # drawn once at 60 columns
    game.move("left")
    narrow = frame_lines(View.of(session), ColorDepth.NONE, 20, 40)
    stream.feed(repainter.frame(narrow, 20))
    shown = [line.rstrip() for line in screen.display if line.strip()]
    assert shown == [line.rstrip() for line in narrow if line.strip()]


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_new_tile_is_outlined_in_tall_tiles_and_bracketed_in_short_ones(depth: ColorDepth) -> None:
    board = [[2, 4, 8, 16], [32, 64, 128, 256], [512, 1024, 2048, 4], [2, 4, 8, 16]]
    view = make_view(board, (1, 1))
    for width, height in ((100, 40), (80, 30), (50, 24)):
        display = render(view, depth, width, height).display
        top = find_header(display)
        layout = layout_for(view, width, height)
        assert layout is not None and layout.tile_height >= 3
        y0, x0 = layout.tile_origin(1, 1)
        # Without colour the gap's padding is on the tile's left: the outline
        # leaves as much on its right (centred between the bars).
        box = layout.tile_width - (layout.col_gap - 1 if depth is ColorDepth.NONE else 0)
        tile = [display[top + 1 + y0 + dy][x0 : x0 + box] for dy in range(layout.tile_height)]
        corners = "++++" if depth is ColorDepth.NONE else "┌┐└┘"
        assert (tile[0][0], tile[0][-1], tile[-1][0], tile[-1][-1]) == tuple(corners), tile
        assert "64" in tile[layout.number_line]
        # Every other tile has no outline.
        y1, x1 = layout.tile_origin(0, 0)
        assert set(display[top + 1 + y1][x1 : x1 + layout.tile_width]) == {" "}
    small = render(view, depth, 40, 12).display
    assert "[64]" in "\n".join(small)


def test_tiles_grow_with_the_window() -> None:
    """The board is not stuck at BIG's 42x17 in a big window: LARGE, then
    HUGE, whenever they fit (with the text around and the free last row)."""
    view = make_view([[0] * 4] * 4)
    assert LARGE.board_size(4, 4) == (4 * 12 + 5 * 2, 4 * 5 + 3 + 2)
    assert HUGE.board_size(4, 4) == (4 * 16 + 5 * 2, 4 * 7 + 3 + 2)
    assert layout_for(view, 100, 30) is LARGE
    assert layout_for(view, 59, 30) is LARGE and layout_for(view, 58, 30) is BIG
    assert layout_for(view, 75, 38) is HUGE and layout_for(view, 75, 37) is LARGE
    sizes = [layout.board_size(4, 4) for layout in LAYOUTS]
    assert sizes == sorted(sizes, reverse=True)  # tried from the biggest down
    for width, height in ((100, 30), (120, 45), (200, 60)):
        lines = frame_lines(make_view([[2, 4, 8, 16]] * 4), ColorDepth.NONE, width, height)
        assert len(lines) <= height - 1 and all(len(line) < width for line in lines)
        assert max(len(line) for line in lines) > 42


# The served daily game's notes, as the server words them (two clauses and an
# aside): at any width the line is whole clauses, never a cut one.
NOTES = (
    "ranked game of 2026-11-28: no undo; r twice ends it; b: the board",
    "ranked: t again ends it, unranked (other keys: play on)",
)


@pytest.mark.parametrize("note", NOTES)
def test_a_note_too_long_for_the_window_is_said_in_fewer_clauses_not_cut(note: str) -> None:
    clauses = {
        NOTES[0]: [
            "ranked game of 2026-11-28: no undo; r twice ends it; b: the board",
            "ranked game of 2026-11-28: no undo; r twice ends it",
            "ranked game of 2026-11-28: no undo",
        ],
        NOTES[1]: ["ranked: t again ends it, unranked (other keys: play on)", "ranked: t again ends it, unranked"],
    }[note]
    view = make_view([[2, 0], [0, 4]], note=note)
    seen = set()
    for width in range(36, 100):
        lines = [line.strip() for line in frame_lines(view, ColorDepth.NONE, width, 24)]
        said = [wording for wording in clauses if wording in lines]
        assert said, (width, lines)
        assert len(said[0]) < width
        seen.add(said[0])
    assert seen == set(clauses)  # each wording is used at some width
