"""The SSH server (asyncssh): :class:`GameServer` builds the one
:class:`~.context.ServeContext` (the store, the AI's pool, the live games,
the limits, the clocks, the log) and hands it to each connection; its host
key, where it listens and how it stops, and ``ansi2048 serve``'s :func:`run`.

A client's connection is :mod:`.connection`'s (who it is, what it may
open); each session channel is :mod:`.ssh_channel`'s, which runs one of the
commands of the table (:mod:`.commands`; the game is ``play``), and nothing else:
shells run the game, and subsystems (SFTP, ...), SCP, port forwarding either
way, agent and X11 forwarding are refused. asyncssh's defaults that a game
must not keep are turned off: the line editor (keys would come a line at a
time) and agent forwarding.

SIGTERM or SIGINT: every game ends as if its player had left (saved, its
best and history written), each player is told on one line that the server
is stopping and their game is kept, and the server exits 0, within 5 s: all
at once, and bounded by the server's clock whatever the clients do
(:meth:`GameServer.stop`)."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from contextlib import suppress
from dataclasses import replace
from typing import IO, Any, Callable, Dict, List, Optional, Set, Tuple

import asyncssh

from ..loop.events import Warned
from ..options.parser import EXIT_ERROR, EXIT_OK
from ..storage.history_file import utc_timestamp
from . import kexguess, takeover
from .connection import ClientConnection
from .context import RunningSession, ServeContext, Sessions
from .far_live import FarLive
from .far_races import FarRaces
from .host_key import host_key
from .limits import DEFAULT_LIMITS, Admission, Limits, capped_by_files, raise_open_files
from .live import LiveGames
from .log import LOG_BUFFER_BYTES, LOG_FLUSH_SECONDS, LibraryMessages, LogFile, LogFormat, ServerLog
from .metrics import ServerMetrics, ServerState
from .pauses import SavingPauses
from .pool import AIPool
from .race_hall import Host, RaceHall
from .ranked import daily_secret
from .relay_door import open_relay_door
from .saving import SAID_TAKEN_OVER
from .settings import ServeOptions
from .store import open_store
from .store.base import Store, StoreError
from .workers import stop_when_orphaned

__all__ = ["GameServer", "run"]

# Connections the kernel queues before they are accepted (asyncssh's default
# is 100; the kernel caps it at net.core.somaxconn): a burst of connections
# must not have players' SYNs dropped before the server sees them.
BACKLOG = 1024
# The ciphers offered. The client's order picks among them (RFC 4253 7.1),
# and OpenSSH's and asyncssh's clients put chacha20-poly1305 first, which
# costs 46 us a 1.5 KB packet here against 9 us for AES-GCM: it is not
# offered, so they use AES: asyncssh's clients AES-GCM, OpenSSH's (whose
# order puts the CTR modes before GCM) aes128-ctr with an EtM MAC, both on
# the processor's AES instructions. Measured with benchmarks/serve.py (its
# asyncssh clients): 100 players' p99 key-to-first-frame about halved.
CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr")
# Unanswered keepalives before a silent client is disconnected.
KEEPALIVES_MISSED = 3
# The server's stop (SIGTERM, SIGINT) is bounded: docs/serving.md promises
# the process gone within 5 s (systemd's TimeoutStopSec there is 10: the
# margin). GameServer.stop ends by STOP_SECONDS of the server's clock,
# whatever its clients or the store do: the games end all at once, each
# saving and saying goodbye in its own task; a client whose sessions have
# ended gets LEAVE_SECONDS to leave by itself (ssh leaves at once), then it
# is cut; the last CLOSE_SECONDS are kept for cutting whatever remains. The
# clock is read between the event loop's turns, and one turn can be long (the
# turn that ends 1,000 games takes about a second on a loaded 2-core machine):
# hence 3 s, not 5. The log's queued lines get LOG_FLUSH_SECONDS (serve/log.py),
# the store's close STORE_CLOSE_SECONDS; the process's exit, what is left
# (benchmarks/serve.py --stop measures it all).
STOP_SECONDS = 3.0
LEAVE_SECONDS = 0.5
CLOSE_SECONDS = 0.5
STORE_CLOSE_SECONDS = 1.0
# What a draining server's players are told (serve/takeover.py).
SAID_DRAINING = "server updating: play on, your game is kept"
# How often a draining server looks whether its sessions have ended.
DRAIN_TICK = 0.25
# How often the stop looks at its sessions and clients again.
STOP_TICK = 0.02


class GameServer:
    """The server: the context its handlers are given (:attr:`context`),
    its listener, its stop."""

    def __init__(
        self,
        store: Store,
        pool: AIPool,
        random_seed: Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], float] = time.time,
        log: Optional[IO[str]] = None,
        daily_secret: bytes = b"",
        daily_per_address: int = ServeOptions.daily_per_address,
        live: Optional[LiveGames] = None,
        watch_stall: float = ServeOptions.watcher_stall,
        limits: Limits = DEFAULT_LIMITS,
        log_buffer: int = LOG_BUFFER_BYTES,
        log_format: LogFormat = LogFormat.TEXT,
        relay: Tuple[str, int] = ServeOptions.relay,
    ) -> None:
        # Written by a thread of its own: a log nobody reads never blocks the games (serve/log.py).
        self._log = ServerLog(log, now, log_buffer, log_format) if log is not None else None
        self._listener: Optional[asyncssh.SSHAcceptor] = None
        # The one context (the port is set in it once the server listens).
        self.context = ServeContext(
            store=store,
            pool=pool,
            random_seed=random_seed,
            clock=clock,
            now=now,
            log=self.log,
            pauses=SavingPauses(self.log, clock),  # the games whose saving has paused, and the log's lines about it
            live=live if live is not None else LiveGames(),
            limits=limits,
            admission=Admission(limits),
            sessions=Sessions(),
            daily_secret=daily_secret,  # the days' seeds derive from it (ranked.daily_secret)
            daily_per_address=daily_per_address,
            watch_stall=watch_stall,
            races=RaceHall(Host(store, daily_secret, random_seed, now, self.log)),  # the lobbies and races
            metrics=ServerMetrics(),
        )
        context = self.context
        commands = lambda: (session.command for session in context.sessions.all)  # noqa: E731
        connections = lambda: len(context.connections)  # noqa: E731
        context.metrics.reads(ServerState(commands, connections, context.pauses, context.admission, pool))
        # The other servers' live games, and this one's for them (serve/far_live.py).
        ended = lambda holder: context.sessions.taken_over(holder, SAID_TAKEN_OVER)  # noqa: E731
        far = FarLive(store, context.live, context.sessions.server, now, self.log, ended)
        # And the other servers' races, which a player here is relayed to (serve/far_races.py).
        assert context.races is not None
        sessions = context.sessions
        far_races = FarRaces(store, context.races, sessions.server, now, self.log, lambda: sessions.draining)
        self.context = replace(context, far=far, far_races=far_races)
        self._relay = relay  # where the relay door listens (serve/relay_door.py)
        self._relay_door: Optional[asyncio.AbstractServer] = None

    # What the stop, the drain and the tests look at.
    @property
    def sessions(self) -> Set[RunningSession]:
        return self.context.sessions.all

    @property
    def connections(self) -> Set[Any]:
        return self.context.connections

    @property
    def races(self) -> RaceHall:
        assert self.context.races is not None  # a server always runs them (its context's hall)
        return self.context.races

    @property
    def port(self) -> int:
        return self.context.port

    async def listen(self, host: str, port: int, key: asyncssh.SSHKey, reuse_port: bool = False) -> Tuple[str, int]:
        """Listen on ``host``:``port`` (0: a free one); where it listens.
        ``reuse_port``: other processes may listen there too (SO_REUSEPORT),
        and the system spreads new connections among them."""
        self._listener = await asyncssh.listen(
            host,
            port,
            reuse_port=reuse_port or None,  # None: the system's default (off), and no error where it is unknown
            server_factory=lambda: ClientConnection(self.context),
            server_host_keys=[key],
            encoding=None,  # keys are bytes, decoded by the game's own decoder
            line_editor=False,  # asyncssh's is on by default: keys would come a line at a time
            agent_forwarding=False,  # on by default too
            x11_forwarding=False,
            allow_scp=False,
            sftp_factory=None,
            allow_pty=True,
            login_timeout=self.context.limits.login_seconds,
            keepalive_interval=self.context.limits.keepalive_seconds,
            keepalive_count_max=KEEPALIVES_MISSED,
            backlog=BACKLOG,
            encryption_algs=list(CIPHERS),
            password_auth=False,
            server_version="ansi2048",
        )
        if not kexguess.supported():
            # Dropbear's clients among them (serve/kexguess.py): the operator is told why they cannot play.
            self.log(f"asyncssh {asyncssh.__version__}: a client's wrong key-exchange guess ends its connection")
        address = self._listener.sockets[0].getsockname()
        self.context = replace(self.context, port=int(address[1]))
        if self.context.far is not None:
            self.context.far.start()
        if self.context.far_races is not None:
            self._relay_door, relayed_at = await open_relay_door(lambda: self.context, *self._relay)
            self.context.far_races.start(relayed_at)
        return str(address[0]), self.port

    async def drain(self, seconds: float, stop: asyncio.Event) -> None:
        """A new server has taken over: accept no more connections, and let
        the sessions end by themselves, for ``seconds`` at most (or until
        ``stop``: SIGTERM); :meth:`stop` then ends what is left."""
        if self._listener is not None:
            self._listener.close()
        self.context.sessions.draining = True  # a game ends at its game over (serve/game.py)
        for session in self.sessions:  # told once, on the note line (a game's; other sessions let it pass)
            session.incoming.put_nowait(Warned(SAID_DRAINING, True))
        clock = self.context.clock
        deadline = clock() + seconds
        for _ in range(int(seconds / DRAIN_TICK) + 1):  # bounded in count as in time
            if not self.sessions or stop.is_set() or clock() >= deadline:
                return
            await asyncio.sleep(DRAIN_TICK)

    async def stop(self) -> None:
        """Stop listening; every game saved and its player told, all at
        once; then the clients closed. Bounded by :data:`STOP_SECONDS` of
        the server's clock, whatever a client or the store does: a session
        still running then is left to the event loop's end (what it had not
        saved was never shown, and its claim expires by itself)."""
        clock = self.context.clock
        deadline = clock() + STOP_SECONDS
        if self._listener is not None:
            self._listener.close()
        if self._relay_door is not None:
            self._relay_door.close()
        if self.context.races is not None:
            self.context.races.close()  # no race goes on: every room's clock stops, its screens say so
        # Every session is told before any is waited for: they end
        # concurrently, and the store groups their writes in few commits.
        ending: Dict[asyncssh.SSHServerConnection, List[asyncio.Task[None]]] = {}
        for session in list(self.sessions):
            task = session.stopping()
            conn = session.connection()
            if task is not None and conn is not None:
                ending.setdefault(conn, []).append(task)
        for conn in list(self.connections):
            if conn not in ending:
                conn.close()  # no session to end (logging in, or between two): SSH's disconnect says why
        ended_at: Dict[asyncssh.SSHServerConnection, float] = {}
        close_by = deadline - CLOSE_SECONDS
        for _ in range(int(STOP_SECONDS / STOP_TICK)):  # bounded in count as in time
            now = clock()
            if not ending or now >= close_by:
                break
            for conn, tasks in list(ending.items()):
                if not all(task.done() for task in tasks):
                    continue  # still saving, even if its client has left
                if conn not in self.connections:
                    del ending[conn]  # ended, and its client has left
                elif now - ended_at.setdefault(conn, now) >= LEAVE_SECONDS:
                    conn.abort()  # its sessions ended LEAVE_SECONDS ago, and it stays (why abort: below)
                    del ending[conn]
            await asyncio.sleep(STOP_TICK)
        # The records of games whose sessions ended while saving paused
        # (serve/pauses.py): a last try, within what is left of the bound.
        await self.context.pauses.close(max(0.0, min(LEAVE_SECONDS, deadline - clock())))
        if self.context.far is not None:  # its games' rows deleted
            await self.context.far.close(min(LEAVE_SECONDS, deadline - clock()))
        if self.context.far_races is not None:  # and its races'
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.context.far_races.close(), max(0.0, min(LEAVE_SECONDS, deadline - clock())))
        # The bound: whatever remains is cut. Aborted, not closed: asyncssh's
        # close drops what is unsent just as abort does, but first sends each
        # channel's close and an SSH disconnect message, a cost per client
        # that stayed (its player was told already, unless its game's last
        # save had still not returned: only a stalled store gets there).
        for conn in list(self.connections):
            conn.abort()
        # Each closed connection's line is written to the log once it is gone.
        for _ in range(int(CLOSE_SECONDS / STOP_TICK) + 1):
            if not self.connections or clock() >= deadline:
                break
            await asyncio.sleep(STOP_TICK)
        self.context.pool.close()
        # What the log holds is written, for a bounded time (LOG_FLUSH_SECONDS
        # past the stop's own bound: a log nobody reads is left as it is).
        if self._log is not None:
            self._log.close()
            for _ in range(int(LOG_FLUSH_SECONDS / STOP_TICK) + 1):
                if self._log.written():
                    break
                await asyncio.sleep(STOP_TICK)

    def reopen_log(self, stream: IO[str]) -> None:
        """The log's lines go to ``stream`` from now on (SIGHUP: serve/log.py)."""
        if self._log is not None:
            self._log.reopen(stream)

    def log(self, line: str, event: str = "message", **fields: object) -> None:
        """One line on the server's log (standard error, or --log's file),
        dated here, for every line alike (UTC, to the second), and queued: it
        never blocks; ``--log-format json``: ``event`` and ``fields`` (serve/log.py)."""
        if self._log is not None:
            self._log.event(line, event, fields)


