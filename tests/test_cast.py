"""--cast: asciicast v2 files, parsed back and replayed into an emulator,
and played by the real asciinema when it is installed."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from ansi2048.cast import HEADLESS_SIZE, REPLAY_STEP, CastWriter, cast_theme, is_ours
from ansi2048.context import Context, Options
from ansi2048.engine import Game
from ansi2048.interactive import play_terminal
from ansi2048.keys import Action, KeyDecoder
from ansi2048.recording import format_header, replay
from ansi2048.render.frame import BIG, View, layout_for
from ansi2048.session import Session
from ansi2048.terminal.console import Console, ScreenHooks

from .conftest import run_cli
from .screen import read_board, terminal

ENV = {"ANSI2048_CONFIG": "/nonexistent/config.toml", "TERM": "xterm-256color", "SHELL": "/bin/sh"}
KEYS = b"wasdwasdwwaassddsdsdaw"


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def parse(text: str) -> Tuple[Dict[str, Any], List[List[Any]]]:
    lines = text.splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def final_board(header: Dict[str, Any], events: List[List[Any]], rows: int = 4, cols: int = 4) -> List[List[int]]:
    """Plays the cast's events into an emulated terminal; the board at the end."""
    width, height = header["width"], header["height"]
    screen, stream = terminal(width, height)
    for _time, kind, data in events:
        if kind == "r":
            width, height = (int(n) for n in data.split("x"))
            screen.resize(height, width)
        elif kind == "o":
            stream.feed(data)
    view = View(((0,) * cols,) * rows, None, 0, 0, 0, 2048, 0, Session(Game()).status)
    layout = layout_for(view, width, height)
    assert layout is not None
    return read_board(screen.display, layout, rows, cols)


def played(seed: int, keys: bytes) -> List[List[int]]:
    session = Session(Game(seed=seed))
    replay(session, keys)
    return [list(row) for row in session.game.board]


def test_the_writer_times_frames_from_0_rising_and_at_least_step_apart() -> None:
    clock, out, screen = Clock(), io.StringIO(), []
    writer = CastWriter(out, clock, lambda message: None, timestamp=1234, env=ENV, theme="dark")
    writer.step = 0.5
    size = [80, 24]
    write = writer.tee(screen.append, lambda: (size[0], size[1]), "a title")
    write("one")
    clock.now += 0.1  # faster than the step: the step wins
    write("two")
    clock.now += 3  # slower: the clock wins
    write("three")
    size[:] = [100, 40]
    write("four")
    header, events = parse(out.getvalue())
    assert screen == ["one", "two", "three", "four"]  # the terminal still gets every frame
    assert header == {
        "version": 2,
        "width": 80,
        "height": 24,
        "timestamp": 1234,
        "idle_time_limit": 2.0,
        "title": "a title",
        "env": {"TERM": "xterm-256color", "SHELL": "/bin/sh"},
        "theme": cast_theme("dark"),
    }
    assert events == [
        [0.0, "o", "one"],
        [0.5, "o", "two"],
        [3.1, "o", "three"],
        [3.1, "r", "100x40"],
        [3.6, "o", "four"],
    ]


def test_the_header_theme_has_16_colours_and_the_themes_terminal() -> None:
    theme = cast_theme("high-contrast")
    assert (theme["fg"], theme["bg"]) == ("#ffffff", "#000000")
    colours = theme["palette"].split(":")
    assert len(colours) == 16 and all(len(c) == 7 and c.startswith("#") for c in colours)
    assert cast_theme("classic") != cast_theme("dark")


def test_a_failing_write_stops_the_cast_with_one_warning() -> None:
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    warnings: List[str] = []
    writer = CastWriter(Full(), Clock(), warnings.append, timestamp=0, env={})
    shown: List[str] = []
    write = writer.tee(shown.append, lambda: (80, 24))
    write("a")
    write("b")
    assert shown == ["a", "b"]
    assert len(warnings) == 1 and "No space left" in warnings[0]


@pytest.mark.parametrize(
    ("head", "ours"),
    [
        (b"", True),
        (b"  \n", True),
        (b'{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "x"]\n', True),
        (format_header(7, 4, 4, 2048, "0.1.0").encode() + b"wasd", True),
        (b"my thesis, chapter 1\n", False),
        (b'{"name": "package.json"}\n', False),
        (b"\xff\xfe binary", False),
    ],
)
def test_only_empty_files_casts_and_recordings_count_as_ours(head: bytes, ours: bool) -> None:
    assert is_ours(head) is ours


