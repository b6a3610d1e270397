"""Output the game cannot control (issue 20): a ``--record`` or ``--cast``
target that is a pipe, a FIFO, ``/dev/stdout`` or a reader that leaves early
never stalls the game (that output stops, with one warning, and play goes
on); standard output full or closed is one line on stderr and exit 1, in
every mode. The cases are generated: targets x writers x modes."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

from ansi2048.storage.files import NotOurs, OutputSink, open_output

from .conftest import game_env, symlink_or_skip
from .screen import FRAME_END_PATTERN

WRITERS = {"--record": "recording stopped", "--cast": "cast stopped"}
# Enough keys for each writer to write well over a pipe's 64 KiB: a byte a
# key for the recording, a frame a key for the cast.
KEYS = {"--record": b"wasd" * 30_000, "--cast": b"wasd" * 1000}


def run_game(
    args: List[str], keys: bytes, tmp: Path, stdout: Optional[int] = None, timeout: float = 60
) -> Tuple[int, bytes, List[str]]:
    """The game with ``keys`` piped in: (status, stdout, stderr lines); a
    hang fails the test instead of hanging the suite."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ansi2048", *args],
            input=keys,
            stdout=subprocess.PIPE if stdout is None else stdout,
            stderr=subprocess.PIPE,
            env=game_env(tmp / "data"),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"ansi2048 {' '.join(args)} hung")
    return done.returncode, done.stdout or b"", done.stderr.decode().splitlines()


# -- readers that do not keep up ------------------------------------------------------
# Each starts a process reading the FIFO at ``path`` (or not reading it), and is
# stopped after the test.


def _stalled(path: Path) -> subprocess.Popen[bytes]:
    # Opens the FIFO and never reads: the pipe fills after 64 KiB.
    return subprocess.Popen(["sh", "-c", f'exec 3<"{path}"; exec sleep 60'])


