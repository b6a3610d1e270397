"""The worst stall a bystander sees while many replays play at once.

A server runs as its own process (``ansi2048 serve``, SQLite, as
benchmarks/serve.py starts it), with yesterday's ranked game (a real 6x6
game to its end, a few hundred moves: its day is over, so anyone may replay
it) in its database. A bystander plays ``play`` and types a key as soon as
the previous key's frame came, and times each key to its frame (as
benchmarks/stalls.py's does), first alone, then while each count of
``--replays`` viewers replays that game on terminals of their own, at the
replay's own pace, with its motion; ``--seconds`` each, a server of its
own for each count.

It prints, per count, the bystander's keys and its median and worst
key-to-frame, and the frames the viewers got in all (the replays' work).
``--quick`` runs a few seconds' version of it.

    python benchmarks/replays.py [--replays 50,200] [--seconds 5] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import multiprocessing
import os
import random
import re
import sqlite3
import sys
import time
from collections import Counter
from contextlib import AsyncExitStack, closing
from typing import Any, List

import asyncssh
from serve import _Player, join, source, started_server  # benchmarks/serve.py (run as python benchmarks/replays.py)
from stalls import line

from ansi2048 import __version__
from ansi2048.game.engine import Direction, Game
from ansi2048.records.recording import format_header
from ansi2048.serve.store import DEFAULT_FILE

KEYS = {Direction.UP: "w", Direction.LEFT: "a", Direction.DOWN: "s", Direction.RIGHT: "d"}


def finished_game() -> bytes:
    """A 6x6 game played to its end, into a corner as people play (down and
    left first, a random move now and then): its recording, long enough
    (about 1,200 moves: a minute at the replay's pace) to last through a count's measurement."""
    rng = random.Random(0)
    game = Game(6, 6, 2048, seed=5)
    keys: List[str] = []
    order = [Direction.DOWN, Direction.LEFT, Direction.RIGHT, Direction.UP]
    while not game.over:
        tried = ([rng.choice(order)] if rng.random() < 0.1 else []) + order
        direction = next(direction for direction in tried if game.move(direction))
        keys.append(KEYS[direction])
    return (format_header(5, 6, 6, 2048, __version__) + "".join(keys)).encode("ascii")


def yesterdays_game(database: str) -> int:
    """A ranked game of yesterday (its day over: public) in the database: its id."""
    day = (datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=1)).isoformat()
    recording = finished_game()
    with closing(sqlite3.connect(database, timeout=30)) as db, db:
        player = db.execute("INSERT INTO players (fingerprint, name) VALUES ('SHA256:replayed', 'replayed')").lastrowid
        cursor = db.execute(
            "INSERT INTO daily (day, player, address, started, status, recording, times, score, biggest, moves,"
            " seconds, cells) VALUES (?, ?, '10.0.0.1', ?, 'finished', ?, '', 1000, 128, 300, 100.0, '')",
            (day, player, time.time(), recording),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid


async def replays(port: int, game: int, count: int, stack: AsyncExitStack) -> List[Any]:
    """``count`` viewers replaying ``game``, each on a connection of its own
    (all connected first: logging in beside running replays is not what
    is measured): their sessions."""
    connections = []
    for number in range(count):
        connections.append(
            await stack.enter_async_context(
                await asyncssh.connect(
                    "127.0.0.1",
                    port,
                    username=f"viewer{number}",
                    client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
                    known_hosts=None,
                    encoding=None,
                    agent_path=None,
                    local_addr=source(number + 10),
                )
            )
        )
    sessions: List[Any] = []
    for chan, session in await asyncio.gather(
        *(
            conn.create_session(_Player, f"replay {game}", term_type="xterm-256color", term_size=(100, 30))
            for conn in connections
        )
    ):
        stack.callback(chan.close)
        sessions.append(session)
    return sessions


async def typed(chan: Any, session: Any, seconds: float) -> List[float]:
    """The bystander's key-to-frame times, a key as soon as the last one's frame came, for ``seconds``."""
    times: List[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        session.frame.clear()
        seen, sent = session.frames, time.perf_counter()
        chan.write(b"adws"[len(times) % 4 : len(times) % 4 + 1])
        while session.frames == seen:
            await asyncio.wait_for(session.frame.wait(), 60)
            session.frame.clear()
        times.append(time.perf_counter() - sent)
        await asyncio.sleep(0.005)
    return times


async def watch_replays(port: int, game: int, count: int, started: Any, stop: Any, frames: Any) -> None:
    """The viewers' process: ``count`` replays started (then ``started`` is
    set), on until ``stop``; the frames they got meanwhile put in ``frames``."""
    async with AsyncExitStack() as stack:
        viewers = await replays(port, game, count, stack)
        await asyncio.sleep(0.5)
        before = sum(viewer.frames for viewer in viewers)
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        frames.put((sum(viewer.frames for viewer in viewers) - before, sum(v.status is None for v in viewers)))


async def measure(port: int, data: str, count: int, seconds: float) -> None:
    """The bystander's keys beside ``count`` replays, watched from another
    process (so that this one's own work receiving them is not what is timed)."""
    game = yesterdays_game(os.path.join(data, DEFAULT_FILE))
    conn, chan, session = await join(port, 1, [])  # the bystander, logged in before the replays start
    async with conn:
        await typed(chan, session, 0.5)  # the server warming up: not counted
        started, stop, frames = multiprocessing.Event(), multiprocessing.Event(), multiprocessing.Queue()
        viewers = multiprocessing.Process(
            target=lambda: asyncio.run(watch_replays(port, game, count, started, stop, frames))
        )
        viewers.start()
        while not started.is_set():
            await typed(chan, session, 0.2)  # (the bystander stays active, as a player is)
        keys = await typed(chan, session, seconds)
        stop.set()
        shown, on = frames.get(timeout=60)
        viewers.join(60)
        print(line(f"{count} replays", keys, [0.0]), f"  viewers' frames {shown:>7} ({on} on)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", default="50,200", help="counts of replays at once")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long the bystander types beside each count")
    parser.add_argument("--quick", action="store_true", help="a few seconds' run: 5 replays")
    args = parser.parse_args()
    counts = [5] if args.quick else [int(count) for count in args.replays.split(",")]
    seconds = 1.0 if args.quick else args.seconds
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    for count in [0, *counts]:  # a server of its own for each count
        with started_server() as (_, port, data, log):
            try:
                asyncio.run(measure(port, data, count, seconds))
                time.sleep(0.5)  # the viewers' last lines
                print("  how replays ended:", dict(Counter(re.findall(r"replay: ([^\n]*)", "\n".join(log)))))
            except (OSError, asyncssh.Error):
                print("the server's log:", *log[-20:], sep="\n  ", file=sys.stderr)
                raise


if __name__ == "__main__":
    main()
