"""``ansi2048 serve --workers N``: N server processes on one port, and the
parent that keeps them.

One server's game loop uses one core. ``--workers N`` starts N of them on
one port with ``SO_REUSEPORT`` (the kernel spreads new connections among
them), on one data directory (one host key) and one store: the very setup
docs/serving.md describes by hand, kept by a parent that

- starts the first worker, learns its port (port 0: a free one) and host key
  from the line it writes on a pipe of the parent's (``--ready-fd``), then
  starts the others on that port: one ``listening`` line for the whole;
- starts another in place of a worker that dies (a crash, the OOM killer's
  SIGKILL), saying so on standard error; the players of the dead one
  reconnect and resume every move they saw, as after any kill. A worker that
  keeps dying (:data:`RESTARTS` in :data:`RESTART_WINDOW` seconds) is not
  started again: the parent stops the others and exits 1;
- passes SIGTERM, SIGINT and SIGHUP on to every worker, and exits when they
  all have (0 if each did).

A worker is started with the parent's own arguments, then ``--workers 1
--reuse-port --listen HOST:PORT --ready-fd FD --parent-pid PID``: the last of an option wins,
so nothing the operator gave is parsed twice or lost.

What the workers do not share yet: the live views (the watch list, ``watch
NAME``, the take-over prompt) cover the games of the worker a client reached."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import IO, Callable, Deque, Dict, List, Optional, Sequence, Tuple

from ..options.parser import EXIT_ERROR, EXIT_OK
from ..storage.history_file import utc_timestamp
from . import takeover

__all__ = ["RESTARTS", "RESTART_WINDOW", "Ready", "parse_ready", "run_workers", "stop_when_orphaned", "worker_argv"]

# A worker that dies this often within this many seconds is not started again.
RESTARTS = 5
RESTART_WINDOW = 60.0
# How often a worker looks whether its parent is still there.
ORPHAN_CHECK_SECONDS = 1.0
# How long a worker may take to say it is listening (its store opening first).
READY_SECONDS = 60.0

_READY = re.compile(r"listening on (\[[^\]]*\]|[^\s:]+):(\d+) \(host key (\S+)\)")


@dataclass(frozen=True)
class Ready:
    """A worker's ``listening`` line: where it listens, and its host key."""

    host: str
    port: int
    fingerprint: str

    def __str__(self) -> str:
        return f"listening on {self.host}:{self.port} (host key {self.fingerprint})"


def parse_ready(line: str) -> Optional[Ready]:
    """The worker's line (server.run writes it on ``--ready-fd``), or None."""
    found = _READY.search(line)
    if found is None:
        return None
    return Ready(found.group(1), int(found.group(2)), found.group(3))


def worker_argv(argv: Sequence[str], host: str, port: int, ready_fd: int) -> List[str]:
    """A worker's command line: the parent's arguments, then what makes it
    one worker of the parent's port (argparse keeps an option's last value)."""
    listen = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return [
        sys.executable,
        "-m",
        "ansi2048",
        "serve",
        *argv,
        "--workers",
        "1",
        "--reuse-port",
        "--listen",
        listen,
        "--ready-fd",
        str(ready_fd),
        # Named, not read from getppid() once the worker is up: a parent
        # killed while the worker starts would leave it an orphan already.
        "--parent-pid",
        str(os.getpid()),
    ]


class _Workers:
    """The running workers, by process id."""

    def __init__(self, argv: Sequence[str], stderr: IO[str]) -> None:
        self._argv = list(argv)
        self._stderr = stderr
        self.running: Dict[int, asyncio.subprocess.Process] = {}
        self.stopping = False
        self._deaths: Deque[float] = deque(maxlen=RESTARTS)

    def say(self, text: str) -> None:
        self._stderr.write(f"{utc_timestamp(time.time())} {text}\n")
        self._stderr.flush()

    async def start(self, host: str, port: int) -> Tuple[Optional[Ready], asyncio.subprocess.Process]:
        """One worker on ``host``:``port`` (0: a free one); its line once it
        listens (None: it ended first, having said why on standard error)."""
        read_end, write_end = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *worker_argv(self._argv, host, port, write_end),
                stdin=asyncio.subprocess.DEVNULL,
                pass_fds=(write_end,),
                start_new_session=True,  # a terminal's Ctrl-C reaches the parent, which passes it on once
            )
        finally:
            os.close(write_end)
        self.running[process.pid] = process
        loop = asyncio.get_running_loop()
        with os.fdopen(read_end, "rb") as ready:
            try:
                line = await asyncio.wait_for(loop.run_in_executor(None, ready.readline), READY_SECONDS)
            except asyncio.TimeoutError:
                line = b""
        return parse_ready(line.decode("utf-8", "replace")), process

    def signal_all(self, signum: int) -> None:
        for process in self.running.values():
            if process.returncode is None:
                process.send_signal(signum)

    def may_restart(self, now: float) -> bool:
        """A worker died: another may start unless they die too often."""
        self._deaths.append(now)
        return len(self._deaths) < RESTARTS or now - self._deaths[0] > RESTART_WINDOW


