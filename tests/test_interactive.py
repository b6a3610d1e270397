"""The interactive loop in-process: a scripted console and a fake clock stand
in for the terminal and time, so the keyboard game's wiring (saving, the best
score writer, quitting, restoring) is tested fast and without a pty."""

from __future__ import annotations

import io
import json
import os
import re
import signal
from pathlib import Path
from typing import Any, List, Optional

import pytest

from ansi2048.game.engine import Game
from ansi2048.game.session import Session
from ansi2048.options.context import Context, Options
from ansi2048.play.keyboard import play_terminal
from ansi2048.play.performer import BEST_WRITE_INTERVAL, BestWriter
from ansi2048.records.recording import replay, split_header
from ansi2048.render.frame import LARGE
from ansi2048.render.repaint import FRAME_END, SHOW_CURSOR
from ansi2048.storage.data_dir import DataDir
from ansi2048.terminal.signals import Hangup, hangup_signals

from .console import HEIGHT, WIDTH, FakeClock, scripted
from .screen import emulate, read_board

__all__ = ["HEIGHT", "WIDTH", "FakeClock", "ScriptedConsole", "context", "played", "saved_keys"]


# Kept under these names for the tests that import them from here.
ScriptedConsole = scripted


def context(
    data: Path, clock: Optional[FakeClock] = None, warnings: Optional[List[str]] = None, **options: Any
) -> Context:
    env = {"ANSI2048_DATA_DIR": str(data), "TERM": "xterm-256color"}
    return Context(
        options=Options(**options),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        env=env,
        warn=(warnings if warnings is not None else []).append,
        random_seed=lambda: 12345,
        clock=clock or FakeClock(),
    )


def saved_keys(data: Path) -> bytes:
    header, keys = split_header((data / "game-4x4-2048.keys").read_bytes())
    assert header is not None
    return keys


def played(seed: int, keys: bytes) -> Session:
    session = Session(Game(seed=seed))
    replay(session, keys)
    return session


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def test_the_loop_plays_saves_and_shows_every_key(data: Path) -> None:
    console = ScriptedConsole([b"w", b"as", b"\x1b[D\x1b[A", b"q"])
    assert play_terminal(context(data, seed=8), console.open) == 0
    expected = played(8, b"wasaw")
    assert saved_keys(data) == b"wasaw"
    screen = emulate(console.screen_bytes, WIDTH, HEIGHT)
    assert read_board(screen.display, LARGE, 4, 4) == [list(row) for row in expected.game.board]
    # one frame to start, then one per read (typed-ahead keys share a frame)
    assert console.screen_bytes.count(FRAME_END.encode()) == 1 + 4
    assert console.restored
    assert _restored_to_the_end(console.output[-1])


def test_a_resumed_game_goes_on_where_it_stopped(data: Path) -> None:
    play_terminal(context(data, seed=8), ScriptedConsole([b"wasd", b"q"]).open)
    console = ScriptedConsole([b"ww", b"q"])
    play_terminal(context(data), console.open)
    assert saved_keys(data) == b"wasdww"
    screen = emulate(console.screen_bytes, WIDTH, HEIGHT)
    assert read_board(screen.display, LARGE, 4, 4) == [list(row) for row in played(8, b"wasdww").game.board]


