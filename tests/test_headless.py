"""Headless autoplay at the edges: the daily game, a closed standard input,
the progress line on a terminal standard error, Ctrl-C, and what it keeps
(nothing in the data directory, nothing that grows with the game)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pexpect
import pytest

from ansi2048.game.engine import Game
from ansi2048.game.session import Session
from ansi2048.options.context import Context, Options
from ansi2048.play import headless
from ansi2048.records.history import daily_seed
from ansi2048.records.recording import recorded_actions, split_header

from .conftest import json_lines, run_cli
from .ptys import spawn

# 2026-11-22 12:00 UTC.
NOON = 1795348800.0
SUMMARY = re.compile(rb"score (\d+)  moves (\d+)  biggest (\d+)")


def hermetic_env(data: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSI2048_", "XDG_"))}
    env.pop("NO_COLOR", None)
    env.pop("COLORTERM", None)
    env.update(TERM="xterm-256color", ANSI2048_DATA_DIR=str(data), XDG_DATA_HOME=str(data / "xdg"))
    env["ANSI2048_CONFIG"] = str(data / "absent.toml")
    return env


def headless_json(**options: Any) -> List[Dict[str, Any]]:
    out = io.StringIO()
    ctx = Context(Options(json=True, **options), io.BytesIO(), out, {}, pytest.fail, lambda: 1, now=lambda: NOON)
    assert headless.play_headless(ctx) == 0
    return json_lines(out.getvalue().encode())


def test_daily_headless_plays_todays_game() -> None:
    start = headless_json(daily=True, rows=2, cols=3)[0]
    assert start["seed"] == daily_seed("2026-11-22") == 20261122


@pytest.mark.parametrize("stdin", [pytest.param("closed", marks=pytest.mark.posix("a POSIX shell's <&-")), "empty"])
def test_headless_autoplay_needs_no_standard_input(tmp_path: Path, stdin: str) -> None:
    # It reads none: a closed standard input (or an empty one) is no error.
    game = [sys.executable, "-m", "ansi2048", "--autoplay", "--seed", "2", "--size", "2x3"]
    if stdin == "closed":
        result = subprocess.run(
            ["sh", "-c", 'exec "$@" <&-', "sh", *game], capture_output=True, env=hermetic_env(tmp_path), timeout=120
        )
    else:
        result = subprocess.run(
            game, stdin=subprocess.DEVNULL, capture_output=True, env=hermetic_env(tmp_path), timeout=120
        )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    assert SUMMARY.search(result.stdout) and b"game over" in result.stdout


@pytest.mark.posix("a POSIX shell's <&-")
def test_stats_needs_no_standard_input_either(tmp_path: Path) -> None:
    command = f'"{sys.executable}" -m ansi2048 --stats <&-'
    result = subprocess.run(["sh", "-c", command], capture_output=True, env=hermetic_env(tmp_path), timeout=60)
    assert result.returncode == 0, result.stderr


def test_no_progress_line_when_standard_error_is_not_a_terminal(tmp_path: Path) -> None:
    result = run_cli(["--autoplay", "--seed", "4", "--size", "2x3"], env=hermetic_env(tmp_path))
    assert result.returncode == 0 and result.stderr == b""


def test_headless_games_are_kept_nowhere(tmp_path: Path) -> None:
    # Decided: a headless AI game goes into no history and raises no best
    # (scripts may play thousands); --record and --json keep one.
    data = tmp_path / "data"
    result = run_cli(["--autoplay", "--seed", "4", "--size", "2x3"], env=hermetic_env(data))
    assert result.returncode == 0, result.stderr
    assert not data.exists() or not any(data.rglob("*"))


def test_headless_keeps_no_keys_that_grow_with_the_game(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions: List[Session] = []

    class Watched(Session):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            sessions.append(self)

    monkeypatch.setattr(headless, "Session", Watched)
    # A 2x3 board: a whole game of 55 moves in a few seconds (a 3x3 one, 420 moves, took 10-20).
    moves = headless_json(seed=3, rows=2, cols=3)[-1]["moves"]
    (session,) = sessions
    assert session.game.moves == moves > 10
    assert session.runs()[0].keys == []


def test_the_progress_text_says_moves_score_and_biggest() -> None:
    game = Game(3, 3, 256, 5)
    for direction in ("left", "up", "right", "down") * 3:
        game.move(direction)
    assert headless.progress_text(game) == (
        f"autoplay: moves {game.moves}  score {game.score}  biggest {max(max(row) for row in game.board)}"
    )


@pytest.mark.posix("a pty")
def test_progress_line_on_a_terminal_and_ctrl_c_stops_with_the_summary(tmp_path: Path) -> None:
    # Standard error is the terminal, standard output a file: the progress
    # line is rewritten in place; Ctrl-C ends the game between two moves,
    # clears the line, prints the summary, exits 130, and the recording
    # replays to the very board the summary shows.
    out, record = tmp_path / "out.txt", tmp_path / "game.keys"
    args = f'--autoplay --size 6 --seed 1 --record "{record}"'
    # exec: no shell stays between (it would take the Ctrl-C itself).
    script = f'exec "{sys.executable}" -m ansi2048 {args} > "{out}"'
    child = spawn("sh", ["-c", script], env=hermetic_env(tmp_path), dimensions=(24, 80), timeout=60)
    try:
        child.expect(rb"autoplay: moves (\d+)  score (\d+)  biggest (\d+)")
        child.expect(rb"\rautoplay: moves (\d+)")  # rewritten in place
        shown = int(child.match.group(1))
        child.sendintr()
        child.expect(pexpect.EOF)
        tail = child.before
        child.close()
        status = child.exitstatus
    finally:
        child.close(force=True)
    assert status == 130
    assert re.search(rb"\r +\r$", tail)  # the line cleared: blanks, back to its start
    assert b"Traceback" not in tail and b"KeyboardInterrupt" not in tail
    summary = SUMMARY.search(out.read_bytes())
    assert summary is not None
    score, moves = int(summary.group(1)), int(summary.group(2))
    assert moves >= shown
    header, body = split_header(record.read_bytes())
    assert header is not None and header.seed == 1
    replayed = Session(Game(6, 6, header.goal or 2048, 1))
    for item in recorded_actions(body):
        replayed.apply(item)  # type: ignore[arg-type]
    assert (replayed.game.moves, replayed.game.score) == (moves, score)


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def play_with(stdout: io.StringIO, **options: Any) -> str:
    """What headless autoplay writes on a terminal standard error."""
    stderr = Terminal()
    ctx = Context(Options(**options), io.BytesIO(), stdout, {}, pytest.fail, lambda: 1, stderr=stderr)
    assert headless.play_headless(ctx) == 0
    return stderr.getvalue()


def test_the_progress_line_is_rewritten_in_place_and_cleared() -> None:
    shown = play_with(io.StringIO(), seed=2, rows=2, cols=3)
    assert shown.startswith("\rautoplay: moves 0  score 0  biggest ")
    assert re.fullmatch(r"(\r[^\r\n]*)+\r +\r", shown)  # never a new line; blanked at the end


def test_no_progress_line_between_json_lines_on_the_same_terminal() -> None:
    assert play_with(Terminal(), seed=2, rows=2, cols=3, json=True) == ""
    assert play_with(io.StringIO(), seed=2, rows=2, cols=3, json=True) != ""  # into a file: it shows


@pytest.mark.posix("a terminal size read from the stream (the Windows path asks the console)")
def test_the_progress_line_never_outgrows_a_window_that_narrowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Padding over the last line, or blanking it, must not wrap to a new
    line in a window that narrowed meanwhile: that leaves text behind."""
    columns = [80]
    monkeypatch.setattr(headless, "terminal_size", lambda fd: (columns[0], 24))

    class Sized(Terminal):
        def fileno(self) -> int:
            return 2  # its size is the stand-in's above

    stderr = Sized()
    progress = headless._Progress(stderr, lambda: 0.0)
    game = Game(seed=2)
    progress.show(game, now=True)
    assert len(stderr.getvalue()) > 1 + 30  # the whole line at 80 columns
    columns[0] = 20
    progress.show(game, now=True)
    progress.clear()
    for written in stderr.getvalue().split("\r")[2:]:  # what was written after the window narrowed
        assert len(written) <= 19, written