def _leaves_early(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sh", "-c", f'head -c 200 <"{path}" >/dev/null'])


def _leaves_at_once(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sh", "-c", f'head -c 1 <"{path}" >/dev/null'])


READERS = {"stalled": _stalled, "leaves after 200 bytes": _leaves_early, "leaves after 1 byte": _leaves_at_once}


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "out.fifo"
    os.mkfifo(path)
    return path


def _wait_for_reader(path: Path) -> int:
    """Wait until the reader has the FIFO open (the game refuses a FIFO nobody
    reads, tested below); returns a descriptor writing to it, to be closed
    after the game: closing it before would end a reader's input."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@pytest.fixture
def reader_for() -> Iterator[List[subprocess.Popen[bytes]]]:
    started: List[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


@pytest.mark.posix("FIFOs")
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_output_whose_reader_falls_behind_or_leaves_stops_with_one_warning(
    tmp_path: Path, fifo: Path, reader_for: List[subprocess.Popen[bytes]], writer: str, reader: str
) -> None:
    reader_for.append(READERS[reader](fifo))
    ours = _wait_for_reader(fifo)
    try:
        status, out, err = run_game([writer, str(fifo), "--seed", "1"], KEYS[writer], tmp_path)
    finally:
        os.close(ours)
    assert status == 0, err
    assert b"game over" in out  # played to the end
    assert len(err) == 1 and WRITERS[writer] in err[0], err


@pytest.mark.posix("FIFOs")
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_fifo_nobody_reads_is_refused_at_once(tmp_path: Path, fifo: Path, writer: str) -> None:
    status, _out, err = run_game([writer, str(fifo), "--seed", "1"], b"wasd", tmp_path)
    assert status == 2
    assert len(err) == 1 and "nothing is reading it" in err[0], err


@pytest.mark.posix("/dev/fd")
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_pipe_handed_down_as_dev_fd_that_nobody_drains_never_stalls(tmp_path: Path, writer: str) -> None:
    # `ansi2048 --cast >(slow reader)`: the target is /dev/fd/N, a pipe.
    read_end, write_end = os.pipe()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ansi2048", writer, f"/dev/fd/{write_end}", "--seed", "1"],
            input=KEYS[writer],
            capture_output=True,
            env=game_env(tmp_path / "data"),
            pass_fds=(write_end,),
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
        os.close(read_end)
    assert done.returncode == 0
    err = done.stderr.decode().splitlines()
    assert len(err) == 1 and WRITERS[writer] in err[0], err


@pytest.mark.posix("/dev/stdout and head")
@pytest.mark.parametrize("mode", [["--seed", "1"], ["--autoplay", "--seed", "1"], ["--json", "--seed", "1"]])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_output_to_dev_stdout_read_by_head_ends_quietly(tmp_path: Path, mode: List[str], writer: str) -> None:
    # `ansi2048 --cast /dev/stdout < keys | head -c 200`: the output's reader
    # is standard output's, and its leaving is the end of the pipeline, as
    # for cat: no warning, no error, the status of a SIGPIPE death.
    head = subprocess.Popen(["head", "-c", "200"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert head.stdin is not None
    try:
        args = [writer, "/dev/stdout", *mode]
        status, _out, err = run_game(args, KEYS["--record"], tmp_path, stdout=head.stdin.fileno())
    finally:
        head.stdin.close()
        head.wait()
    assert (status, err) == (141, [])


@pytest.mark.posix("non-blocking pipes (O_NONBLOCK)")
def test_the_sink_turns_a_full_pipe_and_a_gone_reader_into_one_oserror_each() -> None:
    read_end, write_end = os.pipe()
    sink = OutputSink(write_end, "pipe", "utf-8", blocking=False)
    sink.write("x" * (1 << 20))
    with pytest.raises(OSError, match="not keeping up"):
        sink.flush()
    os.close(read_end)
    with pytest.raises(OSError, match="has gone"):
        sink.flush()
    sink.close()  # what is left is dropped; closing never waits
    sink.close()


@pytest.mark.parametrize(
    "kind", [pytest.param("fifo", marks=pytest.mark.posix("FIFOs")), "regular", "absent", "symlink to a regular file"]
)
def test_open_output_never_reads_a_pipe_and_checks_a_regular_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "out"
    target = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(path)
        keep_open = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a reader
    elif kind == "regular":
        path.write_text("my notes\n")
    elif kind == "symlink to a regular file":
        target.write_text("my notes\n")
        symlink_or_skip(path, target)
    if kind in ("regular", "symlink to a regular file"):
        with pytest.raises(NotOurs):
            open_output(str(path), lambda head: False, "ours", "utf-8")
        assert (target if kind.startswith("symlink") else path).read_text() == "my notes\n"
        return
    sink = open_output(str(path), lambda head: True, "ours", "utf-8")
    sink.write("hello\n")
    sink.flush()
    sink.close()
    if kind == "fifo":
        assert os.read(keep_open, 100) == b"hello\n"
        # Opened write-only: with the reader gone, nobody is left reading.
        os.close(keep_open)
        with pytest.raises(OSError, match="nothing is reading it"):
            open_output(str(path), lambda head: True, "ours", "utf-8")
    else:
        assert path.read_bytes() == b"hello\n"


def test_an_output_overwriting_a_longer_file_of_ours_keeps_none_of_its_tail(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("ours: a long recording from before\n" + "wasd" * 1000)
    sink = open_output(str(path), lambda head: head.startswith(b"ours"), "ours", "utf-8")
    sink.write("ours: short\n")
    sink.close()
    assert path.read_text() == "ours: short\n"


# -- standard output full or closed, in every mode ----------------------------------

MODES = {
    "--stats": (["--stats"], b""),
    "--stats --json": (["--stats", "--json"], b""),
    "--autoplay": (["--autoplay", "--size", "2x3", "--seed", "3"], b""),
    "--autoplay --json": (["--autoplay", "--json", "--size", "2x3", "--seed", "3"], b""),
    "piped": (["--seed", "1"], b"wasd" * 100),
    "--json": (["--json", "--seed", "1"], b"wasd" * 100),
    "--replay-best": (["--replay-best", "1", "--size", "2", "--goal", "8"], b""),
}


def _closed_pipe() -> int:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has left before the first byte
    return write_end


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("/dev/full", marks=pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")),
        "a closed pipe",
    ],
)
@pytest.mark.parametrize("mode", sorted(MODES))
def test_standard_output_full_is_one_line_and_exit_1_and_its_reader_gone_is_quiet(
    tmp_path: Path, mode: str, target: str
) -> None:
    args, keys = MODES[mode]
    if mode == "--replay-best":  # a finished 2x2 game in the history to replay
        data = tmp_path / "data"
        data.mkdir()
        (data / "history.jsonl").write_text(
            '{"v": 1, "date": "2026-11-22T12:00:00Z", "size": "2x2", "goal": 8, "seed": 1, "score": 4, "moves": 1,'
            ' "biggest": 4, "won": false, "over": false, "undo": false, "ai": false, "daily": null, "keys": "wasd"}\n'
        )
    fd = os.open("/dev/full", os.O_WRONLY) if target == "/dev/full" else _closed_pipe()
    try:
        status, _out, err = run_game(args, keys, tmp_path, stdout=fd)
    finally:
        os.close(fd)
    if target == "a closed pipe":  # the end of a pipeline: quiet, as cat ends (141 a SIGPIPE death; 1 on Windows)
        assert (status, err) == (1 if sys.platform == "win32" else 141, [])
    else:
        assert status == 1, err
        assert err == ["ansi2048: error: cannot write standard output: No space left on device"], err


# -- the keyboard game ------------------------------------------------------------------


@pytest.mark.posix("a pty and FIFOs")
@pytest.mark.parametrize("ending", ["q", "SIGTERM"])
def test_the_keyboard_game_with_a_cast_nobody_reads_still_quits_and_restores_the_terminal(
    tmp_path: Path, fifo: Path, reader_for: List[subprocess.Popen[bytes]], ending: str
) -> None:
    import signal

    import pexpect

    from .ptys import spawn

    reader_for.append(_stalled(fifo))
    ours = _wait_for_reader(fifo)
    before, after = tmp_path / "stty.before", tmp_path / "stty.after"
    script = f'stty -g > "{before}"; "$@"; echo "EXIT=$?"; stty -g > "{after}"; echo DONE'
    child = spawn(
        "/bin/sh",
        ["-c", script, "sh", sys.executable, "-m", "ansi2048", "--cast", str(fifo), "--new", "--seed", "1"],
        env=game_env(tmp_path / "data"),
        dimensions=(30, 80),
        timeout=30,
    )
    game = 0
    try:
        child.delaybeforesend = None
        child.expect(FRAME_END_PATTERN)
        game = int(Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split()[0])
        stopped = False
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the cast has filled the FIFO's 64 KiB
            child.send("wasdu")
            if child.expect([FRAME_END_PATTERN, "cast stopped", pexpect.TIMEOUT], timeout=1) == 1:
                stopped = True
                break
        assert stopped, "the cast never stopped"
        child.send("d")  # the game goes on
        child.expect(FRAME_END_PATTERN)
        if ending == "q":
            child.send("q")
        else:
            os.kill(game, signal.SIGTERM)
        child.expect("DONE")
        status = int(child.before.rsplit(b"EXIT=", 1)[1].split()[0])
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        if game:  # a game stuck on the FIFO (the bug) must not outlive the test
            with suppress(ProcessLookupError):
                os.kill(game, signal.SIGKILL)
        os.close(ours)
    assert status == (0 if ending == "q" else 128 + signal.SIGTERM)
    assert before.read_text() == after.read_text() != ""


@pytest.mark.parametrize("kind", ["directory", "looping link", "the null device", "dangling link"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_output_target_of_any_kind_is_written_or_refused_in_one_line(tmp_path: Path, writer: str, kind: str) -> None:
    target = tmp_path / "target"
    if kind == "directory":
        target.mkdir()
    elif kind == "looping link":
        symlink_or_skip(target, target.name)
    elif kind == "dangling link":
        symlink_or_skip(target, tmp_path / "made")  # the user named it: made, as a shell's > would
    path = os.devnull if kind == "the null device" else str(target)  # /dev/null, or Windows' nul
    status, out, err = run_game([writer, path, "--seed", "1"], b"wasd" * 10, tmp_path)
    if kind in ("directory", "looping link"):
        assert status == 2 and len(err) == 1 and f"argument {writer}" in err[0], err
    else:
        assert status == 0 and err == [] and b"score" in out
    if kind == "dangling link":
        assert (tmp_path / "made").read_bytes()
