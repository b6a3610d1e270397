"""How soon a racer's move reaches the other racers' screens (issue 37
asks for 250 ms at most).

The server runs as its own process (``ansi2048 serve`` on a free loopback
port, SQLite in a temporary directory); ``--players`` asyncssh clients in
this process (100x30, 256 colours) join one race of 4x4 to 2048. Once it
runs, the first of them types ``--rate`` keys a second for ``--seconds``,
the others none: so any move count above 0 on another player's screen is
the mover's. Each move the mover's own screen shows is timed from the key
that made it to the moment each opponent's screen first shows that count.

    python benchmarks/race.py [--players 8] [--rate 8] [--seconds 8]

It prints the number of moves timed, and the median, 99th percentile and
worst of the opponents' delays, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import time
from typing import Any, Dict, List, Optional

import asyncssh
from serve import percentile, started_server  # benchmarks/serve.py (run as python benchmarks/race.py)

_MOVES = re.compile(rb"moves (\d+)")


class _Racer(asyncssh.SSHClientSession):  # type: ignore[misc]
    """A racer's client: the highest move count its screen has shown, and when each first came."""

    def __init__(self) -> None:
        self.text = bytearray()
        self.most = 0
        self.seen: Dict[int, float] = {}
        self.changed = asyncio.Event()

    def data_received(self, data: bytes, datatype: Optional[int]) -> None:
        now = time.perf_counter()
        self.text += data
        for found in _MOVES.finditer(data):
            count = int(found.group(1))
            if count > self.most:
                self.most = count
                self.seen.setdefault(count, now)
        self.changed.set()


async def _wait(racer: _Racer, wanted: bytes, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while wanted not in racer.text:
        racer.changed.clear()
        await asyncio.wait_for(racer.changed.wait(), max(0.01, end - time.perf_counter()))


async def race(port: int, players: int, rate: float, seconds: float) -> List[float]:
    """The opponents' delays (seconds), one per move and opponent."""
    conns: List[Any] = []
    chans: List[Any] = []
    racers: List[_Racer] = []
    try:
        for number in range(players):
            key = asyncssh.generate_private_key("ssh-ed25519")
            conn = await asyncssh.connect(
                "127.0.0.1", port, username=f"r{number}", client_keys=[key], known_hosts=None, encoding=None,
                agent_path=None,
            )  # fmt: skip
            conns.append(conn)
            chan, racer = await conn.create_session(
                _Racer, f"race --players {players} --minutes 5", term_type="xterm-256color", term_size=(100, 30)
            )
            chans.append(chan)
            racers.append(racer)
        for racer in racers:
            await _wait(racer, b"left", 30)  # the race's clock: it runs
        mover, mover_chan = racers[0], chans[0]
        sent: Dict[int, float] = {}
        end = time.perf_counter() + seconds
        typed = 0
        while time.perf_counter() < end:
            before, at = mover.most, time.perf_counter()
            mover_chan.write(b"adws"[typed % 4 : typed % 4 + 1])
            typed += 1
            while mover.most == before and time.perf_counter() - at < 0.5:
                mover.changed.clear()
                try:
                    await asyncio.wait_for(mover.changed.wait(), 0.5)
                except asyncio.TimeoutError:
                    break
            if mover.most > before:
                sent[mover.most] = at
            await asyncio.sleep(max(0.0, 1.0 / rate - (time.perf_counter() - at)))
        await asyncio.sleep(1.0)  # the last moves' frames arrive
        return [racer.seen[move] - at for racer in racers[1:] for move, at in sent.items() if move in racer.seen]
    finally:
        for conn in conns:
            conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--rate", type=float, default=8.0, help="the mover's keys a second")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--quick", action="store_true", help="a tiny size that runs in seconds (the test suite's)")
    options = parser.parse_args()
    if options.quick:
        options.players, options.seconds = 2, 2.0
    with started_server() as (_server, port, _data, _log):
        delays = asyncio.run(race(port, options.players, options.rate, options.seconds))
    ms = [delay * 1000 for delay in delays]
    print(f"{options.players} racers, one moving at {options.rate:g} keys/s for {options.seconds:g} s:")
    print(
        f"  {len(ms)} moves seen by opponents: median {statistics.median(ms):.1f} ms,"
        f" p99 {percentile(ms, 0.99):.1f} ms, worst {max(ms):.1f} ms"
    )


if __name__ == "__main__":
    main()