async def run(options: ServeOptions, stderr: IO[str]) -> int:
    """``ansi2048 serve``: listen until SIGTERM or SIGINT; the exit status.
    What stops it from starting (the data directory, the database, the
    address) is said in one line, status 1."""
    try:
        log_file = LogFile(options.log, stderr)
        os.makedirs(options.data_dir, mode=0o700, exist_ok=True)
        key = host_key(options.data_dir)
        store = open_store(options.db, options.data_dir)
        for note in await store.open():
            stderr.write(f"ansi2048 serve: {note}\n")
    except (OSError, ValueError, StoreError, asyncssh.Error) as error:
        stderr.write(f"ansi2048 serve: error: {_why(error)}\n")
        return EXIT_ERROR
    try:
        secret, said = await daily_secret(store, options.data_dir)
    except (OSError, ValueError, StoreError) as error:
        await store.close()
        stderr.write(f"ansi2048 serve: error: {_why(error)}\n")
        return EXIT_ERROR
    if said:
        stderr.write(f"ansi2048 serve: {said}\n")
    limits, capped = capped_by_files(options.limits, raise_open_files())
    if capped:
        stderr.write(f"ansi2048 serve: {capped}\n")
    server = GameServer(
        store,
        AIPool(min(4, os.cpu_count() or 1)),
        lambda: int.from_bytes(os.urandom(4), "big"),
        log=log_file.stream,
        daily_secret=secret,
        daily_per_address=options.daily_per_address,
        live=LiveGames(options.watchers_per_game, options.watchers),
        watch_stall=options.watcher_stall,
        limits=limits,
        log_format=LogFormat(options.log_format),
        relay=options.relay,
    )
    # The libraries' messages (asyncssh, asyncio, psycopg's pool) are lines of the
    # same log, never written on standard error by logging itself (serve/log.py).
    with LibraryMessages(server.log, server.context.clock).attached():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)

        loop.add_signal_handler(
            signal.SIGHUP, log_file.reopen, server.log, server.reopen_log
        )  # logrotate's (serve/log.py)
        draining = asyncio.Event()  # SIGUSR2: a new server took over (serve/takeover.py)
        loop.add_signal_handler(takeover.DRAIN_SIGNAL, draining.set)
        worker = options.ready_fd >= 0  # its parent does what a server does for the data directory
        # Asked for (an upgrade): servers started side by side on purpose (--reuse-port) must not drain each other.
        replaced = takeover.previous(options.data_dir, options.host, options.port) if options.take_over else None
        replaced = None if worker else replaced
        try:
            try:
                host, port = await takeover.listen_taking_over(
                    lambda: server.listen(options.host, options.port, key, options.reuse_port), replaced
                )
            except ValueError as error:  # asyncio: SO_REUSEPORT is not supported here
                stderr.write(f"ansi2048 serve: error: --reuse-port: {_why(error)}\n")
                return EXIT_ERROR
            except OSError as error:
                stderr.write(f"ansi2048 serve: error: cannot listen on {options.host}:{options.port}: {_why(error)}\n")
                return EXIT_ERROR
            where, fingerprint = f"{f'[{host}]' if ':' in host else host}:{port}", key.get_fingerprint("sha256")
            listening = f"listening on {where} (host key {fingerprint})"
            as_json = options.log_format == LogFormat.JSON.value
            if options.ready_fd >= 0:  # a worker: its parent says it, once for all (serve/workers.py)
                with suppress(OSError), open(options.ready_fd, "w", encoding="utf-8") as ready:
                    ready.write(f"{listening}\n")
            elif log_file.separate or not as_json:  # the operator's line (JSON on standard error: the log's)
                stderr.write(f"{utc_timestamp(time.time())} {listening}\n")
                stderr.flush()
            if log_file.separate or (as_json and options.ready_fd < 0):  # --log's file: from its start, as its stop
                server.log(listening, "listening", address=where, host_key=fingerprint)
            site = metrics = None
            if options.http is not None:  # the browser door (serve/web)
                from .web.site import open_door  # aiohttp: imported only for --http

                say = not worker and (log_file.separate or not as_json)  # as the listening line is said
                site = await open_door(
                    server.context, options, replaced, stderr, say=say, log=log_file.separate or as_json
                )
            if options.metrics is not None:  # the numbers' page
                from .metrics_page import open_metrics  # aiohttp: imported only for --metrics

                metrics = await open_metrics(server.context, options.metrics, options.reuse_port, replaced, stderr)
            if (options.http and not site) or (options.metrics and not metrics):
                await server.stop()
                return EXIT_ERROR
            if not worker:
                takeover.record(options.data_dir, takeover.Running(os.getpid(), options.host, port))
                if replaced is not None and takeover.drain(replaced):
                    server.log(f"taking over from the server {replaced.pid}, which drains")
            orphaned = None
            if worker:  # it stops with its parent, even one killed outright
                orphaned = loop.create_task(stop_when_orphaned(options.parent_pid or os.getppid(), stop))
            await takeover.either(stop, draining)
            if orphaned is not None:
                orphaned.cancel()
            if not stop.is_set():
                said = f"draining: {len(server.sessions)} sessions, for {options.drain_seconds:g} s at most"
                server.log(said, "draining", sessions=len(server.sessions), seconds=options.drain_seconds)
                if site:
                    await site.stop_listening()  # the new server's door takes the new pages
                if metrics:
                    await metrics.stop_listening()  # and its --metrics port
                await server.drain(options.drain_seconds, stop)
            server.log(f"stopping: {len(server.sessions)} sessions to end", "stopping", sessions=len(server.sessions))
            # The sessions' objects (about 130 in reference cycles each) go with
            # the process: frozen, the collections during the stop and at exit
            # do not walk them (0.5 s for 1,000 sessions on a loaded machine).
            gc.freeze()
            if site:
                await site.stop_listening()  # no new page; the pages' sessions end with the others
            await server.stop()
            if site:
                await site.close()
            if metrics:
                await metrics.close()
        finally:
            # Bounded too: an append not committed by then was never shown.
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(store.close(), STORE_CLOSE_SECONDS)
            log_file.close()
            if not worker:
                takeover.forget(options.data_dir)
    return EXIT_OK


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error) or type(error).__name__
