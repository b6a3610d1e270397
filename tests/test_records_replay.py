"""The core's replay of a recording (ansi2048/records/replay.py, issue 35
item 6): one header rule for the saved game and the verification, a replay
that is the saved game's own, and one definition of "the replay matches"."""

from __future__ import annotations

import random
from typing import List

import pytest
from hypothesis import given, settings, strategies as st

from ansi2048 import __version__
from ansi2048.game.engine import Direction, Game
from ansi2048.records.recording import format_header
from ansi2048.records.replay import (
    NewerRules,
    Result,
    Setup,
    checked_header,
    replay,
    replay_steps,
    verdict,
    verdict_steps,
)
from ansi2048.storage.save_file import SaveFile

from .conftest import json_lines, messages, run_cli

KEYS = {Direction.UP: "w", Direction.LEFT: "a", Direction.DOWN: "s", Direction.RIGHT: "d"}
HEADER = format_header(9, 4, 4, 2048, __version__).encode("ascii")


def engine_alone(keys: str) -> Game:
    game = Game(4, 4, 2048, 9)
    moves = {key: direction for direction, key in KEYS.items()}
    for key in keys:
        game.move(moves[key])
    return game


def some_keys(count: int) -> str:
    rng = random.Random(4)
    return "".join(rng.choice("wasd") for _ in range(count))


@pytest.mark.parametrize(
    "recording, why",
    [
        (b"wasd", "no valid header"),
        (HEADER.rstrip(b"\n"), "no valid header"),  # cut short: no newline yet
        (HEADER.replace(b"seed=9 ", b""), "no valid header"),
        (HEADER.replace(b"size=4x4", b"size=5x5") + b"wasd", "header is for another board"),
        (HEADER.replace(f"version={__version__} ".encode(), b"") + b"wasd", "the header has no version"),
        (HEADER.replace(__version__.encode(), b"99.0") + b"wasd", "written by ansi2048 99.0, newer than this"),
    ],
)
def test_a_header_is_refused_for_one_reason_by_the_save_and_the_verification_alike(recording: bytes, why: str) -> None:
    with pytest.raises(ValueError) as checked:
        checked_header(recording, (4, 4, 2048))
    assert str(checked.value).startswith(why)
    with pytest.raises(ValueError) as loaded:
        SaveFile("", 4, 4, 2048, recording).load()
    assert str(loaded.value) == str(checked.value)


def test_a_newer_versions_recording_is_refused_as_other_rules() -> None:
    newer = HEADER.replace(__version__.encode(), b"99.0") + b"wasd"
    with pytest.raises(NewerRules):
        checked_header(newer)
    assert verdict(newer, Setup(9, 4, 4, 2048), Result(0, 0, "")) == (None, "recorded under other rules")


def test_the_replay_is_the_saved_games_own_and_the_engines() -> None:
    keys = some_keys(400)
    recording = HEADER + keys.encode() + b"\n# times in ms from the start, one per key: 1 2 3\n"
    replayed = replay(recording)
    game = engine_alone(keys)
    assert (replayed.score, replayed.moves, replayed.biggest) == (game.score, game.moves, game.biggest)
    assert replayed.cells == " ".join(map(str, game.cells))
    loaded = SaveFile("", 4, 4, 2048, recording).load()
    assert loaded is not None and replayed.result == Result.of(loaded.game)


def test_the_replay_in_steps_is_the_whole_replay() -> None:
    recording = HEADER + some_keys(300).encode()
    steps = replay_steps(recording, every=10)
    count: List[None] = []
    while True:
        try:
            count.append(next(steps))
        except StopIteration as done:
            assert done.value == replay(recording)
            break
    assert len(count) >= 30
    claimed = replay(recording).result
    stepped = verdict_steps(recording, Setup(9, 4, 4, 2048), claimed, every=7)
    with pytest.raises(StopIteration) as whole:
        while True:
            next(stepped)
    assert whole.value.value == verdict(recording, Setup(9, 4, 4, 2048), claimed)
    assert whole.value.value[1] == ""


def test_the_replay_matches_on_the_seed_board_score_moves_and_cells_each() -> None:
    keys = some_keys(60)
    game = engine_alone(keys)
    seen = Result(game.score, game.moves, " ".join(map(str, game.cells)))
    setup = Setup(9, 4, 4, 2048)
    recording = HEADER + keys.encode()
    assert verdict(recording, setup, seen)[1] == ""
    assert verdict(recording, Setup(10, 4, 4, 2048), seen)[1] == "recorded from another seed or board than the game's"
    assert verdict(recording, Setup(9, 4, 4, 4096), seen)[1] == "recorded from another seed or board than the game's"
    assert verdict(recording, setup, Result(seen.score + 2, seen.moves, seen.cells))[1].startswith("the replay gives")
    assert verdict(recording, setup, Result(seen.score, seen.moves - 1, seen.cells))[1].endswith(
        f"the game showed {seen.moves - 1}"
    )
    assert verdict(recording, setup, Result(seen.score, seen.moves, "0 " * 15 + "2"))[1] == (
        "the replay gives another board"
    )


