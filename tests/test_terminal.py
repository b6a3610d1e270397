"""The real program in a pseudo-terminal (tests/ptys.py): the terminal comes back
exactly as it was on every exit path, no key is lost, the prompt returns
under the final board, and a killed game resumes where it was drawn."""

from __future__ import annotations

import os
import random
import re
import signal
import sys
import time
from pathlib import Path
from typing import List

import pytest

# Every test here drives the game on a pty; the signal names the parameters
# below take do not exist on Windows, and a mark cannot stop collection. So no
# other test module imports from this one: tests/ptys.py holds what they share.
if sys.platform == "win32":
    pytest.skip("POSIX only: a pty", allow_module_level=True)

import pexpect

from ansi2048 import Game
from ansi2048.render.frame import LARGE
from ansi2048.render.repaint import FRAME_END as FRAME_END_CODE

from .conftest import game_env
from .console import HEIGHT, WIDTH
from .ptys import GameInShell, job_control_shell, spawn
from .screen import FRAME_END_PATTERN, dump, emulate, find_header, read_board

NAMES = {"w": "up", "a": "left", "s": "down", "d": "right"}
pytestmark = pytest.mark.posix("a pty")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def left_by_game(output: bytes) -> bytes:
    """What the game wrote, without the shell's lines after it: a frame
    that fills the window (the LARGE board at 80x30, with its note line)
    is scrolled up by them, its header off the top."""
    return output.split(b"EXIT=")[0]


def test_the_help_on_a_posix_terminal_offers_ctrl_z(tmp_path: Path, data: Path) -> None:
    """A terminal with job control suspends on Ctrl-Z, and the help says so
    (over SSH and on Windows it does not, and the help leaves it out)."""
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data, height=40)
    run.frame()
    run.child.send("?")
    run.frame()
    run.child.send("q")  # closes the help
    run.frame()
    run.child.send("q")
    status, output = run.finish()
    assert status == 0
    assert b"Ctrl-Z" in output and b"suspend to the shell" in output


def test_quit_leaves_the_terminal_as_it_was_and_the_prompt_under_the_board(tmp_path: Path, data: Path) -> None:
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    for key in "wasd":
        run.child.send(key)
        run.frame()
    run.child.send("q")
    status, output = run.finish()
    assert status == 0
    assert run.stty_unchanged()
    left = emulate(left_by_game(output), WIDTH, HEIGHT)
    top = find_header(left.display)
    game = Game(seed=7)
    for key in "wasd":
        game.move(NAMES[key])
    assert read_board(left.display, LARGE, 4, 4) == [list(row) for row in game.board]
    assert top < max(y for y, line in enumerate(left.display) if "game kept for next time" in line)
    screen = emulate(output, WIDTH, HEIGHT)
    keys_line = max(y for y, line in enumerate(screen.display) if "game kept for next time" in line)
    exit_line = next(y for y, line in enumerate(screen.display) if "EXIT=0" in line)
    assert keys_line < exit_line, dump(screen.display)
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l") >= 0  # the cursor is shown again
    assert b"\x1b[2J" not in output and b"\x1b[3J" not in output and b"\x1b[?1049h" not in output


def test_ctrl_c_quits_cleanly(tmp_path: Path, data: Path) -> None:
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    run.child.send("\x03")
    status, output = run.finish()
    assert status == 0
    assert run.stty_unchanged()
    assert b"Traceback" not in output


@pytest.mark.parametrize(
    "signum, status", [(signal.SIGTERM, 128 + 15), (signal.SIGHUP, 128 + 1), (signal.SIGINT, 128 + 2)]
)
def test_signals_restore_the_terminal(tmp_path: Path, data: Path, signum: int, status: int) -> None:
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    run.child.send("wa")
    run.frame()
    os.kill(run.game_pid(), signum)
    exit_status, output = run.finish()
    assert exit_status == status
    assert run.stty_unchanged()
    assert b"Traceback" not in output
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l")


