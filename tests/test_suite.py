"""The suite itself: it passes however pytest is started (in the background,
under ``nohup``), because what it runs does not depend on the runner; and the
programs it runs on a pty (tests/ptys.py) get it as their terminal, started
safely from a threaded runner."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from ansi2048.terminal.signals import ending_signals

from .conftest import process_runs

ROOT = Path(__file__).resolve().parent.parent

# `cmd &` in a script ignores SIGINT and SIGQUIT, nohup SIGHUP: a shell that
# ignores them (trap '') and execs the program passes them on ignored. (A
# shell, not a preexec_fn: no Python code runs in a fork of this threaded
# process.)
_STARTED_AS_A_SHELL_WOULD = ["sh", "-c", 'trap "" INT QUIT HUP; exec "$@"', "sh"]


@pytest.mark.posix("signals ignored across exec")
def test_a_program_a_test_starts_takes_the_ending_signals_by_default() -> None:
    script = (
        "import json, signal, sys\n"
        "print(json.dumps([s for s in map(int, sys.argv[1:]) if signal.getsignal(s) is signal.SIG_IGN]))\n"
    )
    signums = [*ending_signals(), int(signal.SIGINT)]
    child = subprocess.run(
        [sys.executable, "-c", script, *map(str, signums)], capture_output=True, check=True, timeout=60
    )
    assert json.loads(child.stdout) == []


@pytest.mark.posix("nohup, and signals ignored across exec")
def test_it_holds_when_pytest_itself_starts_with_them_ignored(tmp_path: Path) -> None:
    # The test above, in a pytest started as a background job of a script
    # under nohup: its children would inherit SIG_IGN for the signals the
    # terminal tests send, and those tests would wait for an exit that never
    # comes.
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    node = f"{Path(__file__).name}::{test_a_program_a_test_starts_takes_the_ending_signals_by_default.__name__}"
    inner = subprocess.run(
        [
            *_STARTED_AS_A_SHELL_WOULD,
            *(sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider", f"tests/{node}"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert inner.returncode == 0, inner.stdout.decode() + inner.stderr.decode()
    assert b"1 passed" in inner.stdout


# What a program on a pty (tests/ptys.py) says of its terminal, then of each
# resize, until Ctrl-C interrupts it.
_TERMINAL_REPORT = """\
import os, signal, sys
os.open("/dev/tty", os.O_RDWR)  # fails (ENXIO) with no controlling terminal
print("leader", os.getsid(0) == os.getpid(), "foreground", os.tcgetpgrp(0) == os.getpgrp())
print("ignored", [s for s in map(int, sys.argv[1:]) if signal.getsignal(s) is signal.SIG_IGN])
signal.signal(signal.SIGWINCH, lambda signum, frame: print("size", *os.get_terminal_size(0)))
print("size", *os.get_terminal_size(0))
try:
    while True:
        signal.pause()
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.posix("a pty")
def test_a_program_on_a_pty_has_it_as_its_controlling_terminal() -> None:
    # As in a terminal window: the program leads its session and the pty is
    # its controlling terminal (tcgetpgrp on another terminal fails), its
    # group the foreground one, so a resize (SIGWINCH) and Ctrl-C reach it;
    # and it starts with no ending signal ignored.
    from .ptys import spawn

    signums = [*ending_signals(), int(signal.SIGINT)]
    child = spawn(sys.executable, ["-c", _TERMINAL_REPORT, *map(str, signums)], dimensions=(24, 80), timeout=30)
    child.expect("leader True foreground True")
    child.expect(r"ignored \[\]")
    child.expect("size 80 24")
    child.setwinsize(30, 100)
    child.expect("size 100 30")
    child.sendintr()
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.posix("a pty")
def test_a_program_on_a_pty_gets_sigpipe_at_its_default() -> None:
    # As from a shell: the interpreter that starts it ignores SIGPIPE for
    # itself, and does not pass that on. (Python programs ignore it anyway.)
    # `yes` writing to a reader that left dies of SIGPIPE (128 + 13); were
    # it ignored, yes would fail its write and exit 1.
    from .ptys import spawn

    child = spawn("sh", ["-c", '{ yes; echo "yes ended: $?" >&2; } | head -n 1 > /dev/null'])
    child.expect(r"yes ended: (\d+)")
    assert int(child.match.group(1)) == 128 + signal.SIGPIPE, child.before


@pytest.mark.posix("a pty")
def test_a_program_on_a_pty_is_started_without_forking_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # This process runs threads (pytest-xdist's): a fork of it that runs
    # Python code before exec may deadlock (and Python 3.12 warns of it).
    # subprocess forks and execs in C; pty.fork and os.fork are not used.
    from .ptys import spawn

    def no_fork() -> None:
        raise AssertionError("a fork of the test process")

    for name in ("fork", "forkpty"):
        monkeypatch.setattr(os, name, no_fork)
    child = spawn("sh", ["-c", "echo started on $(tty)"])
    child.expect(r"started on /dev/\S+")
    child.expect(pexpect.EOF)


@pytest.mark.posix("a pty")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_closing_a_program_that_ignores_the_hangup_ends_it_and_its_group() -> None:
    # What a test leaves running is closed after it (conftest.py): the
    # terminal hangs up, and what outlives that is killed, with its group.
    from .ptys import spawn

    child = spawn("sh", ["-c", 'trap "" HUP; sleep 60 & echo "sleeping $!"; wait'])
    child.expect(r"sleeping (\d+)")
    sleeper = int(child.match.group(1))
    child.close(force=True)
    assert child.signalstatus == signal.SIGKILL
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and process_runs(sleeper):
        time.sleep(0.01)
    assert not process_runs(sleeper)


def _skips_itself_at_import(tree: ast.Module) -> bool:
    """Whether a module calls ``pytest.skip(..., allow_module_level=True)``."""
    return any(
        isinstance(node, ast.Call) and any(keyword.arg == "allow_module_level" for keyword in node.keywords)
        for node in ast.walk(tree)
    )


def test_no_module_takes_anything_from_one_that_skips_itself_at_import() -> None:
    # A module that skips itself where it cannot run (test_terminal.py on
    # Windows) skips every module importing it: test_pipes.py's piped games
    # did not run on Windows for a few names taken from test_terminal.py.
    # What tests share lives in modules that import everywhere (conftest.py,
    # console.py, ptys.py, screen.py), and each test is marked for what it needs.
    here = Path(__file__).resolve().parent
    trees = {path.stem: ast.parse(path.read_text(encoding="utf-8")) for path in here.glob("*.py")}
    skipping = {name for name, tree in trees.items() if _skips_itself_at_import(tree)}
    taken = sorted(
        (name, node.module)
        for name, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in skipping
    )
    assert taken == [], taken