async def run_workers(
    count: int, host: str, port: int, data_dir: str, argv: Sequence[str], stderr: IO[str], take_over: bool = False
) -> int:
    """``ansi2048 serve --workers COUNT``: the parent, until its workers end;
    the exit status. With ``take_over`` it replaces the server running on
    ``data_dir`` and this address (serve/takeover.py); it drains on SIGUSR2
    as one does."""
    workers = _Workers(argv, stderr)
    replaced = takeover.previous(data_dir, host, port) if take_over else None
    if replaced is not None and not takeover.can_share(host, port) and takeover.drain(replaced):
        # It holds the port alone (no --reuse-port): it lets go of it as it
        # drains, and the workers take it (new connections are refused
        # until the first one listens, about half a second).
        replaced = None
    first, process = await workers.start(host, port)
    if first is None:
        workers.signal_all(signal.SIGTERM)
        status = await process.wait()
        return status if status > 0 else EXIT_ERROR
    bound_host = first.host.strip("[]")
    for _ in range(count - 1):
        ready, process = await workers.start(bound_host, first.port)
        if ready is None:
            workers.say(f"a worker could not start on {first.host}:{first.port}: stopping the others")
            workers.signal_all(signal.SIGTERM)
            await asyncio.gather(*(process.wait() for process in workers.running.values()))
            return EXIT_ERROR
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()

    def stop(signum: int) -> None:
        workers.stopping = True  # a worker that ends now is not started again
        workers.signal_all(signum)
        stopped.set()

    for signum in (signal.SIGTERM, signal.SIGINT, takeover.DRAIN_SIGNAL):
        loop.add_signal_handler(signum, stop, signum)
    loop.add_signal_handler(signal.SIGHUP, workers.signal_all, signal.SIGHUP)
    workers.say(f"{first} with {count} workers")
    takeover.record(data_dir, takeover.Running(os.getpid(), host, first.port))
    try:
        if replaced is not None and takeover.drain(replaced):
            workers.say(f"taking over from the server {replaced.pid}, which drains")
        return await _keep(workers, stop, stopped, bound_host, first.port)
    finally:
        takeover.forget(data_dir)


async def _keep(workers: _Workers, stop: Callable[[int], None], stopped: asyncio.Event, host: str, port: int) -> int:
    """The workers kept until they have all ended; the exit status."""
    statuses: List[int] = []
    while workers.running:
        ended = await _first_to_end(workers.running, stopped)
        if ended is None:  # a signal: go round to wait for them all
            stopped.clear()
            continue
        del workers.running[ended.pid]
        status = ended.returncode if ended.returncode is not None else EXIT_ERROR
        if workers.stopping:
            # A worker still starting when the signal came ends by it (its
            # handlers were not set yet): stopped as asked, all the same.
            statuses.append(EXIT_OK if -status in (signal.SIGTERM, signal.SIGINT, takeover.DRAIN_SIGNAL) else status)
            continue
        how = f"signal {-status}" if status < 0 else f"status {status}"
        if not workers.may_restart(time.monotonic()):
            workers.say(f"worker {ended.pid} ended ({how}): {RESTARTS} in {RESTART_WINDOW:g} s, stopping the others")
            stop(signal.SIGTERM)
            statuses.append(EXIT_ERROR)
            continue
        workers.say(f"worker {ended.pid} ended ({how}): starting another")
        ready, _ = await workers.start(host, port)
        if ready is None:
            workers.say("the new worker could not start")
    return EXIT_OK if all(status == EXIT_OK for status in statuses) else EXIT_ERROR


async def _first_to_end(
    running: Dict[int, asyncio.subprocess.Process], stopped: asyncio.Event
) -> Optional[asyncio.subprocess.Process]:
    """The first worker to end, or None when ``stopped`` is set first."""
    waits = {asyncio.ensure_future(process.wait()): process for process in running.values()}
    signalled = asyncio.ensure_future(stopped.wait())
    try:
        done, _ = await asyncio.wait([*waits, signalled], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in [*waits, signalled]:
            task.cancel()
    for task, process in waits.items():
        if task in done:
            return process
    return None


async def stop_when_orphaned(parent: int, stop: asyncio.Event) -> None:
    """Set ``stop`` once the process that started this one is gone (the
    system makes another its parent): a ``--workers`` parent killed by
    SIGKILL leaves no worker serving on without it."""
    while not stop.is_set():
        if os.getppid() != parent:
            stop.set()
            return
        await asyncio.sleep(ORPHAN_CHECK_SECONDS)
