"""``ansi2048 serve`` under load: time from connecting to the first frame,
and from a key sent to its frame received, for many players at once.

The server runs as its own process (``ansi2048 serve`` on a free loopback
port, SQLite in a temporary directory, as an operator starts it: with
``TMPDIR=/dev/shm`` that directory is in memory, and the disk's own pauses
in ``fdatasync`` stay out of the figures); the
players are asyncssh clients in this process, each with a key of its own, a
100x30 window and ``play --no-animation``, each typing ``--rate`` keys a
second (a move, then its opposite, so the board keeps changing) for
``--seconds`` (``--motion``: ``play``, its tiles sliding), their keys spread evenly over each period as people's are
(``--lockstep``: all at the same instant, a burst of every player's key at
once: the worst case). Every key's frame is sent only once the key is committed to
the database (synchronous=FULL), so the latency includes that commit.

    python benchmarks/serve.py [--players 1,10,50] [--rate 4] [--seconds 10]
        [--cipher aes128-gcm@openssh.com] [--autoplay] [--idle 500] [--stop idle|playing]

Each player connects from a loopback address of its own (127.0.x.y), as
players come from many hosts (the server's per-address limits apply to each
alone). It prints, per number of players: the median and 99th percentile of
connect-to-first-frame and key-to-first-frame, the keys played and the
frames a key, the server's CPU time per 1,000 keys, handshakes apart (user +
system, from /proc: Linux only), and the cores the server and the clients
(this process) used meanwhile: where both share a machine's cores, a server
short of one is slowed by the clients, not only by its own work; with
``--idle N``, N sessions that connect, see their board and wait: the
server's memory per idle session (its resident set's growth). ``--cipher``
is what the clients ask for first (the client's order decides an SSH cipher,
not the server's). ``--autoplay`` adds one player on autoplay at 16 moves a
second, to see what it costs the others.

``--stop`` ends the run with the server's stop, SIGTERM with its sessions
connected: the ``--idle`` sessions (``--stop idle``), or the last count of
``--players`` in the middle of their typing (``--stop playing``). It prints
the time from SIGTERM to the process's exit (docs/serving.md promises 5 s),
its exit status, how many clients were told that the server is stopping,
how many log lines say so, and, per player, whether every move its screen
showed is in the database once it has stopped, its claim released.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import asyncssh

from ansi2048.render.repaint import FRAME_END
from ansi2048.serve.game import SAID_STOPPING
from ansi2048.serve.store import DEFAULT_FILE

_END = FRAME_END.encode()
_STOPPING = SAID_STOPPING.encode()
# The longest the benchmark waits for the stopped server before it kills it.
STOP_WAIT = 60.0


def _stat(pid: int) -> List[str]:
    """The fields of /proc/PID/stat after the command's name (empty: gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _tree(pid: int) -> List[int]:
    """``pid`` and every process under it (--workers' workers, the AI's pools)."""
    parents = {
        int(entry): int(fields[1]) for entry in os.listdir("/proc") if entry.isdigit() and (fields := _stat(int(entry)))
    }
    tree, added = [pid], True
    while added:
        below = [child for child, parent in parents.items() if parent in tree and child not in tree]
        tree += below
        added = bool(below)
    return tree


def server_cpu(pid: int) -> float:
    """User + system seconds so far of the server's processes (Linux /proc):
    ended workers are counted in their parent's children's times."""
    ticks = 0
    for process in _tree(pid):
        fields = _stat(process)
        if fields:
            ticks += int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if process == pid else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


class _Player(asyncssh.SSHClientSession):  # type: ignore[misc]
    def __init__(self) -> None:
        self.frames = 0
        self.frame = asyncio.Event()
        self.told = False  # the server said it is stopping
        self.status: Optional[int] = None  # the session's exit status, if it came
        self.output: Optional[bytearray] = None  # everything that came, if kept (--stop playing)
        self._tail = b""  # the end of what came, for a line split across reads

    def data_received(self, data: bytes, datatype: Any) -> None:
        count = data.count(_END)
        if count:
            self.frames += count
            self.frame.set()
        if self.output is not None:
            self.output += data
        seen = self._tail + data
        self.told = self.told or _STOPPING in seen
        self._tail = seen[-len(_STOPPING) :]

    def exit_status_received(self, status: int) -> None:
        self.status = status


