"""The suite runs the same whatever the environment it is started in: the
children of the tests are built from scratch (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

import ansi2048

from .conftest import another_ansi2048, child_env, hermetic_environment, import_root, run_cli


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


def impostor(directory: Path) -> Path:
    """An ansi2048 package in ``directory`` that says it is not the real one."""
    package = directory / "ansi2048"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "__main__.py").write_text("print('the impostor')\n", encoding="utf-8")
    return package


def started_in(cwd: Path, *args: str) -> str:
    """What a Python started by a test in ``cwd`` prints."""
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


# Where a child starts: the tests' own working directory (a checkout holds an
# ansi2048/ there), somewhere else, and beside another ansi2048 package (an
# unpacked sdist, a checkout other than the package under test). Python 3.10
# cannot keep a child's directory off sys.path: there the session refuses to
# start beside another ansi2048 (test_the_session_knows_another_ansi2048).
_PLACES = ["the tests' directory", "elsewhere", *(["beside another ansi2048"] if sys.version_info >= (3, 11) else [])]


@pytest.mark.parametrize("place", _PLACES)
def test_a_child_imports_the_ansi2048_the_tests_import(tmp_path: Path, place: str) -> None:
    cwd = Path.cwd() if place == "the tests' directory" else tmp_path
    if place == "beside another ansi2048":
        impostor(tmp_path)
    assert started_in(cwd, "-c", "import ansi2048; print(ansi2048.__file__)") == ansi2048.__file__
    assert started_in(cwd, "-m", "ansi2048", "--version").endswith(ansi2048.__version__)


def test_the_tests_children_find_the_package_under_test_first(tmp_path: Path) -> None:
    env = hermetic_environment(tmp_path / "session", {"PATH": "/bin", "PYTHONPATH": "/elsewhere"})
    assert env["PYTHONPATH"] == os.pathsep.join([import_root(), "/elsewhere"])
    assert env["PYTHONSAFEPATH"] == "1"
    assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == import_root()  # this session's, children's default


def test_the_session_knows_another_ansi2048(tmp_path: Path) -> None:
    assert another_ansi2048(tmp_path) is None
    assert another_ansi2048(Path(import_root())) is None  # the one imported
    assert another_ansi2048(impostor(tmp_path).parent) == tmp_path / "ansi2048"