def best_writes(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """The scores each write of the board's best stores, as they happen (the
    best without undo or AI, under its own key, is not counted)."""
    writes: List[int] = []
    real = DataDir.record_best

    def spy(self: DataDir, key: str, score: int) -> int:
        if key == "4x4-2048":
            writes.append(score)
        return real(self, key, score)

    monkeypatch.setattr(DataDir, "record_best", spy)
    return writes


# A seed and keys whose score rises on many of the moves.
RISING_KEYS = b"wasd" * 40


def test_a_rising_best_is_written_once_at_the_end_when_no_time_passes(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = best_writes(monkeypatch)
    batches = [bytes([key]) for key in RISING_KEYS] + [b"q"]
    play_terminal(context(data, seed=8), ScriptedConsole(batches).open)
    final = played(8, RISING_KEYS).game.score
    assert final > 100
    assert writes == [final]  # not once per move: the clock never moved
    stored = json.loads((data / "best.json").read_text(encoding="utf-8"))
    assert stored == {"4x4-2048": final, "4x4-2048-unaided": final}


def test_a_rising_best_is_written_at_most_once_a_second(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = best_writes(monkeypatch)
    clock = FakeClock()
    step = 0.25

    def tick() -> None:
        clock.now += step

    batches = [bytes([key]) for key in RISING_KEYS] + [b"q"]
    play_terminal(context(data, clock=clock, seed=8), ScriptedConsole(batches, on_read=tick).open)
    elapsed = step * len(batches)
    assert 2 <= len(writes) <= elapsed / BEST_WRITE_INTERVAL + 1
    assert writes == sorted(writes) and writes[-1] == played(8, RISING_KEYS).game.score


def test_best_writer_waits_for_the_interval_and_flushes_the_rest() -> None:
    stored: List[int] = []
    clock = FakeClock()

    def store(score: int) -> int:
        stored.append(score)
        return score

    writer = BestWriter(store, clock, stored=10)
    assert writer.offer(20) == 20 and stored == []
    clock.now += BEST_WRITE_INTERVAL
    writer.offer(30)
    assert stored == [30]
    writer.offer(40)  # too soon after the last write
    assert stored == [30]
    writer.flush(40)
    writer.flush(40)  # nothing new
    assert stored == [30, 40]


def test_another_games_higher_best_is_shown() -> None:
    writer = BestWriter(lambda score: 500, FakeClock(), stored=10, interval=0)
    assert writer.offer(20) == 500


@pytest.mark.posix("signals (SIGTERM sent to itself)")
def test_a_second_signal_during_the_restore_cannot_cut_it_short(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM ends the game (Hangup); another SIGTERM that arrives while the
    best score is saved and the screen restored must not interrupt them."""
    console = ScriptedConsole([b"wasd" * 10, b"w"])
    second: List[int] = []
    real = DataDir.record_best

    def first_signal() -> None:
        if len(console.batches) == 1:  # at the last read
            os.kill(os.getpid(), signal.SIGTERM)

    def record_best(self: DataDir, key: str, score: int) -> int:
        if key == "4x4-2048":  # not the best without undo or AI, written next
            second.append(score)
            os.kill(os.getpid(), signal.SIGTERM)  # while saving the best, before the screen is restored
        return real(self, key, score)

    console.on_read = first_signal
    monkeypatch.setattr(DataDir, "record_best", record_best)
    with hangup_signals(), pytest.raises(Hangup):
        play_terminal(context(data, seed=8), console.open)
    assert second == [played(8, b"wasd" * 10).game.score]  # the second signal was sent
    assert json.loads((data / "best.json").read_text(encoding="utf-8")) == {
        "4x4-2048": second[0],
        "4x4-2048-unaided": second[0],
    }
    assert _restored_to_the_end(console.output[-1])  # the restore went to its end
    assert console.restored


@pytest.mark.posix("signals (SIGINT sent by os.kill)")
def test_a_signal_after_the_one_that_ended_the_game_cannot_print_a_traceback(tmp_path: Path) -> None:
    """Issue 20: SIGTERM ends the game; a SIGINT that comes while the process
    is on its way out (here: while the interpreter waits for a thread at
    shutdown) printed a KeyboardInterrupt traceback from threading."""
    import subprocess
    import sys

    script = "\n".join(
        [
            "import os, signal, sys, threading, time",
            "import ansi2048.play.piped",
            "from ansi2048.terminal.signals import Hangup",
            "def hang_up(ctx): raise Hangup(signal.SIGTERM)",
            "ansi2048.play.piped.play_piped = hang_up",
            "from ansi2048.cli import main",
            "status = main([])",
            "threading.Thread(target=time.sleep, args=(0.5,)).start()  # the shutdown waits for it",
            "threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()",
            "sys.exit(status)",
        ]
    )
    env = {"ANSI2048_DATA_DIR": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    result = subprocess.run(
        [sys.executable, "-c", script], stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 128 + signal.SIGTERM, result.stderr
    assert b"Traceback" not in result.stderr and b"KeyboardInterrupt" not in result.stderr, result.stderr


def _restored_to_the_end(last: str) -> bool:
    """The last write shows the cursor again, then goes down past the frame
    (the cursor waits on its top row) and ends the line for the prompt."""
    return re.fullmatch(re.escape(SHOW_CURSOR) + r"\r(\x1b\[\d+B)?\n", last[last.find(SHOW_CURSOR) :]) is not None
