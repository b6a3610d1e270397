"""Shared fixtures: run the real program the way a user or a bot does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import pytest
from hypothesis import settings

import ansi2048
from ansi2048.terminal.windows import under_wine

# The databases the server's tests run on (store_url, store_kind): tests/databases.py.
pytest_plugins = ["tests.databases"]

# No per-example deadline: the suite runs on every core (pyproject.toml's
# addopts), often beside other work, and an example that waits for a core is
# not a slow example. Tests that set a deadline keep theirs.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# Wine is not Windows in a few places; tests that meet one are skipped there
# alone, each saying which (``pytest.mark.skipif(UNDER_WINE, reason=...)``).
UNDER_WINE = under_wine()

# What a child process may take from the environment the tests run in: what the
# OS needs to start a program (Windows needs SYSTEMROOT and the rest to start
# Python at all), never what changes the game (TERM, COLORTERM, WT_SESSION,
# NO_COLOR, LANG, ANSI2048_*, XDG_*, the user's config and data).
_PASSED_THROUGH = (
    "PATH", "PYTHONPATH", "TMPDIR", "TEMP", "TMP", "USER", "LOGNAME", "USERNAME",
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS",
)  # fmt: skip
_HERMETIC: Dict[str, str] = {}  # set up once a session by _hermetic_environment


def child_env(env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """A child's whole environment, built from scratch: the OS essentials,
    a home, data, config and XDG directories of the test session's own
    (empty), no config file; then ``env``."""
    assert _HERMETIC, "the session's environment is not set up yet"
    full_env = dict(_HERMETIC)
    if env:
        full_env.update(env)
    return full_env


def game_env(data: Path) -> Dict[str, str]:
    """A game's whole environment (:func:`child_env`): an xterm with 256
    colours, its data in ``data``."""
    return child_env({"TERM": "xterm-256color", "ANSI2048_DATA_DIR": str(data)})


def run_cli(
    args: Sequence[str],
    stdin: bytes = b"",
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """``python -m ansi2048 ARGS`` with ``stdin`` piped in, in :func:`child_env`."""
    return subprocess.run(
        [sys.executable, "-m", "ansi2048", *args],
        input=stdin,
        capture_output=True,
        env=child_env(env),
        timeout=timeout,
        check=False,
    )


def json_lines(output: bytes) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in output.decode().splitlines()]


def messages(stderr: Union[bytes, str]) -> List[str]:
    """The messages on ``stderr``, each whole on one line: a message begins
    with ``ansi2048:``; the lines after it (its words wrapped within 80
    columns, the paths it names) are joined to it with a space."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    said: List[str] = []
    for line in text.splitlines():
        if said and not line.startswith("ansi2048:"):
            said[-1] += " " + line.strip()
        else:
            said.append(line)
    return said


@pytest.fixture
def data_home(tmp_path: Path) -> Path:
    """An empty user data directory for one test."""
    path = tmp_path / "data"
    path.mkdir()
    return path


def process_runs(pid: int) -> bool:
    """Whether process ``pid`` runs: a zombie (ended, not reaped yet: one
    whose parent has gone may wait for a reaper) does not. POSIX only."""
    if not os.path.isdir("/proc/self"):  # macOS: whether the pid is taken at all
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Skip the tests marked ``posix`` on Windows, each saying what it needs
    that Windows lacks: ``@pytest.mark.posix("a pty")`` (a mark that does not
    say is an error on every system, not only where it would skip)."""
    for item in items:
        marker = item.get_closest_marker("posix")
        if marker is None:
            continue
        if not marker.args:
            raise pytest.UsageError(f"{item.nodeid}: say what it needs, as in @pytest.mark.posix('a pty')")
        if sys.platform == "win32":
            item.add_marker(pytest.mark.skip(reason=f"POSIX only: {marker.args[0]}"))


def symlink_or_skip(link: Path, target: Union[str, Path]) -> None:
    """``link`` made a symbolic link to ``target``, or the test skipped where
    that cannot be: Windows makes them only with a privilege (an admin, or
    developer mode), and Wine's are no links (``lstat`` cannot find them)."""
    if UNDER_WINE:
        pytest.skip("Wine: os.symlink makes an entry that lstat cannot find")
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):
        pytest.skip("cannot make symlinks here (Windows: needs a privilege)")


