"""Frames as a player sees them through Screen: the note line kept from the
first frame, the new tile's box without colour, synchronized output; and
frames as values (what a repaint writes, what the caches keep)."""

from __future__ import annotations

import math
import random
import re
from dataclasses import replace
from typing import List, Tuple

import pytest

from ansi2048.game.engine import Direction, Game
from ansi2048.game.session import Session, Status
from ansi2048.play.screen import Screen
from ansi2048.render import (
    board as board_module,
    frame as frame_module,
    keymap as keymap_module,
    lines as lines_module,
    moving as moving_module,
    style as style_module,
)
from ansi2048.render.color import TERMINAL_PALETTES, contrast_ratio, lab, shown_rgb
from ansi2048.render.frame import LAYOUTS, View, build_frame, frame_lines, layout_for
from ansi2048.render.palette import Palette
from ansi2048.render.repaint import SYNC_BEGIN, SYNC_END, Repainter
from ansi2048.render.style import ColorDepth
from ansi2048.render.themes import THEMES

from .screen import dump, emitted_colours, find_header, read_board, terminal

ENV = {"TERM": "xterm-256color"}


def view_of(board: List[List[int]], spawned: Tuple[int, int] = (1, 1), **fields: object) -> View:
    view = View(tuple(tuple(row) for row in board), spawned, 1234, 99999, 321, 2048, 42, Status.PLAYING)
    return replace(view, **fields)  # type: ignore[arg-type]


BOARD = [[2, 4, 8, 16], [32, 64, 0, 0], [0, 0, 2, 0], [0, 0, 0, 4]]


# -- the note line is there from the first frame (issue 30, item 4) ---------------


@pytest.mark.parametrize("depth", [ColorDepth.NONE, ColorDepth.TRUE])
def test_a_note_on_a_full_screen_does_not_scroll_the_board(depth: ColorDepth) -> None:
    width, height = 60, 24
    screen, stream = terminal(width, height)
    stream.feed("\n".join(str(n) for n in range(1, 101)) + "\n")  # after `seq 100`: the screen is full
    shown = Screen(stream.feed, lambda: (width, height), depth, ENV)
    view = view_of(BOARD)
    shown.paint(view)
    top = find_header(screen.display)
    keys = max(y for y, line in enumerate(screen.display) if "quit" in line)
    for note in (replace(view, hint=Direction.LEFT), replace(view, autoplay=4), view, replace(view, note="x")):
        shown.paint(note)
        assert find_header(screen.display) == top, dump(screen.display)
        assert max(y for y, line in enumerate(screen.display) if "quit" in line) == keys
    layout = layout_for(view, width, height)
    assert layout is not None
    assert read_board(screen.display, layout, 4, 4) == BOARD


def test_every_frame_of_a_view_has_the_same_height_note_or_not() -> None:
    view = view_of(BOARD)
    for width, height in ((100, 30), (60, 24), (40, 14), (30, 11)):
        views = (view, replace(view, note="a note"), replace(view, hint=Direction.UP), replace(view, stuck=True))
        heights = {len(frame_lines(shown, ColorDepth.TRUE, width, height)) for shown in views}
        assert len(heights) == 1, (width, height, heights)


# -- without colour, the new tile's box sits between the bars (item 8) --------------


def test_the_new_tiles_box_in_each_layout_is_symmetric() -> None:
    view = view_of(BOARD, spawned=(1, 1))
    for layout in LAYOUTS:
        if layout.tile_height < 3:
            continue
        width, height = next((w, h) for w in range(20, 200) for h in range(10, 60) if layout_for(view, w, h) is layout)
        lines = frame_lines(view, ColorDepth.NONE, width, height)
        top = 1 + layout.tile_origin(1, 1)[0]
        step = layout.tile_width + layout.col_gap
        # Between the two bars around the tile: the gap's padding, then the tile.
        for line in lines[top : top + layout.tile_height]:
            cell = line[step + 1 : 2 * step]
            assert len(cell) - len(cell.lstrip(" ")) == len(cell) - len(cell.rstrip(" ")), (layout.name, cell)


