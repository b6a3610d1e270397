"""The suite runs the same whatever the environment it is started in: the
children of the tests are built from scratch (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import pytest

from .conftest import child_env, hermetic_environment, run_cli


def hostile(tmp_path: Path) -> Dict[str, str]:
    """What a user's shell may hold that would change the game, and junk where it reads files."""
    junk = tmp_path / "junk"
    for name in ("data/ansi2048", "config/ansi2048"):
        (junk / name).mkdir(parents=True)
        (junk / name / "config.toml").write_text("theme = 'no such theme'\n[[[\n", encoding="utf-8")
    (junk / "data/ansi2048/best.json").write_text("{junk", encoding="utf-8")
    return {
        "COLORTERM": "truecolor",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "WT_SESSION": "1",
        "LANG": "C",
        "LC_ALL": "C",
        "ANSI2048_NO_ANIMATION": "1",
        "ANSI2048_DATA_DIR": str(junk / "data/ansi2048"),
        "ANSI2048_CONFIG": str(junk / "config/ansi2048/config.toml"),
        "XDG_DATA_HOME": str(junk / "data"),
        "XDG_CONFIG_HOME": str(junk / "config"),
        "HOME": str(junk),
    }


def test_a_child_takes_nothing_from_a_hostile_environment(tmp_path: Path) -> None:
    outside = dict(os.environ, **hostile(tmp_path))
    env = hermetic_environment(tmp_path / "session", outside)
    assert not {"COLORTERM", "NO_COLOR", "TERM", "WT_SESSION", "LANG", "LC_ALL", "ANSI2048_NO_ANIMATION"} & set(env)
    junk = str(tmp_path / "junk")
    assert not [name for name, value in env.items() if junk in value]
    assert env["PATH"] == os.environ["PATH"]  # what starts a program is kept


def test_a_game_plays_the_same_in_a_hostile_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = b"wasdwasdq"
    calm = run_cli(["--seed", "11", "--color", "auto"], keys, env=child_env())
    for name, value in hostile(tmp_path).items():
        monkeypatch.setenv(name, value)
    stormy = run_cli(["--seed", "11", "--color", "auto"], keys)
    assert calm.returncode == stormy.returncode == 0
    assert stormy.stdout == calm.stdout
    assert stormy.stderr == calm.stderr == b""
