"""Saved games and best scores: atomic, resumable, never lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

from ansi2048 import Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Session
from ansi2048.records.recording import replay
from ansi2048.storage import data_dir as storage
from ansi2048.storage.data_dir import BoardStore, DataDir, lock_path
from ansi2048.storage.save_file import SaveFile


def play(save: SaveFile, game: Game, keys: str) -> None:
    """Play ``keys`` on ``game`` and append the ones that changed the board,
    as the interactive loop does."""
    session = Session(game)
    for key in keys:
        action = Action(key)
        if session.apply(action).moved:
            save.append(action)


def test_a_saved_game_resumes_exactly_with_the_same_future(tmp_path: Path) -> None:
    store = DataDir(str(tmp_path))
    save = store.save_file(4, 4, 2048)
    game = Game(seed=21)
    save.begin(game)
    play(save, game, "wasdwwaassddurwd")
    save.close()
    resumed = store.save_file(4, 4, 2048).load()
    assert resumed is not None
    assert resumed.game.board == game.board
    assert (resumed.game.score, resumed.game.moves, resumed.game.won, resumed.game.seed) == (
        game.score,
        game.moves,
        game.won,
        game.seed,
    )
    # the same future spawns as if it had never stopped, and undo still works
    for direction in "left", "up", "right", "down":
        assert resumed.game.move(direction) == game.move(direction)
        assert resumed.game.board == game.board
    assert resumed.game.undo() and game.undo()
    assert resumed.game.board == game.board


def test_a_resumed_game_keeps_saving_where_it_stopped(tmp_path: Path) -> None:
    env = {"ANSI2048_DATA_DIR": str(tmp_path)}
    first = BoardStore(env, 4, 4, 2048, print)
    game = Game(seed=8)
    first.begin(game)
    session = Session(game)
    for key in "wasd":
        if session.apply(Action(key)).moved:
            first.append(Action(key))
    first.close()
    second = BoardStore(env, 4, 4, 2048, print)
    resumed = second.resume()
    assert resumed is not None and resumed.game.board == game.board
    for key in "wwaa":
        moved = Session(resumed.game).apply(Action(key)).moved
        assert moved == session.apply(Action(key)).moved
        if moved:
            second.append(Action(key))
    second.close()
    third = BoardStore(env, 4, 4, 2048, print).resume()
    assert third is not None and third.game.board == game.board and third.game.moves == game.moves


def test_no_save_means_nothing_to_resume(tmp_path: Path) -> None:
    assert DataDir(str(tmp_path)).save_file(4, 4, 2048).load() is None


def test_a_finished_game_is_not_resumed(tmp_path: Path) -> None:
    store = DataDir(str(tmp_path))
    save = store.save_file(2, 2, 2048)
    game = Game(2, 2, 2048, seed=3)
    save.begin(game)
    session = Session(game)
    while not game.over:
        for action in (Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT):
            if session.apply(action).moved:
                save.append(action)
    save.close()
    loaded = save.load()
    assert loaded is not None and loaded.game.over
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 2, 2, 2048, print)
    assert keeper.resume() is None
    keeper.close()


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\xff garbage \x89PNG",
        b"",
        b"# ansi2048 version=0.1.0 seed=x size=4x4 goal=2048\nwasd",
        b"# ansi2048 version=0.1.0 seed=5 size=5x5 goal=2048\nwasd",
        b"# ansi2048 version=99.0.0 seed=5 size=4x4 goal=2048\nwasd",
        b"# ansi2048 version=0.1.0 seed=5 size=4x4 goal=2048",  # truncated before the newline
        b'{"board": [[2, 2]], "score": "many"}',
    ],
)
def test_a_corrupt_save_is_kept_aside_and_a_fresh_game_starts(tmp_path: Path, content: bytes) -> None:
    store = DataDir(str(tmp_path))
    save = store.save_file(4, 4, 2048)
    Path(save.path).write_bytes(content)
    warnings: List[str] = []
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, warnings.append)
    assert keeper.resume() is None
    keeper.close()
    assert len(warnings) == 1 and "saved game" in warnings[0]
    kept = [p for p in tmp_path.iterdir() if ".bad-" in p.name]
    assert len(kept) == 1 and kept[0].read_bytes() == content
    assert not Path(save.path).exists()


def test_a_truncated_body_is_just_a_shorter_game(tmp_path: Path) -> None:
    store = DataDir(str(tmp_path))
    save = store.save_file(4, 4, 2048)
    Path(save.path).write_bytes(b"# ansi2048 version=0.1.0 seed=5 size=4x4 goal=2048\nwasdw")
    resumed = save.load()
    expected = Session(Game(seed=5))
    replay(expected, b"wasdw")
    assert resumed is not None and resumed.game.board == expected.game.board


def test_best_score_is_kept_per_board_and_never_lowered(tmp_path: Path) -> None:
    store = DataDir(str(tmp_path))
    assert store.record_best("4x4-2048", 100) == 100
    assert store.record_best("4x4-2048", 50) == 100
    assert store.record_best("5x5-2048", 30) == 30
    assert store.best("4x4-2048") == 100
    assert json.loads((tmp_path / "best.json").read_text(encoding="utf-8")) == {"4x4-2048": 100, "5x5-2048": 30}


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"4x4-2048": "high"}', '{"4x4-2048": -5}'])
def test_a_corrupt_best_file_is_kept_aside(tmp_path: Path, content: str) -> None:
    (tmp_path / "best.json").write_text(content, encoding="utf-8")
    store = DataDir(str(tmp_path))
    assert store.best("4x4-2048") == 0
    assert len(store.warnings) == 1
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("best.json.bad-")]
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == content
    assert store.record_best("4x4-2048", 8) == 8


# One writer: raises board KEY's best score through range(START, STOP, STEP),
# once the test says go (a line on stdin), so that the writers run at once
# rather than each in the others' start-up time.
_WRITER = """\
import sys
from ansi2048.storage.data_dir import DataDir
path, key, start, stop, step = sys.argv[1:]
store = DataDir(path)
sys.stdin.readline()
for score in range(int(start), int(stop), int(step)):
    store.record_best(key, score)
