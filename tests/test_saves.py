"""Your games: --seed over a saved game, the best score through kills, and a
data directory holding anything at all (stray bytes, full disks, FIFOs,
symlinks, huge saves). Issue 8, items 6 and 8-13."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import tracemalloc
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Iterator, List, Optional, Sequence, Tuple

import pytest

from ansi2048 import Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Session
from ansi2048.options.context import Context, Options
from ansi2048.play.keyboard import ResumeProgress, play_terminal
from ansi2048.play.piped import play_piped
from ansi2048.records.recording import BodyDecoder, Reseed, replay
from ansi2048.storage.data_dir import BoardStore, DataDir
from ansi2048.storage.save_file import SaveFile
from ansi2048.terminal.console import Console, ScreenHooks

from .conftest import UNDER_WINE, symlink_or_skip

HEADER = "# ansi2048 version=0.1.0 seed={seed} size={rows}x{cols} goal=2048\n"


def env_for(path: Path) -> dict[str, str]:
    return {"ANSI2048_DATA_DIR": str(path), "NO_COLOR": "1"}


def write_save(directory: Path, seed: int, body: bytes, rows: int = 4, cols: int = 4) -> Path:
    path = directory / f"game-{rows}x{cols}-2048.keys"
    path.write_bytes(HEADER.format(seed=seed, rows=rows, cols=cols).encode() + body)
    return path


def expected(seed: int, keys: bytes, rows: int = 4, cols: int = 4) -> Session:
    session = Session(Game(rows, cols, 2048, seed))
    replay(session, keys)
    return session


def play(
    directory: Path,
    batches: Sequence[bytes],
    options: Optional[Options] = None,
    on_read: Optional[Callable[[], None]] = None,
) -> List[str]:
    """Play ``batches`` of keys in-process on a fake console, then quit; the
    warnings. ``on_read`` runs before each read: the moment a kill could hit."""
    pending = list(batches)
    warnings: List[str] = []

    def read_actions(decoder: Any) -> List[Action]:
        if on_read is not None:
            on_read()
        return decoder.feed(pending.pop(0) if pending else b"q")  # type: ignore[no-any-return]

    @contextmanager
    def open_console(stdin: IO[Any], stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
        yield Console(read_actions, lambda text: None, lambda: (100, 40), False)

    # The clock never moves: a once-a-second best writer never gets to write.
    stdout = io.StringIO()
    ctx = Context(
        options or Options(),
        io.StringIO(),
        stdout,
        env_for(directory),
        warnings.append,
        lambda: 1234,
        clock=lambda: 0.0,
    )
    assert play_terminal(ctx, open_console=open_console) == 0
    return warnings


def resume(directory: Path, rows: int = 4, cols: int = 4) -> Tuple[Optional[Game], List[str], int]:
    """(the game the next start resumes, its warnings, the best it shows)."""
    warnings: List[str] = []
    keeper = BoardStore(env_for(directory), rows, cols, 2048, warnings.append)
    try:
        resumed = keeper.resume()
        return (resumed.game if resumed else None), warnings + keeper.drain_warnings(), keeper.best()
    finally:
        keeper.close()


def state(game: Game) -> Tuple[object, ...]:
    return (game.cells, game.score, game.moves, game.rng_state, game.seed)


# -- 6: --seed over an unfinished game ----------------------------------------


def test_seed_over_a_saved_game_is_an_undoable_restart_with_no_stray_file(tmp_path: Path) -> None:
    old = b"wasdwasdww"
    save = write_save(tmp_path, 3, old)
    warnings = play(tmp_path, [b"wa"], Options(seed=77))
    assert warnings == []
    left = sorted(p.name for p in tmp_path.iterdir() if ".keys" in p.name)
    if sys.platform == "win32":  # Windows cannot remove a lock file that is open: it stays, empty
        left.remove(save.name + ".lock")
    assert left == [save.name]  # and no lock file left on POSIX
    new = expected(77, b"wa").game
    game, _, _ = resume(tmp_path)
    assert game is not None and state(game) == state(new)
    # `ansi2048 < save` replays the same game
    with open(save, "rb") as stdin:
        out = io.StringIO()
        ctx = Context(Options(json=True), stdin, out, {}, print, lambda: 1)
        play_piped(ctx)
    last = json.loads(out.getvalue().splitlines()[-1])
    assert last["board"] == [list(row) for row in new.board] and last["score"] == new.score


def test_u_after_seed_brings_the_old_game_back_and_the_save_says_so(tmp_path: Path) -> None:
    old = b"wasdwasdww"
    write_save(tmp_path, 3, old)
    play(tmp_path, [b"wa", b"uu", b"u"], Options(seed=77))
    game, _, _ = resume(tmp_path)  # as after a kill -9 right after the last u
    assert game is not None and state(game) == state(expected(3, old).game)


def test_seed_over_an_empty_saved_game_leaves_no_file(tmp_path: Path) -> None:
    play(tmp_path, [b""])
    play(tmp_path, [b""], Options(seed=5))
    play(tmp_path, [b""], Options(seed=6))
    assert not [p for p in tmp_path.iterdir() if "unfinished" in p.name]
    game, _, _ = resume(tmp_path)
    assert game is not None and game.seed == 6


# -- 8: the best score survives every kill ------------------------------------


def _finished_2x2() -> bytes:
    session = Session(Game(2, 2, 2048, 0))
    keys = bytearray()
    while not session.game.over:
        for action in (Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT):
            if session.apply(action).moved:
                keys += action.value.encode()
    assert session.best > 0
    return bytes(keys)


def test_a_best_reached_by_a_game_killed_on_its_game_over_screen_is_kept(tmp_path: Path) -> None:
    keys = _finished_2x2()
    write_save(tmp_path, 0, keys, 2, 2)
    game, _, best = resume(tmp_path, 2, 2)
    assert game is None  # a finished game is not resumed...
    assert best == expected(0, keys, 2, 2).best  # ...but its best is kept


def test_the_best_is_on_disk_while_the_game_over_screen_waits(tmp_path: Path) -> None:
    keys = _finished_2x2()
    shown = expected(0, keys, 2, 2).best
    on_disk: List[int] = []

    def at_read() -> None:  # a kill -9 here must not lose what the screen shows
        best = tmp_path / "best.json"
        on_disk.append(json.loads(best.read_text(encoding="utf-8")).get("2x2-2048", 0) if best.exists() else 0)

    play(tmp_path, [keys], Options(rows=2, cols=2, goal=2048, seed=0), on_read=at_read)
    assert on_disk[-1] == shown


@pytest.mark.skipif(UNDER_WINE, reason="Wine: msvcrt.locking of a held lock fails with errno 0, not EACCES")
def test_a_game_that_is_not_saved_writes_its_best_at_once(tmp_path: Path) -> None:
    holder = BoardStore(env_for(tmp_path), 4, 4, 2048, print)  # another game has the save
    on_disk: List[int] = []

    def at_read() -> None:
        best = tmp_path / "best.json"
        on_disk.append(json.loads(best.read_text(encoding="utf-8")).get("4x4-2048", 0) if best.exists() else 0)

    try:
        play(tmp_path, [b"wasd" * 5, b""], Options(seed=9), on_read=at_read)
    finally:
        holder.close()
    session = Session(Game(seed=9))
    replay(session, b"wasd" * 5)
    assert session.best > 0 and on_disk[-1] == session.best


# -- 9: stray bytes in a save -------------------------------------------------


@pytest.mark.parametrize("stray", [b"#", b"\x1b[", b"\x1bO", b"\n#", b"# x\n"])
def test_a_stray_byte_does_not_hide_the_moves_after_it(tmp_path: Path, stray: bytes) -> None:
    write_save(tmp_path, 5, b"wasd" + stray + b"wwdd")
    game, warnings, _ = resume(tmp_path)
    want = expected(5, b"wasdwwdd").game
    assert game is not None and state(game) == state(want) and warnings == []


def test_a_restart_line_cut_short_does_not_swallow_later_keys(tmp_path: Path) -> None:
    save = write_save(tmp_path, 5, b"wasd\n# ansi2")  # the disk filled mid-write
    play(tmp_path, [b"wwdd"])
    assert b"wwdd" in save.read_bytes()
    game, _, _ = resume(tmp_path)
    session = expected(5, b"wasd")
    for key in "wwdd":
        session.apply(Action(key))
    assert game is not None and state(game) == state(session.game)


# -- 10: a full disk ----------------------------------------------------------


def test_a_save_with_a_restart_resumes_read_only_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = b"wasdwasd" + b"r" + b"wdsa"
    save = write_save(tmp_path, 5, keys)
    before = save.read_bytes()
    (tmp_path / "best.json").write_text('{"4x4-2048": 100000}', encoding="utf-8")  # nothing to write there

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("ansi2048.storage.save_file.atomic_write", full)
    warnings: List[str] = []
    keeper = BoardStore(env_for(tmp_path), 4, 4, 2048, warnings.append)
    resumed = keeper.resume()
    assert resumed is not None and state(resumed.game) == state(expected(5, keys).game)
    keeper.append(Action.UP)
    keeper.close()
    assert len(warnings) == 1 and "No space left" in warnings[0] and "not saving" in warnings[0]
    assert save.read_bytes() == before


# -- 11: FIFOs and deep JSON --------------------------------------------------

_RESUME_IN_CHILD = """
import sys
from ansi2048.storage.data_dir import BoardStore
warnings = []
keeper = BoardStore({"ANSI2048_DATA_DIR": sys.argv[1]}, 4, 4, 2048, warnings.append)
resumed = keeper.resume()
best = keeper.best()
warnings += keeper.drain_warnings()
keeper.close()
print(resumed is None, best, len(warnings))
"""


@pytest.mark.posix("FIFOs")
@pytest.mark.parametrize("name", ["game-4x4-2048.keys", "best.json"])
def test_a_fifo_in_the_data_directory_is_set_aside(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    # In a child process: today's code blocks forever opening the FIFO, and a
    # hung test must fail, not hang the suite (the timeout is only that guard).
    out = subprocess.run(
        [sys.executable, "-c", _RESUME_IN_CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "0", "1"]
    assert not (tmp_path / name).exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(name + ".bad-")]


def test_a_best_file_nested_too_deep_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / "best.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    store = DataDir(str(tmp_path))
    assert store.best("4x4-2048") == 0
    assert len(store.warnings) == 1 and "best scores" in store.warnings[0]
    assert [p for p in tmp_path.iterdir() if p.name.startswith("best.json.bad-")]
    assert store.record_best("4x4-2048", 8) == 8


# -- 12: symlinks -------------------------------------------------------------


def test_a_save_that_is_a_symlink_is_set_aside_and_its_target_untouched(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    target = write_save(outside, 5, b"wasd")
    before = target.read_bytes()
    symlink_or_skip(data / target.name, target)
    warnings = play(data, [b"wasdwasd"])
    assert target.read_bytes() == before
    assert len(warnings) == 1 and "symbolic link" in warnings[0]
    assert not (data / target.name).is_symlink()
    kept = [p for p in data.iterdir() if ".bad-" in p.name]
    assert len(kept) == 1 and kept[0].is_symlink()


@pytest.mark.parametrize("name", ["best.lock", "game-4x4-2048.keys.lock", "best.json"])
def test_a_dangling_symlink_never_makes_a_file_outside(tmp_path: Path, name: str) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    symlink_or_skip(data / name, outside / "victim")
    play(data, [b"wasdwasd"], Options(seed=4))
    assert list(outside.iterdir()) == []
    game, _, best = resume(data)
    assert game is not None and best == expected(4, b"wasdwasd").best


# -- 13: a huge save ----------------------------------------------------------


def test_resuming_streams_in_memory_that_does_not_grow_with_the_save(tmp_path: Path) -> None:
    # 300 kB: the loader that read the whole file peaked at 5.8 MB on it (its
    # list of keys alone 2.4 MB); streaming stays near 1.6 MB at any size.
    keys = b"wasd" * 75_000
    save = write_save(tmp_path, 1, keys)
    calls: List[Tuple[int, int]] = []
    tracemalloc.start()
    try:
        loaded = SaveFile(str(save), 4, 4, 2048).load(lambda done, total: calls.append((done, total)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded is not None and state(loaded.game) == state(expected(1, keys).game)
    assert peak < 3_000_000  # a chunk's worth and the bounded undo history
    size = save.stat().st_size
    assert len(calls) > 1 and calls[-1] == (size, size)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_resume_progress_is_shown_only_after_a_second() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = ResumeProgress(out, lambda: now[0])
    progress(10, 100)
    now[0] = 0.9
    progress(20, 100)
    assert out.getvalue() == ""
    now[0] = 1.5
    progress(37, 100)
    progress(37, 100)
    assert out.getvalue().count("37%") == 1
    progress.end()
    assert out.getvalue().endswith("\x1b[K")


@pytest.mark.parametrize("saved", [True, False])
def test_a_restart_line_decodes_the_same_however_it_is_split(saved: bool) -> None:
    body = b"wa\n# ansi2048 seed=77\nsd#x\n# a comment\nwu\n# ansi2048 seed=5"
    whole = BodyDecoder(saved=saved)
    want = whole.feed(body) + whole.finish()
    assert Reseed(77) in want and Reseed(5) not in want  # cut short: no restart
    for size in (1, 2, 3, 7):
        decoder = BodyDecoder(saved=saved)
        got: List[Any] = []
        for at in range(0, len(body), size):
            got += decoder.feed(body[at : at + size])
        assert got + decoder.finish() == want
