"""What the interactive game tells the player at its edges: that a saved
game was resumed, that it is kept on quitting (issue 8, item 5). Played
in-process on a scripted console, read back off an emulated screen."""

from __future__ import annotations

import dataclasses
import io
import shlex
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence

import pytest

from ansi2048.options.context import Context, Options
from ansi2048.play.keyboard import play_terminal
from ansi2048.records.recording import Recorder

from .conftest import child_env
from .console import scripted
from .screen import dump, emulate

WIDTH, HEIGHT = 100, 35


def play(
    data: Path,
    keys: Sequence[bytes],
    options: Optional[Options] = None,
    now: Optional[float] = None,
    width: int = WIDTH,
    warnings: Optional[List[str]] = None,
    program: str = "ansi2048",
) -> List[str]:
    """Play ``keys`` (one read each, then q) on a fresh console; the
    screen's lines before each read, the last one after the game closed."""
    screens: List[str] = []
    console = scripted([*keys, b"q"], on_read=lambda: screens.append(dump(console.display)))
    console.size = (width, HEIGHT)
    ctx = Context(
        options=options or Options(),
        stdin=io.BytesIO(),
        stdout=io.StringIO(),
        env={"ANSI2048_DATA_DIR": str(data), "TERM": "xterm"},
        warn=(warnings if warnings is not None else []).append,
        random_seed=lambda: 7,
        program=program,
    )
    if now is not None:
        ctx = dataclasses.replace(ctx, now=lambda: now)
    if ctx.options.record is not None:
        stream = open(ctx.options.record, "w", encoding="utf-8")  # noqa: SIM115  (closed by the recorder)
        ctx = dataclasses.replace(ctx, recorder=Recorder(stream, ctx.warn))
    assert play_terminal(ctx, open_console=console.open) == 0
    ctx.recorder.close()
    screens.append(dump(console.display))
    return screens


def test_a_resumed_game_says_so_until_the_first_key(tmp_path: Path) -> None:
    first = play(tmp_path, [b"a", b"d", b"a"])
    assert "resumed" not in "\n".join(first)
    again = play(tmp_path, [b"d", b"q"])
    assert "resumed your game: 3 moves" in again[0]
    assert "resumed" not in again[1]  # gone with the first key
    # A new game over the saved one is no resumed game.
    assert "resumed" not in play(tmp_path, [b"q"], Options(new=True))[0]
    # Nor one of no move yet (issue 40, item 17): quit before a key, then back.
    assert "resumed" not in play(tmp_path, [b"q"])[0]


def test_quitting_says_the_game_is_kept_instead_of_offering_keys(tmp_path: Path) -> None:
    last = play(tmp_path, [b"a", b"q"])[-1]
    assert "game kept for next time: ansi2048 resumes it" in last
    assert "q quit" not in last and "u undo" not in last
    # Another board: the command that brings it back names it.
    last = play(tmp_path, [b"q"], Options(rows=3, cols=5, goal=64))[-1]
    assert "ansi2048 --size 3x5 --goal 64 resumes it" in last


@pytest.mark.posix("a pty")
def test_a_finished_replay_on_a_terminal_offers_no_keys(tmp_path: Path) -> None:
    import pexpect

    from .ptys import spawn

    recording = tmp_path / "game.keys"
    recording.write_bytes(b"# ansi2048 version=0.1.0 seed=3 size=4x4 goal=2048\nadadwsws\n")
    env = child_env({"TERM": "xterm-256color", "ANSI2048_DATA_DIR": str(tmp_path / "data")})
    script = '"$@" < "$0"; echo "EXIT=$?"'
    child = spawn(
        "/bin/sh",
        ["-c", script, str(recording), sys.executable, "-m", "ansi2048"],
        env=env,
        dimensions=(HEIGHT, WIDTH),
        timeout=20,
    )
    child.expect(pexpect.EOF)
    output = child.before
    assert b"EXIT=0" in output
    display = emulate(output, WIDTH, HEIGHT).display
    text = dump(display)
    assert "end of replay" in text and "Moves 8" in text
    assert "Ctrl-C stops" not in text and "q quit" not in text