"""


@pytest.mark.posix("flock (Windows untried: Wine's msvcrt.locking fails this race with errno 0)")
def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    # Three processes raise two boards' bests at once (two of them the same
    # board's): each must end at the highest score written for it. Started by
    # subprocess (fork and exec in C), not as forks of this test process,
    # which runs threads (pytest-xdist's).
    spans = [("4x4-2048", (0, 3000, 3)), ("5x5-2048", (0, 2000, 2)), ("4x4-2048", (1, 2500, 5))]
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), key, *map(str, span)], stdin=subprocess.PIPE)
        for key, span in spans
    ]
    try:
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write(b"go\n")
            writer.stdin.close()
        for writer in writers:
            assert writer.wait(60) == 0
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert DataDir(str(tmp_path)).best("4x4-2048") == 2997
    assert DataDir(str(tmp_path)).best("5x5-2048") == 1998


def test_a_second_game_on_the_same_board_does_not_share_the_save(tmp_path: Path) -> None:
    env = {"ANSI2048_DATA_DIR": str(tmp_path)}
    first_warnings: List[str] = []
    second_warnings: List[str] = []
    first = BoardStore(env, 4, 4, 2048, first_warnings.append)
    second = BoardStore(env, 4, 4, 2048, second_warnings.append)
    assert first_warnings == []
    assert len(second_warnings) == 1 and "not saving this game" in second_warnings[0]
    first.close()
    second.close()


@pytest.mark.posix("removing an open lock file (Windows cannot: the lock file stays, as before)")
def test_a_game_that_lets_go_of_its_save_leaves_no_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30 item 9: an empty .lock file was left per board played."""
    env = {"ANSI2048_DATA_DIR": str(tmp_path)}
    first = BoardStore(env, 4, 4, 2048, pytest.fail)
    assert [p.name for p in tmp_path.glob("*.keys.lock")] == ["game-4x4-2048.keys.lock"]  # held
    first.close()
    assert list(tmp_path.glob("*.keys.lock")) == []
    # A game that locked the file its holder was removing, as it let go,
    # holds a lock on a removed file: no claim; it claims the file at the path.
    save = DataDir(str(tmp_path)).save_file(4, 4, 2048)
    real = storage.lock_fd
    raced: List[str] = []

    def racing(path: str, blocking: bool, warnings: List[str]) -> int:
        fd = real(path, blocking, warnings)
        if not raced:
            raced.append(path)
            os.unlink(path)  # the holder removing it, as it lets go
        return fd

    monkeypatch.setattr(storage, "lock_fd", racing)
    claimed = DataDir(str(tmp_path)).claim(save)
    assert raced and claimed is not None
    assert os.path.samestat(os.fstat(claimed), os.stat(lock_path(save)))
    DataDir.release(claimed, lock_path(save))
    assert list(tmp_path.glob("*.keys.lock")) == []


