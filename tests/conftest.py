"""Shared fixtures: run the real program the way a user or a bot does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

import pytest
from hypothesis import settings

# No per-example deadline: the suite runs on every core (pyproject.toml's
# addopts), often beside other work, and an example that waits for a core is
# not a slow example. Tests that set a deadline keep theirs.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


def run_cli(
    args: Sequence[str],
    stdin: bytes = b"",
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """``python -m ansi2048 ARGS`` with ``stdin`` piped in."""
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "ansi2048", *args],
        input=stdin,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def json_lines(output: bytes) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in output.decode().splitlines()]


@pytest.fixture
def data_home(tmp_path: Path) -> Path:
    """An empty user data directory for one test."""
    path = tmp_path / "data"
    path.mkdir()
    return path


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Skip the tests marked ``posix`` on Windows, which has no pty, termios or POSIX signals."""
    if sys.platform != "win32":
        return
    skip = pytest.mark.skip(reason="needs a POSIX terminal (pty, termios, signals); this is Windows")
    for item in items:
        if item.get_closest_marker("posix") is not None:
            item.add_marker(skip)


def _take_no_signal(signum: int, frame: object) -> None:
    """The runner's own reaction to a signal its shell told it to ignore."""


@pytest.fixture(autouse=True, scope="session")
def _children_start_with_default_signals() -> Iterator[None]:
    """Every program a test starts gets the default action for the signals
    that end the game, whatever the shell gave pytest.

    A background job of a non-interactive shell (``pytest &`` in a script)
    starts with SIGINT and SIGQUIT ignored, and ``nohup`` ignores SIGHUP; an
    ignored signal stays ignored across exec, and the game rightly keeps it
    so. The tests that send those signals would then wait for an exit that
    never comes. A handler (unlike SIG_IGN) is reset to the default at exec:
    pytest still takes no action on such a signal, and its children start
    as they would from a terminal."""
    if sys.platform == "win32":
        yield
        return
    import signal

    from ansi2048.terminal.signals import ending_signals

    ignored = [s for s in [*ending_signals(), int(signal.SIGINT)] if signal.getsignal(s) is signal.SIG_IGN]
    for signum in ignored:
        signal.signal(signum, _take_no_signal)
    try:
        yield
    finally:
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)


@pytest.fixture(autouse=True, scope="session")
def _no_user_config(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read the developer's own config file: the game and every
    program a test starts look for one that does not exist (tests of the
    config set ANSI2048_CONFIG themselves)."""
    os.environ["ANSI2048_CONFIG"] = str(tmp_path_factory.mktemp("config") / "absent.toml")