# -- synchronized output (item 11) ----------------------------------------------------


def painted_by(env: dict, legacy: bool = False, depth: ColorDepth = ColorDepth.EXTENDED) -> List[str]:
    written: List[str] = []
    screen = Screen(written.append, lambda: (80, 30), depth, env, legacy=legacy)
    session = Session(Game(seed=3))
    screen.paint(View.of(session))
    session.game.move("left")
    screen.paint(View.of(session))
    screen.paint_help(View.of(session))
    screen.close()
    return written


def test_each_frame_is_one_synchronized_update() -> None:
    *frames, closing = painted_by(ENV)
    assert len(frames) == 3
    for text in frames:
        assert text.startswith(SYNC_BEGIN) and text.endswith(SYNC_END)
        assert text.count(SYNC_BEGIN) == text.count(SYNC_END) == 1
    assert SYNC_BEGIN not in closing and "2026" not in closing


def test_no_synchronized_output_on_the_legacy_console_or_a_dumb_terminal() -> None:
    assert not any("2026" in text for text in painted_by(ENV, legacy=True, depth=ColorDepth.BASIC))
    assert not any("\x1b" in text for text in painted_by({"TERM": "dumb"}, depth=ColorDepth.NONE))


def test_a_synchronized_frame_reads_the_same_on_a_terminal_without_the_mode() -> None:
    # pyte, like xterm and every terminal without mode 2026, ignores it.
    plain, synced = terminal(80, 30), terminal(80, 30)
    session = Session(Game(seed=3))
    for sync, (_, stream) in ((False, plain), (True, synced)):
        repainter = Repainter(sync=sync)
        stream.feed(repainter.frame(build_frame(View.of(session), ColorDepth.TRUE, 80, 30), 80, 30))
    assert plain[0].display == synced[0].display


# -- frames as values ----------------------------------------------------------------


def test_a_repaint_writes_only_the_changed_tiles() -> None:
    view = view_of([[0] * 4] * 4, spawned=(0, 0))
    changed = view_of([[0] * 4, [0, 0, 0, 0], [0, 0, 8, 0], [0] * 4], spawned=(0, 0))
    repainter = Repainter()
    repainter.frame(build_frame(view, ColorDepth.TRUE, 100, 30), 100, 30)
    out = repainter.frame(build_frame(changed, ColorDepth.TRUE, 100, 30), 100, 30)
    layout = layout_for(view, 100, 30)
    assert layout is not None
    # The tile's lines, each from the tile's column (a cursor move over the rest), and the last line.
    moves = re.findall(r"\x1b\[(\d+)C", out)
    assert moves == [str(layout.tile_origin(2, 2)[1])] * layout.tile_height
    assert re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out).count("8") == 1


def test_diffs_draw_what_full_frames_draw() -> None:
    """A hundred moves repainted over each other show what each frame alone shows."""
    rng = random.Random(5)
    session = Session(Game(seed=5))
    for depth in ColorDepth:
        diffed, diffed_stream = terminal(100, 30)
        repainter = Repainter()
        for _ in range(60):
            if session.game.over:
                session.game.restart()
            session.game.move(rng.choice(list(Direction)))
            frame = build_frame(replace(View.of(session), gained=rng.choice((0, 4, 16))), depth, 100, 30)
            diffed_stream.feed(repainter.frame(frame, 100, 30))
            alone, alone_stream = terminal(100, 30)
            alone_stream.feed(Repainter().frame(frame, 100, 30))
            top = find_header(diffed.display)
            assert diffed.display[top : top + 29] == alone.display[:29]
            for y in range(29):
                for x in range(100):
                    a, b = diffed.buffer[top + y][x], alone.buffer[y][x]
                    assert (a.data, a.fg, a.bg, a.bold, a.underscore) == (b.data, b.fg, b.bg, b.bold, b.underscore)