def test_quitting_a_game_that_could_not_be_saved_does_not_claim_it_is_kept(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "data"
    not_a_directory.write_text("a file where the data directory should be", encoding="utf-8")
    last = play(not_a_directory, [b"a", b"q"])[-1]
    assert "could not be saved" in last and "kept" not in last


# -- what the keys say (issue 14) ----------------------------------------------------------

NOW = 1795351408.0  # 2026-11-22T12:43:28Z


def keys_to_game_over(seed: int) -> bytes:
    """Keys that end the 2x2 game to 8 of ``seed`` (no move left)."""
    from ansi2048.game.engine import Game
    from ansi2048.game.keys import KeyDecoder
    from ansi2048.game.session import Session

    session = Session(Game(2, 2, 8, seed))
    keys = b""
    for key in b"wasd" * 100:
        if session.game.over:
            break
        session.apply(KeyDecoder().feed(bytes([key]))[0])
        keys += bytes([key])
    assert session.game.over
    return keys


def test_quitting_a_finished_game_says_the_next_start_is_a_new_game_and_it_is(tmp_path: Path) -> None:
    """Item 8: "game kept ... resumes it" after a game over, yet the next
    start was a new game. The message now says what happens."""
    options = Options(rows=2, cols=2, seed=3)
    last = play(tmp_path, [keys_to_game_over(3), b"q"], options)[-1]
    assert "game over, kept in your history; ansi2048 --size 2 starts a new game" in last
    assert "resumes it" not in last
    again = play(tmp_path, [b"q"], Options(rows=2, cols=2))[0]
    assert "Moves 0" in again and "resumed" not in again


def test_u_with_nothing_to_undo_says_so(tmp_path: Path) -> None:
    """Item 9: like "can't move left", a u that finds nothing says so."""
    screens = play(tmp_path, [b"u", b"a", b"u"], Options(seed=5, new=True))
    assert "nothing to undo" in screens[1]
    assert "nothing to undo" not in screens[2]  # the next key takes it away
    assert "nothing to undo" not in screens[3]  # this u undid the a


def test_the_first_hint_says_the_game_is_now_assisted_once(tmp_path: Path) -> None:
    """Item 11: a single t freezes the game's best: said the first time."""
    screens = play(tmp_path, [b"t", b"a", b"t"], Options(seed=5, new=True))
    assert "assisted: this game sets no best" in screens[1]
    assert "assisted: this game sets no best" not in screens[3]  # the second hint
    assert "hint: " in screens[3]


def test_the_daily_game_says_so_and_r_starts_the_days_game_again(tmp_path: Path) -> None:
    """Item 13: the header names the day; r in the daily game starts that
    same game again (its first tiles), kept as today's game."""
    from ansi2048.game.engine import Game
    from ansi2048.records.history import daily_seed

    def daily(keys: List[bytes]) -> List[str]:
        return play(tmp_path, keys, Options(daily=True), now=NOW)

    first = daily([b"wasd", b"r"])
    assert "Daily 2026-11-22" in first[0] and "Seed" not in first[0]
    after_r = first[2]
    assert "Daily 2026-11-22" in after_r and "Moves 0" in after_r
    board = Game(4, 4, 2048, daily_seed("2026-11-22")).board
    assert all(str(value) in after_r for row in board for value in row if value)
    resumed = daily([b"q"])[0]  # the save replays to the day's game, restarted
    assert "Daily 2026-11-22" in resumed and "Moves 0" in resumed


def test_a_recording_over_a_resumed_game_begins_with_the_game_it_replays(tmp_path: Path) -> None:
    """Item 15: --record over a save, started with --seed 11: the header
    said seed 7 (the saved game) while the keys replayed game 11."""
    import subprocess
    import sys

    from ansi2048.records.recording import split_header

    play(tmp_path, [b"wasd"], Options(seed=7))
    record = tmp_path / "game.keys"
    screens = play(tmp_path, [b"as"], Options(seed=11, record=str(record)))
    header, keys = split_header(record.read_bytes())
    assert header is not None and header.seed == 11 and keys.strip() == b"asq"
    replayed = subprocess.run(
        [sys.executable, "-m", "ansi2048"],
        input=record.read_bytes(),
        capture_output=True,
        env={"ANSI2048_DATA_DIR": str(tmp_path / "other"), "TERM": "dumb", "PATH": ""},
        timeout=60,
        check=True,
    ).stdout.decode()
    assert "seed 11" in replayed
    # The plain resume too: the header is the game on the board, and its keys.
    record.unlink()
    play(tmp_path, [b"w"], Options(record=str(record)))
    header, keys = split_header(record.read_bytes())
    assert header is not None and header.seed == 11 and keys.strip() == b"aswq"  # (q changed nothing: not saved)
    assert screens


def test_undo_back_before_the_recording_stops_it_with_a_warning(tmp_path: Path) -> None:
    play(tmp_path, [b"wasd"], Options(seed=7))
    record = tmp_path / "game.keys"
    screens = play(tmp_path, [b"a", b"uu", b"d"], Options(seed=11, record=str(record)))
    assert any("recording stopped" in screen for screen in screens)
    header, keys = split_header_of(record)
    assert header == 11 and keys == b"au"  # the undo back into game 7 is not in it


def split_header_of(path: Path) -> Any:
    from ansi2048.records.recording import split_header

    header, keys = split_header(path.read_bytes())
    assert header is not None
    return header.seed, keys.strip()


def test_damaged_ai_weights_are_said_on_the_board_at_80_columns_and_in_full_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 18: the note (hint + note + path, 183 characters) was dropped at
    80 columns. Now a short note fits beside the hint and autoplay's pace,
    and the full warning (file, reason) comes once the terminal is back."""
    import ansi2048.ai

    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(b"not weights")
    monkeypatch.setattr(ansi2048.ai, "DEFAULT_WEIGHTS", str(damaged))
    warnings: List[str] = []
    screens = play(tmp_path / "data", [b"t", b"a"], Options(seed=5, new=True), width=80, warnings=warnings)
    assert "AI weights unusable" in screens[1] and "hint: " in screens[1]
    assert len([w for w in warnings if "damaged.bin" in w]) == 1


@pytest.mark.posix("an executable script found on the PATH")
def test_the_quit_line_names_the_command_as_the_player_started_it(tmp_path: Path) -> None:
    """Issue 30 item 1: after the README's install, `.venv/bin/ansi2048`
    is the command, and `ansi2048` is not on the PATH."""
    from ansi2048.cli import program_name

    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "ansi2048"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    typed = str(script)
    elsewhere = str(tmp_path / "empty")
    assert program_name(typed, {"PATH": elsewhere}, sys.executable) == typed  # not on the PATH: as typed
    assert program_name(typed, {"PATH": str(bin_dir)}, sys.executable) == "ansi2048"  # the one on the PATH
    assert program_name("ansi2048", {"PATH": str(bin_dir)}, sys.executable) == "ansi2048"
    python = sys.executable
    main = str(Path(__file__).parent.parent / "ansi2048" / "__main__.py")
    assert program_name(main, {"PATH": str(Path(python).parent)}, python) == f"{Path(python).name} -m ansi2048"
    assert program_name(main, {"PATH": elsewhere}, python) == f"{shlex.quote(python)} -m ansi2048"
    # The quit line says it, for this board.
    ctx_program = ".venv/bin/ansi2048"
    last = play(tmp_path / "data", [b"a"], Options(rows=3, cols=5, goal=64), program=ctx_program)[-1]
    assert ".venv/bin/ansi2048 --size 3x5 --goal 64 resumes it" in last