def test_a_data_dir_that_is_a_file_is_one_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    warnings: List[str] = []
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(blocker / "sub")}, 4, 4, 2048, warnings.append)
    assert keeper.resume() is None
    keeper.begin(Game(seed=1))
    keeper.append(Action.UP)
    assert keeper.record_best(10) == 10
    assert len(warnings) == 1 and "not saving this game" in warnings[0]
    assert blocker.read_text(encoding="utf-8") == "not a directory"


def _save_with(tmp_path: Path, seed: int, keys: str) -> Path:
    path = tmp_path / "game-4x4-2048.keys"
    path.write_text(f"# ansi2048 version=0.1.0 seed={seed} size=4x4 goal=2048\n{keys}", encoding="utf-8")
    return path


def _expected(seed: int, keys: str) -> Game:
    session = Session(Game(seed=seed))
    replay(session, keys.encode())
    return session.game


def test_resuming_drops_the_games_before_the_last_restart(tmp_path: Path) -> None:
    keys = "wasdwasd" * 5 + "r" + "ddssaaww" + "r" + "wdsa" * 3
    path = _save_with(tmp_path, 5, keys)
    expected = _expected(5, keys)
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, print)
    resumed = keeper.resume()
    keeper.close()
    assert resumed is not None
    assert resumed.game.board == expected.board and resumed.game.score == expected.score
    header, body = path.read_text(encoding="utf-8").split("\n", 1)
    assert body == "wdsa" * 3
    assert f"seed={expected.seed}" in header
    again = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, print).resume()
    assert again is not None and again.game.board == expected.board and again.game.rng_state == expected.rng_state


def test_a_restart_that_was_undone_is_not_dropped(tmp_path: Path) -> None:
    keys = "wasdwasd" + "r" + "u" + "wwdd"
    path = _save_with(tmp_path, 6, keys)
    expected = _expected(6, keys)
    resumed = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, print).resume()
    assert resumed is not None and resumed.game.board == expected.board
    assert path.read_text(encoding="utf-8").endswith(keys)


def test_undo_after_a_compacted_resume_stops_at_the_restart(tmp_path: Path) -> None:
    keys = "awd" + "r" + "sawd"
    path = _save_with(tmp_path, 9, keys)
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, print)
    resumed = keeper.resume()
    assert resumed is not None
    session = Session(resumed.game)
    undone = 0
    while session.apply(Action.UNDO).moved:
        keeper.append(Action.UNDO)
        undone += 1
    keeper.close()
    # back to the restart's own start, not into the game before it
    assert resumed.game.seed != 9
    assert undone == _expected(9, keys).moves
    again = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, print)
    assert (r := again.resume()) is not None and r.game.board == resumed.game.board
    again.close()
    assert "seed=9 " not in path.read_text(encoding="utf-8")


