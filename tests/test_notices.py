"""Every warning the game prints fits an 80-column terminal, what matters
first and each path on a line of its own (issue 30, item 9).

Three ways: the layout itself, by hand; every message the source can say
(found in the source, whatever is added later), rendered with realistic
paths and reasons; and real ones, made to happen and read as printed."""

from __future__ import annotations

import ast
import shutil
import tempfile
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

import ansi2048
from ansi2048.game.engine import Game
from ansi2048.game.session import Session
from ansi2048.render.frame import View, build_frame
from ansi2048.render.notice import NOTICE_WIDTH, notice_lines, warning_text
from ansi2048.render.style import ColorDepth

from .conftest import UNDER_WINE, messages, run_cli

# Realistic values for what messages are built from: a data folder on
# Linux for a user of nine letters, the longest reasons the OS gives.
DATA = "/home/alexandra/.local/share/ansi2048"
SAVE = f"{DATA}/game-daily-4x4-2048.keys"
PATHS = {
    "path": f"{DATA}/best.json",
    "self.path": f"{DATA}/history.jsonl",
    "store.path": DATA,
    "save.path": SAVE,
    "where": "/home/alexandra/.config/ansi2048/config.toml",
    "save.quarantine()": f"{SAVE}.bad-1764196441",
    "aside": f"{DATA}/best.json.bad-1764196441",
    "set_aside(path, 'bad')": f"{SAVE}.lock.bad-1764196441",
    "set_aside(self.path, 'bad')": f"{DATA}/history.jsonl.bad-1764196441",
}
REASON = "Too many levels of symbolic links"
WORDS = {
    **dict.fromkeys(
        ["why", "error", "exc", "reason(error)", "error.strerror or error", "effect.why"],
        REASON,
    ),
    "kept": f"the old one is set aside as\n{SAVE}.bad-1764196441",  # (its two forms are checked too)
    "day": "2026-11-26",
    "seed": "4294967295",
    "which": "12 lines, the first line 3",
    "name": "goal",
    "h.rows": "11",
    "h.cols": "11",
    "h.goal": "131072",
    "number": "12",
    "MAX_LINE": "4096",
    "'; '.join(shown)": "line 3: size: expected ROWSxCOLS, got '11'; line 8: keys.up: 'é' is not one key",
    "len(problems) - len(shown)": "12",
    # A ranked game's verdict (records/replay.py): the biggest scores a board reaches.
    "replayed.score": "3932100",
    "claimed.score": "3932156",
    "replayed.moves": "180000",
    "claimed.moves": "180001",
    # A recording of a newer version, replayed locally (play/piped.py).
    "newer": "written by ansi2048 10.12.3, newer than this 0.4.0",
}
# Where a message is built before it is said: the names it is kept in.
_KEPT_IN = {"warning", "note", "cached", "kept"}
# What says a message: warn callables, the lists warnings wait in, the one that stops saving.
_SAYERS = {"warn", "_warn", "_stop_saving", "StopRecording"}


def _said_strings() -> Iterator[Tuple[str, ast.expr]]:
    """Every message the package (not the server, whose messages go to its
    log) builds from a literal: (where, the string's node)."""
    root = Path(ansi2048.__file__).parent
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith("serve/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found: List[ast.expr] = []
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                owner = func.value if isinstance(func, ast.Attribute) else None
                listed = name == "append" and (getattr(owner, "attr", None) or getattr(owner, "id", None)) == "warnings"
                if name in _SAYERS or listed:
                    found.append(node.args[0])
            elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id in _KEPT_IN for target in node.targets
            ):
                found.append(node.value)
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts:
                found.append(node.value.elts[-1])  # parse_config's (config, warning)
            for value in found:
                if isinstance(value, ast.IfExp):
                    found += [value.body, value.orelse]
                elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
                    found += [value.left, value.right]  # _stop_saving's words + (its path, if any)
                elif isinstance(value, ast.JoinedStr) or (
                    isinstance(value, ast.Constant) and value.value and isinstance(value.value, str)
                ):
                    yield f"{where}:{value.lineno}", value


