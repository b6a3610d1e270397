"""The worst stall a bystander sees: one player types while another resumes
a long game, and while someone reads a big leaderboard.

A server runs as its own process (``ansi2048 serve``, SQLite, as
benchmarks/serve.py starts it). The bystander plays ``play`` and types a key
as soon as the previous key's frame came (a few milliseconds apart), and
times each key to its frame. Meanwhile, in turn:

- **resume**: another player resumes a 10x10 game of ``--moves`` moves
  (written into the database as its recording), ``--repeat`` times, from
  the snapshot its last session kept (serve/snapshot.py);
- **replay**: the same, its snapshot deleted before each resume (as after
  a server killed mid-game, or a store written before snapshots): the
  recording is replayed, in steps;
- **leaderboard**: another player reads today's ``leaderboard``, whose
  ``--entries`` ranked games each have ``--keys`` keys (their recordings
  and key times in the database), ``--repeat`` times.

It prints, per phase, the bystander's keys and its median and worst
key-to-frame (goal: worst at most 20 ms), and how long the other player's
own request took. ``--quick`` runs a few seconds' version of it (the suite's
check that every benchmark still runs).

    python benchmarks/stalls.py [--moves 100000] [--entries 1000] [--keys 3000] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import random
import sqlite3
import statistics
import sys
import time
from contextlib import closing
from typing import Any, Awaitable, Callable, List, Tuple

import asyncssh
from serve import _Player, join, started_server  # benchmarks/serve.py (run as python benchmarks/stalls.py)

from ansi2048 import __version__
from ansi2048.game.engine import Direction, Game
from ansi2048.records.recording import format_header
from ansi2048.serve.store import DEFAULT_FILE

_KEYS = {Direction.UP: "w", Direction.LEFT: "a", Direction.DOWN: "s", Direction.RIGHT: "d"}
BIG = "10x10-2048"  # the resumed game's board


def long_recording(moves: int) -> bytes:
    """A 10x10 game of ``moves`` real moves (random ones that change the board)."""
    rng = random.Random(0)
    game = Game(10, 10, 2048, seed=3)
    keys: List[str] = []
    directions = list(_KEYS)
    while len(keys) < moves and not game.over:
        direction = directions[int(rng.random() * 4)]
        if game.move(direction):
            keys.append(_KEYS[direction])
    return (format_header(3, 10, 10, 2048, __version__) + "".join(keys)).encode("ascii")


def fill_leaderboard(database: str, entries: int, keys: int) -> None:
    """``entries`` ranked games of today, ``keys`` keys each, written as the server keeps them."""
    day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    rng = random.Random(1)
    body = b"# ansi2048 version=x seed=1 size=4x4 goal=2048\n" + b"wasd" * (keys // 4)
    with closing(sqlite3.connect(database, timeout=30)) as db, db:
        for number in range(entries):
            cursor = db.execute(
                "INSERT INTO players (fingerprint, name) VALUES (?, ?)", (f"SHA256:bench{number}", f"ranked{number}")
            )
            times = "".join(f" {key * 150 + rng.randrange(100)}" for key in range(keys))
            db.execute(
                "INSERT INTO daily (day, player, address, started, status, recording, times, score, biggest, moves,"
                " seconds, cells) VALUES (?, ?, ?, ?, 'finished', ?, ?, ?, 256, ?, 450.0, '')",
                (
                    day,
                    cursor.lastrowid,
                    f"10.0.{number // 250}.{number % 250}",
                    time.time(),
                    body,
                    times,
                    rng.randrange(1000, 20000),
                    keys,
                ),
            )


def resumable(database: str, name: str, recording: bytes) -> None:
    """``name``'s 10x10 game made ``recording`` (the player and its game exist)."""
    with closing(sqlite3.connect(database, timeout=30)) as db, db:
        (player,) = db.execute("SELECT id FROM players WHERE name = ?", (name,)).fetchone()
        db.execute("DELETE FROM items WHERE player = ? AND board = ?", (player, BIG))
        db.execute("UPDATE games SET recording = ? WHERE player = ? AND board = ?", (recording, player, BIG))
    forget_snapshot(database, name)


def forget_snapshot(database: str, name: str) -> None:
    """``name``'s 10x10 game has no snapshot: resuming it replays its recording."""
    with closing(sqlite3.connect(database, timeout=30)) as db, db:
        (player,) = db.execute("SELECT id FROM players WHERE name = ?", (name,)).fetchone()
        db.execute("UPDATE games SET snapshot = NULL WHERE player = ? AND board = ?", (player, BIG))


