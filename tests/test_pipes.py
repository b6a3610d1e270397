"""Pipes and files at the edges: a recording piped in late or with a huge
header line, a standard error that cannot be written, ``--record`` over an
existing file, and the keyboard game with stdout redirected."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from ansi2048 import Game
from ansi2048.records.recording import FirstLine, Header, parse_header, split_header

from .conftest import child_env, game_env, json_lines, run_cli, symlink_or_skip
from .console import HEIGHT, WIDTH
from .ptys import spawn
from .screen import FRAME_END_PATTERN

NAMES = {"w": "up", "a": "left", "s": "down", "d": "right"}
RECORDING = b"# ansi2048 version=0.1.0 seed=7 size=3x3 goal=64\nwasd"


def _board_after(keys: str, seed: int, rows: int = 4, cols: int = 4, goal: int = 2048) -> List[List[int]]:
    game = Game(rows, cols, goal, seed)
    for key in keys:
        game.move(NAMES[key])
    return [list(row) for row in game.board]


# -- item 14: a recording piped in late ----------------------------------------


def test_json_start_comes_at_once_and_a_late_header_sets_the_game_up() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "ansi2048", "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    first = json_lines(proc.stdout.readline())  # before any input at all
    assert first[0]["action"] == "start"
    proc.stdin.write(RECORDING)  # the recording arrives after the start object
    proc.stdin.close()
    rest = json_lines(proc.stdout.read())
    assert proc.wait() == 0
    assert rest[0]["action"] == "start" and rest[0]["seed"] == 7 and len(rest[0]["board"]) == 3
    assert rest[0]["goal"] == 64
    assert [e["action"] for e in rest[1:]] == ["up", "left", "down", "right"]
    assert rest[-1]["board"] == _board_after("wasd", 7, 3, 3, 64)


def test_a_recording_piped_in_late_replays_that_recording() -> None:
    # The old code gave up on the header after half a second: the only test
    # here that has to let time pass to show it no longer does.
    proc = subprocess.Popen(
        [sys.executable, "-m", "ansi2048"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None
    time.sleep(1.0)
    out, err = proc.communicate(RECORDING, timeout=60)
    assert proc.returncode == 0, err
    text = out.decode()
    assert "seed 7" in text and err == b""
    game = Game(3, 3, 64, 7)
    for key in "wasd":
        game.move(NAMES[key])
    assert f"score {game.score}" in text and f"moves {game.moves}" in text


def test_keys_before_any_header_keep_the_first_start_object() -> None:
    # A header line after keys starts no new game set-up: it is a restart
    # into its seed, as in a saved game (`--seed` over an unfinished one).
    events = json_lines(run_cli(["--json", "--seed", "3"], b"w\n# ansi2048 seed=9\nw").stdout)
    assert [e["action"] for e in events] == ["start", "up", "restart", "up"]
    assert [e["seed"] for e in events] == [3, 3, 9, 9]


# -- item 15: long header lines, split anywhere ---------------------------------


def _first_line(chunks: List[bytes]) -> Tuple[Optional[Header], bytes]:
    first = FirstLine()
    for index, chunk in enumerate(chunks):
        rest = first.feed(chunk)
        if rest is not None:
            return first.header, rest + b"".join(chunks[index + 1 :])
    rest = first.finish()
    return first.header, rest


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [
            RECORDING,
            b"\xef\xbb\xbf" + RECORDING,
            b"# ansi2048\r\nwasd",
            b"# ansi2048",
            b"# ansi204",
            b"# a comment\nwasd",
            b"wasd",
            b"",
            b"#ansi2048 seed=1\nw",
            b"# ansi2048   seed=4\t\tsize=2x3  \nw#x\nd",
        ]
    ),
    st.lists(st.integers(0, 80), max_size=4),
)
def test_the_first_line_reads_the_same_however_it_is_split(data: bytes, cuts: List[int]) -> None:
    points = sorted(min(cut, len(data)) for cut in cuts)
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    header, rest = _first_line(chunks)
    whole = split_header(data)
    assert header == whole[0]
    assert rest == whole[1]


def test_a_header_line_of_any_length_is_read_in_bounded_memory() -> None:
    padded = b"# ansi2048" + b" " * 100_000 + b"seed=5" + b"\t" * 70_000 + b"size=3x3 goal=64\nw"
    header, rest = _first_line([padded[i : i + 4096] for i in range(0, len(padded), 4096)])
    assert header == Header(seed=5, rows=3, cols=3, goal=64)
    assert rest == b"w"
    first = FirstLine()
    first.feed(b"# ansi2048 " + b"x" * 10_000_000)
    assert sum(len(word) for word in first._words) + len(first._word) < 64_000  # what is kept is bounded


@pytest.mark.parametrize(
    "line, seed, size",
    [
        (b"# ansi2048" + b" " * 100_000 + b"seed=5 size=3x3 goal=64", 5, 3),  # padding before the fields
        (b"# ansi2048 seed=5 " + b"wasd " * 200_000, 5, 4),  # a 1 MB header comment
        (b"# ansi2048 size=3x3 seed=" + b"9" * 70_000 + b" goal=64 wasd", None, 3),  # a 70,000-digit seed
    ],
    # Short ids: pytest puts the id in PYTEST_CURRENT_TEST, and a megabyte of
    # it in the environment makes every program the test starts fail (E2BIG).
    ids=["padding", "1MB-comment", "70k-digit-seed"],
)
def test_a_long_header_line_never_yields_keys(line: bytes, seed: Optional[int], size: int) -> None:
    result = run_cli(["--json"], line + b"\nd")
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    assert [e["action"] for e in events] == ["start", "start", "right"]  # the header's game, one key
    assert len(events[1]["board"]) == size
    if seed is not None:
        assert events[1]["seed"] == seed
    else:
        assert b"seed" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_ten_megabyte_header_line_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "huge.keys"
    path.write_bytes(b"# ansi2048 seed=5 " + b"wasd" * 2_500_000 + b"\nd")
    with path.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "ansi2048", "--json"], stdin=stdin, capture_output=True, check=False, timeout=60
        )
    events = json_lines(result.stdout)
    assert [e["action"] for e in events] == ["start", "right"] and events[0]["seed"] == 5


def test_a_header_with_one_bad_field_keeps_the_others_and_names_it() -> None:
    result = run_cli(["--json"], b"# ansi2048 seed=5 size=banana goal=64\nw")
    events = json_lines(result.stdout)
    assert (events[1]["seed"], events[1]["goal"], len(events[1]["board"])) == (5, 64, 4)
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "size" in err and "malformed" in err


def test_parse_header_names_the_bad_fields() -> None:
    header = parse_header("# ansi2048 seed=x size=3x3 goal=7q\n")
    assert header is not None
    assert header.bad == ("seed", "goal") and (header.rows, header.cols) == (3, 3)


# -- the null device: no terminal, on any system ----------------------------------


def test_the_null_device_is_no_terminal() -> None:
    # Windows' C runtime calls every character device a tty, NUL among them:
    # a game with `> NUL` took it for a screen to draw on.
    from ansi2048.terminal.streams import isatty

    with open(os.devnull, "w") as null:
        assert not isatty(null)


def test_keys_from_the_null_device_are_a_piped_game_of_none() -> None:
    # `ansi2048 < NUL` (or < /dev/null): no keys, so the first board and its
    # summary, as from an empty pipe; not a keyboard game on no console.
    result = subprocess.run(
        [sys.executable, "-m", "ansi2048", "--seed", "1"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    assert b"moves 0" in result.stdout and b"seed 1" in result.stdout


# -- item 16: a standard error that cannot be written ---------------------------

_WARNS = b"# ansi2048 seed=5 size=1x1\nwasd"  # one warning (no such board), then four keys
_MOVES = ["up", "left", "down", "right"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_standard_error_does_not_stop_the_game() -> None:
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "ansi2048", "--json"], input=_WARNS, stdout=subprocess.PIPE, stderr=full, check=False
        )
    assert result.returncode == 0
    assert [e["action"] for e in json_lines(result.stdout) if e["action"] != "start"] == _MOVES


def test_a_standard_error_nobody_reads_does_not_stop_the_game() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ansi2048"], input=_WARNS, stdout=subprocess.PIPE, stderr=write_end, check=False
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0
    assert b"seed 5" in result.stdout


@pytest.mark.posix("a POSIX shell's 2>&-")
def test_a_closed_standard_error_does_not_stop_the_game() -> None:
    result = subprocess.run(
        f'"{sys.executable}" -m ansi2048 --json 2>&-', shell=True, input=_WARNS, capture_output=True, check=False
    )
    assert result.returncode == 0
    assert [e["action"] for e in json_lines(result.stdout) if e["action"] != "start"] == _MOVES


# -- item 7: --record never destroys what is not a recording ---------------------


def _record(path: Path) -> subprocess.CompletedProcess[bytes]:
    return run_cli(["--record", str(path), "--seed", "1"], b"wasd")


def test_record_refuses_a_file_that_is_not_a_recording(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my thesis, chapter 1\n")
    result = _record(notes)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "--record" in err and "not an ansi2048 recording" in err
    assert notes.read_bytes() == b"my thesis, chapter 1\n"


def test_record_refuses_through_a_symlink_too(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_bytes(b"data")
    link = tmp_path / "game.keys"
    symlink_or_skip(link, target)
    assert _record(link).returncode == 2
    assert target.read_bytes() == b"data"


@pytest.mark.parametrize("before", [b"", b"# ansi2048 version=0.1.0 seed=3 size=4x4 goal=2048\n" + b"wasd" * 1000])
def test_record_may_overwrite_a_recording_or_an_empty_file(tmp_path: Path, before: bytes) -> None:
    path = tmp_path / "game.keys"
    path.write_bytes(before)
    assert _record(path).returncode == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert parse_header(lines[0]) == Header(
        seed=1, rows=4, cols=4, goal=2048, version=lines[0].split("=")[1].split()[0]
    )
    assert lines[1] == "wasd"


# -- item 2: the keyboard game with stdout redirected ----------------------------


@pytest.mark.posix("a pty")
@pytest.mark.parametrize("redirect", ["| cat >", ">"])
def test_stdout_redirected_plays_on_the_terminal_and_gets_the_summary(
    tmp_path: Path, data_home: Path, redirect: str
) -> None:
    out = tmp_path / "out"
    before, after = tmp_path / "before", tmp_path / "after"
    script = (
        f'stty -g > "{before}"; "{sys.executable}" -m ansi2048 --seed 7 --new {redirect} "{out}";'
        f' echo "EXIT=$?"; stty -g > "{after}"; echo DONE'
    )
    child = spawn("/bin/sh", ["-c", script], env=game_env(data_home), dimensions=(HEIGHT, WIDTH), timeout=20)
    child.delaybeforesend = None
    child.expect(FRAME_END_PATTERN)  # the board is on the terminal at once
    for key in "wasd":
        child.send(key)
        child.expect(FRAME_END_PATTERN)
    assert b"^[" not in child.before  # keys are not echoed
    child.send("q")
    child.expect("DONE")
    assert b"EXIT=0" in child.before
    assert before.read_text(encoding="utf-8") == after.read_text(encoding="utf-8")
    summary = out.read_text(encoding="utf-8")
    game = Game(seed=7)
    for key in "wasd":
        game.move(NAMES[key])
    assert "\x1b" not in summary
    assert f"score {game.score}" in summary and f"moves {game.moves}" in summary and "seed 7" in summary
    assert (data_home / "game-4x4-2048.keys").exists()  # the keyboard game: kept as usual


# -- a replay's memory does not grow with the game's length ---------------------


def test_a_replay_of_one_endless_game_keeps_nothing_that_grows_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Moves and undos: one game that never ends. Nothing is kept of a piped
    # game (no history), so its session must hold no keys: the old one kept
    # every key of the game on the board (a 3M-key replay took twice the
    # memory of a short one; benchmarks/replay.py measures it).
    import io

    from ansi2048.options.context import Context, Options
    from ansi2048.play import piped

    sessions: List[piped.Session] = []

    class Watched(piped.Session):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            sessions.append(self)

    monkeypatch.setattr(piped, "Session", Watched)
    ctx = Context(Options(seed=3), io.BytesIO(), io.StringIO(), {}, lambda message: None, lambda: 1)
    assert piped.play_piped(ctx, b"wuaudusu" * 1000 + b"w") == 0
    (session,) = sessions
    assert session.game.moves == 1 and session.used_undo  # one game, undone again and again
    run, left = session.runs()
    assert run.keys == [] and left == []


# -- --daily: today's game in every mode -----------------------------------------


def _piped_start(keys: bytes, tmp_path: Path, **options: Any) -> Dict[str, Any]:
    """The start object of a piped --json game of ``keys`` (a file on stdin) at noon on 2026-11-22 UTC."""
    import io

    from ansi2048.options.context import Context, Options
    from ansi2048.play.piped import play_piped

    path = tmp_path / "keys"
    path.write_bytes(keys)
    out = io.StringIO()
    noon = 1795348800.0
    with path.open("rb") as stdin:
        ctx = Context(Options(json=True, **options), stdin, out, {}, pytest.fail, lambda: 1, now=lambda: noon)
        assert play_piped(ctx) == 0
    return json_lines(out.getvalue().encode())[0]


def test_daily_piped_and_json_games_play_todays_game(tmp_path: Path) -> None:
    assert _piped_start(b"wasd", tmp_path, daily=True)["seed"] == 20261122
    # Like --seed, --daily picks the game over a recording's header.
    assert _piped_start(RECORDING, tmp_path, daily=True)["seed"] == 20261122
    assert _piped_start(RECORDING, tmp_path)["seed"] == 7


def test_daily_leaves_the_game_replay_best_gives(tmp_path: Path) -> None:
    # --replay-best hands over a recording whose header names its game.
    import io

    from ansi2048.options.context import Context, Options
    from ansi2048.play.piped import play_piped

    out = io.StringIO()
    ctx = Context(Options(json=True, daily=True), io.BytesIO(), out, {}, pytest.fail, lambda: 1)
    assert play_piped(ctx, RECORDING) == 0
    assert json_lines(out.getvalue().encode())[0]["seed"] == 7
