"""The server's log never blocks the server (serve/log.py): a log on a pipe
nobody reads (``ansi2048 serve 2>pipe``) drops lines, in bounded memory, and
says how many once it is read; the games go on meanwhile."""

from __future__ import annotations

import io
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import IO, Iterator, List, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (non-blocking pipes)")

from ansi2048.serve.log import ServerLog  # noqa: E402

DROPPED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ log: (\d+) lines? dropped while the log was not read")
NOON = 1_795_000_000.0


def full_pipe() -> Tuple[int, IO[str], int]:
    """A pipe whose buffer is already full (nobody reads it), its write end
    blocking as a log's is: (read end, write end as a text stream, the bytes
    filling it)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filled = 0
    try:
        while True:
            filled += os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    return read_end, open(write_end, "w", encoding="utf-8"), filled


class Reader:
    """The pipe read at last, on a thread, to its end."""

    def __init__(self, read_end: int) -> None:
        self.data = bytearray()
        self._fd = read_end
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            chunk = os.read(self._fd, 65536)
            if not chunk:
                break
            self.data += chunk
        os.close(self._fd)

    def lines(self, filled: int) -> List[str]:
        """The lines after the ``filled`` bytes that were there first."""
        return bytes(self.data[filled:]).decode().splitlines()

    def wait_for(self, text: str, timeout: float = 10) -> None:
        end = time.monotonic() + timeout
        while text.encode() not in self.data and time.monotonic() < end:
            time.sleep(0.02)

    def end(self, timeout: float = 10) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the pipe's write ends were not all closed"


def written(log: ServerLog) -> bool:
    """Whether the log's thread has ended, within 5 s (it closes its
    descriptor, then ends: a moment after the pipe's reader sees the end)."""
    end = time.monotonic() + 5
    while not log.written() and time.monotonic() < end:
        time.sleep(0.01)
    return log.written()


@pytest.fixture
def pipe() -> Iterator[Tuple[int, IO[str], int]]:
    read_end, stream, filled = full_pipe()
    yield read_end, stream, filled
    stream.close()


def test_lines_to_a_full_pipe_never_block_and_are_dropped_in_bounded_memory(pipe: Tuple[int, IO[str], int]) -> None:
    read_end, stream, filled = pipe
    log = ServerLog(stream, lambda: NOON, buffer_bytes=1000)
    peak = [0]

    def busy_server() -> None:
        for number in range(5000):
            log.line(f"line {number:04}")  # 10 bytes and a line feed
            peak[0] = max(peak[0], log._held)

    logging = threading.Thread(target=busy_server, daemon=True)
    logging.start()
    logging.join(10)
    assert not logging.is_alive(), "a log line blocked"
    assert peak[0] <= 1000  # the memory held for unwritten lines
    assert log.dropped > 4000
    reader = Reader(read_end)
    reader.wait_for("dropped while")
    log.line("after the drain")
    log.close()
    stream.close()
    reader.end()
    assert written(log)
    lines = reader.lines(filled)
    kept = [line for line in lines if line.startswith("line ")]
    assert kept == [f"line {number:04}" for number in range(len(kept))]  # the first ones, in order, whole
    said = DROPPED.fullmatch(lines[len(kept)])
    assert said is not None, lines[len(kept) :]
    assert len(kept) + int(said.group(1)) == 5000  # every line written or counted
    assert lines[len(kept) :] == [lines[len(kept)], "after the drain"]  # said once, where the gap is
    assert lines[len(kept)].startswith("2026-11-18T")  # dated as the server's other lines (NOON)


def test_the_drop_is_said_where_the_gap_is_when_lines_come_after_it(pipe: Tuple[int, IO[str], int]) -> None:
    read_end, stream, filled = pipe
    log = ServerLog(stream, lambda: NOON, buffer_bytes=100)
    for number in range(30):
        log.line(f"early {number:02}")
    reader = Reader(read_end)
    reader.wait_for("dropped while")
    for number in range(3):
        log.line(f"late {number}")
    log.close()
    stream.close()
    reader.end()
    lines = reader.lines(filled)
    early = [line for line in lines if line.startswith("early ")]
    assert 0 < len(early) < 30
    said = DROPPED.fullmatch(lines[len(early)])
    assert said is not None and len(early) + int(said.group(1)) == 30
    assert lines[len(early) + 1 :] == ["late 0", "late 1", "late 2"]


