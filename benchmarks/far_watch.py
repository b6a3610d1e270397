"""A watcher on another server: how long after the player's frame a watcher
connected to a second server of the same store sees the move (issue 38:
the goal is 250 ms at the 99th percentile).

Two ``ansi2048 serve`` processes on free loopback ports, each with a data
directory of its own and one SQLite file for both (``--db``), as
``--workers`` or an operator's servers side by side share it. The player is
an asyncssh client of the first (``play --no-animation``, 100x30), the
watcher one of the second (``watch bench``, 100x30); both screens are read
through pyte. The player moves ``--keys`` times, ``--gap`` seconds apart;
for each move that changed the board, the time from the player's screen
showing its move count to the watcher's showing it.

    python benchmarks/far_watch.py [--keys 120] [--gap 0.25] [--quick]

It prints the median, the 99th percentile and the worst, and how many
moves were measured.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
from typing import Any, List, Optional, Tuple

import asyncssh
import pyte
from serve import started_server  # benchmarks/serve.py (run as python benchmarks/far_watch.py)

_MOVES = re.compile(r"Moves (\d+)")


class _Screen(asyncssh.SSHClientSession):  # type: ignore[misc]
    """What a client's terminal shows, and when it last changed."""

    def __init__(self) -> None:
        self.screen = pyte.Screen(100, 30)
        self.stream = pyte.ByteStream(self.screen)
        self.changed = asyncio.Event()

    def data_received(self, data: bytes, datatype: Optional[int]) -> None:
        self.stream.feed(data)
        self.changed.set()

    def moves(self) -> int:
        found = _MOVES.search("\n".join(self.screen.display))
        return int(found.group(1)) if found else -1


async def _until(screen: _Screen, wanted: int, seconds: float) -> Optional[float]:
    """When ``screen`` shows ``wanted`` moves (the monotonic clock); None if not within ``seconds``."""
    end = time.monotonic() + seconds
    while screen.moves() != wanted:
        screen.changed.clear()
        left = end - time.monotonic()
        if left <= 0:
            return None
        try:
            await asyncio.wait_for(screen.changed.wait(), left)
        except asyncio.TimeoutError:
            return None
    return time.monotonic()


async def _open(port: int, key: Any, command: str) -> Tuple[Any, Any, _Screen]:
    conn = await asyncssh.connect(
        "127.0.0.1", port, username="bench", client_keys=[key], known_hosts=None, encoding=None, agent_path=None
    )
    chan, session = await conn.create_session(_Screen, command, term_type="xterm-256color", term_size=(100, 30))
    return conn, chan, session


async def measure(player_port: int, watcher_port: int, keys: int, gap: float) -> List[float]:
    """The watcher's delays behind the player, in seconds, one per move."""
    player_key = asyncssh.generate_private_key("ssh-ed25519")
    conn, chan, player = await _open(player_port, player_key, "play --no-animation")
    assert await _until(player, 0, 30) is not None, "the player's game did not start"
    # The other server lists the game once the exchanges have run (a tick
    # each, a few tenths of a second): until then "watch bench" finds none.
    watcher_key = asyncssh.generate_private_key("ssh-ed25519")
    for _ in range(60):
        far, _, watcher = await _open(watcher_port, watcher_key, "watch bench")
        if await _until(watcher, 0, 1.0) is not None:
            break
        far.close()
    else:
        raise AssertionError("the watcher on the other server saw no game")
    delays: List[float] = []
    moved = 0
    for index in range(keys):
        chan.write("asdw"[index % 4].encode())
        shown = await _until(player, moved + 1, gap)
        if shown is not None:  # the key moved the board
            moved += 1
            seen = await _until(watcher, moved, 5.0)
            if seen is not None:
                delays.append(seen - shown)
        await asyncio.sleep(max(0.0, gap - (time.monotonic() - (shown or time.monotonic()))))
    conn.close()
    far.close()
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=120)
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between the player's keys")
    parser.add_argument("--quick", action="store_true", help="a tiny size: that the script still runs")
    args = parser.parse_args()
    keys = 8 if args.quick else args.keys
    with tempfile.TemporaryDirectory() as folder:
        shared = ("--db", os.path.join(folder, "shared.sqlite3"))
        with started_server(options=shared) as first, started_server(options=shared) as second:
            delays = asyncio.run(measure(first[1], second[1], keys, args.gap))
    if not delays:
        print("no move measured")
        return
    ms = sorted(delay * 1000 for delay in delays)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(
        f"watcher on another server, behind the player's frame: p50 {statistics.median(ms):.1f} ms,"
        f" p99 {p99:.1f} ms, worst {ms[-1]:.1f} ms ({len(ms)} moves; load {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