# -- the local check (``ansi2048 --json < game.keys``) reads a recording as the verification does --


def local_check(recording: bytes) -> Result:
    """What the local replay of ``recording`` ends on: its last JSON object's numbers and board."""
    replayed = run_cli(["--json"], recording)
    assert replayed.returncode == 0, replayed.stderr
    final = json_lines(replayed.stdout)[-1]
    return Result(final["score"], final["moves"], " ".join(str(cell) for row in final["board"] for cell in row))


# Bodies added to by hand, and the keys a game's recording holds in them (what
# the game writes: w a s d u r, and q, which ends it). Each also holds keys a
# keyboard reads (an arrow, W, h, ^C, a '#' that starts no "# " line), which
# the local replay took for moves or for its end before it read a recording as
# the verification does.
TAMPERED = [
    (b"wasd\x1b[Awasd", "wasdwasd"),  # an arrow's escape sequence: no key of a recording
    (b"wasdWASDhjkl", "wasd"),
    (b"wasd\x03wasd", "wasdwasd"),  # ^C
    (b"wasd\n#x wasd\n", "wasdwasd"),  # a stray '#': what follows it still counts
    (b"wasdqwasd", "wasd"),  # q ends a recording, for both
]


@pytest.mark.parametrize("body, keys", TAMPERED)
def test_the_local_check_and_the_verification_read_a_recording_alike(body: bytes, keys: str) -> None:
    assert Result.of(engine_alone(keys)) != Result.of(engine_alone(keys + "wasd"))  # the added keys would matter
    game = Result.of(engine_alone(keys))
    assert verdict(HEADER + body, Setup(9, 4, 4, 2048), game)[1] == ""
    assert local_check(HEADER + body) == game


def test_a_recording_with_keys_added_fails_the_verification_and_the_local_check_alike() -> None:
    keys = some_keys(40)
    honest = Result.of(engine_alone(keys))
    assert local_check(HEADER + keys.encode()) == honest
    added = keys + "wwddss"
    assert Result.of(engine_alone(added)) != honest
    _, why = verdict(HEADER + added.encode(), Setup(9, 4, 4, 2048), honest)
    assert why.startswith("the replay gives")
    assert local_check(HEADER + added.encode()) == Result.of(engine_alone(added))


def test_keys_piped_by_hand_are_still_read_as_a_keyboard_reads_them() -> None:
    # No version: no game wrote this header; an arrow is a move, q the end.
    typed = format_header(9, 4, 4, 2048, __version__).replace(f"version={__version__} ", "").encode()
    for header, actions in ((typed, ["up", "left", "quit"]), (HEADER, ["left", "quit"])):
        events = json_lines(run_cli(["--json"], header + b"\x1b[Aaqw").stdout)
        assert [event["action"] for event in events if event["action"] != "start"] == actions


def test_a_newer_versions_recording_is_refused_by_the_verification_and_flagged_by_the_local_check() -> None:
    newer = HEADER.replace(__version__.encode(), b"99.0") + b"wasd"
    assert verdict(newer, Setup(9, 4, 4, 2048), Result.of(engine_alone("wasd")))[1] == "recorded under other rules"
    replayed = run_cli(["--json"], newer)
    assert replayed.returncode == 0
    assert messages(replayed.stderr) == [
        f"ansi2048: warning: this recording was written by ansi2048 99.0, newer than this {__version__}: "
        "replayed by this version's rules, it may not end as it did"
    ]
    # This version's own recording: no warning.
    assert run_cli(["--json"], HEADER + b"wasd").stderr == b""


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"w", b"a", b"s", b"d", b"u", b"r", b"q", b"W", b"h", b"\x1b", b"[", b"A", b"#", b" "])
        | st.sampled_from([b"\n", b"\r\n", b"\x03", b"\n# ai\n", b"\n# ansi2048 seed=5\n", b"\n# a comment\n"]),
        max_size=80,
    )
)
def test_whatever_a_recording_holds_the_local_replay_ends_where_the_verification_does(parts: List[bytes]) -> None:
    import io

    from ansi2048.options.context import Context, Options
    from ansi2048.play.piped import play_piped

    recording = HEADER + b"".join(parts)
    out = io.StringIO()
    ctx = Context(Options(json=True), io.BytesIO(), out, {}, pytest.fail, lambda: 1)
    assert play_piped(ctx, recording) == 0
    final = json_lines(out.getvalue().encode())[-1]
    cells = " ".join(str(cell) for row in final["board"] for cell in row)
    assert Result(final["score"], final["moves"], cells) == replay(recording).result