def test_close_writes_what_is_queued_and_a_log_nobody_reads_is_left_as_it_is(pipe: Tuple[int, IO[str], int]) -> None:
    read_end, stream, filled = pipe
    log = ServerLog(stream, lambda: NOON)
    log.line("queued at the stop")
    log.close()
    time.sleep(0.2)
    assert not log.written()  # nobody reads: the stop does not wait for it
    log.line("after the close")  # not written: the log is closed
    reader = Reader(read_end)
    stream.close()
    reader.end()
    assert written(log)
    assert reader.lines(filled) == ["queued at the stop"]


def test_a_log_made_non_blocking_by_another_process_waits_and_loses_nothing(pipe: Tuple[int, IO[str], int]) -> None:
    read_end, stream, filled = pipe
    os.set_blocking(stream.fileno(), False)  # as a process sharing the pipe may (the description's flag)
    log = ServerLog(stream, lambda: NOON)
    for number in range(3):
        log.line(f"line {number}")
    time.sleep(0.2)  # the thread meets a full pipe: EAGAIN, not a block
    reader = Reader(read_end)
    log.close()
    stream.close()
    reader.end()
    assert written(log)
    assert reader.lines(filled) == ["line 0", "line 1", "line 2"]


def test_a_stream_without_a_descriptor_is_written_at_once(tmp_path: Path) -> None:
    memory = io.StringIO()
    log = ServerLog(memory, lambda: NOON)
    log.line("one")
    assert memory.getvalue() == "one\n"
    log.close()
    assert log.written()
    # A file (--log FILE): through the thread, and its close does not lose the queue.
    with open(tmp_path / "serve.log", "w", encoding="utf-8") as file:
        file.write("before\n")  # what the stream held goes first
        on_file = ServerLog(file, lambda: NOON)
        for number in range(100):
            on_file.line(f"line {number}")
    on_file.close()
    assert written(on_file)
    assert (tmp_path / "serve.log").read_text().splitlines() == ["before"] + [f"line {n}" for n in range(100)]


# -- a server whose log nobody reads ----------------------------------------------

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import MemoryStore, ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

CONNECTIONS = 30


def test_a_server_whose_log_pipe_is_full_keeps_serving_and_says_what_it_dropped(
    tmp_path: Path, pipe: Tuple[int, IO[str], int]
) -> None:
    read_end, stream, filled = pipe
    reader = None
    served = ServerThread(tmp_path, MemoryStore(), log=stream, log_buffer=2048)
    try:

        async def scenario() -> None:
            # Each connection's line (about 130 bytes) goes to a log whose
            # pipe holds its 64 KiB already: 2 KiB of them fit in the queue.
            for _ in range(CONNECTIONS):
                async with await connect(served.port, client_key()) as conn:
                    chan, terminal = await open_terminal(conn, "play --no-animation")
                    await terminal.shows("Score")
                    for typed in b"adwsad":
                        shown = len(terminal.output)
                        chan.write(bytes([typed]))
                        await terminal.wait_for(lambda t, shown=shown: len(t.output) > shown)  # type: ignore[misc]
                    chan.write(b"q")
                    await terminal.closed.wait()
                    assert terminal.exit_status == 0

        run(scenario())
        reader = Reader(read_end)
        reader.wait_for("dropped while")
        served.stop()  # the stop's own lines: none, the connections are gone
    finally:
        served.stop()
        stream.close()
        if reader is None:
            reader = Reader(read_end)  # what blocked, unblocked
    reader.end()
    lines = reader.lines(filled)
    connections = [line for line in lines if line.endswith(" 7 keys, play: quit")]
    admitted = [line for line in lines if line.endswith(" connected")]
    said = [DROPPED.fullmatch(line) for line in lines if " log: " in line]
    assert len(said) == 1 and said[0] is not None, lines
    assert 0 < len(connections) < CONNECTIONS, lines
    assert len(admitted) + len(connections) + int(said[0].group(1)) == 2 * CONNECTIONS  # two lines a connection


