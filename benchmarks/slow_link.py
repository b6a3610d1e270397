"""``ansi2048 serve`` over a slow link: keys typed ahead, and how soon the
screen catches up, with and without 100 ms of round trip.

The server (``ansi2048 serve``, SQLite in a temporary directory) and the real
OpenSSH client (on a pty, 80x24, 256 colours, motion on: the default) each
run in a network namespace of their own, joined by tests/slow_link.py's
delay line: every packet held ``--delay`` ms each way (netem's delay, made in
userspace: these kernels have no sch_netem), or none, the control. Each round,
on a new game:

- burst: 20 moves in one write; ms from the write to the first frame (the one
  that shows them all), and the frames drawn until the output rests;
- typed: 20 moves at 30 keys a second (a key every 33 ms, faster than the
  round trip); ms from the last key to its settled frame (the last before
  the output pauses: the "+N" fades 0.6 s later), and frames per key;
- stall: the link held 1 s while 15 moves are typed at 30 a second, each in a
  packet of its own; the frames drawn once they all come at once, and ms from
  the end of the stall to the first of them and to the settled one.

Prints the median of ``--rounds`` rounds (and the range). Needs Linux, root,
iproute2 and /dev/net/tun.

    sudo python benchmarks/slow_link.py [--rounds 5] [--delay 50]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.slow_link, from a checkout

from ansi2048.render.repaint import FRAME_END
from tests.serve_support import make_key, ssh_command
from tests.slow_link import SERVER_ADDRESS, SlowLink, missing

END = FRAME_END.replace("\n", "\r\n").encode()  # as the client gets it (the server writes CR LF)
BURST = b"adwsaadswdasdwssadwa"
TYPED = b"wdsaasdwdsawwdsaasdw"
PAUSE = 1 / 30
REST = 0.8  # s without output: the screen is done, "+N" faded
SETTLED_GAP = 0.3  # s: a frame followed by this long a pause is a move's settled frame
STALL = 1.0
# The exit status when this machine lacks what a slow link needs (automake's
# "skipped": tests/test_benchmarks.py skips the script, saying why).
CANNOT_RUN_HERE = 77


class Client:
    """``ssh`` on a pty in the client's namespace; every frame's arrival time."""

    def __init__(self, link: SlowLink, port: int, key: Path, home: str) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TERM": "xterm-256color"}
        command = [*link.client, *ssh_command(port, key, host=SERVER_ADDRESS)]
        self.child = pexpect.spawn(command[0], command[1:], env=env, dimensions=(24, 80), timeout=10, maxread=1 << 16)
        self.child.delaybeforesend = None
        self.output = b""
        self.frames: List[float] = []  # when each frame's end came

    def pump(self, timeout: float) -> None:
        try:
            data = self.child.read_nonblocking(1 << 16, timeout)
        except pexpect.TIMEOUT:
            return
        now = time.monotonic()
        before = self.output.count(END)
        self.output += data
        self.frames += [now] * (self.output.count(END) - before)

    def rest(self, limit: float = 15) -> None:
        start = time.monotonic()
        while time.monotonic() < start + limit:
            last = max([start, *self.frames[-1:]])
            if time.monotonic() - last >= REST:
                return
            self.pump(0.05)
        raise RuntimeError("the output did not rest")

    def type(self, keys: bytes) -> float:
        """Type ``keys`` at 30 a second, reading meanwhile; when the last was sent."""
        sent = 0.0
        for key in keys:
            self.child.send(bytes([key]))
            sent = time.monotonic()
            end = sent + PAUSE
            while time.monotonic() < end:
                self.pump(max(0.0, end - time.monotonic()))
        return sent


def settled_after(frames: Sequence[float], start: float) -> float:
    """The first frame after ``start`` that the next pauses SETTLED_GAP after
    (or the last); ``start`` itself when no frame came after it (the last
    keys drew nothing new: a move that cannot move, said already, repaints
    nothing)."""
    later = [when for when in frames if when >= start]
    for when, after in zip(later, later[1:]):
        if after - when >= SETTLED_GAP:
            return when
    return later[-1] if later else start


def round_over(link: SlowLink, work: Path) -> Dict[str, float]:
    data = work / "server"
    server = subprocess.Popen(
        [
            *link.server,
            sys.executable,
            "-m",
            "ansi2048",
            "serve",
            "--listen",
            f"{SERVER_ADDRESS}:0",
            "--data-dir",
            str(data),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # PYTHONPATH kept: the server is the ansi2048 this script imports (a checkout's).
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(work), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert server.stderr is not None
        found = re.search(rb"Z listening on \S+:(\d+) ", server.stderr.readline())
        if found is None:
            raise RuntimeError("the server did not start")
        key = work / "key"
        if not key.exists():
            make_key(key)
        client = Client(link, int(found.group(1)), key, str(work))
        while b"Score" not in client.output:
            client.pump(0.1)
        client.rest()
        figures: Dict[str, float] = {}

        count, start = len(client.frames), time.monotonic()
        client.child.send(BURST)
        client.rest()
        figures["burst ms"] = (client.frames[count] - start) * 1000 if client.frames[count:] else math.nan
        figures["burst frames"] = len(client.frames) - count

        count = len(client.frames)
        last = client.type(TYPED)
        client.rest()
        figures["typed settled ms"] = (settled_after(client.frames, last) - last) * 1000
        figures["typed frames/key"] = (len(client.frames) - count) / len(TYPED)

        count = len(client.frames)
        link.stall(STALL)
        stall_end = time.monotonic() + STALL
        client.type(TYPED[:15])
        client.rest()
        figures["stall frames"] = len(client.frames) - count
        # No frame after the stall: nothing it held back (NaN: not a figure).
        figures["stall first ms"] = (client.frames[count] - stall_end) * 1000 if client.frames[count:] else math.nan
        figures["stall settled ms"] = (settled_after(client.frames, stall_end) - stall_end) * 1000

        client.child.send(b"q")
        client.child.expect(pexpect.EOF)
        return figures
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--delay", type=float, default=50, help="ms each way (default 50: a 100 ms round trip)")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    options = parser.parse_args()
    if options.quick:
        options.rounds = 1
    reason = missing() if sys.platform.startswith("linux") else "a slow link needs Linux"
    if reason:
        print(f"slow_link.py: cannot run here: {reason}", file=sys.stderr)
        sys.exit(CANNOT_RUN_HERE)
    print(f"python {sys.version.split()[0]}, {options.rounds} rounds, 80x24, 256 colours, motion on")
    for delay in (options.delay / 1000,) if options.quick else (0.0, options.delay / 1000):
        rounds: List[Dict[str, float]] = []
        for _ in range(options.rounds):
            with tempfile.TemporaryDirectory() as work, SlowLink(delay) as link:
                rounds.append(round_over(link, Path(work)))
        print(f"round trip {delay * 2000:.0f} ms:")
        for name in rounds[0]:
            values = [figures[name] for figures in rounds]
            print(f"  {name:18} median {statistics.median(values):7.1f}  ({min(values):.1f}-{max(values):.1f})")


if __name__ == "__main__":
    main()
