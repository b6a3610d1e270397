"""What the server's tests share: an in-memory store (the storage interface
kept in dicts, for the tests that are about the server, not the database),
SSH keys made with ssh-keygen, and the real OpenSSH client's command line."""

from __future__ import annotations

import io
import subprocess
import time
from contextlib import suppress
from pathlib import Path
from typing import Any, Callable, Coroutine, Dict, List, Optional, Sequence, Tuple, TypeVar

from ansi2048.records.history import Record, board_stats
from ansi2048.records.tally import BoardStats
from ansi2048.serve.limits import Limits
from ansi2048.serve.store.base import Claim, ClaimLost, Finished, Player, Prefs, SavedGame

__all__ = [
    "TIGHT",
    "MemoryStore",
    "ServeProcess",
    "ServerThread",
    "Terminal",
    "logged",
    "make_key",
    "session_class",
    "ssh_command",
]

T = TypeVar("T")


# Limits a hostile client meets soon (tests/test_serve_limits.py and the
# tests of every channel's rules).
TIGHT = Limits(
    sessions_per_address=8,
    handshakes_per_address=10,
    login_seconds=2.0,
    idle_seconds=60.0,
    input_burst=512,
    input_rate=256,
    unsent_bytes=64 * 1024,
    stalled_seconds=1.0,
    command_chars=1024,
)


def logged(log: io.StringIO, wanted: Callable[[str], bool]) -> str:
    """The log once ``wanted`` of it (a connection's line is written when the
    server sees it close, a moment after the client), or after 5 s."""
    end = time.monotonic() + 5
    while not wanted(log.getvalue()) and time.monotonic() < end:
        time.sleep(0.05)
    return log.getvalue()


class MemoryStore:
    """The :class:`~ansi2048.serve.store.base.Store` interface over dicts,
    with its claims' rules (a live claim of another holder is refused unless
    taken over; a taken-over holder's writes raise ClaimLost)."""

    def __init__(self, clock: Optional[Callable[[], float]] = None) -> None:
        self._clock = clock or time.time
        self.players: Dict[str, Player] = {}
        self.games: Dict[Tuple[int, str], bytes] = {}
        self.snapshots: Dict[Tuple[int, str], bytes] = {}
        self.claims: Dict[Tuple[int, str], Claim] = {}
        self.bests: Dict[Tuple[int, str], int] = {}
        self.records: Dict[int, List[Finished]] = {}
        self.kept = 0  # the finished games of every player: the last one's id
        self.appends = 0
        self.closed = False
        self.secrets: Dict[str, bytes] = {}
        self.bans: Dict[str, str] = {}  # fingerprint: reason (serve --ban)

    async def open(self) -> List[str]:
        return []

    async def run_script(self, script: List[Any], read: bool = False) -> List[List[Tuple[Any, ...]]]:
        # The tables of the parts that keep their SQL to themselves (the live
        # games across servers): one server in memory has no other to read.
        return [[] for _ in script]

    async def banned(self, fingerprint: str) -> Optional[str]:
        return self.bans.get(fingerprint)

    async def close(self) -> None:
        self.closed = True

    async def shared_secret(self, name: str, proposed: bytes) -> bytes:
        return self.secrets.setdefault(name, proposed)

    async def player(self, fingerprint: str, name: str) -> Player:
        if fingerprint not in self.players:
            taken = {player.name.lower() for player in self.players.values()}  # unique without regard to case
            unique, suffix = name, 2
            while unique.lower() in taken:
                unique, suffix = f"{name}-{suffix}", suffix + 1
            self.players[fingerprint] = Player(len(self.players) + 1, fingerprint, unique)
        return self.players[fingerprint]

    async def set_prefs(self, player: int, prefs: Prefs) -> None:
        for fingerprint, known in self.players.items():
            if known.id == player:
                self.players[fingerprint] = Player(known.id, known.fingerprint, known.name, prefs)

    async def claim(self, player: int, board: str, holder: str, ttl: float, take_over: bool = False) -> Optional[Claim]:
        now = self._clock()
        held = self.claims.get((player, board))
        if held is not None and held.holder != holder and held.until > now and not take_over:
            return held
        self.claims[(player, board)] = Claim(holder, now + ttl)
        return None

    async def renew(self, player: int, board: str, holder: str, ttl: float) -> bool:
        held = self.claims.get((player, board))
        if held is None or held.holder != holder:
            return False
        self.claims[(player, board)] = Claim(holder, self._clock() + ttl)
        return True

    async def release(self, player: int, board: str, holder: str) -> None:
        held = self.claims.get((player, board))
        if held is not None and held.holder == holder:
            del self.claims[(player, board)]

    def _check(self, player: int, board: str, holder: str) -> None:
        held = self.claims.get((player, board))
        if held is None or held.holder != holder:
            raise ClaimLost("another session took this game over")

    async def load(self, player: int, board: str) -> Optional[bytes]:
        return self.games.get((player, board))

    async def load_saved(self, player: int, board: str) -> Optional[SavedGame]:
        recording = self.games.get((player, board))
        return None if recording is None else SavedGame(recording, self.snapshots.get((player, board)))

    async def keep_snapshot(self, player: int, board: str, holder: str, snapshot: bytes) -> None:
        self._check(player, board, holder)
        self.snapshots[(player, board)] = snapshot

    async def rewrite(self, player: int, board: str, holder: str, recording: bytes) -> None:
        self._check(player, board, holder)
        self.games[(player, board)] = recording
        self.snapshots.pop((player, board), None)

    async def append(self, player: int, board: str, holder: str, items: bytes) -> None:
        self._check(player, board, holder)
        self.games[(player, board)] += items
        self.appends += 1

    async def discard(self, player: int, board: str, holder: str) -> None:
        self._check(player, board, holder)
        self.games.pop((player, board), None)
        self.snapshots.pop((player, board), None)

    async def best(self, player: int, key: str) -> int:
        return self.bests.get((player, key), 0)

    async def record_best(self, player: int, key: str, score: int) -> int:
        best = max(score, self.bests.get((player, key), 0))
        self.bests[(player, key)] = best
        return best

    async def add_to_history(self, player: int, record: Record) -> None:
        self.kept += 1
        self.records.setdefault(player, []).append(Finished(self.kept, record))

    async def history(self, player: int, limit: Optional[int] = None) -> List[Finished]:
        records = self.records.get(player, [])
        return records[-limit:] if limit else list(records)

    async def finished(self, player: int, game: int) -> Optional[Record]:
        return next((kept.record for kept in self.records.get(player, []) if kept.id == game), None)

    async def stats(self, player: int, held_seed: int) -> Tuple[List[BoardStats], int]:
        records = [kept.record for kept in self.records.get(player, [])]
        held = sum(1 for record in records if record.seed == held_seed)
        return board_stats([record for record in records if record.seed != held_seed]), held


