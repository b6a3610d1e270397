"""The SSH server (asyncssh): its state (:class:`GameServer`: the store,
the AI's pool, the live games, the sessions running), its host key, where
it listens and how it stops, and ``ansi2048 serve``'s :func:`run`.

A client's connection is :mod:`.connection`'s (who it is, what it may
open); each session channel is :mod:`.session`'s, which runs the game or
one of the commands without a terminal (:mod:`.commands`), and nothing else:
shells run the game, and subsystems (SFTP, ...), SCP, port forwarding either
way, agent and X11 forwarding are refused. asyncssh's defaults that a game
must not keep are turned off: the line editor (keys would come a line at a
time) and agent forwarding.

SIGTERM or SIGINT: every game ends as if its player had left (saved, its
best and history written), each player is told on one line that the server
is stopping and their game is kept, and the server exits 0."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from contextlib import suppress
from itertools import count
from typing import IO, TYPE_CHECKING, Callable, Optional, Set, Tuple

import asyncssh

from ..options.parser import EXIT_ERROR, EXIT_OK
from .channel import DEFAULT_STALL_SECONDS
from .connection import ClientConnection
from .limits import DEFAULT_LIMITS, Admission, Limits, capped_by_files
from .live import LiveGames
from .pauses import SavingPauses
from .pool import AIPool
from .ranked import DEFAULT_PER_ADDRESS, daily_secret
from .store import open_store
from .store.base import Store, StoreError

if TYPE_CHECKING:
    from .cli import ServeOptions  # which imports this module, when it runs the server
    from .session import SessionChannel  # imported by the connection, when one opens

__all__ = ["HOST_KEY_FILE", "GameServer", "host_key", "run"]

HOST_KEY_FILE = "ssh_host_ed25519_key"
# Connections the kernel queues before they are accepted (asyncssh's default
# is 100; the kernel caps it at net.core.somaxconn): a burst of connections
# must not have players' SYNs dropped before the server sees them.
BACKLOG = 1024
# The ciphers offered. The client's order picks among them (RFC 4253 7.1),
# and OpenSSH's and asyncssh's clients put chacha20-poly1305 first, which
# costs 46 us a 1.5 KB packet here against 9 us for AES-GCM: it is not
# offered, so they use AES-GCM (in OpenSSH since 6.2, 2013). Measured with
# benchmarks/serve.py: 100 players' p99 key-to-first-frame about halved.
CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr")
# Unanswered keepalives before a silent client is disconnected.
KEEPALIVES_MISSED = 3
# Seconds the games get to save and say goodbye when the server stops, then
# the clients to leave by themselves (it must be gone within 5).
STOP_SECONDS = 3.0
LEAVE_SECONDS = 0.5


def host_key(data_dir: str) -> asyncssh.SSHKey:
    """The server's ed25519 host key in ``data_dir``, made on first start
    (readable by its owner only) and reused after."""
    path = os.path.join(data_dir, HOST_KEY_FILE)
    try:
        return asyncssh.read_private_key(path)
    except FileNotFoundError:
        pass
    key = asyncssh.generate_private_key("ssh-ed25519")
    # O_EXCL: a key another server made meanwhile is not overwritten.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as stream:
        stream.write(key.export_private_key())
        stream.flush()
        os.fsync(stream.fileno())
    return key


class GameServer:
    """The server's state: the store, the AI's pool, the sessions running."""

    def __init__(
        self,
        store: Store,
        pool: AIPool,
        random_seed: Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], float] = time.time,
        log: Optional[IO[str]] = None,
        daily_secret: bytes = b"",
        daily_per_address: int = DEFAULT_PER_ADDRESS,
        live: Optional[LiveGames] = None,
        watch_stall: float = DEFAULT_STALL_SECONDS,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._log = log
        self.limits = limits
        self.admission = Admission(limits)
        self.daily_secret = daily_secret  # the days' seeds derive from it (ranked.daily_secret)
        self.daily_per_address = daily_per_address
        self.live = live if live is not None else LiveGames()  # the games that may be watched
        self.watch_stall = watch_stall  # seconds a watcher may not read before it is dropped
        self.store = store
        self.pool = pool
        self.random_seed = random_seed
        self.clock = clock
        self.now = now
        self.port = 0
        self.sessions: Set[SessionChannel] = set()
        self._holders = count(1)
        self._host = socket.gethostname().replace(":", "_")
        self._id = f"{self._host}:{os.getpid()}:{time.time_ns()}"
        self._listener: Optional[asyncssh.SSHAcceptor] = None
        self.connections: Set[asyncssh.SSHServerConnection] = set()
        # The games whose saving has paused, and the log's lines about it.
        self.pauses = SavingPauses(self.log, clock, now)

    def holder(self) -> str:
        """A claim holder's name: this server's, and a session's number."""
        return f"{self._id}:{next(self._holders)}"

    def gone(self, holder: str) -> bool:
        """``holder`` was a session of a server on this machine that is no
        longer running (it was killed): its claim need not be waited out,
        nor its player asked to take the game over."""
        host, _, rest = holder.partition(":")
        pid = rest.partition(":")[0]
        if host != self._host or not pid.isdigit():
            return False  # another machine's server: its claim expires by itself
        if int(pid) == os.getpid():
            return not holder.startswith(self._id + ":")  # this pid's earlier life
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False  # running, as another user
        return False

    async def listen(self, host: str, port: int, key: asyncssh.SSHKey) -> Tuple[str, int]:
        """Listen on ``host``:``port`` (0: a free one); where it listens."""
        self._listener = await asyncssh.listen(
            host,
            port,
            server_factory=lambda: ClientConnection(self),
            server_host_keys=[key],
            encoding=None,  # keys are bytes, decoded by the game's own decoder
            line_editor=False,  # asyncssh's is on by default: keys would come a line at a time
            agent_forwarding=False,  # on by default too
            x11_forwarding=False,
            allow_scp=False,
            sftp_factory=None,
            allow_pty=True,
            login_timeout=self.limits.login_seconds,
            keepalive_interval=self.limits.keepalive_seconds,
            keepalive_count_max=KEEPALIVES_MISSED,
            backlog=BACKLOG,
            encryption_algs=list(CIPHERS),
            password_auth=False,
            server_version="ansi2048",
        )
        address = self._listener.sockets[0].getsockname()
        self.port = int(address[1])
        return str(address[0]), self.port

    async def stop(self) -> None:
        """Stop listening; every game saved and its player told; then close."""
        if self._listener is not None:
            self._listener.close()
        tasks = [session.stopping() for session in list(self.sessions)]
        running = [task for task in tasks if task is not None]
        if running:
            await asyncio.wait(running, timeout=STOP_SECONDS)
        # The clients leave once their sessions have closed; the rest are
        # disconnected (their client then says so, in a line of its own).
        loop = asyncio.get_running_loop()
        end = loop.time() + LEAVE_SECONDS
        while self.connections and loop.time() < end:
            await asyncio.sleep(0.02)
        # The records of games whose sessions ended paused: a last try.
        await self.pauses.close(LEAVE_SECONDS)
        for conn in list(self.connections):
            conn.close()
        # Each closed connection's line is written to the log once it is gone.
        end = loop.time() + LEAVE_SECONDS
        while self.connections and loop.time() < end:
            await asyncio.sleep(0.02)
        self.pool.close()

    def log(self, line: str) -> None:
        """One line on the server's log (standard error, or --log's file)."""
        if self._log is not None:
            with suppress(OSError, ValueError):
                self._log.write(line + "\n")
                self._log.flush()