def source(number: int) -> Tuple[str, int]:
    """The loopback address player ``number`` connects from."""
    return f"127.0.{1 + number // 250}.{1 + number % 250}", 0


def server_memory(pid: int) -> int:
    """The resident sets of the server's processes, in bytes (Linux /proc)."""
    resident = 0
    for process in _tree(pid):
        try:
            lines = Path(f"/proc/{process}/status").read_text().splitlines()
        except OSError:
            continue
        resident += sum(int(line.split()[1]) * 1024 for line in lines if line.startswith("VmRSS:"))
    return resident


# What the players run: the game without motion, or with it (--motion).
STILL, MOVING = "play --no-animation", "play"


async def join(
    port: int,
    number: int,
    ciphers: List[str],
    key: Optional[asyncssh.SSHKey] = None,
    name: str = "",
    command: str = STILL,
) -> Tuple[Any, Any, Any]:
    """Player ``number`` (``key``'s and ``name``'s, or a new one's) connected and
    shown its board: its connection, channel and session."""
    key = key or asyncssh.generate_private_key("ssh-ed25519")
    options: Any = {"encryption_algs": ciphers} if ciphers else {}
    conn = await asyncssh.connect(
        "127.0.0.1",
        port,
        username=name or f"bench{number}",
        client_keys=[key],
        known_hosts=None,
        encoding=None,
        agent_path=None,
        local_addr=source(number),
        **options,
    )
    chan, session = await conn.create_session(_Player, command, term_type="xterm-256color", term_size=(100, 30))
    await session.frame.wait()
    return conn, chan, session


async def player(
    port: int,
    number: int,
    rate: float,
    seconds: float,
    connects: List[float],
    keys: List[float],
    ciphers: List[str],
    ready: Callable[[], Awaitable[None]],
    key: Optional[asyncssh.SSHKey] = None,
    name: str = "",
    shown: Optional[Dict[str, _Player]] = None,
    phase: float = 0.0,
    command: str = STILL,
    frames: Optional[List[int]] = None,
) -> None:
    """One player: connects, awaits ``ready`` (all connected: the typing's
    CPU apart from the handshakes'; benchmarks/watch.py: its watchers), then
    types for ``seconds``, or until the server says it is stopping. ``shown``:
    where its session goes, under its key's fingerprint (``--stop playing``);
    ``frames``: where the count of frames it was sent while typing goes."""
    started = time.perf_counter()
    key = key or asyncssh.generate_private_key("ssh-ed25519")
    conn, chan, session = await join(port, number, ciphers, key, name, command)
    if shown is not None:
        session.output = bytearray()
        shown[str(key.get_fingerprint("sha256"))] = session
    async with conn:
        connects.append(time.perf_counter() - started)
        await ready()
        await asyncio.sleep(phase)  # where in a key's period this player types: people are not in step
        end = time.perf_counter() + seconds
        typed, before = 0, session.frames
        while time.perf_counter() < end and not session.told:
            session.frame.clear()
            seen = session.frames
            sent = time.perf_counter()
            chan.write(b"adws"[typed % 4 : typed % 4 + 1])
            typed += 1
            while session.frames == seen and not session.told:
                await asyncio.wait_for(session.frame.wait(), 10)
                session.frame.clear()
            if session.frames == seen:
                break  # the server stopped before this key's frame: it may or may not be kept
            keys.append(time.perf_counter() - sent)
            await asyncio.sleep(max(0.0, 1.0 / rate - (time.perf_counter() - sent)))
        if frames is not None:
            frames.append(session.frames - before)
        if not session.told:
            chan.write(b"q")
        await chan.wait_closed()


class _Barrier:
    """Until ``parties`` have come (asyncio.Barrier is Python 3.11+)."""

    def __init__(self, parties: int) -> None:
        self._left = parties
        self._all = asyncio.Event()

    async def wait(self) -> None:
        self._left -= 1
        if self._left <= 0:
            self._all.set()
        await self._all.wait()


