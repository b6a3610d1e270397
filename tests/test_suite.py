"""The suite itself: it passes however pytest is started (in the background,
under ``nohup``), because what it runs does not depend on the runner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ansi2048.terminal.signals import ending_signals

ROOT = Path(__file__).resolve().parent.parent

_IGNORED_BY_A_SHELL = ("SIGINT", "SIGQUIT", "SIGHUP")  # `cmd &` in a script; nohup


def _ignore_as_a_shell_would() -> None:
    for name in _IGNORED_BY_A_SHELL:
        signal.signal(getattr(signal, name), signal.SIG_IGN)


@pytest.mark.posix
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


@pytest.mark.posix
def test_it_holds_when_pytest_itself_starts_with_them_ignored(tmp_path: Path) -> None:
    # The test above, in a pytest started as a background job of a script
    # under nohup: its children would inherit SIG_IGN for the signals the
    # terminal tests send, and those tests would wait for an exit that never
    # comes.
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    node = f"{Path(__file__).name}::{test_a_program_a_test_starts_takes_the_ending_signals_by_default.__name__}"
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider", f"tests/{node}"],
        cwd=ROOT,
        env=env,
        preexec_fn=_ignore_as_a_shell_would,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert inner.returncode == 0, inner.stdout.decode() + inner.stderr.decode()
    assert b"1 passed" in inner.stdout