def _rendered(where: str, node: ast.expr) -> Tuple[str, List[str]]:
    """The message with realistic values, and the paths in it."""
    if isinstance(node, ast.Constant):
        return str(node.value), []
    assert isinstance(node, ast.JoinedStr)
    text, paths = "", []
    for part in node.values:
        if isinstance(part, ast.Constant):
            text += str(part.value)
            continue
        assert isinstance(part, ast.FormattedValue)
        expression = ast.unparse(part.value)
        if expression in PATHS:
            assert "\n" in text, (
                f"{where}: the path {{{expression}}} among the words: put it last, on a line of its own"
            )
            paths.append(PATHS[expression])
            text += PATHS[expression]
        elif expression in WORDS:
            text += WORDS[expression]
        else:
            pytest.fail(f"{where}: no realistic value for {{{expression}}}: add one to this test's PATHS or WORDS")
    return text, paths


def _fits(printed: str, paths: List[str]) -> None:
    """Every line within NOTICE_WIDTH columns, but a path too long for any
    line, alone on its own (cut, it could not be copied)."""
    for line in printed.splitlines():
        assert len(line) <= NOTICE_WIDTH or line in paths, printed


# -- the layout -------------------------------------------------------------------


def test_words_wrap_at_spaces_and_each_path_goes_alone_below_them() -> None:
    message = f"cannot use the data folder (Too many levels of symbolic links); not saving this game\n{DATA}"
    assert notice_lines("ansi2048: warning: ", message) == [
        "ansi2048: warning: cannot use the data folder (Too many levels of symbolic",
        "  links); not saving this game",
        "  /home/alexandra/.local/share/ansi2048",
    ]


def test_a_path_longer_than_a_line_stays_whole_on_a_line_of_its_own() -> None:
    long = "/Users/alexandra/Library/Application Support/ansi2048/game-daily-4x4-2048.keys.bad-1764196441"
    assert notice_lines("ansi2048: warning: ", f"saved game unusable; set aside as\n{long}") == [
        "ansi2048: warning: saved game unusable; set aside as",
        long,  # a space in it, and 94 columns: whole, not indented
    ]
    assert notice_lines("", "x " + "y" * 100, width=20) == ["x", "  " + "y" * 100]


def test_the_warning_of_a_second_game_on_the_board_fits_as_printed() -> None:
    printed = warning_text("another ansi2048 is playing this board; not saving this game", NOTICE_WIDTH)
    assert printed == "ansi2048: warning: another ansi2048 is playing this board; not saving this game\n"
    assert len(printed.rstrip("\n")) == 79


def test_on_a_board_a_message_is_one_line_its_path_last_and_cut_first() -> None:
    words = "cannot read the saved game (Permission denied); not saving this game"
    view = View.of(Session(Game(seed=1)), f"{words}\n{SAVE}")
    lines = build_frame(view, ColorDepth.NONE, 80, 30).text()
    assert [line.strip() for line in lines if "cannot read" in line] == [words]  # the path, last, left off
    wide = build_frame(view, ColorDepth.NONE, 160, 30).text()
    assert [line.strip() for line in wide if "cannot read" in line] == [f"{words} {SAVE}"]


# -- every message the source can say -------------------------------------------


def test_every_message_in_the_source_fits_80_columns_with_realistic_paths() -> None:
    found = list(_said_strings())
    assert len(found) >= 35, found  # the scan finds them (41 when this was written)
    for where, node in found:
        text, paths = _rendered(where, node)
        _fits(warning_text(text, NOTICE_WIDTH), paths)


# -- messages made to happen, as printed ---------------------------------------------


@pytest.fixture
def data_folder() -> Iterator[Path]:
    """A data folder whose path is as long as a real one (``/tmp/...`` here,
    ``/home/<user>/.local/share/ansi2048`` there), not pytest's long tmp_path."""
    top = Path(tempfile.mkdtemp(prefix="n2048"))
    folder = top / ".local" / "share" / "ansi2048"
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _printed(result_stderr: bytes, count: int) -> str:
    text = result_stderr.decode()
    assert len(messages(text)) == count, text
    return text


@pytest.mark.skipif(UNDER_WINE, reason="Wine: msvcrt.locking of a held lock fails with errno 0, not EACCES")
def test_a_second_game_on_the_board_is_said_within_80_columns(data_folder: Path) -> None:
    from ansi2048.storage.data_dir import BoardStore

    env = {"ANSI2048_DATA_DIR": str(data_folder)}
    said: List[str] = []
    first = BoardStore(env, 4, 4, 2048, said.append)
    second = BoardStore(env, 4, 4, 2048, said.append)
    try:
        assert len(said) == 1 and "another ansi2048" in said[0]
        _fits(warning_text(said[0], NOTICE_WIDTH), [])
    finally:
        first.close()
        second.close()