def percentile(values: List[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def autoplayer(port: int, number: int, seconds: float, ciphers: List[str], ready: _Barrier) -> None:
    """One more player, on autoplay at 16 moves a second (p, then + twice), reading every frame."""
    conn, chan, _ = await join(port, number, ciphers)
    async with conn:
        chan.write(b"p++")
        await ready.wait()
        await asyncio.sleep(seconds)
        chan.write(b"pq")
        await chan.wait_closed()


@dataclass(frozen=True)
class Typing:
    """What a count of players typing showed: their connect-to-first-frame
    and key-to-first-frame times, the frames they were sent while typing,
    the CPU seconds the server used meanwhile and this process's (the
    players' clients': where they share the server's cores, what is left
    to it), and how long the typing took."""

    connects: List[float]
    keys: List[float]
    frames: int
    server_cpu: float
    clients_cpu: float
    seconds: float

    def line(self, players: int) -> str:
        keys, connects, took = self.keys, self.connects, self.seconds
        return (
            f"{players:4d} players: connect to first frame p50 {statistics.median(connects) * 1000:6.1f} ms"
            f" p99 {percentile(connects, 0.99) * 1000:6.1f} ms; key to first frame"
            f" p50 {statistics.median(keys) * 1000:5.1f} ms p99 {percentile(keys, 0.99) * 1000:6.1f} ms;"
            f" {len(keys)} keys, {self.frames / max(1, len(keys)):.2f} frames a key;"
            f" server CPU {self.server_cpu / max(1, len(keys)) * 1e6:.0f} ms per 1,000 keys"
            f" ({self.server_cpu / took:.2f} cores; the clients {self.clients_cpu / took:.2f})"
        )


async def measure(
    port: int,
    pid: int,
    players: int,
    rate: float,
    seconds: float,
    ciphers: List[str],
    autoplay: bool,
    lockstep: bool = False,
    command: str = STILL,
) -> Typing:
    """What ``players`` typing showed."""
    connects: List[float] = []
    keys: List[float] = []
    frames: List[int] = []
    ready = _Barrier(players + 1 + autoplay)
    tasks = [
        asyncio.ensure_future(
            player(
                port,
                number,
                rate,
                seconds,
                connects,
                keys,
                ciphers,
                ready.wait,
                phase=0.0 if lockstep else number / players / rate,
                command=command,
                frames=frames,
            )
        )
        for number in range(players)
    ]
    if autoplay:
        tasks.append(asyncio.ensure_future(autoplayer(port, players, seconds, ciphers, ready)))
    await ready.wait()
    cpu, clients, began = server_cpu(pid), time.process_time(), time.perf_counter()
    await asyncio.gather(*tasks)
    took = time.perf_counter() - began
    return Typing(connects, keys, sum(frames), server_cpu(pid) - cpu, time.process_time() - clients, took)


async def idle(
    server: subprocess.Popen[bytes], port: int, count: int, ciphers: List[str], stop: bool
) -> Tuple[int, int, Optional[Stopped]]:
    """``count`` sessions connected and idle: how many the server held, and
    its memory's growth; with ``stop``, the server then stopped
    while it holds them: what the stop gave."""
    before = server_memory(server.pid)
    held: List[Tuple[Any, _Player]] = []
    try:
        for start in range(0, count, 50):  # 50 at a time: a burst the machine's 2 cores take
            joined = await asyncio.gather(
                *(join(port, number, ciphers) for number in range(start, min(count, start + 50))),
                return_exceptions=True,
            )
            held += [(conn, session) for conn, _, session in (j for j in joined if not isinstance(j, BaseException))]
        await asyncio.sleep(1)
        grown = server_memory(server.pid) - before
        ended = await stopped(server, [session for _, session in held]) if stop else None
        return len(held), grown, ended
    finally:
        for conn, _ in held:
            conn.close()


@dataclass(frozen=True)
class Stopped:
    """What a stop gave: the seconds from SIGTERM to the server's exit, its
    exit status (None: still running after :data:`STOP_WAIT`, killed), how
    many clients were told that it is stopping, and how many sessions ended
    cleanly (exit status 0)."""

    seconds: float
    status: Optional[int]
    told: int
    clean: int

    def line(self, sessions: int, logged: int) -> str:
        ended = f"exit status {self.status}" if self.status is not None else f"still running after {STOP_WAIT:g} s"
        return (
            f"stopped by SIGTERM in {self.seconds:.2f} s ({ended}); {self.told} of {sessions} clients told it is"
            f" stopping, {self.clean} sessions ended with exit status 0, {logged} log lines say so"
        )


async def stopped(server: subprocess.Popen[bytes], sessions: List[_Player]) -> Stopped:
    """SIGTERM to the server, ``sessions`` connected: what the stop gave."""
    server.send_signal(signal.SIGTERM)
    started = time.perf_counter()
    while server.poll() is None and time.perf_counter() - started < STOP_WAIT:
        await asyncio.sleep(0.005)  # the clients read meanwhile, on this loop
    took = time.perf_counter() - started
    status = server.poll()
    if status is None:
        server.kill()
        server.wait()
    else:
        await asyncio.sleep(0.5)  # what the server sent before it exited, read
    told = sum(session.told for session in sessions)
    return Stopped(took, status, told, sum(session.status == 0 for session in sessions))


async def stop_playing(
    server: subprocess.Popen[bytes], port: int, count: int, rate: float, ciphers: List[str]
) -> Tuple[Stopped, Dict[str, _Player]]:
    """``count`` players typing at ``rate``, the server stopped once all
    have typed for 2 s: what the stop gave, and each player's
    session by its key's fingerprint."""
    sessions: Dict[str, _Player] = {}
    ready = _Barrier(count + 1)
    tasks = [
        asyncio.ensure_future(player(port, number, rate, STOP_WAIT, [], [], ciphers, ready.wait, shown=sessions))
        for number in range(count)
    ]
    await ready.wait()
    await asyncio.sleep(2)
    ended = await stopped(server, list(sessions.values()))
    await asyncio.wait(tasks, timeout=STOP_WAIT)
    for task in tasks:
        task.cancel()
    return ended, sessions


def moves_shown(output: bytes) -> int:
    """The move count the last frame in ``output`` (a 100x30 terminal's)
    showed, though the lines after the last frame have scrolled it up."""
    import pyte  # the tests' terminal; only --stop playing needs it

    screen = pyte.HistoryScreen(100, 30, history=100)
    pyte.ByteStream(screen).feed(output)
    scrolled = ["".join(line[column].data for column in range(100)) for line in screen.history.top]
    found = re.findall(r"Moves (\d+)", "\n".join(scrolled + screen.display))
    return int(found[-1]) if found else 0


def kept(data: str, sessions: Dict[str, _Player]) -> Tuple[int, int, int]:
    """Of the players in ``sessions`` (by fingerprint), how many have in
    the stopped server's database every move their screen showed (a move
    is one byte of its game's items), how many moves their screens showed in
    all, and how many games are still claimed."""
    with closing(sqlite3.connect(os.path.join(data, DEFAULT_FILE))) as db:
        rows = db.execute(
            "SELECT fingerprint, holder, (SELECT COALESCE(SUM(LENGTH(items)), 0) FROM items"
            " WHERE items.player = games.player AND items.board = games.board)"
            " FROM games JOIN players ON players.id = games.player"
        ).fetchall()
    shown = {fingerprint: moves_shown(bytes(session.output or b"")) for fingerprint, session in sessions.items()}
    whole = sum(1 for fingerprint, _, saved in rows if fingerprint in shown and saved >= shown[fingerprint])
    return whole, sum(shown.values()), sum(1 for _, holder, _ in rows if holder is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="1,10,50")
    parser.add_argument("--rate", type=float, default=4.0, help="keys a second per player")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--cipher", default="", help="the cipher the clients ask for first (default: asyncssh's order)")
    parser.add_argument("--autoplay", action="store_true", help="one more player on autoplay at 16 moves/s")
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="every player types at the same instant (a burst of --players keys each period: the worst case);"
        " by default their keys are spread evenly over the period",
    )
    parser.add_argument(
        "--motion", action="store_true", help="the players' games move their tiles (play, not play --no-animation)"
    )
    parser.add_argument("--idle", type=int, default=0, help="idle sessions to hold (0: none)")
    parser.add_argument("--workers", default="1", help="the server's --workers (N, or auto)")
    parser.add_argument("--db", default="", help="the server's --db (a PostgreSQL URL); default: SQLite")
    parser.add_argument(
        "--stop",
        choices=("idle", "playing"),
        help="end by stopping the server (SIGTERM) with the idle sessions held, or the last --players typing",
    )
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.players, args.seconds = "2", 1.0
    if args.stop == "playing" and args.db:
        parser.error("--stop playing reads what was kept from the SQLite file: not with --db")
    if args.stop == "idle" and not args.idle:
        parser.error("--stop idle needs --idle N")
    ciphers = [args.cipher] if args.cipher else []
    with started_server(args.workers, ("--db", args.db) if args.db else ()) as (server, port, data, log):
        cipher = args.cipher or "asyncssh's default order"
        print(
            f"ansi2048 serve --workers {args.workers}, {'PostgreSQL' if args.db else 'SQLite'}, loopback,"
            f" {args.rate:g} keys/s a player"
            + (" all in step" if args.lockstep else " spread over each period")
            + f", {args.seconds:g} s, cipher: {cipher}"
            + (", and one player on autoplay at 16 moves/s" if args.autoplay else "")
            + (", with motion" if args.motion else ", no motion")
        )
        for count in (int(text) for text in args.players.split(",") if text):
            typing = asyncio.run(
                measure(
                    port,
                    server.pid,
                    count,
                    args.rate,
                    args.seconds,
                    ciphers,
                    args.autoplay,
                    args.lockstep,
                    MOVING if args.motion else STILL,
                )
            )
            print(typing.line(count))
        if args.idle:
            held, grown, ended = asyncio.run(idle(server, port, args.idle, ciphers, args.stop == "idle"))
            print(
                f"{args.idle} idle sessions: {held} held, server memory +{grown / 2**20:.1f} MiB,"
                f" {grown / max(1, held) / 1024:.0f} KiB a session"
            )
            if ended is not None:
                print(ended.line(held, stopping_lines(log)))
        if args.stop == "playing":
            count = [int(text) for text in args.players.split(",") if text][-1]
            before = stopping_lines(log)
            ended, sessions = asyncio.run(stop_playing(server, port, count, args.rate, ciphers))
            print(f"{count} players typing: " + ended.line(count, stopping_lines(log) - before))
            whole, moves, claimed = kept(data, sessions)
            print(
                f"  {whole} of {count} games hold every move their player's screen showed ({moves} moves shown in all);"
                f" {claimed} still claimed"
            )


def stopping_lines(log: List[str]) -> int:
    """The server's log lines of sessions ended by its stop."""
    return sum("server stopping" in line for line in list(log))


def _drain(stream: Any, log: List[str]) -> None:
    """The server's standard error read to its end, each line kept: a pipe
    nobody reads fills (64 KiB), and the server's next log line would block it."""
    for line in stream:
        log.append(line.decode("utf-8", "replace"))


@contextmanager
def started_server(
    workers: str = "1", options: Sequence[str] = ()
) -> Iterator[Tuple[subprocess.Popen[bytes], int, str, List[str]]]:
    """``ansi2048 serve`` on a free loopback port, SQLite in a temporary
    directory (or ``options``' ``--db``), its session caps raised past the
    load: it, its port, the data directory, and its log lines so far (read by a thread)."""
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "ansi2048", "serve", "--listen", "127.0.0.1:0", "--data-dir", data),
                *("--max-sessions", "20000", "--max-logins", "1000", "--max-logins-per-address", "1000"),
                *("--workers", workers, *options),
            ],
            stderr=subprocess.PIPE,
        )
        try:
            assert server.stderr is not None
            line = server.stderr.readline().decode()
            while line.startswith("ansi2048 serve: "):  # a note (the open-file limit), then the address
                line = server.stderr.readline().decode()
            found = re.search(r"Z listening on 127\.0\.0\.1:(\d+)", line)
            assert found, line
            log: List[str] = []
            threading.Thread(target=_drain, args=(server.stderr, log), daemon=True).start()
            yield server, int(found.group(1)), data, log
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()