# -- SIGHUP: the log file reopened (logrotate) -----------------------------------


def test_reopen_sends_the_next_lines_to_the_new_file_and_loses_none(tmp_path: Path) -> None:
    first, second = tmp_path / "serve.log", tmp_path / "serve.log.new"
    with open(first, "a", encoding="utf-8") as stream:
        log = ServerLog(stream, lambda: NOON)
        log.line("before")
    with open(second, "a", encoding="utf-8") as stream:
        log.reopen(stream)  # the caller closes it at once: the log holds its own descriptor
    for number in range(50):
        log.line(f"after {number}")
    log.close()
    assert written(log)
    old, new = first.read_text().splitlines(), second.read_text().splitlines()
    assert old + new == ["before"] + [f"after {n}" for n in range(50)]  # in order, none twice, none lost
    # Every line from the reopen on is in the new file (one queued before it
    # but not yet written goes there too: the log never writes to a file it
    # was told to leave).
    assert new[-50:] == [f"after {n}" for n in range(50)]


def _wait_for_line(path: Path, text: str, timeout: float = 30) -> List[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = path.read_text().splitlines() if path.exists() else []
        if any(text in line for line in lines):
            return lines
        time.sleep(0.05)
    raise AssertionError(f"no line with {text!r} in {path}: {lines}")


def test_sighup_reopens_the_log_file_and_the_game_goes_on(tmp_path: Path) -> None:
    import signal

    import pexpect

    from .conftest import child_env
    from .serve_support import SCREEN_WAIT, ServeProcess, make_key, ssh_command

    logged, rotated = tmp_path / "serve.log", tmp_path / "serve.log.1"
    key = make_key(tmp_path / "key")
    server = ServeProcess(tmp_path / "data", options=["--log", str(logged)])
    try:
        started = _wait_for_line(logged, "listening on")
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ listening on 127\.0\.0\.1:\d+ \(host key SHA256:\S+\)", started[0]
        )
        command = ssh_command(server.port, key, "play", "--no-animation")
        player = pexpect.spawn(
            command[0],
            command[1:],
            env=child_env({"TERM": "xterm-256color"}),
            dimensions=(24, 80),
            timeout=SCREEN_WAIT,
        )
        player.expect("Score")
        logged.rename(rotated)  # what logrotate does, before it sends SIGHUP
        server.process.send_signal(signal.SIGHUP)
        reopened = _wait_for_line(logged, "SIGHUP: the log reopened")
        assert server.process.poll() is None  # HUP no longer ends the server
        player.send("q")  # the player connected across the HUP plays on, and leaves as usual
        player.expect(pexpect.EOF)
        player.close()
        assert player.exitstatus == 0
        after = _wait_for_line(logged, "play: quit")
        assert server.kill(signal.SIGTERM) == 0
        after = _wait_for_line(logged, "stopping:")
    finally:
        server.kill()
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ", line) for line in after), after  # every line dated
    assert [line for line in reopened if "listening on" in line] == []  # the new file starts at the reopen
    assert "listening on" in rotated.read_text() and "play: quit" not in rotated.read_text()


def test_sighup_without_a_log_file_is_harmless(tmp_path: Path) -> None:
    import signal

    from .serve_support import ServeProcess

    server = ServeProcess(tmp_path / "data")
    try:
        server.process.send_signal(signal.SIGHUP)
        assert server.process.stderr is not None
        said = server.process.stderr.readline().decode()
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ SIGHUP: the log is standard error, nothing to reopen\n", said
        )
        assert server.process.poll() is None
    finally:
        assert server.kill(signal.SIGTERM) == 0


# -- the libraries' messages --------------------------------------------------------


def test_a_librarys_message_is_one_printable_line() -> None:
    import logging

    from ansi2048.serve.log import LibraryMessages

    said: List[str] = []
    handler = LibraryMessages(lambda line, *event, **fields: said.append(line))
    try:
        raise ConnectionResetError("peer\nreset")
    except ConnectionResetError as error:
        record = logging.LogRecord(
            "asyncio", logging.ERROR, "x.py", 1, "Task %s failed\n  at step \x1b[2J%d", ("t1", 2), None
        )
        record.exc_info = (type(error), error, error.__traceback__)
    record.created = NOON
    handler.emit(record)
    assert said == [  # undated: the server's log dates every line (GameServer.log)
        "asyncio: error: Task t1 failed | at step ?[2J2: ConnectionResetError: peer | reset"
    ]
    record.msg, record.args, record.exc_info = "x" * 5000, (), None
    handler.emit(record)
    assert said[1].endswith("x...") and len(said[1]) < 600