def import_root() -> str:
    """The directory the test process imported ansi2048 from (the checkout,
    or the site-packages of the installed package under test)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(ansi2048.__file__)))


def hermetic_environment(root: Path, outside: Mapping[str, str]) -> Dict[str, str]:
    """The environment every test runs in, under ``root``, taking from
    ``outside`` only what :data:`_PASSED_THROUGH` names.

    Every Python a test starts (``python -m ansi2048``, ``-c`` snippets, a
    shell's command line) imports the ansi2048 the tests imported: its
    :func:`import_root` comes first on ``PYTHONPATH``, and ``PYTHONSAFEPATH``
    keeps the child's working directory (a checkout whose ``ansi2048/`` is not
    the installed package under test) off the front of ``sys.path``. Python
    3.10 has no ``PYTHONSAFEPATH``: the session refuses to start there when
    the working directory holds another ansi2048 (:func:`_hermetic_environment`)."""
    env = {name: outside[name] for name in _PASSED_THROUGH if name in outside}
    env["PYTHONPATH"] = os.pathsep.join([import_root(), *filter(None, [outside.get("PYTHONPATH")])])
    env["PYTHONSAFEPATH"] = "1"
    home = root / "home"
    for name in ("home", "data", "config", "state", "cache"):
        (root / name).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CACHE_HOME=str(root / "cache"),
        APPDATA=str(root / "config"),
        LOCALAPPDATA=str(root / "data"),
        # The game's own files: tests of the data directory set these themselves.
        ANSI2048_DATA_DIR=str(root / "data" / "ansi2048"),
        ANSI2048_CONFIG=str(root / "config" / "absent.toml"),
    )
    return env


def another_ansi2048(directory: Path) -> Optional[Path]:
    """The ansi2048 package in ``directory``, if there is one and it is not the
    one the tests imported: a child started there without ``PYTHONSAFEPATH``
    (Python 3.10) would import it instead."""
    package = directory / "ansi2048"
    if not (package / "__init__.py").is_file():
        return None
    return None if package.samefile(os.path.dirname(os.path.abspath(ansi2048.__file__))) else package


def pytest_configure(config: pytest.Config) -> None:
    """On Python 3.10, which has no ``PYTHONSAFEPATH``, a child started in the
    working directory puts it first on ``sys.path``: refuse to test one
    ansi2048 while the children run another."""
    other = another_ansi2048(Path.cwd()) if sys.version_info < (3, 11) else None
    if other is not None:
        raise pytest.UsageError(
            f"the tests import ansi2048 from {import_root()}, but the programs they start would import {other}:"
            " run pytest from another directory, or on Python 3.11 or later"
        )


def _take_no_signal(signum: int, frame: object) -> None:
    """The runner's own reaction to a signal its shell told it to ignore."""


@pytest.fixture(autouse=True)
def _ai_loaded_before_the_next_test() -> Iterator[None]:
    """A keyboard game played in-process loads the AI on a thread of its own
    once its board is up (``autoplay.Advisor.warm_up``), and that thread may
    outlive the game. Joined here, so that a later test forking a child (a
    pty) does not fork a process with a thread in the middle of an import."""
    yield
    import threading

    for thread in threading.enumerate():
        if thread.name == "ansi2048-ai":
            thread.join(timeout=30)


@pytest.fixture(autouse=True)
def _no_program_on_a_pty_outlives_its_test() -> Iterator[None]:
    """A test that fails half-way leaves its program on a pty running: it is
    hung up, then killed, before the next test (tests/ptys.py)."""
    yield
    from .ptys import end_all

    end_all()


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
def _hermetic_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests never see the developer's environment, config file or data: the
    test process itself and every program it starts (whether through
    :func:`child_env` or by inheriting ``os.environ``) run in the hermetic
    environment, restored at the end of the session."""
    saved = dict(os.environ)
    _HERMETIC.update(hermetic_environment(tmp_path_factory.mktemp("environment"), saved))
    os.environ.clear()
    os.environ.update(_HERMETIC)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