def test_a_burst_of_200_keys_1ms_apart_is_all_played(tmp_path: Path, data: Path) -> None:
    record = tmp_path / "burst.keys"
    run = GameInShell(tmp_path, ["--seed", "3", "--new", "--record", str(record)], data)
    run.frame()
    rng = random.Random(1)
    keys = "".join(rng.choice("wasdhjkl") for _ in range(200))
    for key in keys:
        run.child.send(key)
        time.sleep(0.001)
    time.sleep(0.5)
    run.child.send("q")
    status, output = run.finish()
    assert status == 0
    canonical = {"h": "a", "j": "s", "k": "w", "l": "d"}
    body = record.read_text(encoding="utf-8").splitlines()[1]
    assert body == "".join(canonical.get(k, k) for k in keys) + "q"
    # and the final board on screen is the game those keys play
    game = Game(seed=3)
    for key in body[:-1]:
        game.move(NAMES[key])
    # Read on a taller screen: the board fills the 30 rows, and the wrapper's
    # line after the game ends would scroll its header off.
    assert read_board(emulate(output, WIDTH, HEIGHT + 2).display, LARGE, 4, 4) == [list(r) for r in game.board]
    assert keys[:8].encode() not in output  # nothing was echoed


def test_a_tiny_terminal_gets_a_message_and_the_board_comes_back(tmp_path: Path, data: Path) -> None:
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data, width=20, height=6)
    run.child.expect("too small")
    run.child.setwinsize(HEIGHT, WIDTH)  # the kernel sends SIGWINCH
    run.frame()
    run.child.send("q")
    status, output = run.finish()
    assert status == 0
    screen = emulate(left_by_game(output), WIDTH, HEIGHT)
    assert read_board(screen.display, LARGE, 4, 4) == [list(r) for r in Game(seed=7).board]


def test_piped_keys_on_a_terminal_are_shown_as_frames(tmp_path: Path) -> None:
    keys = tmp_path / "game.keys"
    keys.write_text("# ansi2048 version=0.1.0 seed=9 size=4x4 goal=2048\nwasdwasd", encoding="utf-8")
    child = spawn(
        "/bin/sh",
        ["-c", f'"{sys.executable}" -m ansi2048 --delay 0.01 < "{keys}"'],
        env=game_env(tmp_path),
        dimensions=(HEIGHT, WIDTH),
        timeout=20,
    )
    child.expect(pexpect.EOF)
    output = child.before
    assert output.count(FRAME_END_CODE.encode()) >= 1 + 8  # the first frame, then one repaint per key
    game = Game(seed=9)
    for key in "wasdwasd":
        game.move(NAMES[key])
    assert read_board(emulate(output, WIDTH, HEIGHT).display, LARGE, 4, 4) == [list(r) for r in game.board]
    assert list(tmp_path.iterdir()) == [keys]  # a replay saves nothing


def _replayed(keys: bytes, seed: int) -> List[List[int]]:
    from ansi2048.game.session import Session
    from ansi2048.records.recording import replay

    session = Session(Game(seed=seed))
    replay(session, keys)
    return [list(row) for row in session.game.board]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGHUP])
def test_a_killed_game_resumes_with_the_last_board_drawn(tmp_path: Path, data: Path, signum: int) -> None:
    rng = random.Random(signum)
    save = data / "game-4x4-2048.keys"
    last_drawn: List[List[int]] = []
    for round_ in range(4):
        # Without motion: a frame drawn mid-slide shows no state of the game,
        # and this test reads the last board drawn as one.
        args = ["--no-animation"] + (["--seed", "11", "--new"] if round_ == 0 else [])
        run = GameInShell(tmp_path, args, data)
        run.frame()
        screen = emulate(run.output, WIDTH, HEIGHT)
        if round_ > 0:
            # the resumed board is exactly what the save replays to ...
            header, _, body = save.read_bytes().partition(b"\n")
            seed = int(header.split(b"seed=")[1].split()[0])
            assert read_board(screen.display, LARGE, 4, 4) == _replayed(body, seed)
            # ... and that holds the last board the killed game drew
            assert any(_replayed(body[:k], seed) == last_drawn for k in range(len(body), -1, -1))
        for _ in range(rng.randrange(5, 40)):
            run.child.send(rng.choice("wasd"))
            time.sleep(rng.random() * 0.004)
        time.sleep(rng.random() * 0.05)
        os.kill(run.game_pid(), signum)
        _, output = run.finish()
        assert run.stty_unchanged() or signum == signal.SIGKILL  # SIGKILL cannot be caught
        # A kill can land in the middle of writing a frame (the pty takes it
        # in pieces): the last board drawn is the last complete frame.
        complete = [m.end() for m in re.finditer(FRAME_END_PATTERN.encode(), output)]
        last_drawn = read_board(emulate(output[: complete[-1]], WIDTH, HEIGHT).display, LARGE, 4, 4)


