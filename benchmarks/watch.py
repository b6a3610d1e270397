"""Watchers cost the player nothing: the player's key-to-frame latency with
no watcher, and with ``--watchers`` (20) watching, one of them not reading.

The server runs as its own process (``ansi2048 serve`` on a free loopback
port, SQLite in a temporary directory). The player is an asyncssh client in
this process (100x30, 256 colours, ``play --no-animation``), typing
``--rate`` keys a second for ``--seconds``; the watchers are asyncssh clients
in another process (so their reading does not share the player's client
loop), each ``watch bench`` at 100x30, the last one with a 1 KB window that
it stops reading at once (its channel fills; the server skips its frames,
and drops it after 10 s full). Rounds alternate, none / watched, ``--rounds``
times each, so the machine's load falls on both alike.

    python benchmarks/watch.py [--watchers 20] [--rate 8] [--seconds 8] [--rounds 3]

It prints each round's median and 99th percentile, then both sides' medians
of all their keys and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from typing import Any, Awaitable, Callable, List, Optional

import asyncssh
from serve import (  # benchmarks/serve.py (run as python benchmarks/watch.py)
    percentile,
    player,
    server_cpu,
    started_server,
)

# The player's key: the same player every round ("bench" in the store, the
# name the watchers ask for).
_PLAYER = asyncssh.generate_private_key("ssh-ed25519")


class _Watcher(asyncssh.SSHClientSession):  # type: ignore[misc]
    """Reads what comes (and drops it)."""


class _Stuck(_Watcher):
    def connection_made(self, chan: Any) -> None:
        chan.pause_reading()  # reads nothing, ever


def _connect(port: int) -> Any:
    key = asyncssh.generate_private_key("ssh-ed25519")
    return asyncssh.connect(
        "127.0.0.1", port, username="bench", client_keys=[key], known_hosts=None, encoding=None, agent_path=None
    )


async def play(
    port: int, rate: float, seconds: float, ready: Optional[Callable[[], Awaitable[None]]] = None
) -> List[float]:
    """One player's keys' latencies (seconds): benchmarks/serve.py's player,
    ``ready`` awaited once its game is on, then half a second (the note
    saying how many watch comes and goes) before the first key."""

    async def settled() -> None:
        if ready is not None:
            await ready()
        await asyncio.sleep(0.5)

    keys: List[float] = []
    await player(port, 0, rate, seconds, [], keys, [], settled, _PLAYER, "bench")
    return keys


async def watch(port: int, watchers: int) -> None:
    """``watchers`` watchers of bench's game until this process is ended,
    at the lowest CPU priority: they stand for clients on other machines, and
    must not take the shared cores from the player's client (what is
    measured is the server)."""
    os.nice(19 - os.nice(0))
    conns = [await _connect(port) for _ in range(watchers)]
    chans = []
    for index, conn in enumerate(conns):
        stuck = index == watchers - 1
        chan, _ = await conn.create_session(
            _Stuck if stuck else _Watcher,
            "watch bench",
            term_type="xterm-256color",
            term_size=(100, 30),
            window=1024 if stuck else 2 * 1024 * 1024,
        )
        chans.append(chan)
    await asyncio.sleep(1.0)
    # A watcher told "no game" would have been closed by now: all must be there.
    watching = sum(not chan.is_closing() for chan in chans)
    print(f"watching {watching}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=20)
    parser.add_argument("--rate", type=float, default=8.0, help="the player's keys a second")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--watch-port", type=int, help=argparse.SUPPRESS)  # the watchers' process
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.watchers, args.seconds, args.rounds = 2, 1.0, 1
    if args.watch_port:
        asyncio.run(watch(args.watch_port, args.watchers))
        return
    with started_server() as (server, port, _data, _log):
        # The player's client stands for another machine: it must not wait
        # for the shared cores behind the server's work for the watchers
        # (what is measured is whether the server delays the player's frames).
        # The server keeps the default priority.
        try:
            os.nice(-10)
        except OSError:
            print("(not allowed to raise this client's priority: the figures include waiting for the cores)")
        print(
            f"ansi2048 serve, SQLite, loopback; the player at {args.rate:g} keys/s for {args.seconds:g} s a round;"
            f" {args.watchers} watchers, one not reading"
        )
        alone: List[float] = []
        watched: List[float] = []
        for _ in range(args.rounds):
            for label, kept, watchers in (
                ("no watcher", alone, False),
                (f"{args.watchers} watchers", watched, True),
            ):
                cpu = server_cpu(server.pid)
                keys = asyncio.run(with_watchers(port, args) if watchers else play(port, args.rate, args.seconds))
                cpu = server_cpu(server.pid) - cpu
                kept += keys
                print(
                    f"  {label}: key to frame p50 {statistics.median(keys) * 1000:5.1f} ms"
                    f" p99 {percentile(keys, 0.99) * 1000:5.1f} ms ({len(keys)} keys;"
                    f" server CPU {cpu * 1000 / len(keys):.1f} ms a key, connecting included)"
                )
        ratio = statistics.median(watched) / statistics.median(alone)
        print(
            f"all rounds: p50 {statistics.median(alone) * 1000:.1f} ms alone,"
            f" {statistics.median(watched) * 1000:.1f} ms watched ({ratio:.2f}x);"
            f" p99 {percentile(alone, 0.99) * 1000:.1f} / {percentile(watched, 0.99) * 1000:.1f} ms"
        )


async def with_watchers(port: int, args: argparse.Namespace) -> List[float]:
    """The player's round with the watchers' process watching, all of them
    connected before the first key is timed (``watch NAME`` finds games being played)."""
    started: List[asyncio.subprocess.Process] = []

    async def ready() -> None:
        watchers = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--watch-port",
            str(port),
            "--watchers",
            str(args.watchers),
            stdout=subprocess.PIPE,
        )
        started.append(watchers)
        assert watchers.stdout is not None
        said = (await asyncio.wait_for(watchers.stdout.readline(), 60)).decode().split()
        if said != ["watching", str(args.watchers)]:
            raise SystemExit(f"the watchers did not all watch: {' '.join(said)}")

    try:
        return await play(port, args.rate, args.seconds, ready)
    finally:
        for watchers in started:
            watchers.terminate()
            await watchers.wait()


if __name__ == "__main__":
    main()
