"""What the interactive game tells the player at its edges: that a saved
game was resumed, that it is kept on quitting (issue 8, item 5). Played
in-process on a scripted console, read back off an emulated screen."""

from __future__ import annotations

import io
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence

import pytest

from ansi2048.context import Context, Options
from ansi2048.interactive import play_terminal
from ansi2048.keys import KeyDecoder
from ansi2048.terminal.console import Console, ScreenHooks

from .conftest import child_env
from .screen import dump, emulate

WIDTH, HEIGHT = 100, 35


def play(data: Path, keys: Sequence[bytes], options: Optional[Options] = None) -> List[str]:
    """Play ``keys`` (one read each) on a fresh console; the screen's
    lines after each frame, the last one after the game closed."""
    output: List[str] = []
    screens: List[str] = []
    reads = list(keys)

    def read_actions(decoder: KeyDecoder) -> List[Any]:
        screens.append(dump(emulate("".join(output).encode(), WIDTH, HEIGHT).display))
        return list(decoder.feed(reads.pop(0))) if reads else list(decoder.feed(b"q"))

    @contextmanager
    def console(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Iterator[Console]:
        yield Console(read_actions, output.append, lambda: (WIDTH, HEIGHT), legacy=False)

    warnings: List[str] = []
    ctx = Context(
        options=options or Options(),
        stdin=io.BytesIO(),
        stdout=io.StringIO(),
        env={"ANSI2048_DATA_DIR": str(data), "TERM": "xterm"},
        warn=warnings.append,
        random_seed=lambda: 7,
    )
    assert play_terminal(ctx, open_console=console) == 0
    screens.append(dump(emulate("".join(output).encode(), WIDTH, HEIGHT).display))
    return screens


def test_a_resumed_game_says_so_until_the_first_key(tmp_path: Path) -> None:
    first = play(tmp_path, [b"a", b"d", b"a"])
    assert "resumed" not in "\n".join(first)
    again = play(tmp_path, [b"d", b"q"])
    assert "resumed your game: 3 moves" in again[0]
    assert "resumed" not in again[1]  # gone with the first key
    # A new game over the saved one is no resumed game.
    assert "resumed" not in play(tmp_path, [b"q"], Options(new=True))[0]


def test_quitting_says_the_game_is_kept_instead_of_offering_keys(tmp_path: Path) -> None:
    last = play(tmp_path, [b"a", b"q"])[-1]
    assert "game kept for next time: ansi2048 resumes it" in last
    assert "q quit" not in last and "u undo" not in last
    # Another board: the command that brings it back names it.
    last = play(tmp_path, [b"q"], Options(rows=3, cols=5, goal=64))[-1]
    assert "ansi2048 --size 3x5 --goal 64 resumes it" in last


@pytest.mark.posix
def test_a_finished_replay_on_a_terminal_offers_no_keys(tmp_path: Path) -> None:
    import pexpect

    recording = tmp_path / "game.keys"
    recording.write_bytes(b"# ansi2048 version=0.1.0 seed=3 size=4x4 goal=2048\nadadwsws\n")
    env = child_env({"TERM": "xterm-256color", "ANSI2048_DATA_DIR": str(tmp_path / "data")})
    script = '"$@" < "$0"; echo "EXIT=$?"'
    child = pexpect.spawn(
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