def test_a_replay_into_a_pipe_writes_a_watchable_cast(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    keys = format_header(7, 4, 4, 2048, "0.1.0").encode() + KEYS
    result = run_cli(["--cast", str(cast)], keys, env=ENV)
    assert result.returncode == 0, result.stderr
    assert b"score" in result.stdout  # stdout still gets the summary
    header, events = parse(cast.read_text(encoding="utf-8"))
    assert (header["width"], header["height"]) == HEADLESS_SIZE
    times = [event[0] for event in events]
    assert times[0] == 0
    # A replay read in a blink still plays at REPLAY_STEP a frame.
    assert all(later - earlier >= REPLAY_STEP - 1e-6 for earlier, later in zip(times, times[1:]))
    assert {event[1] for event in events} == {"o"}
    assert len(events) == 1 + len(KEYS) + 1  # the first frame, one per key, the cursor restored
    assert final_board(header, events) == played(7, KEYS)


def test_delay_paces_the_cast(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    keys = format_header(7, 4, 4, 2048, "0.1.0").encode() + b"wasd"
    result = run_cli(["--cast", str(cast), "--delay", "0.01"], keys, env=ENV)
    assert result.returncode == 0, result.stderr
    _header, events = parse(cast.read_text(encoding="utf-8"))
    times = [event[0] for event in events]
    assert all(later - earlier >= 0.01 - 1e-6 for earlier, later in zip(times, times[1:]))
    assert times[-1] < len(times) * REPLAY_STEP  # the delay, not the default step


def test_an_existing_file_that_is_not_a_cast_is_not_overwritten(tmp_path: Path) -> None:
    precious = tmp_path / "notes.txt"
    precious.write_text("do not lose me\n", encoding="utf-8")
    result = run_cli(["--cast", str(precious)], b"wasd", env=ENV)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert b"--cast" in result.stderr and b"not overwriting" in result.stderr
    assert precious.read_text(encoding="utf-8") == "do not lose me\n"
    assert result.stdout == b""


def test_an_old_cast_or_an_empty_file_is_overwritten(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    cast.write_text('{"version": 2, "width": 10, "height": 5}\n[0.5, "o", "old"]\n', encoding="utf-8")
    assert run_cli(["--seed", "1", "--cast", str(cast)], b"w", env=ENV).returncode == 0
    assert parse(cast.read_text(encoding="utf-8"))[0]["width"] == HEADLESS_SIZE[0]
    cast.write_text("", encoding="utf-8")
    assert run_cli(["--seed", "1", "--cast", str(cast)], b"w", env=ENV).returncode == 0
    assert cast.read_text(encoding="utf-8").startswith('{"version": 2')


def test_the_cast_cannot_be_the_record_file(tmp_path: Path) -> None:
    path = tmp_path / "same"
    result = run_cli(["--cast", str(path), "--record", str(path)], b"w", env=ENV)
    assert result.returncode == 2 and b"--record" in result.stderr


def test_interactive_play_is_cast_with_real_time_and_resizes(tmp_path: Path) -> None:
    clock, out = Clock(), io.StringIO()
    writer = CastWriter(out, clock, lambda message: None, timestamp=0, env=ENV)
    size = [80, 30]
    batches = [b"w", b"a", b"s", b"d", b"q"]
    shown: List[str] = []

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        clock.now += 0.01  # quick fingers: real time is kept, no synthetic step
        if len(batches) == 2:
            size[:] = [90, 32]  # the window grows before the last move
        return decoder.feed(batches.pop(0))

    def console(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Any:
        from contextlib import nullcontext

        return nullcontext(Console(read_actions, shown.append, lambda: (size[0], size[1]), legacy=False))

    ctx = Context(
        options=Options(seed=5),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        env={**ENV, "ANSI2048_DATA_DIR": str(tmp_path)},
        warn=lambda message: None,
        random_seed=lambda: 0,
        clock=clock,
        cast=writer,
    )
    assert play_terminal(ctx, console) == 0
    header, events = parse(out.getvalue())
    assert header["title"] == "ansi2048 4x4 seed 5"
    assert [event[2] for event in events if event[1] == "o"] == shown  # exactly what the screen got
    assert ["r", "90x32"] in [event[1:] for event in events]
    times = [event[0] for event in events]
    assert times == sorted(times) and times[0] == 0
    assert times[1] == pytest.approx(0.01)
    assert final_board(header, events) == played(5, b"wasd")


@pytest.mark.posix
@pytest.mark.skipif(shutil.which("asciinema") is None, reason="asciinema is not installed")
def test_asciinema_cat_reproduces_the_final_board(tmp_path: Path) -> None:
    import pexpect

    cast = tmp_path / "game.cast"
    keys = format_header(9, 4, 4, 2048, "0.1.0").encode() + KEYS
    assert run_cli(["--cast", str(cast)], keys, env=ENV).returncode == 0
    header, _events = parse(cast.read_text(encoding="utf-8"))
    # asciinema cat wants a terminal (it reads /dev/tty): give it a pty.
    child = pexpect.spawn("asciinema", ["cat", str(cast)], dimensions=(header["height"], header["width"]))
    output = child.read()
    child.close()
    assert child.exitstatus == 0, output
    screen, _stream = terminal(header["width"], header["height"])
    import pyte

    pyte.ByteStream(screen).feed(output)
    assert read_board(screen.display, BIG, 4, 4) == played(9, KEYS)
