"""The motion of a move: timing, easing, and where each tile is per frame."""

from __future__ import annotations

import pytest

from ansi2048.game.engine import Direction, Game, trace_move
from ansi2048.render.motion import FRAME_TIMES, SETTLE_SECONDS, SLIDE_SECONDS, Phase, ease_in_out, motion_frames


def test_ease_in_out_is_css_ease_in_out() -> None:
    assert ease_in_out(0) == 0 and ease_in_out(1) == 1
    assert ease_in_out(0.5) == pytest.approx(0.5, abs=1e-6)
    values = [ease_in_out(i / 20) for i in range(21)]
    assert values == sorted(values)
    assert ease_in_out(0.1) < 0.1 and ease_in_out(0.9) > 0.9  # slow start, slow end


def test_the_first_frame_answers_the_key_at_once_then_30_a_second_settling_within_200_ms() -> None:
    assert FRAME_TIMES[0] == 0  # no wait before the first frame: a key is answered at once
    slide = FRAME_TIMES[:3]  # up to the tiles' arrival
    assert all(later - earlier <= 1 / 30 + 0.001 for earlier, later in zip(slide, slide[1:]))
    # The arrival shows the slide's end (SLIDE_SECONDS of path, one frame ahead of the clock).
    assert FRAME_TIMES[2] + 1 / 30 == pytest.approx(SLIDE_SECONDS)
    assert 0.1 <= FRAME_TIMES[-1] == SETTLE_SECONDS <= 0.2


def test_tiles_slide_then_merge_then_the_new_tile_appears() -> None:
    board = [[2, 2, 0, 4], [0, 0, 0, 0], [0, 8, 0, 0], [0, 0, 0, 0]]
    game = Game.from_board(board)
    slides = trace_move(game.cells, 4, 4, Direction.LEFT)
    frames = motion_frames(slides, 4, spawn=(3, 3), spawn_value=2)
    assert [time for time, _ in frames] == list(FRAME_TIMES[:-1])
    first = {(s.value, s.row): s.col for s in frames[0][1]}
    # every tile has left its cell but not reached its place; the 2 at col 0 stays
    assert 0 < first[(4, 0)] < 3 and 0 < first[(8, 2)] < 1
    arrive = frames[2][1]
    assert {(s.value, s.row, s.col, s.phase) for s in arrive} == {
        (4, 0, 0, Phase.POPPED),  # 2 + 2
        (4, 0, 1, Phase.SLIDING),  # the 4 that slid, not merged
        (8, 2, 0, Phase.SLIDING),
        (2, 3, 3, Phase.APPEARING),  # the new tile, only once the tiles have arrived
    }
    assert not any(s.phase is Phase.APPEARING for _, sprites in frames[:2] for s in sprites)
