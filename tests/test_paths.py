"""Any path the game opens can be anything (issue 20): the config file, the
history, the saved game, the best scores and the AI's weights may each be a
FIFO, a device, a directory, a symlink (dangling, looping, or out of the data
directory), unreadable or huge. Every reader is tried on every kind: none
hangs, none crashes, none reads without bound, each says one warning, and
nothing is ever written outside the data directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings as python_warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

from ansi2048.ai import DEFAULT_WEIGHTS, WeightsWarning, load_network
from ansi2048.game.engine import Game
from ansi2048.options import config as config_module
from ansi2048.options.config import Config, load_config
from ansi2048.records.history import Record
from ansi2048.storage import files
from ansi2048.storage.data_dir import BoardStore, DataDir
from ansi2048.storage.files import NotAFile, TooBig, read_regular, read_tail
from ansi2048.storage.history_file import History

from .conftest import child_env, messages, symlink_or_skip

# The shipped weights of the ansi2048 under test (from an installed wheel too).
WEIGHTS = Path(DEFAULT_WEIGHTS)


@contextmanager
def no_hang(seconds: float = 10) -> Iterator[None]:
    """Fail, rather than hang the suite, if the code inside blocks (on a FIFO).
    Windows has no SIGALRM (nor FIFOs): there a hang ends the test process,
    with every thread's traceback, rather than hanging it."""
    if sys.platform == "win32":
        import faulthandler

        faulthandler.dump_traceback_later(seconds, exit=True)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
        return

    def hung(signum: int, frame: object) -> None:
        raise AssertionError(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- the kinds of thing a path can be ------------------------------------------------
# Each makes ``path`` into one kind of thing; ``outside`` is a directory out of
# the data directory, where a link may point. Each returns what ``outside``
# must still hold afterwards (name -> bytes), to prove nothing was written there.

Maker = Callable[[Path, Path], Dict[str, bytes]]


def _fifo(path: Path, outside: Path) -> Dict[str, bytes]:
    os.mkfifo(path)
    return {}


def _directory(path: Path, outside: Path) -> Dict[str, bytes]:
    path.mkdir()
    (path / "inside").write_bytes(b"x")
    return {}


def _link_to_device(path: Path, outside: Path) -> Dict[str, bytes]:
    symlink_or_skip(path, "/dev/zero")  # endless: read whole, it fills the memory
    return {}


def _dangling_link(path: Path, outside: Path) -> Dict[str, bytes]:
    symlink_or_skip(path, outside / "victim")
    return {}


def _looping_link(path: Path, outside: Path) -> Dict[str, bytes]:
    symlink_or_skip(path, path.name)
    return {}


def _link_out(path: Path, outside: Path) -> Dict[str, bytes]:
    target = outside / "elsewhere"
    target.write_bytes(b'{"4x4-2048": 1}\n')
    symlink_or_skip(path, target)
    return {"elsewhere": target.read_bytes()}


def _link_to_fifo(path: Path, outside: Path) -> Dict[str, bytes]:
    os.mkfifo(outside / "pipe")
    symlink_or_skip(path, outside / "pipe")
    return {}


KINDS: Dict[str, Maker] = {
    "fifo": _fifo,
    "directory": _directory,
    "link to a device": _link_to_device,
    "dangling link": _dangling_link,
    "looping link": _looping_link,
    "link out of the data directory": _link_out,
    "link to a fifo": _link_to_fifo,
}
# What Windows has not: the kinds made of them are POSIX's alone.
_POSIX_ONLY = {"fifo": "FIFOs", "link to a device": "/dev/zero", "link to a fifo": "FIFOs"}


def kinds(*left_out: str) -> List[Any]:
    """The kinds (but ``left_out``) as parameters, those Windows lacks marked so."""
    return [
        pytest.param(kind, marks=pytest.mark.posix(_POSIX_ONLY[kind])) if kind in _POSIX_ONLY else kind
        for kind in sorted(KINDS)
        if kind not in left_out
    ]


# Everything the keyboard game keeps in the data directory.
DATA_FILES = ["history.jsonl", "best.json", "best.lock", "game-4x4-2048.keys", "game-4x4-2048.keys.lock"]


def outside_holds(outside: Path) -> Dict[str, bytes]:
    return {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file() and not p.is_symlink()}


@pytest.fixture
def dirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    yield data, outside


def a_record(score: int) -> Record:
    keys = "wasd" * 8  # moves enough to make a score of ``score`` plausible
    return Record(
        date="2026-11-22T12:00:00Z", rows=4, cols=4, goal=2048, seed=5, score=score, moves=len(keys), biggest=8,
        won=False, over=True, undo=False, ai=False, keys=keys,
    )  # fmt: skip


# -- the one place that reads ----------------------------------------------------------


@pytest.mark.parametrize("kind", kinds())
def test_read_regular_reads_only_a_regular_file_of_its_own(dirs: tuple[Path, Path], kind: str) -> None:
    data, outside = dirs
    path = data / "file"
    KINDS[kind](path, outside)
    with no_hang(), pytest.raises((NotAFile, OSError)):
        read_regular(str(path), 1 << 20)
    with no_hang(), pytest.raises((NotAFile, OSError)):
        read_tail(str(path), 1 << 20)


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 70_000])
def test_reads_are_bounded_whatever_the_file_holds(tmp_path: Path, size: int) -> None:
    path = tmp_path / "file"
    data = bytes(range(256)) * (size // 256 + 1)
    path.write_bytes(data[:size])
    limit = 4096
    if size > limit:
        with pytest.raises(TooBig):
            read_regular(str(path), limit)
    else:
        assert read_regular(str(path), limit) == data[:size]
    tail, skipped = read_tail(str(path), limit)
    assert tail == data[:size][-limit:] if size else tail == b""
    assert skipped == max(0, size - limit)


def test_a_huge_file_is_refused_having_read_no_more_than_the_limit(tmp_path: Path) -> None:
    """A file of 64 MiB (sparse: no disk is spent) and a limit of 4 KiB: the
    refusal reads limit + 1 bytes, so the memory it takes stays near that,
    not near the file's size."""
    import tracemalloc

    path = tmp_path / "huge"
    with path.open("wb") as stream:
        stream.truncate(64 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(TooBig):
            read_regular(str(path), 4096)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("stale", ["a file", "a symlink"])
def test_an_atomic_write_replaces_a_stale_temp_file_of_its_own_name(tmp_path: Path, stale: str) -> None:
    """A temp file left by a process killed mid-write (whose pid this one now
    has), or a link planted under its name: removed, never written through,
    and the write goes ahead."""
    path = tmp_path / "best.json"
    temp = tmp_path / f"best.json.{os.getpid()}.tmp"
    outside = tmp_path / "outside"
    outside.write_bytes(b"not yours")
    if stale == "a file":
        temp.write_bytes(b"half a file from before")
    else:
        symlink_or_skip(temp, outside)
    files.atomic_write(str(path), [b"new ", b"content"], durable=False)
    assert path.read_bytes() == b"new content"
    assert outside.read_bytes() == b"not yours"
    assert not os.path.lexists(temp)


# -- the config file --------------------------------------------------------------------


@pytest.mark.parametrize("kind", kinds())
def test_a_config_path_of_any_kind_is_at_most_one_warning_and_never_a_hang(dirs: tuple[Path, Path], kind: str) -> None:
    data, outside = dirs
    path = data / "config.toml"
    KINDS[kind](path, outside)
    said: List[str] = []
    with no_hang():
        config = load_config({"ANSI2048_CONFIG": str(path)}, said.append)
    assert config == Config()
    if kind == "dangling link":
        assert said == []  # no file there: the defaults, as with no file at all
    else:
        assert len(said) == 1 and str(path) in said[0] and "using the defaults" in said[0], said


def test_a_config_linked_from_elsewhere_is_read(dirs: tuple[Path, Path]) -> None:
    # Dotfile managers link the config: reading through that link is fine.
    data, outside = dirs
    (outside / "real.toml").write_text('theme = "dark"\n')
    symlink_or_skip(data / "config.toml", outside / "real.toml")
    said: List[str] = []
    assert load_config({"ANSI2048_CONFIG": str(data / "config.toml")}, said.append) == Config(theme="dark")
    assert said == []


@pytest.mark.parametrize("extra", [1, 1000])
def test_a_huge_config_is_one_warning_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: int
) -> None:
    monkeypatch.setattr(config_module, "MAX_CONFIG_BYTES", 4096)
    path = tmp_path / "config.toml"
    path.write_bytes(b'theme = "dark"\n' + b"#" * (4096 + extra))
    said: List[str] = []
    assert load_config({"ANSI2048_CONFIG": str(path)}, said.append) == Config()
    assert len(said) == 1 and "bigger than 4 KiB" in said[0]


# -- the history ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", kinds())
def test_reading_a_history_of_any_kind_is_one_warning(dirs: tuple[Path, Path], kind: str) -> None:
    data, outside = dirs
    path = data / "history.jsonl"
    KINDS[kind](path, outside)
    said: List[str] = []
    with no_hang():
        assert History(str(path)).read(said.append) == []
    assert len(said) == 1 and str(path) in said[0]


# -- keeping games: every file in the data directory, every kind -----------------------


@pytest.mark.parametrize("kind", kinds())
@pytest.mark.parametrize("name", DATA_FILES)
def test_a_game_is_kept_whatever_is_in_the_data_directory_and_nothing_outside_is_touched(
    dirs: tuple[Path, Path], name: str, kind: str
) -> None:
    data, outside = dirs
    before = KINDS[kind](data / name, outside)
    env = {"ANSI2048_DATA_DIR": str(data)}
    said: List[str] = []
    with no_hang():
        keeper = BoardStore(env, 4, 4, 2048, said.append)
        try:
            assert keeper.resume() is None
            keeper.begin(Game(4, 4, 2048, 5))
            keeper.record_best(64)
            keeper.add_record(a_record(64))
            said.extend(keeper.drain_warnings())
        finally:
            keeper.close()
        # Everything is usable again, in regular files of its own.
        assert History(str(data / "history.jsonl")).read(said.append)[-1].score == 64
        assert DataDir(str(data)).best("4x4-2048") == 64
    assert outside_holds(outside) == before
    assert not (outside / "victim").exists()
    for kept in DATA_FILES:
        path = data / kept
        assert not path.is_symlink() and (not path.exists() or path.is_file()), kept
    assert said, "the thing set aside is not mentioned"
    assert any(name in line for line in said), said
    # Set aside, never deleted.
    assert [p for p in data.iterdir() if p.name.startswith(name + ".bad-")]


@pytest.mark.parametrize("kind", kinds())
@pytest.mark.parametrize("mode", ["--stats", "--replay-best"])
@pytest.mark.parametrize("name", ["history.jsonl", "config.toml"])
def test_stats_and_replays_never_hang_on_what_is_there(
    dirs: tuple[Path, Path], name: str, mode: str, kind: str
) -> None:
    data, outside = dirs
    before = KINDS[kind](data / name, outside)
    # Built from scratch: nothing of the developer's own environment counts.
    env = child_env(
        {"HOME": str(outside), "ANSI2048_DATA_DIR": str(data), "ANSI2048_CONFIG": str(data / "config.toml")}
    )
    args = [mode] if mode == "--stats" else [mode, "1"]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ansi2048", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{mode} hung on a {kind} as {name}")
    assert done.returncode == (0 if mode == "--stats" else 2), done.stderr
    assert b"Traceback" not in done.stderr
    lines = messages(done.stderr)
    expected_warnings = 0 if (name == "config.toml" and kind == "dangling link") else 1
    # --replay-best adds its one error: the top list is empty.
    assert len(lines) == expected_warnings + (mode == "--replay-best"), lines
    assert outside_holds(outside) == before