async def run(options: ServeOptions, stderr: IO[str]) -> int:
    """``ansi2048 serve``: listen until SIGTERM or SIGINT; the exit status.
    What stops it from starting (the data directory, the database, the
    address) is said in one line, status 1."""
    log: IO[str] = stderr
    try:
        if options.log:
            log = open(options.log, "a", encoding="utf-8")  # noqa: SIM115 (open while the server runs)
        os.makedirs(options.data_dir, mode=0o700, exist_ok=True)
        key = host_key(options.data_dir)
        store = open_store(options.db, options.data_dir)
        await store.open()
    except (OSError, ValueError, StoreError, asyncssh.Error) as error:
        stderr.write(f"ansi2048 serve: error: {_why(error)}\n")
        return EXIT_ERROR
    try:
        secret = daily_secret(options.data_dir)
    except (OSError, ValueError) as error:
        await store.close()
        stderr.write(f"ansi2048 serve: error: {_why(error)}\n")
        return EXIT_ERROR
    limits, capped = capped_by_files(options.limits, raise_open_files())
    if capped:
        stderr.write(f"ansi2048 serve: {capped}\n")
    server = GameServer(
        store,
        AIPool(min(4, os.cpu_count() or 1)),
        lambda: int.from_bytes(os.urandom(4), "big"),
        log=log,
        daily_secret=secret,
        daily_per_address=options.daily_per_address,
        live=LiveGames(options.watchers_per_game, options.watchers),
        limits=limits,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        try:
            host, port = await server.listen(options.host, options.port, key)
        except OSError as error:
            stderr.write(f"ansi2048 serve: error: cannot listen on {options.host}:{options.port}: {_why(error)}\n")
            return EXIT_ERROR
        shown = f"[{host}]" if ":" in host else host
        stderr.write(f"listening on {shown}:{port} (host key {key.get_fingerprint('sha256')})\n")
        stderr.flush()
        await stop.wait()
        await server.stop()
    finally:
        await store.close()
        if log is not stderr:
            log.close()
    return EXIT_OK


def raise_open_files() -> int:
    """The process's open-file limit raised to its hard limit (each
    connection holds a socket); the limit now."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
        for limit in (wanted, 65536, 1 << 14):  # macOS refuses more than OPEN_MAX, however high hard is
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, wanted), hard))
                break
            except (ValueError, OSError):
                continue
    return int(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error) or type(error).__name__
