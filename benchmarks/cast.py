"""Piped ``--cast`` throughput, and where its time goes.

Prints keys per second (CPU seconds of the child, start-up subtracted, best
of 3) for a piped replay of random play written five ways: without a cast,
with ``--cast /dev/null`` (every frame 0.15 s apart on the cast's clock: all
seen, all drawn), the same paced at ``--delay 0.01`` and ``--delay 0.001``
(frames closer together than ``cast.FRAME_TIME`` are coalesced: a third and
a 34th of them drawn), and with ``--cast`` to a FIFO whose reader never
reads (the cast stops with one warning once the pipe's 64 KiB are full; the
replay goes on). Then, in process, what one key costs with a cast: the
frame the screen builds and diffs (``Screen.paint``) and the cast's own event
(``CastWriter.output``: timing, JSON, the write), in microseconds.

    python benchmarks/cast.py [--keys 5000]

Rates are per CPU second: on a shared machine wall time measures the
neighbours too.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Tuple

_MEASURE = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as keys:
    subprocess.run([sys.executable, "-m", "ansi2048", "--seed", "1", *sys.argv[2:]], stdin=keys,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_utime + usage.ru_stime)
"""
_RUNS = 3
# Paces whose frames come closer together than a viewer sees (cast.FRAME_TIME).
_FAST_PACES = ("0.01", "0.001")


def make_keys(path: Path, count: int) -> None:
    """Random moves, and a restart now and then (a replay that keeps playing)."""
    rng = random.Random(0)
    path.write_bytes(bytes(rng.choice(b"wasdwasdwasdr") for _ in range(count)))


def cpu_seconds_once(keys: Path, args: List[str]) -> float:
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(keys), *args], capture_output=True, check=True, text=True)
    return float(out.stdout)


def cpu_seconds(keys: Path, args: List[str]) -> float:
    """The least CPU time of ``_RUNS`` piped replays of ``keys`` with ``args``."""
    return min(cpu_seconds_once(keys, args) for _ in range(_RUNS))


def stalled_fifo_seconds(keys: Path, fifo: Path) -> float:
    """As :func:`cpu_seconds`, the cast going to ``fifo``, held open by a reader that never reads."""
    best = float("inf")
    for _ in range(_RUNS):
        reader = subprocess.Popen(["sh", "-c", f'exec 3<"{fifo}"; exec sleep 600'])
        try:
            deadline = time.monotonic() + 10
            while True:  # until the reader has it open: a FIFO nobody reads is refused
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)
            best = min(best, cpu_seconds_once(keys, ["--cast", str(fifo)]))
        finally:
            reader.kill()
            reader.wait()
    return best


def split_per_key(count: int) -> Tuple[float, float]:
    """(Screen.paint, CastWriter.output) in microseconds a key, in process,
    for the frames a piped --cast draws (80x30, the replay's screen)."""
    from ansi2048.game.engine import Game
    from ansi2048.game.keys import KeyDecoder
    from ansi2048.game.session import Session
    from ansi2048.options.parser import parse_options
    from ansi2048.play.screen import Screen, palette_for
    from ansi2048.render.cast import HEADLESS_SIZE, REPLAY_STEP, CastWriter
    from ansi2048.render.frame import View
    from ansi2048.render.style import choose_depth
    from ansi2048.storage.files import OutputSink

    # The piped runs' keys, restarts and all: without them the game ends
    # within a few hundred keys, and every frame after is the one before.
    rng = random.Random(0)
    actions = KeyDecoder().feed(bytes(rng.choice(b"wasdwasdwasdr") for _ in range(count)))
    env = {"TERM": "xterm-256color"}
    frames: List[str] = []
    session = Session(Game(seed=1))
    screen = Screen(
        frames.append, lambda: HEADLESS_SIZE, choose_depth("auto", True, env), env,
        palette=palette_for(parse_options([])),
    )  # fmt: skip
    start = time.process_time()
    for action in actions:
        session.apply(action)
        screen.paint(View.of(session, replay=True))
    shown = time.process_time() - start
    null = os.open(os.devnull, os.O_WRONLY)
    writer = CastWriter(OutputSink(null, "null", "utf-8", blocking=False), time.monotonic, print, timestamp=0, env=env)
    writer.step = REPLAY_STEP
    start = time.process_time()
    for frame in frames:
        writer.output(frame, HEADLESS_SIZE)
    cast = time.process_time() - start
    writer.close()
    return shown / len(actions) * 1e6, cast / len(frames) * 1e6


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args(argv)
    global _RUNS
    count, _RUNS = (30, 1) if args.quick else (args.keys, _RUNS)
    with tempfile.TemporaryDirectory() as tmp:
        empty, keys, fifo = Path(tmp, "0.keys"), Path(tmp, "n.keys"), Path(tmp, "cast.fifo")
        make_keys(empty, 0)
        make_keys(keys, count)
        os.mkfifo(fifo)
        startup = cpu_seconds(empty, [])
        plain = cpu_seconds(keys, [])
        to_null = cpu_seconds(keys, ["--cast", os.devnull])
        paced = [cpu_seconds(keys, ["--cast", os.devnull, "--delay", delay]) for delay in _FAST_PACES]
        stalled = stalled_fifo_seconds(keys, fifo)
    show, cast = split_per_key(min(count, 3000))
    print(f"python {sys.version.split()[0]}, {count} keys of random play, seed 1; CPU time, best of {_RUNS}")
    rows = [("no cast", plain), ("--cast /dev/null", to_null)]
    rows += [(f"--cast /dev/null --delay {delay}", seconds) for delay, seconds in zip(_FAST_PACES, paced)]
    rows.append(("--cast to a stalled FIFO", stalled))
    for name, seconds in rows:
        print(f"piped, {name:34} {count / max(seconds - startup, 1e-9):10,.0f} keys/s   ({seconds:.2f} s CPU)")
    print(f"a key with a cast, in process: the frame (Screen.paint) {show:7.1f} us, the cast event {cast:6.1f} us")


if __name__ == "__main__":
    main()