# -- the AI's weights ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", kinds("link out of the data directory"))
def test_weights_of_any_kind_fall_back_to_the_heuristic_without_waiting(dirs: tuple[Path, Path], kind: str) -> None:
    data, outside = dirs
    path = data / f"weights-{kind.replace(' ', '-')}.bin"
    KINDS[kind](path, outside)
    with no_hang(), python_warnings.catch_warnings(record=True) as caught:
        python_warnings.simplefilter("always")
        network, why = load_network(str(path))
    assert network is None and why is not None
    assert str(path) in why or repr(str(path)) in why  # quoted by repr(): Windows' backslashes doubled
    assert [w for w in caught if issubclass(w.category, WeightsWarning)]


def test_weights_linked_from_elsewhere_load(tmp_path: Path) -> None:
    symlink_or_skip(tmp_path / "weights.bin", WEIGHTS)
    network, why = load_network(str(tmp_path / "weights.bin"))
    assert network is not None and why is None


def test_weights_far_too_big_are_not_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ansi2048.ai as ai

    monkeypatch.setattr(ai, "MAX_WEIGHTS_BYTES", 1000)
    path = tmp_path / "big.bin"
    path.write_bytes(WEIGHTS.read_bytes()[:5000])
    with python_warnings.catch_warnings(record=True):
        python_warnings.simplefilter("always")
        network, why = load_network(str(path))
    assert network is None and why is not None and "bigger than" in why


def test_every_reader_goes_through_files() -> None:
    # One place checks what a path is: no reader of the game's files opens
    # one by itself (open() or os.open() outside files.py).
    package = Path(files.__file__).parent.parent
    readers = [
        "options/config.py",
        "storage/history_file.py",
        "storage/data_dir.py",
        "storage/save_file.py",
        "ai/__init__.py",
    ]
    for module in readers:
        text = (package / module).read_text(encoding="utf-8")
        assert "open(" not in text.replace("open_regular(", "").replace("fdopen(", "").replace(
            "open_for_append(", ""
        ).replace("_open_body(", ""), module