def make_key(path: Path) -> Path:
    """A new ed25519 key pair at ``path`` (no passphrase), by ssh-keygen."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return path


def ssh_command(
    port: int, key: Optional[Path], *args: str, user: str = "player", tty: bool = True, host: str = "127.0.0.1"
) -> List[str]:
    """The real OpenSSH client's command line, reading no config or key of
    the developer's: ``-F /dev/null``, no known hosts, only ``key`` (none:
    no key at all, a guest)."""
    command = [
        "ssh",
        "-F",
        "/dev/null",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "BatchMode=no",
        "-o",
        "PasswordAuthentication=no",
        "-p",
        str(port),
        "-l",
        user,
    ]
    command += ["-i", str(key)] if key is not None else ["-o", "PubkeyAuthentication=no", "-o", "IdentityFile=none"]
    command += ["-tt"] if tty else ["-T"]
    return [*command, host, *args]


class ServerThread:
    """A :class:`~ansi2048.serve.server.GameServer` on a loopback port, run by
    an event loop of its own on a thread, so that clients (asyncssh's, in the
    test's own loop, or the real ``ssh``) play it at once; ``stop`` as SIGTERM
    would."""

    def __init__(
        self,
        data: Path,
        store: object,
        seeds: Optional[List[int]] = None,
        workers: int = 1,
        limits: Any = None,
        log: Any = None,
        log_buffer: Optional[int] = None,
    ) -> None:
        import asyncio
        import threading

        from ansi2048.serve.host_key import host_key
        from ansi2048.serve.pool import AIPool
        from ansi2048.serve.server import GameServer

        if isinstance(store, str):  # a database's URL (tests/databases.py's store_url)
            from ansi2048.serve.store import open_store

            store = open_store(store, str(data))
        self.store = store
        seeds = list(seeds or [])
        self.loop = asyncio.new_event_loop()
        from ansi2048.serve.limits import DEFAULT_LIMITS

        self.server = GameServer(
            store,  # type: ignore[arg-type]
            AIPool(workers),
            lambda: seeds.pop(0) if seeds else 1234,
            log=log,
            limits=limits or DEFAULT_LIMITS,
            **({"log_buffer": log_buffer} if log_buffer is not None else {}),
        )
        self.key = host_key(str(data))
        started = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.store.open())  # type: ignore[attr-defined]
            self.port = self.loop.run_until_complete(self.server.listen("127.0.0.1", 0, self.key))[1]
            started.set()
            self.loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        assert started.wait(10), "the server did not start"

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float = 10) -> T:
        """Run ``coroutine`` on the server's loop; its result."""
        import asyncio

        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def __enter__(self) -> ServerThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.loop.is_running():
            self.call(self.server.stop())
            self.call(self.store.close())  # type: ignore[attr-defined]
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)


