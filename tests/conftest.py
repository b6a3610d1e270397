"""Shared fixtures: run the real program the way a user or a bot does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

import pytest


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


@pytest.fixture(autouse=True, scope="session")
def _no_user_config(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read the developer's own config file: the game and every
    program a test starts look for one that does not exist (tests of the
    config set ANSI2048_CONFIG themselves)."""
    os.environ["ANSI2048_CONFIG"] = str(tmp_path_factory.mktemp("config") / "absent.toml")
