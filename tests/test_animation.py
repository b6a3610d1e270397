"""Motion in the keyboard game, in-process: the test console's keys arrive at
given times on a fake clock, so every frame of a move, and a key that cuts
one short, can be checked without a terminal or real time."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, List, Sequence, Tuple

import pytest

from ansi2048.game.engine import Direction, Game
from ansi2048.game.session import Session
from ansi2048.options.context import Context, Options
from ansi2048.play.keyboard import play_terminal
from ansi2048.records.recording import replay
from ansi2048.render.frame import LARGE
from ansi2048.render.motion import FRAME_TIMES, GAIN_SECONDS
from ansi2048.render.repaint import FRAME_END

from .console import HEIGHT, WIDTH, FakeClock, PlayConsole, screens
from .screen import emulate, read_board

__all__ = ["run", "screens"]


def run(
    data: Path,
    typed: Sequence[Tuple[float, bytes]],
    env: Any = None,
    key_ready: bool = True,
    seed: int = 21,
    **options: Any,
) -> PlayConsole:
    clock = FakeClock(100.0)
    console = PlayConsole(typed, clock, waits=key_ready)
    ctx = Context(
        options=Options(seed=seed, new=True, **options),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        env={"ANSI2048_DATA_DIR": str(data), "TERM": "xterm-256color", **(env or {})},
        warn=lambda message: None,
        random_seed=lambda: 1,
        clock=clock,
    )
    assert play_terminal(ctx, console.open) == 0
    return console


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path


def frames_between(console: PlayConsole, start: float, end: float) -> List[Tuple[float, str]]:
    return [(time, text) for time, text in console.frames if start <= time < end and FRAME_END in text]


def first_move_with_points(seed: int) -> Tuple[bytes, int]:
    """A key whose move merges tiles on the first move of ``seed``, or the
    first that moves at all, and the points it makes."""
    best: Tuple[bytes, int] = (b"", -1)
    for key, direction in (
        (b"a", Direction.LEFT),
        (b"d", Direction.RIGHT),
        (b"w", Direction.UP),
        (b"s", Direction.DOWN),
    ):
        game = Game(seed=seed)
        if game.move(direction) and game.score > best[1]:
            best = (key, game.score)
    return best


def test_a_move_slides_in_frames_at_30_per_second_and_settles_as_without_motion(data: Path) -> None:
    key, _ = first_move_with_points(21)
    console = run(data, [(1.0, key), (5.0, b"q")])
    typed_at = 101.0
    moving = frames_between(console, typed_at, typed_at + 1)
    times = [round(time - typed_at, 3) for time, _ in moving]
    # The motion frames at their times, then the settled frame (at 200 ms);
    # the slide at 30 frames a second.
    assert times[: len(FRAME_TIMES)] == [round(t, 3) for t in FRAME_TIMES]
    slide = [0.0, *times[:3]]
    assert all(later - earlier <= 1 / 30 + 0.001 for earlier, later in zip(slide, slide[1:]))
    # The settled frame is the static frame of the same game.
    session = Session(Game(seed=21))
    replay(session, key)
    screen = emulate(console.screen_bytes, WIDTH, HEIGHT)
    assert read_board(screen.display, LARGE, 4, 4) == [list(row) for row in session.game.board]
    moving_board = read_board(
        emulate(b"".join(t.encode() for _, t in console.frames[:2]), WIDTH, HEIGHT).display, LARGE, 4, 4
    )
    assert moving_board != [list(row) for row in session.game.board]  # a frame mid-slide differs


def test_a_key_typed_during_the_motion_ends_it_and_is_played_at_once(data: Path) -> None:
    keys = moving_keys(21, 3)
    console = run(data, [(1.0, keys[0:1]), (1.05, keys[1:2]), (1.06, keys[2:3]), (5.0, b"q")])
    boards = [[list(row) for row in played(21, prefix).game.board] for prefix in (keys[:1], keys[:2], keys)]
    shown = [(time - 101.0, read_board(display, LARGE, 4, 4)) for time, display in screens(console)]
    # Each key cut the motion before it short: the board it settles on is on
    # screen the moment the next key arrives, not 200 ms after the last one.
    assert min(t for t, board in shown if board == boards[0]) == pytest.approx(0.05)
    assert min(t for t, board in shown if board == boards[1]) == pytest.approx(0.06)
    assert shown[-1][1] == boards[2]
    # Nothing more of the first two moves was drawn: the first move's two
    # frames of motion (0 and 33 ms), its settled frame when the second key
    # came (50 ms) with that key's first frame at once, and so on.
    times = [round(t - 101.0, 3) for t, _ in frames_between(console, 101.0, 101.061)]
    assert times == [0.0, 0.033, 0.05, 0.05, 0.06, 0.06]


def test_without_animation_a_move_is_one_frame(data: Path) -> None:
    for index, (options, env) in enumerate((({"animation": False}, None), ({}, {"ANSI2048_NO_ANIMATION": "1"}))):
        console = run(data / str(index), [(1.0, b"a"), (3.0, b"q")], env=env, **options)
        frames = [t for t, text in console.frames if FRAME_END in text]
        assert len(frames) == 3, (options, env)  # the start, the move, the last (the farewell)
    console = run(data / "legacy", [(1.0, b"a"), (3.0, b"q")], key_ready=False)
    assert len([t for t, text in console.frames if FRAME_END in text]) == 3


def test_animated_and_static_play_end_on_the_same_screen(data: Path) -> None:
    keys = [(1.0 + i, bytes([k])) for i, k in enumerate(b"asdwasdwaassdd")] + [(30.0, b"q")]
    animated = run(data / "a", keys)
    still = run(data / "b", keys, animation=False)
    shown = emulate(animated.screen_bytes, WIDTH, HEIGHT).display
    assert shown == emulate(still.screen_bytes, WIDTH, HEIGHT).display


def test_the_gain_shows_by_the_score_then_goes(data: Path) -> None:
    key, points = first_move_with_points(10)
    assert points > 0, "the test needs a first move that merges"
    console = run(data, [(1.0, key), (5.0, b"q")], seed=10)
    gain = f"+{points}"
    shown = [time - 101.0 for time, display in screens(console) if gain in display[0]]
    assert shown and min(shown) < FRAME_TIMES[0] + 0.001  # with the first frame of the move
    assert max(shown) < GAIN_SECONDS  # and gone after 600 ms
    assert gain not in emulate(console.screen_bytes, WIDTH, HEIGHT).display[0]


MOVES = ((b"a", Direction.LEFT), (b"w", Direction.UP), (b"d", Direction.RIGHT), (b"s", Direction.DOWN))


def played(seed: int, keys: bytes) -> Session:
    session = Session(Game(seed=seed))
    replay(session, keys)
    return session


def moving_keys(seed: int, count: int) -> bytes:
    """``count`` keys for ``seed`` that each change the board."""
    keys = b""
    while len(keys) < count:
        keys += next(key for key, direction in MOVES if played(seed, keys).game.move(direction))
    return keys


def stuck_keys(seed: int) -> Tuple[bytes, str]:
    """Keys for ``seed`` whose last is a move that changes nothing, and its direction."""
    keys = b""
    for _ in range(100):
        for key, direction in ((b"a", Direction.LEFT), (b"w", Direction.UP), (b"d", Direction.RIGHT)):
            session = Session(Game(seed=seed))
            replay(session, keys)
            if not session.game.move(direction):
                return keys + key, direction.value
        keys += b"a"
    raise AssertionError("no stuck move found")


def test_a_move_that_changes_nothing_says_so_and_nudges_the_board(data: Path) -> None:
    keys, word = stuck_keys(21)
    typed = [(1.0 + i, bytes([k])) for i, k in enumerate(keys)] + [(60.0, b"q")]
    console = run(data, typed)
    stuck_at = 100.0 + len(keys)
    after = screens(console)
    nudged = [display for time, display in after if stuck_at <= time < stuck_at + 1]
    assert len(nudged) == 2  # the nudge, then the settled frame
    # (no colour here: stdout is not a terminal) the board's top rule, one column right, then back
    assert nudged[0][1].startswith(" +-") and nudged[1][1].startswith("+-")
    # The settled frame says why nothing happened, the board as before.
    assert any(f"can't move {word}" in line for line in nudged[1])
    before = [display for time, display in after if time < stuck_at][-1]
    assert read_board(nudged[1], LARGE, 4, 4) == read_board(before, LARGE, 4, 4)