_FAULTY = """
import sys
from ansi2048 import cli
from ansi2048.game import session

real_apply = session.Session.apply

def apply(self, action):
    if self.game.moves >= 2:
        raise RuntimeError("injected fault")
    return real_apply(self, action)

session.Session.apply = apply
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("debug", ["", "1"])
def test_an_unexpected_error_restores_the_terminal_and_says_one_line(tmp_path: Path, data: Path, debug: str) -> None:
    wrapper = tmp_path / "faulty.py"
    wrapper.write_text(_FAULTY, encoding="utf-8")
    before, after = tmp_path / "before", tmp_path / "after"
    script = f'stty -g > "{before}"; "$@"; echo "EXIT=$?"; stty -g > "{after}"; echo DONE'
    env = game_env(data)
    env["ANSI2048_DEBUG"] = debug
    child = spawn(
        "/bin/sh",
        ["-c", script, "sh", sys.executable, str(wrapper), "--seed", "7", "--new"],
        env=env,
        dimensions=(HEIGHT, WIDTH),
        timeout=20,
    )
    child.expect(FRAME_END_PATTERN)
    child.send("wasd")
    child.expect("DONE")
    output = child.before.decode()
    assert before.read_text(encoding="utf-8") == after.read_text(encoding="utf-8")
    assert "EXIT=1" in output
    assert output.rfind("\x1b[?25h") > output.rfind("\x1b[?25l")
    assert "injected fault" in output
    assert ("Traceback" in output) == bool(debug)
    if not debug:
        error_lines = [line for line in output.splitlines() if "error" in line]
        assert len(error_lines) == 1


def test_a_resumed_game_is_recorded_whole(tmp_path: Path, data: Path) -> None:
    first = GameInShell(tmp_path, ["--seed", "4", "--new"], data)
    first.frame()
    first.child.send("wasd")
    first.frame()
    first.child.send("q")
    first.finish()
    record = tmp_path / "whole.keys"
    second = GameInShell(tmp_path, ["--record", str(record)], data)
    second.frame()
    second.child.send("wwdd")
    time.sleep(0.3)
    second.child.send("q")
    _, output = second.finish()
    shown = read_board(emulate(left_by_game(output), WIDTH, HEIGHT).display, LARGE, 4, 4)
    from .conftest import json_lines, run_cli

    replayed = json_lines(run_cli(["--json"], record.read_bytes()).stdout)
    assert replayed[1]["action"] == "start" and replayed[1]["seed"] == 4  # the header's game
    assert replayed[-1]["board"] == shown


def test_closing_the_window_is_a_hangup_not_a_crash(tmp_path: Path, data: Path) -> None:
    status_file, errors = tmp_path / "status", tmp_path / "stderr"
    # The wrapper ignores SIGHUP so it outlives the closed terminal and can
    # report how the game ended; the game installs its own handler.
    wrapper = (
        "import signal, subprocess, sys\n"
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        f"with open({str(errors)!r}, 'wb') as err:\n"
        "    code = subprocess.call([sys.executable, '-m', 'ansi2048', '--seed', '7', '--new'], stderr=err)\n"
        f"open({str(status_file)!r}, 'w', encoding='utf-8').write(str(code))\n"
    )
    child = spawn(sys.executable, ["-c", wrapper], env=game_env(data), dimensions=(HEIGHT, WIDTH), timeout=20)
    child.expect(FRAME_END_PATTERN)
    child.send("aw")
    child.expect(FRAME_END_PATTERN)
    child.close(force=False)  # close the pty master: the window is gone
    deadline = time.monotonic() + 10
    while not status_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status_file.read_text(encoding="utf-8") == str(128 + signal.SIGHUP)
    assert errors.read_bytes() == b""


def test_ctrl_z_hands_the_terminal_back_and_fg_takes_it_again(tmp_path: Path, data: Path) -> None:
    shell = job_control_shell(data)
    shell.sendline(f"stty -g > {tmp_path / 'before'}; {sys.executable} -m ansi2048 --seed 7 --new")
    shell.expect(FRAME_END_PATTERN)
    shell.send("a")
    shell.expect(FRAME_END_PATTERN)
    shell.send("\x1a")
    shell.expect("Stopped")
    shell.expect_exact("$ ")
    shell.sendline(f"stty -g > {tmp_path / 'during'}; fg")
    shell.expect(FRAME_END_PATTERN)
    shell.send("w")
    shell.expect(FRAME_END_PATTERN)
    shell.send("q")
    shell.expect_exact("$ ")
    shell.sendline(f"stty -g > {tmp_path / 'after'}; exit")
    shell.expect(pexpect.EOF)
    before = (tmp_path / "before").read_text(encoding="utf-8")
    assert (
        (tmp_path / "during").read_text(encoding="utf-8") == before == (tmp_path / "after").read_text(encoding="utf-8")
    )


def test_a_replay_on_the_terminal_restores_it_when_killed(tmp_path: Path) -> None:
    keys = tmp_path / "game.keys"
    keys.write_text("# ansi2048 version=0.1.0 seed=9 size=4x4 goal=2048\n" + "wasd" * 50, encoding="utf-8")
    before, after = tmp_path / "before", tmp_path / "after"
    script = (
        f'stty -g > "{before}"; "{sys.executable}" -m ansi2048 --delay 0.2 < "{keys}"; stty -g > "{after}"; echo DONE'
    )
    child = spawn("/bin/sh", ["-c", script], env=game_env(tmp_path), dimensions=(HEIGHT, WIDTH), timeout=20)
    child.expect("Ctrl-C stops")
    child.expect("Ctrl-C stops")
    pid = int(Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text(encoding="utf-8").split()[0])
    os.kill(pid, signal.SIGTERM)
    child.expect("DONE")
    output = child.before
    assert before.read_text(encoding="utf-8") == after.read_text(encoding="utf-8")
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l")


def test_a_dumb_terminal_gets_frames_without_escape_codes(tmp_path: Path, data: Path) -> None:
    env = dict(game_env(data), TERM="dumb")
    child = spawn(
        sys.executable, ["-m", "ansi2048", "--seed", "7", "--new"], env=env, dimensions=(HEIGHT, WIDTH), timeout=20
    )
    child.expect("q quit")
    child.send("a")
    child.expect("q quit")
    child.send("q")
    child.expect(pexpect.EOF)
    assert b"\x1b" not in child.before


def test_keys_are_not_played_while_the_board_cannot_be_shown(tmp_path: Path, data: Path) -> None:
    record = tmp_path / "small.keys"
    run = GameInShell(tmp_path, ["--seed", "7", "--new", "--record", str(record)], data, width=20, height=6)
    run.child.expect("too small")
    run.frame()  # the rest of the first frame
    for key in "wasdwasd":
        # Each key read while the board cannot be shown is answered with a
        # frame (the message again): once it is out, the key was read, and
        # the resize cannot overtake it.
        run.child.send(key)
        run.frame()
    run.child.setwinsize(HEIGHT, WIDTH)
    run.frame()
    run.child.send("q")
    run.finish()
    assert record.read_text(encoding="utf-8").splitlines()[1] == "q"


@pytest.mark.parametrize("name", ["SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF"])
def test_every_signal_that_would_kill_restores_the_terminal_and_keeps_the_game(
    tmp_path: Path, data: Path, name: str
) -> None:
    signum = getattr(signal, name)
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    run.child.send("wa")
    run.frame()
    os.kill(run.game_pid(), signum)
    status, output = run.finish()
    assert status == 128 + signum
    assert run.stty_unchanged()
    assert b"Traceback" not in output
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l")
    save = data / "game-4x4-2048.keys"
    assert save.read_bytes().split(b"\n", 1)[1].strip() != b""  # the moves are kept


def test_sigpipe_is_ignored_and_the_game_goes_on(tmp_path: Path, data: Path) -> None:
    # Python ignores SIGPIPE (a failed write raises instead): a stray one changes nothing.
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    os.kill(run.game_pid(), signal.SIGPIPE)
    run.child.send("w")
    run.frame()
    run.child.send("q")
    status, _ = run.finish()
    assert status == 0
    assert run.stty_unchanged()


@pytest.mark.parametrize(
    "first, second",
    [(signal.SIGTERM, signal.SIGINT), (signal.SIGHUP, signal.SIGTERM), (signal.SIGINT, signal.SIGQUIT)],
)
def test_two_signals_at_once_cannot_cut_the_restore_short(tmp_path: Path, data: Path, first: int, second: int) -> None:
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    run.child.send("wa")
    run.frame()
    pid = run.game_pid()
    # Stopped, the game cannot take the first signal before the second is
    # sent: both are delivered together when it continues.
    os.kill(pid, signal.SIGSTOP)
    os.kill(pid, first)
    os.kill(pid, second)
    os.kill(pid, signal.SIGCONT)
    status, output = run.finish()
    assert status in (128 + first, 128 + second)
    assert run.stty_unchanged()
    assert b"Traceback" not in output and b"race condition" not in output
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l")


def test_two_interrupts_in_quick_succession_restore_the_terminal(tmp_path: Path, data: Path) -> None:
    run = GameInShell(tmp_path, ["--seed", "7", "--new"], data)
    run.frame()
    pid = run.game_pid()
    os.kill(pid, signal.SIGINT)
    os.kill(pid, signal.SIGINT)
    status, output = run.finish()
    assert status == 128 + signal.SIGINT
    assert run.stty_unchanged()
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l")


def test_ctrl_z_bg_fg_goes_on_playing(tmp_path: Path, data: Path) -> None:
    shell = job_control_shell(data)
    # set -b: bash says "Stopped" as soon as the job stops, not at the next prompt.
    shell.sendline(f"set -b; stty -g > {tmp_path / 'before'}; {sys.executable} -m ansi2048 --seed 7 --new")
    shell.expect(FRAME_END_PATTERN)
    shell.send("\x1a")
    shell.expect("Stopped")
    shell.expect_exact("$ ")
    # In the background the game wants the terminal back and is stopped
    # again (SIGTTOU) in the middle of tcsetattr; fg interrupts that call.
    shell.sendline("bg")
    shell.expect("Stopped")
    shell.sendline("fg")
    shell.expect(FRAME_END_PATTERN)
    shell.send("w")
    shell.expect(FRAME_END_PATTERN)
    shell.send("q")
    shell.expect_exact("$ ")
    seen = shell.before
    shell.sendline(f"echo EXIT=$?; stty -g > {tmp_path / 'after'}; exit")
    shell.expect(pexpect.EOF)
    assert b"EXIT=0" in shell.before, shell.before
    assert b"Interrupted system call" not in seen
    assert (tmp_path / "before").read_text(encoding="utf-8") == (tmp_path / "after").read_text(encoding="utf-8")


@pytest.mark.parametrize("signum", [signal.SIGQUIT, signal.SIGUSR1])
def test_any_ending_signal_during_a_replay_on_the_terminal_restores_it(tmp_path: Path, signum: int) -> None:
    keys = tmp_path / "game.keys"
    keys.write_text("# ansi2048 version=0.1.0 seed=9 size=4x4 goal=2048\n" + "wasd" * 50, encoding="utf-8")
    before, after = tmp_path / "before", tmp_path / "after"
    script = (
        f'stty -g > "{before}"; "{sys.executable}" -m ansi2048 --delay 0.2 < "{keys}"; echo "EXIT=$?";'
        f' stty -g > "{after}"; echo DONE'
    )
    child = spawn("/bin/sh", ["-c", script], env=game_env(tmp_path), dimensions=(HEIGHT, WIDTH), timeout=20)
    child.expect("Ctrl-C stops")
    pid = int(Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text(encoding="utf-8").split()[0])
    os.kill(pid, signum)
    child.expect("DONE")
    output = child.before
    assert f"EXIT={128 + signum}".encode() in output
    assert before.read_text(encoding="utf-8") == after.read_text(encoding="utf-8")
    assert output.rfind(b"\x1b[?25h") > output.rfind(b"\x1b[?25l")


@pytest.mark.parametrize("animation", [True, False])
def test_a_slow_replay_on_a_terminal_shows_its_moves_moving(tmp_path: Path, animation: bool) -> None:
    keys = tmp_path / "game.keys"
    keys.write_text("# ansi2048 version=0.1.0 seed=9 size=4x4 goal=2048\nwasd", encoding="utf-8")
    flag = "" if animation else " --no-animation"
    child = spawn(
        "/bin/sh",
        ["-c", f'"{sys.executable}" -m ansi2048 --delay 0.25{flag} < "{keys}"'],
        env=game_env(tmp_path),
        dimensions=(HEIGHT, WIDTH),
        timeout=20,
    )
    child.expect(pexpect.EOF)
    frames = child.before.count(FRAME_END_CODE.encode())
    game = Game(seed=9)
    moved = sum(game.move(NAMES[key]) for key in "wasd")
    # The first frame, then per key its settled frame, after 3 frames of
    # motion for a key that moves tiles; then the "end of replay" frame.
    assert frames == 1 + 4 + (moved * 3 if animation else 0) + 1
    assert read_board(emulate(child.before, WIDTH, HEIGHT).display, LARGE, 4, 4) == [list(r) for r in game.board]