def connected(port: int, name: str, key: asyncssh.SSHKey) -> Any:
    return asyncssh.connect(
        "127.0.0.1", port, username=name, client_keys=[key], known_hosts=None, encoding=None, agent_path=None
    )


async def resume(conn: Any) -> float:
    """The resumer (already connected) opens its game, sees its first frame, and leaves it: how long that took."""
    started = time.perf_counter()
    chan, session = await conn.create_session(
        _Player, "play --no-animation --size 10x10", term_type="xterm-256color", term_size=(200, 60)
    )
    await asyncio.wait_for(session.frame.wait(), 120)
    took = time.perf_counter() - started
    chan.write(b"q")
    await chan.wait_closed()
    return took


async def leaderboard(conn: Any) -> float:
    started = time.perf_counter()
    result = await conn.run("leaderboard", check=True)
    assert b"ranked" in (result.stdout or b"")
    return time.perf_counter() - started


async def beside(port: int, disturb: Callable[[], Awaitable[float]], repeat: int) -> Tuple[List[float], List[float]]:
    """The bystander's key-to-frame times while ``disturb`` runs ``repeat`` times; and its own times."""
    conn, chan, session = await join(port, 1, [])
    keys: List[float] = []
    took: List[float] = []
    done, measuring = asyncio.Event(), False

    async def type_keys() -> None:
        typed = 0
        while not done.is_set():
            session.frame.clear()
            seen = session.frames
            sent = time.perf_counter()
            chan.write(b"adws"[typed % 4 : typed % 4 + 1])
            typed += 1
            while session.frames == seen:
                await asyncio.wait_for(session.frame.wait(), 60)
                session.frame.clear()
            if measuring:
                keys.append(time.perf_counter() - sent)
            await asyncio.sleep(0.005)

    async with conn:
        typing = asyncio.ensure_future(type_keys())
        await asyncio.sleep(0.5)  # the bystander's first keys (the server warming up) are not counted
        measuring = True
        for _ in range(repeat):
            took.append(await disturb())
            await asyncio.sleep(0.2)
        done.set()
        await typing
        chan.write(b"q")
        await chan.wait_closed()
    return keys, took


def line(phase: str, keys: List[float], took: List[float]) -> str:
    return (
        f"{phase:<12} bystander keys {len(keys):>5}  median {statistics.median(keys) * 1000:6.1f} ms"
        f"  worst {max(keys) * 1000:7.1f} ms   the other's request {statistics.median(took) * 1000:7.1f} ms"
    )


async def measure(port: int, data: str, moves: int, entries: int, keys: int, repeat: int) -> None:
    database = os.path.join(data, DEFAULT_FILE)
    quiet, _ = await beside(port, lambda: asyncio.sleep(0.5, 0.0), repeat)
    print(line("alone", quiet, [0.0]), flush=True)
    key = asyncssh.generate_private_key("ssh-ed25519")
    async with connected(port, "resumer", key) as conn:
        await resume(conn)  # the player and its board, made
        resumable(database, "resumer", long_recording(moves))
        await resume(conn)  # replayed once: its snapshot kept as it is left

        async def replayed() -> float:
            await asyncio.to_thread(forget_snapshot, database, "resumer")
            return await resume(conn)

        print(line(f"resume {moves // 1000}k", *await beside(port, lambda: resume(conn), repeat)), flush=True)
        print(line(f"replay {moves // 1000}k", *await beside(port, replayed, repeat)), flush=True)
    fill_leaderboard(database, entries, keys)
    async with connected(port, "reader", asyncssh.generate_private_key("ssh-ed25519")) as conn:
        print(line(f"board {entries}", *await beside(port, lambda: leaderboard(conn), repeat)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=100_000, help="moves of the resumed 10x10 game")
    parser.add_argument("--entries", type=int, default=1000, help="ranked games on today's leaderboard")
    parser.add_argument("--keys", type=int, default=3000, help="keys of each ranked game")
    parser.add_argument("--repeat", type=int, default=3, help="resumes and leaderboard reads, each")
    parser.add_argument("--quick", action="store_true", help="a few seconds' run: 2,000 moves, 20 entries")
    args = parser.parse_args()
    if args.quick:
        args.moves, args.entries, args.keys, args.repeat = 2000, 20, 200, 1
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    with started_server() as (_, port, data, log):
        try:
            asyncio.run(measure(port, data, args.moves, args.entries, args.keys, args.repeat))
        except (OSError, asyncssh.Error):
            print("the server's log:", *log[-20:], sep="\n  ", file=sys.stderr)
            raise


if __name__ == "__main__":
    main()
