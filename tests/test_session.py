"""The session state machine (game.py) and the recording header (recording.py)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Optional, Sequence

import pytest
from hypothesis import example, given, settings, strategies as st

from ansi2048 import __version__
from ansi2048.game.engine import MAX_SEED_DIGITS, Direction, Game
from ansi2048.game.keys import Action
from ansi2048.game.protocol import ACTION_NAMES, event
from ansi2048.game.session import Outcome, Session, Status
from ansi2048.records.recording import MAGIC, Header, format_header, parse_header

from .reference import ref_move_board, ref_over_board

MOVES = (Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT)
ALL_ACTIONS = (*MOVES, Action.UNDO, Action.RESTART, Action.QUIT)


def game_with(board: Sequence[Sequence[int]], goal: int = 2048, seed: int = 0) -> Game:
    # Not won yet, whatever the tiles: the tests make the winning move themselves.
    return Game.from_board(board, goal=goal, seed=seed, won=False)


def as_lists(game: Game) -> list[list[int]]:
    return [list(r) for r in game.board]


# --------------------------------------------------------------------------
# Status
# --------------------------------------------------------------------------


def test_fresh_session_is_playing() -> None:
    session = Session(Game(4, 4, 2048, 1))
    assert session.status is Status.PLAYING
    assert not session.quit
    assert session.best == 0


def test_won_banner_once_then_playing() -> None:
    session = Session(game_with([[4, 4, 0, 0], [4, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], goal=8))
    assert session.status is Status.PLAYING
    outcome = session.apply(Action.LEFT)  # makes two 8s: the goal
    assert outcome.moved and session.game.won
    assert session.status is Status.WON
    # the next key, even one that changes nothing, takes the banner down
    outcome = session.apply(Action.LEFT)
    assert session.status is Status.PLAYING
    # and reaching the goal again (8 + 8 = 16) does not put it back up
    assert session.apply(Action.UP).moved
    assert max(max(r) for r in session.game.board) >= 16
    assert session.status is Status.PLAYING
    rng = random.Random(0)
    for _ in range(50):
        session.apply(rng.choice(MOVES))
        assert session.status is not Status.WON
        assert session.game.won


@pytest.mark.parametrize("key_after", ALL_ACTIONS)
def test_won_banner_comes_down_on_any_key(key_after: Action) -> None:
    session = Session(game_with([[4, 4, 0], [0, 0, 0], [0, 0, 2]], goal=8))
    session.apply(Action.LEFT)
    assert session.status is Status.WON
    session.apply(key_after)
    assert session.status is not Status.WON


def test_over_when_no_direction_changes_the_board() -> None:
    # LEFT leaves 2 16 / 8 _; the spawn (2 or 4) cannot match 8 or 16: over.
    session = Session(game_with([[2, 16], [0, 8]]))
    assert session.status is Status.PLAYING
    outcome = session.apply(Action.LEFT)
    assert outcome.moved
    assert session.game.over and ref_over_board(session.game.board)
    assert session.status is Status.OVER
    for action in MOVES:  # moves change nothing on a finished board
        board = as_lists(session.game)
        assert session.apply(action) == Outcome(action, False, None)
        assert as_lists(session.game) == board
        assert session.status is Status.OVER
    assert session.apply(Action.UNDO).moved
    assert session.status is Status.PLAYING
    assert as_lists(session.game) == [[2, 16], [0, 8]]


def test_restart_from_over_is_playing() -> None:
    session = Session(game_with([[2, 16], [0, 8]]))
    session.apply(Action.LEFT)
    assert session.status is Status.OVER
    outcome = session.apply(Action.RESTART)
    assert outcome.moved
    assert session.status is Status.PLAYING
    assert session.game.score == 0 and session.game.moves == 0


def test_winning_move_that_ends_the_game_says_won() -> None:
    # LEFT makes the goal 8; the spawn fills the last hole: 8 x / 16 32 is over.
    session = Session(game_with([[4, 4], [16, 32]], goal=8))
    session.apply(Action.LEFT)
    assert session.game.won and session.game.over
    assert session.status is Status.WON
    session.apply(Action.LEFT)  # the next key: now it is over
    assert session.status is Status.OVER


def test_session_on_an_already_won_game_does_not_celebrate_again() -> None:
    game = game_with([[4, 4, 0], [0, 0, 0], [0, 0, 2]], goal=8)
    game.move(Direction.LEFT)
    assert game.won
    session = Session(game)
    assert session.status is Status.PLAYING
    for action in MOVES:
        session.apply(action)
        assert session.status is not Status.WON


# --------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**64), st.lists(st.sampled_from(ALL_ACTIONS), max_size=60))
def test_property_outcomes(seed: int, actions: list[Action]) -> None:
    session = Session(Game(3, 4, 2048, seed), best=0)
    best = session.best
    for action in actions:
        game = session.game
        board = as_lists(game)
        score, seed_before, can_undo = game.score, game.seed, game.can_undo
        outcome = session.apply(action)
        assert outcome.action is action
        after = as_lists(session.game)
        if action.direction is not None:
            slid = ref_move_board(board, action.direction)
            assert outcome.moved is (slid != board)
            if outcome.moved:
                # spawn: the one cell where the board differs from the slide
                diff = [(r, c) for r in range(3) for c in range(4) if after[r][c] != slid[r][c]]
                assert outcome.spawn is not None and diff == [outcome.spawn]
                r, c = outcome.spawn
                assert slid[r][c] == 0 and after[r][c] in (2, 4)
            else:
                assert outcome.spawn is None and after == board and session.game.score == score
        elif action is Action.UNDO:
            assert outcome.moved is can_undo
            assert outcome.spawn is None
            if not can_undo:
                assert after == board
        elif action is Action.RESTART:
            assert outcome.moved
            assert session.game.seed != seed_before
            assert outcome.spawn is not None
            r, c = outcome.spawn
            assert after[r][c] in (2, 4)
            assert sum(v != 0 for row in after for v in row) == 2
        else:
            assert outcome == Outcome(Action.QUIT, False, None)
            assert session.quit
            assert after == board
        # the best score never decreases and is never below the score
        assert session.best >= best
        assert session.best >= session.game.score
        best = session.best


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**64), st.lists(st.sampled_from(ALL_ACTIONS), max_size=60))
def test_a_session_that_keeps_no_keys_plays_the_same(seed: int, actions: list[Action]) -> None:
    # keep_keys=False (piped replays): the same game and outcomes, no keys held.
    kept, lean = Session(Game(3, 4, 2048, seed)), Session(Game(3, 4, 2048, seed), keep_keys=False)
    for action in actions:
        outcome, expected = lean.apply(action), kept.apply(action)
        ended = None if expected.ended is None else replace(expected.ended, keys="")
        assert outcome == expected._replace(ended=ended)
        assert lean.game.board == kept.game.board and lean.game.score == kept.game.score
        assert lean.played() == replace(kept.played(), keys="")
        assert all(not run.keys for run in [lean.runs()[0], *lean.runs()[1]])


@pytest.mark.parametrize("action", [Action.HINT, Action.AUTOPLAY, Action.FASTER, Action.SLOWER])
def test_the_ais_keys_are_not_the_sessions(action: Action) -> None:
    assert not action.game
    with pytest.raises(ValueError):
        Session(Game(4, 4, 2048, 5)).apply(action)


def test_an_assisted_game_does_not_raise_the_best() -> None:
    session = Session(game_with([[8, 8], [0, 0]]), best=4)
    session.assisted = True
    session.apply(Action.LEFT)
    assert session.game.score == 16
    assert session.best == 4
    assert session.played().ai
    # A new game is the player's own again: its scores count.
    session.apply(Action.RESTART)
    assert not session.assisted


def test_undoing_into_an_assisted_game_keeps_it_assisted() -> None:
    session = Session(game_with([[8, 8], [0, 0]]), best=0)
    session.assisted = True
    session.apply(Action.RESTART)
    session.apply(Action.UNDO)  # the assisted game is back
    assert session.assisted
    session.apply(Action.LEFT)
    assert session.game.score == 16 and session.best == 0


def test_quit_flag() -> None:
    session = Session(Game(4, 4, 2048, 5))
    for action in (*MOVES, Action.UNDO, Action.RESTART):
        session.apply(action)
        assert not session.quit
    board = as_lists(session.game)
    outcome = session.apply(Action.QUIT)
    assert session.quit
    assert (outcome.moved, outcome.spawn) == (False, None)
    assert as_lists(session.game) == board


def test_best_score_initial_and_after_undo() -> None:
    assert Session(Game(4, 4, 2048, 1), best=100).best == 100
    game = game_with([[8, 8], [0, 0]])
    game.move(Direction.LEFT)
    assert game.score == 16
    assert Session(game, best=4).best == 16
    session = Session(game_with([[8, 8], [0, 0]]), best=4)
    session.apply(Action.LEFT)
    assert session.best == 16
    session.apply(Action.UNDO)
    assert session.game.score == 0
    assert session.best == 16
    session.apply(Action.RESTART)
    assert session.best == 16


def test_event_fields() -> None:
    session = Session(game_with([[2, 2, 0], [0, 0, 0], [4, 0, 4]], seed=77))
    outcome = session.apply(Action.LEFT)
    game = session.game
    record = event(game, ACTION_NAMES[Action.LEFT], outcome.moved, outcome.spawn)
    assert set(record) == {"action", "moved", "board", "score", "moves", "won", "over", "spawn", "seed"}
    assert record["action"] == "left"
    assert record["moved"] is True
    assert record["board"] == as_lists(game)
    assert all(type(row) is list for row in record["board"])
    assert record["score"] == 4 + 8
    assert record["moves"] == 1
    assert record["won"] is False and record["over"] is False
    assert outcome.spawn is not None
    assert record["spawn"] == list(outcome.spawn)
    assert record["seed"] == 77
    assert json.loads(json.dumps(record)) == record

    start = event(Game(2, 3, 2048, 9), "start", False, None)
    assert start["spawn"] is None and start["action"] == "start" and start["moved"] is False
    assert len(start["board"]) == 2 and len(start["board"][0]) == 3


def test_action_names() -> None:
    # The protocol names the game's keys; the AI's keys are never reported.
    assert set(ACTION_NAMES) == {action for action in Action if action.game}
    assert {ACTION_NAMES[a] for a in MOVES} == {d.value for d in Direction}
    assert ACTION_NAMES[Action.UNDO] == "undo"
    assert ACTION_NAMES[Action.RESTART] == "restart"
    assert ACTION_NAMES[Action.QUIT] == "quit"


# --------------------------------------------------------------------------
# Recording header
# --------------------------------------------------------------------------


def test_header_format_matches_the_documented_example() -> None:
    # recording.py's docstring: "# ansi2048 version=0.1.0 seed=7 size=4x4 goal=2048"
    assert format_header(7, 4, 4, 2048, "0.1.0") == "# ansi2048 version=0.1.0 seed=7 size=4x4 goal=2048\n"
    assert format_header(1, 2, 10, 8, __version__).startswith(MAGIC + " ")


@given(
    st.integers(0, 2**128),
    st.integers(2, 10),
    st.integers(2, 10),
    st.sampled_from([2**k for k in range(3, 32)]),
    st.from_regex(r"[0-9A-Za-z.+_-]{1,12}", fullmatch=True),
)
def test_header_round_trip(seed: int, rows: int, cols: int, goal: int, version: str) -> None:
    line = format_header(seed, rows, cols, goal, version)
    assert line.endswith("\n") and line.count("\n") == 1
    expected = Header(seed=seed, rows=rows, cols=cols, goal=goal, version=version)
    assert parse_header(line) == expected
    assert parse_header(line.rstrip("\n")) == expected
    assert parse_header(line.replace("\n", "\r\n")) == expected


def test_header_fields_in_any_order_and_partial() -> None:
    assert parse_header("# ansi2048 goal=16 seed=3\n") == Header(seed=3, goal=16)
    assert parse_header("# ansi2048 size=3x5\n") == Header(rows=3, cols=5)
    assert parse_header("# ansi2048\n") == Header()
    assert parse_header("# ansi2048") == Header()


@pytest.mark.parametrize(
    "line",
    [
        "",
        "\n",
        "#",
        "# ansi",
        "#ansi2048 seed=1",
        " # ansi2048 seed=1",
        "# ansi2048x seed=1",
        "# ansi20480 seed=1",
        "# ANSI2048 seed=1",
        "# other tool seed=1",
        "wasd",
        "ansi2048 seed=1",
    ],
)
def test_parse_rejects_non_headers(line: str) -> None:
    assert parse_header(line) is None


@pytest.mark.parametrize(
    "fields, expected",
    [
        ("seed=abc", Header()),
        ("seed=-1", Header()),
        ("seed=1.5", Header()),
        ("seed=0x10", Header()),
        ("seed= 5", Header()),
        ("size=4", Header()),
        ("size=4x", Header()),
        ("size=x4", Header()),
        ("size=4x4x4", Header()),
        ("size=axb", Header()),
        ("size=4X4", Header()),
        ("goal=abc", Header()),
        ("goal=-8", Header()),
        ("goal=2e3", Header()),
        ("seed=abc size=3x3 goal=16", Header(rows=3, cols=3, goal=16)),
        ("seed=9 size=bad goal=16", Header(seed=9, goal=16)),
        ("seed=9 size=3x3 goal=?", Header(seed=9, rows=3, cols=3)),
    ],
)
def test_malformed_fields_are_none(fields: str, expected: Header) -> None:
    assert parse_header(f"{MAGIC} {fields}\n") == expected


def test_unicode_digit_lookalikes_are_malformed_not_a_crash() -> None:
    # str.isdigit() is True for superscript two, "1²" and circled one, but
    # int() cannot read them: such a field is malformed, so None.
    for field in ("seed", "goal"):
        for value in ("\u00b2", "1\u00b2", "\u2460"):
            line = f"{MAGIC} {field}={value} size=3x3\n"
            try:
                header = parse_header(line)
            except ValueError as error:
                raise AssertionError(f"BUG: parse_header({line!r}) raised ValueError: {error}") from error
            assert header is not None
            assert getattr(header, field) is None
            assert (header.rows, header.cols) == (3, 3)


def test_huge_seed_in_header_is_not_a_crash() -> None:
    # A crafted recording may carry any seed: past the digit limit it is a
    # malformed field, not an error.
    header = parse_header(f"{MAGIC} seed={'9' * 5000}\n")
    assert header is not None
    assert header.seed is None
    longest = parse_header(f"{MAGIC} seed={'9' * MAX_SEED_DIGITS}\n")
    assert longest is not None and longest.seed == 10**MAX_SEED_DIGITS - 1


_FIELD_TEXT = st.text(
    st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs")),
    min_size=0,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["seed", "size", "goal", "version", "x"]), _FIELD_TEXT), max_size=5))
@example([("seed", "\u00b2")])
def test_property_parse_never_raises(fields: list[tuple[str, str]]) -> None:
    line = MAGIC + "".join(f" {key}={value}" for key, value in fields) + "\n"
    header: Optional[Header] = None
    try:
        header = parse_header(line)
    except ValueError as error:
        raise AssertionError(f"BUG: parse_header({line!r}) raised ValueError: {error}") from error
    assert isinstance(header, Header)
    for number in (header.seed, header.rows, header.cols, header.goal):
        assert number is None or (isinstance(number, int) and number >= 0)
