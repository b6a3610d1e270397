"""``ansi2048 serve`` under load: time from connecting to the first frame,
and from a key sent to its frame received, for many players at once.

The server runs as its own process (``ansi2048 serve`` on a free loopback
port, SQLite in a temporary directory, as an operator starts it); the
players are asyncssh clients in this process, each with a key of its own, a
100x30 window and ``play --no-animation``, each typing ``--rate`` keys a
second (a move, then its opposite, so the board keeps changing) for
``--seconds``. Every key's frame is sent only once the key is committed to
the database (synchronous=FULL), so the latency includes that commit.

    python benchmarks/serve.py [--players 1,10,50] [--rate 4] [--seconds 10]

It prints, per number of players: the median and 99th percentile of
connect-to-first-frame and key-to-frame, the keys played, and the server's
CPU time per key (user + system, from /proc: Linux only).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator, List, Optional, Tuple

import asyncssh

from ansi2048.render.repaint import FRAME_END

_END = FRAME_END.encode()


def server_cpu(pid: int) -> float:
    """The process's user + system seconds so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Player(asyncssh.SSHClientSession):  # type: ignore[misc]
    def __init__(self) -> None:
        self.frames = 0
        self.frame = asyncio.Event()

    def data_received(self, data: bytes, datatype: Any) -> None:
        count = data.count(_END)
        if count:
            self.frames += count
            self.frame.set()


async def player(
    port: int,
    rate: float,
    seconds: float,
    connects: List[float],
    keys: List[float],
    ready: Optional[Callable[[], Awaitable[None]]] = None,
    key: Optional[asyncssh.SSHKey] = None,
) -> None:
    """One player (``key``'s, or a new one's): connects, then types for
    ``seconds`` (``ready`` awaited between the first frame and the first
    key: benchmarks/watch.py's watchers)."""
    key = key or asyncssh.generate_private_key("ssh-ed25519")
    started = time.perf_counter()
    async with asyncssh.connect(
        "127.0.0.1", port, username="bench", client_keys=[key], known_hosts=None, encoding=None, agent_path=None
    ) as conn:
        chan, session = await conn.create_session(
            _Player, "play --no-animation", term_type="xterm-256color", term_size=(100, 30)
        )
        await session.frame.wait()
        connects.append(time.perf_counter() - started)
        if ready is not None:
            await ready()
        end = time.perf_counter() + seconds
        typed = 0
        while time.perf_counter() < end:
            session.frame.clear()
            seen = session.frames
            sent = time.perf_counter()
            chan.write(b"adws"[typed % 4 : typed % 4 + 1])
            typed += 1
            while session.frames == seen:
                await asyncio.wait_for(session.frame.wait(), 10)
                session.frame.clear()
            keys.append(time.perf_counter() - sent)
            await asyncio.sleep(max(0.0, 1.0 / rate - (time.perf_counter() - sent)))
        chan.write(b"q")
        await chan.wait_closed()


def percentile(values: List[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def measure(port: int, players: int, rate: float, seconds: float) -> Tuple[List[float], List[float]]:
    connects: List[float] = []
    keys: List[float] = []
    await asyncio.gather(*(player(port, rate, seconds, connects, keys) for _ in range(players)))
    return connects, keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="1,10,50")
    parser.add_argument("--rate", type=float, default=4.0, help="keys a second per player")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with started_server() as (server, port):
        print(f"ansi2048 serve, SQLite, loopback, {args.rate:g} keys/s a player, {args.seconds:g} s")
        for count in (int(text) for text in args.players.split(",")):
            cpu = server_cpu(server.pid)
            connects, keys = asyncio.run(measure(port, count, args.rate, args.seconds))
            cpu = server_cpu(server.pid) - cpu
            print(
                f"{count:4d} players: connect to first frame p50 {statistics.median(connects) * 1000:6.1f} ms"
                f" p99 {percentile(connects, 0.99) * 1000:6.1f} ms; key to frame"
                f" p50 {statistics.median(keys) * 1000:5.1f} ms p99 {percentile(keys, 0.99) * 1000:6.1f} ms;"
                f" {len(keys)} keys, server CPU {cpu / max(1, len(keys)) * 1000:.2f} ms a key (handshakes included)"
            )


@contextmanager
def started_server() -> Iterator[Tuple[subprocess.Popen[bytes], int]]:
    """``ansi2048 serve`` on a free loopback port, SQLite in a temporary directory: it, and its port."""
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [sys.executable, "-m", "ansi2048", "serve", "--listen", "127.0.0.1:0", "--data-dir", data],
            stderr=subprocess.PIPE,
        )
        try:
            assert server.stderr is not None
            line = server.stderr.readline().decode()
            found = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
            assert found, line
            yield server, int(found.group(1))
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
