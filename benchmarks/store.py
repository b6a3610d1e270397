"""Keys stored per second at load, on each database the server can use.

Many sessions each append one key (one byte) to their own game and await it
before the next, as the server does (a frame is drawn only after its key is
committed): every key counted is durable (SQLite: WAL with synchronous=FULL;
PostgreSQL: fsync on, synchronous_commit on). Group commit is what lets many
sessions share one commit; the figures show how many keys a commit held.

    python benchmarks/store.py [--db sqlite,postgresql] [--sessions 50,200] [--seconds 5]
    python benchmarks/store.py --most-per-commit 1   # one commit per key, to compare

PostgreSQL: a throwaway cluster (tests/databases.py's, the machine's initdb
and pg_ctl) unless ``--postgres-url`` names a database to use (its tables are
made in it: give it an empty one).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.databases, from a checkout

from ansi2048.serve.store import open_store

BOARD = "4x4-2048"


async def measure(url: str, data_dir: str, sessions: int, seconds: float) -> Tuple[int, float, List[float], int]:
    """(keys stored, seconds taken, each append's latency, commits)."""
    store: Any = open_store(url, data_dir)
    await store.open()
    try:
        players = []
        for n in range(sessions):
            player = (await store.player(f"SHA256:bench{n}", "bench")).id
            await store.claim(player, BOARD, f"bench/{n}", ttl=600, take_over=True)
            await store.rewrite(player, BOARD, f"bench/{n}", b"# header\n")
            players.append(player)
        latencies: List[float] = []
        commits_before = store.commits
        start = time.perf_counter()
        deadline = start + seconds

        async def play(n: int, player: int) -> None:
            while time.perf_counter() < deadline:
                sent = time.perf_counter()
                await store.append(player, BOARD, f"bench/{n}", b"w")
                latencies.append(time.perf_counter() - sent)

        await asyncio.gather(*(play(n, player) for n, player in enumerate(players)))
        return len(latencies), time.perf_counter() - start, latencies, store.commits - commits_before
    finally:
        await store.close()


def percentile(values: List[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite,postgresql", help="databases to measure (default: both)")
    parser.add_argument("--sessions", default="50,200", help="concurrent sessions, comma-separated")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each run")
    parser.add_argument("--postgres-url", default="", help="an empty PostgreSQL database to use")
    parser.add_argument(
        "--most-per-commit", type=int, default=0, help="cap on appends in one commit (1: no group commit, to compare)"
    )
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.db, args.sessions, args.seconds = "sqlite", "5", 0.5
    if args.most_per_commit:
        from ansi2048.serve.store import postgres_appends, sqlite_writer

        sqlite_writer.MOST_PER_COMMIT = postgres_appends.MOST_PER_COMMIT = args.most_per_commit
    databases = args.db.split(",")
    counts = [int(count) for count in args.sessions.split(",")]
    with ExitStack() as stack:
        scratch = Path(tempfile.mkdtemp(prefix="a2048-bench-"))
        stack.callback(shutil.rmtree, scratch, True)
        for database in databases:
            for sessions in counts:
                if database == "sqlite":
                    url = str(scratch / f"bench-{sessions}.sqlite3")
                elif args.postgres_url:
                    url = args.postgres_url
                else:
                    url = throwaway_postgres(stack)
                keys, taken, latencies, commits = asyncio.run(measure(url, str(scratch), sessions, args.seconds))
                print(
                    f"{database:10} {sessions:4} sessions: {keys / taken:8.0f} keys/s"
                    f"  append p50 {statistics.median(latencies) * 1000:6.2f} ms"
                    f"  p99 {percentile(latencies, 0.99) * 1000:6.2f} ms"
                    f"  {keys / max(commits, 1):6.1f} keys per commit ({keys} keys in {taken:.1f} s)",
                    flush=True,
                )


_CLUSTERS: List[Any] = []


def throwaway_postgres(stack: ExitStack) -> str:
    """A schema on a throwaway cluster (started once, stopped at the end)."""
    from tests.databases import Cluster, postgres_binaries

    if not _CLUSTERS:
        binaries = postgres_binaries()
        if binaries is None:
            sys.exit("store.py: no PostgreSQL server binaries (initdb, pg_ctl); give --postgres-url")
        root = Path(tempfile.mkdtemp(prefix="a2048-pg-"))
        stack.callback(shutil.rmtree, root, True)
        cluster = Cluster(binaries, root)
        cluster.create()
        cluster.start()
        stack.callback(cluster.stop)
        _CLUSTERS.append(cluster)
    url: str = _CLUSTERS[0].new_schema()
    return url


if __name__ == "__main__":
    main()
