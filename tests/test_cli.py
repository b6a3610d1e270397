"""The program over pipes: options, JSON Lines, recording and replay."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ansi2048 import Game, __version__
from ansi2048.game.keys import KeyDecoder
from ansi2048.records.recording import parse_header

from .conftest import json_lines, messages, run_cli

NAMES = {"w": "up", "a": "left", "s": "down", "d": "right", "u": "undo", "r": "restart", "q": "quit"}


def test_json_has_one_start_and_one_object_per_action_key() -> None:
    keys = b"wasd u r x\x00\xff\x1b[2~ d q"
    result = run_cli(["--json", "--seed", "7"], keys)
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    taken = [a.value for a in KeyDecoder().feed(keys)]
    assert [e["action"] for e in events] == ["start"] + [NAMES[k] for k in taken]
    for e in events:
        assert {"action", "moved", "board", "score", "moves", "won", "over", "spawn", "seed"} <= set(e)
    restart_at = 1 + taken.index("r")
    assert {e["seed"] for e in events[:restart_at]} == {7}
    assert events[restart_at]["seed"] != 7 and events[restart_at]["moves"] == 0


def test_json_matches_the_python_api() -> None:
    keys = "wdsaawdsddsawwasdd"
    result = run_cli(["--json", "--seed", "99", "--size", "3x5", "--goal", "64"], keys.encode())
    events = json_lines(result.stdout)
    game = Game(rows=3, cols=5, goal=64, seed=99)
    assert events[0]["board"] == [list(r) for r in game.board]
    for key, e in zip(keys, events[1:]):
        moved = game.move(NAMES[key])
        assert e["moved"] == moved
        assert e["board"] == [list(r) for r in game.board]
        assert (e["score"], e["moves"], e["won"], e["over"]) == (game.score, game.moves, game.won, game.over)
        assert e["spawn"] == (list(game.spawned) if moved and game.spawned else None)


def test_a_move_that_changes_nothing_still_answers() -> None:
    # The first seed whose start board has a direction that changes nothing.
    seed, stuck = next((s, d) for s in range(100) for d in "wasd" if not Game(seed=s).move(NAMES[d]))
    game = Game(seed=seed)
    events = json_lines(run_cli(["--json", "--seed", str(seed)], stuck.encode()).stdout)
    assert len(events) == 2
    assert events[1]["moved"] is False and events[1]["spawn"] is None
    assert events[1]["board"] == [list(r) for r in game.board]


def test_same_seed_and_keys_give_identical_output_and_prefixes_give_prefixes() -> None:
    keys = b"wasdwasdssddaawwuudr" * 10
    full = run_cli(["--json", "--seed", "12345678901234567890123"], keys).stdout
    again = run_cli(["--json", "--seed", "12345678901234567890123"], keys).stdout
    assert full == again
    prefix = run_cli(["--json", "--seed", "12345678901234567890123"], keys[:57]).stdout
    assert full.startswith(prefix) and len(prefix.splitlines()) == 58


def test_arrows_vim_keys_and_capitals_spell_the_same_game() -> None:
    wasd = run_cli(["--json", "--seed", "5"], b"wasdwasd").stdout
    vim = run_cli(["--json", "--seed", "5"], b"khjlkhjl").stdout
    arrows = run_cli(["--json", "--seed", "5"], b"\x1b[A\x1b[D\x1b[B\x1b[C\x1bOA\x1bOD\x1bOB\x1bOC").stdout
    caps = run_cli(["--json", "--seed", "5"], b"WASDKHJL").stdout
    assert json_lines(vim) == json_lines(wasd) == json_lines(arrows) == json_lines(caps)


def test_record_then_replay_reproduces_the_game_exactly(tmp_path: Path) -> None:
    record = tmp_path / "game.keys"
    keys = b"# a bot's comment\nwasd\x1b[Aq junk\nrwwuassdd" + b"dsaw" * 50
    first = run_cli(["--json", "--seed", "7", "--size", "5x3", "--goal", "256", "--record", str(record)], keys)
    assert first.returncode == 0
    text = record.read_text(encoding="utf-8")
    header = parse_header(text.splitlines()[0])
    assert header is not None
    assert (header.seed, header.rows, header.cols, header.goal, header.version) == (7, 5, 3, 256, __version__)
    # the body holds one canonical character per action key, up to the quit
    assert text.splitlines()[1] == "wasdwq"
    # Piped, the start object comes at once, then again for the header's game;
    # from a file the header is read first.
    replay = run_cli(["--json"], record.read_bytes())
    assert replay.returncode == 0
    assert json_lines(replay.stdout)[0]["action"] == "start"
    assert json_lines(replay.stdout)[1:] == json_lines(first.stdout)
    with record.open("rb") as stdin:
        from_file = subprocess.run([sys.executable, "-m", "ansi2048", "--json"], stdin=stdin, capture_output=True)
    assert from_file.stdout == first.stdout


def test_record_is_flushed_as_it_goes(tmp_path: Path) -> None:
    record = tmp_path / "live.keys"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ansi2048", "--json", "--seed", "1", "--record", str(record)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.readline()  # start
    for key in b"wasd":
        proc.stdin.write(bytes([key]))
        proc.stdin.flush()
        proc.stdout.readline()  # the answer comes before the next key: incremental
    body = record.read_text(encoding="utf-8").splitlines()[1]
    proc.kill()
    proc.wait()
    assert body == "wasd"
    assert record.read_text(encoding="utf-8").splitlines()[1] == "wasd"  # still usable after a kill


def test_explicit_options_win_over_the_header(tmp_path: Path) -> None:
    recording = b"# ansi2048 version=0.1.0 seed=7 size=5x5 goal=64\nwasd"
    out = json_lines(run_cli(["--json", "--seed", "8", "--size", "3"], recording).stdout)[1:]  # the header's start
    assert out[0]["seed"] == 8 and len(out[0]["board"]) == 3 and out[0]["goal"] == 64


def test_without_seed_or_header_the_seed_is_random_and_reported() -> None:
    a = json_lines(run_cli(["--json"], b"wasd").stdout)
    b = json_lines(run_cli(["--json"], b"wasd").stdout)
    assert a[0]["seed"] != b[0]["seed"]
    again = json_lines(run_cli(["--json", "--seed", str(a[0]["seed"])], b"wasd").stdout)
    assert again == a


def test_plain_summary_when_stdout_is_a_pipe() -> None:
    result = run_cli(["--seed", "11"], b"wasdwasd")
    game = Game(seed=11)
    for key in "wasdwasd":
        game.move(NAMES[key])
    text = result.stdout.decode()
    assert result.returncode == 0
    assert "\x1b" not in text
    assert f"score {game.score}" in text and f"moves {game.moves}" in text and "seed 11" in text
    assert f"biggest {game.biggest}" in text
    colored = run_cli(["--seed", "11", "--color", "always"], b"wasdwasd").stdout.decode()
    assert "\x1b[" in colored


def test_eof_ends_the_game_with_status_0_and_empty_input_works() -> None:
    result = run_cli(["--json", "--seed", "2"], b"")
    assert result.returncode == 0
    assert [e["action"] for e in json_lines(result.stdout)] == ["start"]


def test_quit_stops_reading() -> None:
    events = json_lines(run_cli(["--json", "--seed", "2"], b"wqwwww").stdout)
    assert [e["action"] for e in events] == ["start", "up", "quit"]


@pytest.mark.parametrize(
    "args, option",
    [
        (["--size", "1"], "--size"),
        (["--size", "11x4"], "--size"),
        (["--size", "4x"], "--size"),
        (["--size", "big"], "--size"),
        (["--goal", "6"], "--goal"),
        (["--goal", "4"], "--goal"),
        (["--goal", "100"], "--goal"),
        (["--goal", str(2**32)], "--goal"),
        (["--seed", "-1"], "--seed"),
        (["--seed", "x"], "--seed"),
        (["--delay", "-1"], "--delay"),
        (["--delay", "soon"], "--delay"),
        (["--color", "sometimes"], "--color"),
        (["--record", "/nonexistent-dir/x.keys"], "--record"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_options_get_one_line_and_status_2(args: list, option: str) -> None:  # type: ignore[type-arg]
    result = run_cli(args)
    err = result.stderr.decode()
    assert result.returncode == 2
    assert len(err.strip().splitlines()) == 1, err
    assert option in err and "Traceback" not in err


@pytest.mark.parametrize("target", ["/dev/full", "/proc/version"])
@pytest.mark.parametrize("option", ["--record", "--cast"])
def test_an_output_that_opens_but_cannot_take_its_header_is_refused_before_the_game(option: str, target: str) -> None:
    # One rule for both outputs: what can be known before the game is a bad
    # option (issue 40, item 2), and that the first bytes every such file
    # begins with cannot be written is known then: the game would otherwise
    # start and the recording or cast asked for be lost. A write that fails
    # later stops that output and nothing else (tests/test_outputs.py).
    if not Path(target).exists():
        pytest.skip(f"needs {target} (Linux)")
    result = run_cli([option, target, "--seed", "1"], b"wasd")
    err = result.stderr.decode().splitlines()
    assert result.returncode == 2, err
    assert len(err) == 1 and err[0].startswith(f"ansi2048: error: argument {option}: cannot write"), err
    assert target in err[0]
    assert result.stdout == b""  # no game played


def test_a_byte_order_mark_before_the_header_is_skipped() -> None:
    recording = b"\xef\xbb\xbf# ansi2048 version=0.1.0 seed=7 size=3x3 goal=64\nwasd"
    events = json_lines(run_cli(["--json"], recording).stdout)
    assert events[1]["seed"] == 7 and len(events[1]["board"]) == 3


def test_record_refuses_to_overwrite_its_own_input(tmp_path: Path) -> None:
    path = tmp_path / "game.keys"
    path.write_bytes(b"# ansi2048 version=0.1.0 seed=7 size=4x4 goal=2048\nwasd")
    with path.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "ansi2048", "--record", str(path)], stdin=stdin, capture_output=True, check=False
        )
    assert result.returncode == 2
    assert path.read_bytes().endswith(b"wasd")


def test_a_stream_without_a_file_id_is_not_the_file_a_path_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows gives a pipe and a device (NUL) no file id: inode 0 on device
    # 0. Taken for ids, every such pair was the same file: a piped game's
    # `--record NUL` was refused as "the input being replayed".
    from ansi2048 import cli

    pipe = os.stat_result((stat.S_IFIFO, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    device = os.stat_result((stat.S_IFCHR, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    class Stdin:
        def fileno(self) -> int:
            return 0

    monkeypatch.setattr(os, "fstat", lambda fd: pipe)
    monkeypatch.setattr(os, "stat", lambda path, *args, **kwargs: device)
    same = cli._same_file(Stdin(), "NUL")  # type: ignore[arg-type]
    monkeypatch.undo()
    assert not same


def test_seeds_above_2_64_are_accepted() -> None:
    big = 2**80 + 3
    events = json_lines(run_cli(["--json", "--seed", str(big)], b"w").stdout)
    assert events[0]["seed"] == big
    assert events[0]["board"] == [list(row) for row in Game(seed=big).board]
    assert Game(seed=big).board != Game(seed=big % 2**64).board


def test_help_lists_every_option_and_the_keys() -> None:
    out = run_cli(["--help"]).stdout.decode()
    for option in ("--size", "--goal", "--seed", "--record", "--json", "--delay", "--color", "--new", "--version"):
        assert option in out
    for key in ("hjkl", "wasd", "undo", "quit"):
        assert key in out.lower() or key in out.replace(" ", "").lower()


def test_version() -> None:
    assert run_cli(["--version"]).stdout.decode().strip() == f"ansi2048 {__version__}"


def test_piped_session_touches_no_data_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "ANSI2048_DATA_DIR": ""}
    run_cli(["--json", "--seed", "4"], b"wasdwasd", env=env)
    run_cli([], b"wasdwasd", env=env)
    assert list(home.iterdir()) == []


@pytest.mark.posix("a bash pipeline (printf, seq, head)")
def test_json_ends_quietly_when_the_reader_goes_away() -> None:
    # Issue 30 (item 14): a reader that leaves is the normal end of a
    # pipeline: no line on stderr, and the status a shell shows for cat there
    # (141, a SIGPIPE death); never a silent 0, a traceback, nor 120.
    proc = subprocess.run(
        f"printf 'wasd%.0s' $(seq 5000) | {sys.executable} -m ansi2048 --json --seed 1 | head -n 3 >/dev/null;"
        " echo ${PIPESTATUS[1]}",
        shell=True,
        capture_output=True,
        executable="/bin/bash",
        timeout=60,
        check=False,
    )
    assert proc.stdout.strip() == b"141"
    assert proc.stderr.decode() == ""


def test_a_huge_key_stream_is_read_incrementally() -> None:
    keys = b"wasd" * 50_000
    result = run_cli(["--seed", "3"], keys)
    assert result.returncode == 0
    assert result.stdout.decode().count("seed 3") == 1  # one summary, at the end


def test_help_fits_80_columns_in_the_screen_order_and_mentions_ctrl_z() -> None:
    out = run_cli(["--help"], env={"COLUMNS": "80"}).stdout.decode()
    assert max(len(line) for line in out.splitlines()) <= 80, out
    keys = out[out.index("\nkeys") :].lower()
    # The order of the screen's keys line: arrows, wasd, hjkl move, u, r, q.
    places = [keys.index(word) for word in ("arrow", "w a s d", "h j k l", "undo", "new game", "quit")]
    assert places == sorted(places), keys
    assert "ctrl-z" in keys


@pytest.mark.parametrize(
    ("size", "goal", "biggest"), [("3", "2048", "1024"), ("2x2", "64", "32"), ("2x3", "256", "128")]
)
def test_an_unreachable_goal_is_refused_naming_the_biggest_tile(size: str, goal: str, biggest: str) -> None:
    result = run_cli(["--size", size, "--goal", goal], b"q")
    err = result.stderr.decode()
    assert result.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "--goal" in err and biggest in err and "Traceback" not in err
    # The biggest tile itself is a goal the board can reach.
    assert run_cli(["--size", size, "--goal", biggest], b"q").returncode == 0


@pytest.mark.parametrize(
    ("size", "goal"), [("2", 8), ("2x3", 32), ("3", 256), ("2x5", 512), ("3x4", 2048), ("4", 2048)]
)
def test_small_boards_default_to_a_goal_they_can_reach(size: str, goal: int) -> None:
    events = json_lines(run_cli(["--json", "--size", size, "--seed", "1"], b"").stdout)
    assert events[0]["goal"] == goal


def test_an_old_recording_with_an_unreachable_goal_still_replays() -> None:
    recording = b"# ansi2048 version=0.1.0 seed=7 size=3x3 goal=2048\nwasd"
    result = run_cli(["--json"], recording)
    # From a pipe, --json starts at once and starts again when the header arrives.
    events = [e for e in json_lines(result.stdout) if e["action"] != "start" or e["seed"] == 7]
    assert result.returncode == 0 and len(events) == 5
    assert events[0]["action"] == "start"
    assert events[0]["seed"] == 7 and len(events[0]["board"]) == 3 and events[0]["goal"] == 256
    err = result.stderr.decode()
    assert "goal 2048" in err and "1024" in err and len(messages(err)) == 1


def test_a_cast_left_with_only_its_early_start_may_be_overwritten(tmp_path: Path) -> None:
    """A game ended before its first frame leaves the cast's first bytes
    only: the next --cast to that file takes it, as an empty one."""
    cast = tmp_path / "game.cast"
    cast.write_text('{"version": 2', encoding="utf-8")
    result = run_cli(["--cast", str(cast), "--seed", "1"], b"wasd")
    assert result.returncode == 0, result.stderr
    assert cast.read_text(encoding="utf-8").startswith('{"version": 2, "width": ')


def test_a_value_checks_reason_is_the_options_error_one_way_everywhere() -> None:
    import argparse

    from ansi2048.options.parser import argument_type
    from ansi2048.serve.commands import parse_command
    from ansi2048.serve.requests import CommandError

    @argument_type
    def even(text: str) -> int:
        """An even number."""
        if int(text) % 2:
            raise ValueError(f"expected an even number, got {text}")
        return int(text)

    assert even("4") == 4 and even.__doc__ == "An even number."
    for text, reason in (("3", "expected an even number, got 3"), ("x", "invalid literal for int() with base 10: 'x'")):
        with pytest.raises(argparse.ArgumentTypeError) as refused:
            even(text)
        assert str(refused.value) == reason
    # The four options checked by a parser of the core or of the server: the check's own reason, in one line.
    size = "expected N or RxC with sides from 2 to 10, got '99'"
    goal = "expected a power of two from 8 to 2147483648, got '3'"
    day = "expected a date YYYY-MM-DD, got '2026-02-30'"
    for args, said in ((["--size", "99"], f"--size: {size}"), (["--goal", "3"], f"--goal: {goal}")):
        done = run_cli(args)
        assert done.returncode == 2 and messages(done.stderr) == [
            f"ansi2048: error: argument {said} (see ansi2048 --help)"
        ]
    done = run_cli(["serve", "--verify", "2026-02-30"])
    assert done.returncode == 2
    assert messages(done.stderr) == [f"ansi2048 serve: error: argument --verify: {day} (see ansi2048 serve --help)"]
    for line, said in (
        ("leaderboard 2026-02-30", f"leaderboard: argument day: {day}"),
        ("play --size 99", f"play: argument --size: {size}"),
        ("play --goal 3", f"play: argument --goal: {goal}"),
    ):
        with pytest.raises(CommandError) as refused:
            parse_command(line)
        assert str(refused.value) == said