def test_a_librarys_message_said_again_and_again_is_counted_not_repeated() -> None:
    """Issue 39: during an outage psycopg's pool says the same warning at
    every reconnection attempt; the log has it once, then how many more
    times it came (when something else is said, when the window of 60 s
    has passed, or when the server stops)."""
    import logging

    from ansi2048.serve.log import LibraryMessages

    said: List[str] = []
    clock = [100.0]
    handler = LibraryMessages(lambda line, *event, **fields: said.append(line), lambda: clock[0])

    def warn(name: str, message: str) -> None:
        handler.emit(logging.LogRecord(name, logging.WARNING, "x.py", 1, message, (), None))

    for _ in range(5):
        warn("psycopg.pool", "error connecting in 'pool-1': connection refused")
        clock[0] += 2.0
    assert said == ["psycopg.pool: warning: error connecting in 'pool-1': connection refused"]
    warn("asyncssh", "Connection lost")
    assert said[1:] == [
        "psycopg.pool: warning: the message before came 4 more times: error connecting in 'pool-1': connection refused",
        "asyncssh: warning: Connection lost",
    ]
    warn("asyncssh", "Connection lost")  # once more within the window: counted
    clock[0] += 61.0
    warn("asyncssh", "Connection lost")  # past it: the count, and the message again
    assert said[3:] == [
        "asyncssh: warning: the message before came 1 more times: Connection lost",
        "asyncssh: warning: Connection lost",
    ]
    warn("asyncssh", "Connection lost")
    with handler.attached():  # its end says a count not yet said
        pass
    assert said[5:] == ["asyncssh: warning: the message before came 1 more times: Connection lost"]


def test_the_servers_libraries_log_on_its_log_not_on_standard_error(tmp_path: Path) -> None:
    """``ansi2048 serve`` (issue 40, item 23): what asyncssh, asyncio or
    psycopg's pool log while it runs goes through the server's non-blocking
    log, one dated line each, never past it (logging's last resort writes
    on standard error at once, a traceback over many lines)."""
    import asyncio
    import logging
    import signal

    from ansi2048.serve.cli import parse_serve_options
    from ansi2048.serve.server import run

    options = parse_serve_options(["--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")], {})
    stderr = io.StringIO()  # no descriptor: the log writes it at once
    past_the_log = io.StringIO()

    async def scenario() -> int:
        serving = asyncio.ensure_future(run(options, stderr))
        for _ in range(600):
            if "listening on" in stderr.getvalue() or serving.done():
                break
            await asyncio.sleep(0.05)
        assert "listening on" in stderr.getvalue(), stderr.getvalue()
        logging.getLogger("asyncssh").warning("a packet\nof two lines")
        try:
            raise OSError("gone")
        except OSError:
            logging.getLogger("asyncio").exception("Task exception was never retrieved")
        os.kill(os.getpid(), signal.SIGTERM)  # run's handler: the stop
        return await asyncio.wait_for(serving, 30)

    was = sys.stderr
    sys.stderr = past_the_log  # where logging's last resort writes
    try:
        assert asyncio.run(scenario()) == 0
    finally:
        sys.stderr = was
    lines = stderr.getvalue().splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert any(re.fullmatch(f"{stamp} asyncssh: warning: a packet \\| of two lines", line) for line in lines), lines
    assert any(
        re.fullmatch(f"{stamp} asyncio: error: Task exception was never retrieved: OSError: gone", line)
        for line in lines
    ), lines
    assert "Traceback" not in stderr.getvalue() and past_the_log.getvalue() == ""
    assert not any(
        isinstance(h, type(h)) and "LibraryMessages" in type(h).__name__ for h in logging.getLogger().handlers
    )