def test_the_frame_caches_are_bounded() -> None:
    """A server paints for many screens: what the caches keep has a bound."""
    caches = [
        lines_module.painted,
        board_module._row_lines,
        board_module.tile_line,
        board_module._gap,
        board_module._rule,
        board_module.board_look,
        board_module.dimmed,
        moving_module._sprite_runs,
        moving_module._overlaid,
        moving_module._empty_board,
        moving_module._placed,
        moving_module._drawn_line,
        frame_module._header_line,
        frame_module._status_line,
        frame_module._note_line,
        keymap_module.keys_line,
        style_module._sgr,
        style_module._change,
    ]
    for cached in caches:
        info = cached.cache_info()
        assert info.maxsize is not None and info.maxsize <= 4096, cached


# -- banners and the ramp, in every theme (items 5 and 6) ----------------------------

BANNER_VIEWS = [
    view_of(BOARD, status=Status.WON, reached=True),
    view_of(BOARD, status=Status.OVER, over=True),
    view_of(BOARD, status=Status.WON, reached=True, over=True),
]


def banner_cells(line: str) -> List[Tuple[str, int, int]]:
    """(character, 16-colour text code, background code) of each letter of a
    line painted at 16 colours, from its SGR codes."""
    out = []
    fg = bg = -1
    for match in re.finditer(r"\x1b\[([0-9;]*)m|([^\x1b])", line):
        if match.group(2) is not None:
            if match.group(2).isalpha():
                out.append((match.group(2), fg, bg))
            continue
        for code in (int(c) for c in match.group(1).split(";") if c):
            if code == 0:
                fg = bg = -1
            elif 30 <= code <= 37 or 90 <= code <= 97:
                fg = code
            elif 40 <= code <= 47 or 100 <= code <= 107:
                bg = code - 10
    return out


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_every_banner_reads_at_4_5_to_1_at_every_depth(theme: str) -> None:
    """Issue 30, item 5: the dark theme's win banner at 16 colours was grey
    on bright yellow, 3.7:1 in xterm and worse elsewhere."""
    palette = THEMES[theme]()
    for view in BANNER_VIEWS:
        for depth in (ColorDepth.TRUE, ColorDepth.EXTENDED):
            lines = frame_lines(view, depth, 100, 40, palette=palette)
            (line,) = (line for line in lines if "Game over" in line or "You reached" in line)
            cells = [(fg, bg) for char, fg, bg in emitted_colours(line) if char.isalpha()]
            assert cells and all(contrast_ratio(fg, bg) >= 4.5 for fg, bg in cells), (theme, depth, line)
        lines = frame_lines(view, ColorDepth.BASIC, 100, 40, palette=palette)
        (line,) = (line for line in lines if "Game over" in line or "You reached" in line)
        codes = {(fg, bg) for _, fg, bg in banner_cells(line)}
        assert codes and all(fg >= 0 and bg >= 0 for fg, bg in codes), line
        for name, table in TERMINAL_PALETTES.items():
            for fg, bg in codes:
                assert contrast_ratio(table[fg], table[bg]) >= 4.5, (theme, name, fg, bg)


def ramp_labs(palette: Palette, depth: ColorDepth) -> List[Tuple[float, float]]:
    shown = []
    for value in (8, 16, 32, 64):
        rgb = shown_rgb(palette.tile(value)[0], depth)
        assert rgb is not None
        lightness, a, b = lab(rgb)
        shown.append((lightness, math.hypot(a, b)))
    return shown