def test_what_the_data_folder_holds_badly_is_said_within_80_columns(data_folder: Path) -> None:
    from ansi2048.storage.data_dir import BoardStore

    env = {"ANSI2048_DATA_DIR": str(data_folder)}
    save = data_folder / "game-4x4-2048.keys"
    save.write_bytes(b"not a recording at all\n")
    (data_folder / "best.json").write_text("{broken", encoding="utf-8")
    said: List[str] = []
    store = BoardStore(env, 4, 4, 2048, said.append)
    try:
        assert store.resume() is None
        store.best()
        said += store.drain_warnings()
    finally:
        store.close()
    assert len(said) == 2, said
    for message in said:
        printed = warning_text(message, NOTICE_WIDTH)
        _fits(printed, _whole_paths(printed, data_folder))
        assert str(data_folder) not in printed.splitlines()[0], printed  # the path below the words
    blocked = {"ANSI2048_DATA_DIR": str(data_folder / "best.json.x" / "sub")}
    (data_folder / "best.json.x").write_text("a file where a folder should be", encoding="utf-8")
    said = []
    BoardStore(blocked, 4, 4, 2048, said.append).close()
    assert len(said) == 1
    printed = warning_text(said[0], NOTICE_WIDTH)
    _fits(printed, _whole_paths(printed, data_folder))


def _whole_paths(printed: str, folder: Path) -> List[str]:
    """The lines of ``printed`` that are a path in ``folder`` and nothing
    else: a path may be longer than a line (a Windows user's temporary
    folder is), and is then printed whole, on its own."""
    return [
        line
        for line in printed.splitlines()
        if line.startswith(str(folder)) and " " not in line[len(str(folder)) :]  # a path, no words after it
    ]


def _history_and_config_warnings(data_folder: Path) -> Tuple[Dict[str, str], Path, Path]:
    """An environment in which ``--stats`` warns twice, naming a path each
    time: a history that is a folder, a config file that is not UTF-8."""
    (data_folder / "history.jsonl").mkdir()
    config = data_folder.parent.parent.parent / ".config" / "ansi2048" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(b"theme = \xff\n")
    env: Dict[str, str] = {"ANSI2048_DATA_DIR": str(data_folder), "ANSI2048_CONFIG": str(config)}
    return env, config, data_folder / "history.jsonl"


def test_into_a_pipe_each_warning_is_one_line_its_path_inline(data_folder: Path) -> None:
    """A log collector or ``grep`` sees a diagnostic whole (issue 40, item 1):
    not wrapped at 80 columns, the path in parentheses after the words."""
    env, config, history = _history_and_config_warnings(data_folder)
    result = run_cli(["--stats"], env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 2 and all(line.startswith("ansi2048: warning: ") for line in lines), lines
    assert lines[0].endswith(f" ({config})") and lines[1].endswith(f" ({history})"), lines
    assert all(len(line) <= NOTICE_WIDTH for line in result.stdout.decode().splitlines())


def test_a_warning_without_a_path_into_a_pipe_is_its_words_alone() -> None:
    assert warning_text("recording stopped (No space left on device)", None) == (
        "ansi2048: warning: recording stopped (No space left on device)\n"
    )
    words = "x " * 100
    assert warning_text(f"{words}\n/a/b\n/c", None) == f"ansi2048: warning: {words} (/a/b, /c)\n"


@pytest.mark.posix("a pty")
def test_on_a_terminal_warnings_wrap_to_its_width_each_path_alone(data_folder: Path) -> None:
    """Standard error a terminal 50 columns wide: the words wrap within 49
    (its last column free), each path on a line of its own."""
    import fcntl
    import os
    import struct
    import subprocess
    import sys
    import termios

    from .conftest import child_env

    env, config, history = _history_and_config_warnings(data_folder)
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ansi2048", "--stats"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=terminal,
            env=child_env(env),
            timeout=60,
            check=False,
        )
        os.close(terminal)
        printed = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the terminal's other side closed, all read
                break
            if not chunk:
                break
            printed += chunk
    finally:
        os.close(controller)
    assert result.returncode == 0
    lines = printed.decode().replace("\r\n", "\n").splitlines()
    assert len(lines) > 4 and all(
        len(line) <= 49 for line in lines if line.strip() not in (str(config), str(history))
    ), lines
    stripped = [line.strip() for line in lines]
    assert str(config) in stripped and str(history) in stripped, lines