def test_a_save_that_cannot_be_appended_to_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _save_with(tmp_path, 3, "wasd")
    before = path.read_bytes()

    def refuse(self: SaveFile, end_line: bool = False) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(SaveFile, "open_for_append", refuse)
    warnings: List[str] = []
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, warnings.append)
    resumed = keeper.resume()
    assert resumed is not None  # the game is still played
    keeper.begin(Game(seed=1))  # what a caller might do next: must not overwrite
    keeper.append(Action.UP)
    keeper.close()
    assert path.read_bytes() == before
    assert len(warnings) == 1 and "not saving this game" in warnings[0]


def test_a_best_file_broken_during_play_is_reported(tmp_path: Path) -> None:
    warnings: List[str] = []
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, warnings.append)
    keeper.record_best(10)
    (tmp_path / "best.json").write_text("garbage", encoding="utf-8")
    assert keeper.record_best(20) == 20
    keeper.close()
    assert len(warnings) == 1 and "best scores" in warnings[0]
    assert any(p.name.startswith("best.json.bad-") for p in tmp_path.iterdir())


def test_two_bad_files_in_one_second_are_both_kept(tmp_path: Path) -> None:
    for content in (b"first", b"second"):
        save = DataDir(str(tmp_path)).save_file(4, 4, 2048)
        Path(save.path).write_bytes(content)
        save.quarantine()
    kept = sorted(p.read_bytes() for p in tmp_path.iterdir() if ".bad-" in p.name)
    assert kept == [b"first", b"second"]


def test_a_save_with_a_byte_order_mark_resumes(tmp_path: Path) -> None:
    path = tmp_path / "game-4x4-2048.keys"
    path.write_bytes(b"\xef\xbb\xbf# ansi2048 version=0.1.0 seed=4 size=4x4 goal=2048\nwasd")
    resumed = DataDir(str(tmp_path)).save_file(4, 4, 2048).load()
    assert resumed is not None and resumed.game.board == _expected(4, "wasd").board


def test_a_best_the_killed_game_had_not_written_is_recovered_on_resume(tmp_path: Path) -> None:
    keys = "wasdwasdwasd" + "r" + "ww"
    _save_with(tmp_path, 12, keys)
    session = Session(Game(seed=12))
    replay(session, keys.encode())
    assert session.best > session.game.score  # the best came from the game before the restart
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(tmp_path)}, 4, 4, 2048, print)
    assert keeper.resume() is not None
    assert keeper.best() == session.best
    keeper.close()


def test_best_scores_are_replaced_whole_never_rewritten_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write cut short (a full disk, a kill) must leave the old best.json
    whole: it is written to a temporary file and renamed over the old one."""
    import builtins

    store = DataDir(str(tmp_path))
    store.ensure()
    store.record_best("4x4-2048", 1000)
    before = (tmp_path / "best.json").read_bytes()
    real_open = builtins.open

    class HalfWriter:
        """A file whose first write stores half the data, then fails."""

        def __init__(self, stream: Any) -> None:
            self._stream = stream

        def write(self, data: bytes) -> int:
            self._stream.write(data[: len(data) // 2])
            self._stream.flush()
            raise OSError(28, "No space left on device")

        def __getattr__(self, name: str) -> Any:
            return getattr(self._stream, name)

        def __enter__(self) -> HalfWriter:
            return self

        def __exit__(self, *exc: object) -> None:
            self._stream.close()

    def failing_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        stream = real_open(file, mode, *args, **kwargs)
        return HalfWriter(stream) if "w" in mode and str(file).startswith(str(tmp_path)) else stream

    real_fdopen = os.fdopen

    def failing_fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        stream = real_fdopen(fd, mode, *args, **kwargs)
        return HalfWriter(stream) if "w" in mode else stream

    # Every way a file may be written: by name, or through a descriptor.
    monkeypatch.setattr(builtins, "open", failing_open)
    monkeypatch.setattr(os, "fdopen", failing_fdopen)
    with pytest.raises(OSError):
        store.record_best("4x4-2048", 2000)
    monkeypatch.undo()
    assert (tmp_path / "best.json").read_bytes() == before
    assert json.loads(before) == {"4x4-2048": 1000}
    assert sorted(p.name for p in tmp_path.iterdir() if "tmp" in p.name) == []  # no temp file left behind