@pytest.mark.parametrize("theme", sorted(THEMES))
@pytest.mark.parametrize("depth", [ColorDepth.TRUE, ColorDepth.EXTENDED])
def test_the_orange_to_red_ramp_gets_hotter_as_it_grows(theme: str, depth: ColorDepth) -> None:
    """Issue 30, item 6: at 256 colours the 32 tile (a muddy brown, #d7875f)
    was greyer than both 16 and 64. From 8 to 64 each tile is no lighter and
    no greyer than the one before, as in the original."""
    ramp = ramp_labs(THEMES[theme](), depth)
    for (lighter, greyer), (lightness, chroma) in zip(ramp, ramp[1:]):
        assert lightness <= lighter and chroma >= greyer, (theme, depth, ramp)


# -- a notice in place of the frame on screen, undone (serve/game.py's saving pause) --


def test_a_notice_over_the_frame_on_screen_is_undone_and_held_frames_land_as_if_sent_at_once() -> None:
    width, height = 60, 24
    moved = [[2, 4, 8, 16], [32, 64, 0, 0], [2, 0, 0, 0], [4, 0, 0, 2]]
    later = [[2, 4, 8, 16], [32, 64, 0, 0], [2, 0, 0, 0], [4, 2, 0, 2]]
    first, second, third = view_of(BOARD), view_of(moved, note="moved"), view_of(later)
    direct, direct_stream = terminal(width, height)
    straight = Screen(direct_stream.feed, lambda: (width, height), ColorDepth.TRUE, ENV)
    straight.paint(first)
    straight.paint(second)

    paused, paused_stream = terminal(width, height)
    written: List[str] = []
    shown = Screen(written.append, lambda: (width, height), ColorDepth.TRUE, ENV)

    def send() -> str:
        text = "".join(written)
        written.clear()
        return text

    shown.paint(first)
    paused_stream.feed(send())
    before = list(paused.display)
    mark = shown.mark()
    shown.paint(second)
    held = send()  # drawn, not sent
    after = shown.mark()
    shown.rewind(mark)
    shown.notice("saving has paused")
    paused_stream.feed(send())
    # The frame on screen stays, but for its last line: the notice.
    last = max(y for y, line in enumerate(before) if line.strip())
    assert paused.display[last].strip() == "saving has paused"
    assert [line for y, line in enumerate(paused.display) if y != last] == [
        line for y, line in enumerate(before) if y != last
    ]
    shown.redraw(mark)
    paused_stream.feed(send() + held)
    shown.rewind(after)
    assert paused.display == direct.display
    # The repainter knows what is on screen: the next frame lands as it does straight.
    straight.paint(third)
    shown.paint(third)
    paused_stream.feed(send())
    assert paused.display == direct.display


# -- the same view at the same size is the same frame: built once ----------------


def test_a_view_painted_again_at_the_same_size_builds_no_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    # Keys that change nothing (a refused move, a board that is over) draw the
    # view drawn before: its frame is reused, and the repaint writes nothing of it.
    built: List[View] = []
    real_build = build_frame

    def counting_build(view: View, *args: object, **kwargs: object) -> object:
        built.append(view)
        return real_build(view, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("ansi2048.play.screen.build_frame", counting_build)
    size = [80, 30]
    written: List[str] = []
    screen = Screen(written.append, lambda: (size[0], size[1]), ColorDepth.TRUE, ENV)
    view = view_of(BOARD)
    screen.paint(view)
    screen.paint(replace(view))  # equal, not the same object
    assert len(built) == 1
    assert "Score" not in written[1] and len(written[1]) < len(written[0]) / 4  # nothing of the board again
    moved = replace(view, board=((4, 4, 8, 16), *view.board[1:]))
    screen.paint(moved)
    size[0] = 60  # the same view, resized: built again, for the new size
    screen.paint(moved)
    assert built == [view, moved, moved]
    screen, stream = terminal(60, 30)
    Screen(stream.feed, lambda: (60, 30), ColorDepth.TRUE, ENV).paint(moved)
    fresh = list(screen.display)
    replayed, replayed_stream = terminal(60, 30)
    for text in written:
        replayed_stream.feed(text)
    assert [line.rstrip() for line in replayed.display] == [line.rstrip() for line in fresh]
