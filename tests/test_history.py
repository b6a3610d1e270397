"""Your records, the shell: the history file (appends, damaged lines), what
interactive games keep there, --daily, --no-undo, --stats and --replay-best
run as a user runs them."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, List

import pytest

from ansi2048.game.engine import Game
from ansi2048.game.keys import KeyDecoder
from ansi2048.game.session import Session
from ansi2048.loop.turns import NO_UNDO_NOTE
from ansi2048.play.keyboard import play_terminal
from ansi2048.records.history import Record, daily_seed, latest
from ansi2048.records.recording import Recorder, split_header
from ansi2048.render.frame import LARGE
from ansi2048.storage.history_file import History, utc_date, utc_timestamp

from .conftest import run_cli
from .screen import dump, emulate, read_board
from .test_interactive import HEIGHT, WIDTH, ScriptedConsole, context

# 2026-11-22T12:43:28Z
NOW = 1795351408.0


@pytest.fixture
def data(data_home: Path) -> Path:
    return data_home


def record(score: int = 10, seed: int = 1, keys: str = "wasd") -> Record:
    return Record(
        rows=4, cols=4, goal=2048, seed=seed, keys=keys, score=score, moves=len(keys), biggest=8,
        won=False, over=True, undo=False, ai=False, date="2026-11-22T12:00:00Z",
    )  # fmt: skip


def test_utc_dates() -> None:
    assert utc_timestamp(NOW) == "2026-11-22T12:43:28Z"
    assert utc_date(NOW) == "2026-11-22"
    assert utc_date(NOW + 12 * 3600) == "2026-11-23"  # the UTC day, not the local one


# -- the file ----------------------------------------------------------------------


def test_appends_are_whole_lines_and_read_back_in_order(tmp_path: Path) -> None:
    history = History(str(tmp_path / "history.jsonl"))
    assert history.read(pytest.fail) == []  # no file yet: no games, no warning
    for score in (1, 2, 3):
        history.append(record(score, seed=score))
    data = (tmp_path / "history.jsonl").read_bytes()
    assert data.count(b"\n") == 3 and data.endswith(b"\n") and b"\r" not in data
    assert [r.score for r in history.read(pytest.fail)] == [1, 2, 3]


def test_a_damaged_line_is_skipped_with_one_warning_never_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    good = [record(score, seed=score).to_json() for score in (1, 2, 3)]
    path.write_bytes(
        "\n".join([good[0], '{"v":1, "score": "lots"}', "\x00\xff garbage", good[1], good[2]]).encode(
            "utf-8", "replace"
        )
        + b"\n"
    )
    warnings: List[str] = []
    assert [r.score for r in History(str(path)).read(warnings.append)] == [1, 2, 3]
    assert len(warnings) == 1 and "2 lines" in warnings[0] and "line 2" in warnings[0] and str(path) in warnings[0]


def test_a_torn_last_line_is_skipped_quietly_and_the_next_append_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(record(1).to_json() + "\n" + record(2, seed=2).to_json()[:30], encoding="utf-8")  # killed mid-line
    history = History(str(path))
    warnings: List[str] = []
    assert [r.score for r in history.read(warnings.append)] == [1]
    assert warnings == []
    history.append(record(3, seed=3))
    assert [r.score for r in history.read(warnings.append)] == [1, 3]
    assert len(warnings) == 1  # the torn line is now a damaged line among others: said once


# -- interactive games -------------------------------------------------------------


def ctx_at(data: Path, now: float = NOW, warnings: Any = None, **options: Any) -> Any:
    return dataclasses.replace(context(data, warnings=warnings, **options), now=lambda: now)


def keys_to_game_over(seed: int, rows: int = 2, goal: int = 8) -> bytes:
    session = Session(Game(rows, rows, goal, seed))
    keys = b""
    for key in b"wasd" * 100:
        if session.game.over:
            break
        session.apply(KeyDecoder().feed(bytes([key]))[0])
        keys += bytes([key])
    assert session.game.over
    return keys


def history_of(data: Path) -> List[Record]:
    return History(str(data / "history.jsonl")).read(pytest.fail)


def test_a_game_over_is_kept_once_with_the_keys_that_replay_it(data: Path) -> None:
    keys = keys_to_game_over(seed=4)
    # game over, then r, then a game quit unfinished: only the first is a finished game
    console = ScriptedConsole([keys, b"r", b"w", b"q"])
    play_terminal(ctx_at(data, seed=4, rows=2, cols=2, goal=8), console.open)
    (kept,) = history_of(data)
    assert (kept.rows, kept.cols, kept.goal, kept.seed, kept.date) == (2, 2, 8, 4, "2026-11-22T12:43:28Z")
    assert kept.over and not kept.undo and not kept.ai and kept.daily is None
    session = Session(Game(2, 2, 8, 4))
    for action in KeyDecoder().feed(kept.keys.encode()):
        session.apply(action)
    assert (session.game.score, session.game.moves, session.game.biggest) == (kept.score, kept.moves, kept.biggest)


def test_a_restarted_game_is_kept_and_marked_when_undo_was_used(data: Path) -> None:
    console = ScriptedConsole([b"wasd", b"u", b"r", b"q"])
    play_terminal(ctx_at(data, seed=5), console.open)
    (kept,) = history_of(data)
    assert kept.seed == 5 and kept.undo and not kept.over and kept.keys.endswith("u")
    best = json.loads((data / "best.json").read_text(encoding="utf-8"))
    assert "4x4-2048-unaided" not in best  # the only finished game used undo


def test_quitting_an_unfinished_game_keeps_no_history(data: Path) -> None:
    play_terminal(ctx_at(data, seed=5), ScriptedConsole([b"wasd", b"q"]).open)
    assert not (data / "history.jsonl").exists()


def test_piped_games_write_nothing(data_home: Path) -> None:
    result = run_cli(
        ["--size", "2", "--goal", "8"],
        stdin=b"wasd" * 50 + b"r" + b"wasd" * 50,
        env={"ANSI2048_DATA_DIR": str(data_home)},
    )
    assert result.returncode == 0
    assert list(data_home.iterdir()) == []


def test_no_undo_refuses_u_says_so_and_saves_and_records_no_u(data: Path, tmp_path: Path) -> None:
    console = ScriptedConsole([b"wasd", b"u", b"w", b"q"])
    record_to = tmp_path / "game.keys"
    ctx = ctx_at(data, seed=6, no_undo=True)
    stream = open(record_to, "w", encoding="ascii")  # noqa: SIM115
    ctx = dataclasses.replace(ctx, recorder=Recorder(stream, pytest.fail))
    play_terminal(ctx, console.open)
    ctx.recorder.close()
    _, saved = split_header((data / "game-4x4-2048.keys").read_bytes())
    assert b"u" not in saved
    assert "u" not in record_to.read_text(encoding="utf-8").splitlines()[1]
    # The note is up on the frame after the u, and gone on the next one.
    frames = "".join(console.output).split("\x1b[J")
    assert NO_UNDO_NOTE not in frames[1] and NO_UNDO_NOTE in frames[2] and NO_UNDO_NOTE not in frames[3]
    screen = emulate("".join(console.output[:3]).encode(), WIDTH, HEIGHT)
    assert NO_UNDO_NOTE in dump(screen.display)


def test_the_daily_game_is_seeded_by_the_utc_date_with_its_own_save_and_best(data: Path) -> None:
    # A regular game in progress must not be touched by the daily one.
    play_terminal(ctx_at(data, seed=77), ScriptedConsole([b"wasd", b"q"]).open)
    regular = (data / "game-4x4-2048.keys").read_bytes()

    console = ScriptedConsole([b"wasdwasd", b"q"])
    play_terminal(ctx_at(data, daily=True), console.open)
    header, keys = split_header((data / "game-daily-4x4-2048.keys").read_bytes())
    assert header is not None and header.seed == daily_seed("2026-11-22") == 20261122
    assert (data / "game-4x4-2048.keys").read_bytes() == regular
    best = json.loads((data / "best.json").read_text(encoding="utf-8"))
    assert best["daily-2026-11-22-4x4-2048"] > 0

    # The next run the same day resumes it. The next day's run puts the
    # unfinished game aside, whole, as the README says (the real files: a
    # save named .unfinished-<time>), keeps it in the history as that day's
    # daily game, says so on the board, and starts the new day's game in a
    # save of its own.
    play_terminal(ctx_at(data, daily=True), ScriptedConsole([b"q"]).open)
    assert split_header((data / "game-daily-4x4-2048.keys").read_bytes())[1] == keys
    yesterday = (data / "game-daily-4x4-2048.keys").read_bytes()
    warnings: List[str] = []
    console = ScriptedConsole([b"q"])
    play_terminal(ctx_at(data, now=NOW + 86400, warnings=warnings, daily=True), console.open)
    assert not warnings
    (aside,) = [p for p in data.iterdir() if p.name.startswith("game-daily-4x4-2048.keys.unfinished-")]
    assert aside.read_bytes() == yesterday
    (kept,) = history_of(data)
    assert (kept.daily, kept.seed, kept.keys, kept.over) == ("2026-11-22", 20261122, keys.decode(), False)
    assert kept.date.startswith("2026-11-23")  # the day it was put aside
    header, today = split_header((data / "game-daily-4x4-2048.keys").read_bytes())
    assert header is not None and header.seed == 20261123 and today == b""
    # Said on the first frame (the key that follows takes the note away).
    said = f"daily game of 2026-11-22 set aside as ...{aside.name.rpartition('.')[2]}"
    assert said in console.screen_bytes.decode("utf-8")
    best = json.loads((data / "best.json").read_text())
    assert "daily-2026-11-23-4x4-2048" not in best  # yesterday's score is no best of today's
    console = ScriptedConsole([b"q"])
    play_terminal(ctx_at(data, now=NOW + 86400, daily=True), console.open)
    shown = read_board(emulate(console.screen_bytes, WIDTH, HEIGHT).display, LARGE, 4, 4)
    assert shown == [list(row) for row in Game(seed=20261123).board]


def test_a_finished_daily_game_is_marked_daily(data: Path) -> None:
    seed = daily_seed("2026-11-22")
    keys = keys_to_game_over(seed)
    play_terminal(ctx_at(data, daily=True, rows=2, cols=2, goal=8), ScriptedConsole([keys, b"q"]).open)
    (kept,) = history_of(data)
    assert kept.daily == "2026-11-22" and kept.seed == seed


# -- the command line --------------------------------------------------------------


def fill(data: Path, games: List[Record]) -> None:
    history = History(str(data / "history.jsonl"))
    for game in games:
        history.append(game)


def real_game(seed: int, keys: bytes) -> Record:
    session = Session(Game(seed=seed))
    for action in KeyDecoder().feed(keys):
        session.apply(action)
    return Record.of(session.played(), f"2026-11-{seed:02d}T10:00:00Z")


def test_replay_best_replays_the_exact_game_through_the_piped_replay(data_home: Path) -> None:
    games = [real_game(seed, b"wasd" * (5 * seed) + b"sdsd") for seed in (1, 2, 3)]
    fill(data_home, games)
    best = max(games, key=lambda g: g.score)
    second = sorted(games, key=lambda g: -g.score)[1]
    for rank, game in ((1, best), (2, second)):
        # stdin is not read: the stored keys are the input
        result = run_cli(["--replay-best", str(rank)], stdin=b"ssss", env={"ANSI2048_DATA_DIR": str(data_home)})
        assert result.returncode == 0, result.stderr
        expected = Session(Game(seed=game.seed))
        for action in KeyDecoder().feed(game.keys.encode()):
            expected.apply(action)
        board = [
            [int(v.rstrip("*")) if v.rstrip("*") != "." else 0 for v in line.split()]
            for line in result.stdout.decode().splitlines()[:4]
        ]
        assert board == [list(row) for row in expected.game.board]
        assert f"score {game.score}  moves {game.moves}" in result.stdout.decode()
    json_run = run_cli(["--replay-best", "1", "--json"], env={"ANSI2048_DATA_DIR": str(data_home)})
    lines = [json.loads(line) for line in json_run.stdout.decode().splitlines()]
    assert lines[0]["seed"] == best.seed and lines[-1]["score"] == best.score


def test_replay_best_beyond_the_list_is_one_line_and_status_2(data_home: Path) -> None:
    fill(data_home, [record()])
    result = run_cli(["--replay-best", "2"], env={"ANSI2048_DATA_DIR": str(data_home)})
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().count("\n") == 1 and "has 1 game" in result.stderr.decode()


@pytest.mark.parametrize(
    "args",
    [
        ["--replay-best", "0"],
        ["--replay-best", "11"],
        ["--replay-best", "x"],
        ["--daily", "--seed", "1"],
        ["--replay-best", "1", "--seed", "1"],
    ],
)
def test_bad_record_options_are_one_line_and_status_2(args: List[str]) -> None:
    result = run_cli(args)
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1


def test_stats_piped_are_plain_text_and_json_is_one_document(data_home: Path) -> None:
    env = {"ANSI2048_DATA_DIR": str(data_home), "PYTHONIOENCODING": "utf-8"}
    empty = run_cli(["--stats"], env=env)
    assert empty.returncode == 0 and b"No finished games yet" in empty.stdout
    games = [real_game(seed, b"wasd" * (5 * seed)) for seed in (1, 2, 3)]
    fill(data_home, games)
    with open(data_home / "history.jsonl", "ab") as stream:
        stream.write(b"not json\n")
    result = run_cli(["--stats"], env=env)
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "\x1b" not in text and "3 played" in text and "█" in text
    assert result.stderr.decode().count("warning") == 1
    ascii_run = run_cli(["--stats"], env={**env, "PYTHONIOENCODING": "ascii"})
    assert ascii_run.returncode == 0 and ascii_run.stdout.isascii() and b"#" in ascii_run.stdout
    document = json.loads(run_cli(["--stats", "--json"], env=env).stdout)
    assert document["games"] == 3 and document["boards"][0]["best"] == max(g.score for g in games)


def test_help_fits_80_columns() -> None:
    result = run_cli(["--help"], env={"COLUMNS": "80"})
    lines = result.stdout.decode().splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    for option in ("--stats", "--replay-best", "--daily", "--no-undo"):
        assert option in result.stdout.decode()


def test_os_append_flag_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: List[int] = []
    real_open = os.open

    def spy(path: Any, flags: int, *args: Any) -> int:
        opened.append(flags)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", spy)
    History(str(tmp_path / "h.jsonl")).append(record())
    assert opened and all(flags & os.O_APPEND for flags in opened)


def test_a_resumed_game_is_kept_from_its_start(data: Path) -> None:
    keys = keys_to_game_over(seed=4)
    options = {"rows": 2, "cols": 2, "goal": 8}
    # Half the game, quit; then an r and its undo (the save keeps both), quit;
    # then the rest: the record holds the whole game, as one game.
    play_terminal(ctx_at(data, seed=4, **options), ScriptedConsole([keys[:2], b"q"]).open)
    play_terminal(ctx_at(data, **options), ScriptedConsole([b"r", b"u", b"q"]).open)
    play_terminal(ctx_at(data, **options), ScriptedConsole([keys[2:], b"q"]).open)
    # The r kept the game it left; the undo brought it back: the later record
    # is that game further on, and the stats count it once.
    (kept,) = latest(history_of(data))
    assert kept.seed == 4 and kept.over and not kept.undo
    whole, resumed = Session(Game(2, 2, 8, 4)), Session(Game(2, 2, 8, 4))
    for action in KeyDecoder().feed(keys):
        whole.apply(action)
    for action in KeyDecoder().feed(kept.keys.encode()):
        resumed.apply(action)
    assert (
        (resumed.game.cells, resumed.game.score)
        == (whole.game.cells, whole.game.score)
        == (whole.game.cells, kept.score)
    )


def test_stats_best_is_the_headers_best_an_assisted_game_sets_none_and_an_undone_score_counts(
    data_home: Path,
) -> None:
    env = {"ANSI2048_DATA_DIR": str(data_home), "PYTHONIOENCODING": "utf-8"}
    own = real_game(1, b"wasd" * 5)
    undone = dataclasses.replace(real_game(2, b"wasd" * 10), undo=True)
    assisted = dataclasses.replace(real_game(3, b"wasd" * 40), ai=True)
    assert assisted.score > undone.score > own.score  # else the test shows nothing
    fill(data_home, [own, undone, assisted])
    document = json.loads(run_cli(["--stats", "--json"], env=env).stdout)
    board = document["boards"][0]
    assert board["played"] == 3  # the assisted game is played, and listed
    assert board["best"] == undone.score  # ... but sets no best, as the header's
    assert board["best_unaided"] == own.score
    # The header's best is the best scores file's: a score reached, then
    # undone (the history keeps the game's last score), is still the best.
    (data_home / "best.json").write_text(json.dumps({"4x4-2048": undone.score + 44, "4x4-2048-unaided": 1}))
    result = run_cli(["--stats", "--json"], env=env)
    board = json.loads(result.stdout)["boards"][0]
    assert board["best"] == undone.score + 44 and board["best_unaided"] == own.score
    assert result.stderr == b""
    text = run_cli(["--stats"], env=env).stdout.decode()
    assert f"best {undone.score + 44} ({own.score} without undo or AI)" in text
    assert board["assisted"] == 1 and "· 1 assisted, no best" in text  # why the median may pass the best


def test_stats_of_assisted_games_only_say_so_rather_than_best_0(data_home: Path) -> None:
    """Autoplay's games only (issue 40, item 17): not "best 0 · median 2952"."""
    env = {"ANSI2048_DATA_DIR": str(data_home), "PYTHONIOENCODING": "utf-8"}
    games = [dataclasses.replace(real_game(seed, b"wasd" * 40), ai=True) for seed in (3, 4)]
    fill(data_home, games)
    text = run_cli(["--stats"], env=env).stdout.decode()
    line = next(line for line in text.splitlines() if "median" in line)
    assert line.split("·")[0].strip() == "no best: every game assisted", line
    assert "best 0" not in text