class ServeProcess:
    """``ansi2048 serve`` as a process of its own (what an operator runs),
    on a free port of ``host`` (loopback): ``port`` and ``fingerprint`` from
    its one line. ``prefix`` runs it through another program (``ip netns
    exec NAME``: tests/slow_link.py), which must exec it in its place."""

    def __init__(
        self,
        data: Path,
        db: str = "",
        env: Optional[Dict[str, str]] = None,
        host: str = "127.0.0.1",
        prefix: Sequence[str] = (),
        port: int = 0,
        options: Sequence[str] = (),
    ) -> None:
        import select
        import sys

        from .conftest import child_env

        command = [*prefix, sys.executable, "-m", "ansi2048", "serve", "--listen", f"{host}:{port}", *options]
        command += ["--data-dir", str(data)]
        self.process = subprocess.Popen(
            [*command, "--db", db] if db else command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(env),  # env: more of it (LD_PRELOAD for libfaketime, say)
        )
        assert self.process.stderr is not None
        ready, _, _ = select.select([self.process.stderr], [], [], 30)
        self.line = self.process.stderr.readline().decode() if ready else ""
        import re

        dated = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "
        found = re.fullmatch(
            dated + rf"listening on {re.escape(host)}:(\d+) \(host key (SHA256:\S+)\)(?: with \d+ workers)?\n",
            self.line,
        )
        if found is None:
            self.kill()
            raise AssertionError(f"the server did not start: {self.line!r}")
        self.port, self.fingerprint = int(found.group(1)), found.group(2)

    def kill(self, signum: int = 9) -> int:
        """Send ``signum``; the exit status once it has ended (bounded)."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(10)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


# How long a client's screen is waited for: a bound for a server gone wrong,
# not a measure of speed (a wait ends as soon as the screen shows it). 10 s was
# taken twice in .ci/run on a 2-core machine at load average 5-8, both with
# PostgreSQL, whose stopped cluster alone costs a write its 5 s connect timeout.
SCREEN_WAIT = 30.0


class Terminal:
    """An asyncssh client session with a pty: what it receives, read through
    pyte as a terminal of its size would show it."""

    def __init__(self, width: int = 80, height: int = 24) -> None:
        import asyncio

        self.output = bytearray()
        self.stderr = bytearray()
        self.width, self.height = width, height
        self.changed = asyncio.Event()
        self.closed = asyncio.Event()
        self.exit_status: Optional[int] = None

    def display(self) -> List[str]:
        from .screen import emulate

        return list(emulate(bytes(self.output), self.width, self.height).display)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.display())

    async def wait_for(self, wanted: Callable[[Terminal], bool], timeout: float = SCREEN_WAIT) -> None:
        """Until ``wanted(self)``; fails after ``timeout`` seconds, saying what is on screen."""
        import asyncio

        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not wanted(self):
            self.changed.clear()
            left = end - loop.time()
            if left <= 0:
                raise AssertionError(
                    f"not seen in {timeout} s; on screen:\n{self.text()}\nstderr: {bytes(self.stderr)!r}"
                )
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)

    async def shows(self, text: str, timeout: float = SCREEN_WAIT) -> None:
        await self.wait_for(lambda terminal: text in terminal.text(), timeout)


def session_class(terminal: Terminal) -> Any:
    import asyncssh

    class _Session(asyncssh.SSHClientSession):  # type: ignore[type-arg]
        def data_received(self, data: bytes, datatype: Optional[int]) -> None:
            (terminal.stderr if datatype == asyncssh.EXTENDED_DATA_STDERR else terminal.output).extend(data)
            terminal.changed.set()

        def exit_status_received(self, status: int) -> None:
            terminal.exit_status = status

        def connection_lost(self, exc: Optional[Exception]) -> None:
            terminal.closed.set()
            terminal.changed.set()

    return _Session
