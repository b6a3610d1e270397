"""Issue 27's "done when", end to end: ``ansi2048 serve`` as a process whose
clock libfaketime sets (an offset in a file it reads at every call, so the
test moves it past midnight while the server runs), played by the real
OpenSSH client with two keys; the board, ``keys`` refused then given, the
recording replayed by the local command with no server, and a recording
altered by hand reported by ``serve --verify``."""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from ansi2048.records.replay import Result, replay

from .conftest import child_env
from .serve_support import ServeProcess, make_key, ssh_command
from .test_serve_ssh import SshPlayer

FOUND = sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"))
FAKETIME = FOUND[0] if FOUND else Path("/usr/lib/faketime/libfaketime.so.1")
# Skipped without it, saying so; never in CI (.ci/run installs it), where its absence fails.
pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="libfaketime's LD_PRELOAD is for Linux"),
    pytest.mark.skipif(
        not FAKETIME.exists() and os.environ.get("CI") != "true", reason="needs libfaketime (apt install libfaketime)"
    ),
]

DAY = "2026-11-26"


def move_clock(file: Path, to: datetime.datetime) -> None:
    """The server's clock now reads ``to`` (and runs on from there).

    The file is replaced whole: libfaketime reads it at every call, and a
    file read between its truncation and its write is empty, which gives the
    real clock, monotonic included (a jump of years and back that fires the
    server's timers early)."""
    written = file.with_suffix(".new")
    written.write_text(f"{to.timestamp() - time.time():+.0f}\n")
    os.replace(written, file)


def ssh(port: int, key: Path, *words: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ssh_command(port, key, *words, tty=False), capture_output=True, env=child_env(), timeout=60, check=False
    )


def play(port: int, key: Path, user: str, keys: bytes) -> None:
    player = SshPlayer(port, key, "daily", user=user)
    player.shows("ranked game of " + DAY)
    player.type(keys)
    player.type(b"q")
    assert player.ended() == 0


def test_the_day_is_ranked_verified_and_checkable_after_midnight(tmp_path: Path) -> None:
    clock = tmp_path / "faketime"
    move_clock(clock, datetime.datetime(2026, 11, 26, 23, 0, tzinfo=datetime.timezone.utc))
    env = {"LD_PRELOAD": str(FAKETIME), "FAKETIME_TIMESTAMP_FILE": str(clock), "FAKETIME_NO_CACHE": "1"}
    data = tmp_path / "server"
    server = ServeProcess(data, env=env)
    try:
        alice, bob = make_key(tmp_path / "alice"), make_key(tmp_path / "bob")
        play(server.port, alice, "alice", b"wasdwasdwasdss")
        play(server.port, bob, "bob", b"sdsdsdsd")
        board = json.loads(ssh(server.port, alice, "leaderboard", "--json").stdout)
        assert board["day"] == DAY and board["ranked"] == 2
        assert sorted(row["name"] for row in board["top"]) == ["alice", "bob"]
        scores: List[int] = [row["score"] for row in board["top"]]
        assert scores == sorted(scores, reverse=True) and board["you"]["name"] == "alice"

        first = board["top"][0]
        refused = ssh(server.port, bob, "keys", str(first["id"]))
        assert refused.returncode == 2 and refused.stdout == b""
        assert len(refused.stderr.decode().splitlines()) == 1

        move_clock(clock, datetime.datetime(2026, 11, 27, 0, 0, 30, tzinfo=datetime.timezone.utc))
        given = ssh(server.port, bob, "keys", str(first["id"]))
        assert given.returncode == 0, given.stderr
        (tmp_path / "game.keys").write_bytes(given.stdout)
        # Anyone, anywhere, with no server: the local command replays it.
        with (tmp_path / "game.keys").open("rb") as keys:
            replayed = subprocess.run(
                [sys.executable, "-m", "ansi2048", "--json"],
                stdin=keys,
                capture_output=True,
                env=child_env(),
                timeout=60,
            )
        final = json.loads(replayed.stdout.decode().splitlines()[-1])
        # What the board shows is what the local replay shows: the fields "the replay matches" compares.
        cells = [cell for row in final["board"] for cell in row]
        assert (final["score"], final["moves"], max(cells)) == (first["score"], first["moves"], first["biggest"])
        # And the one rule that ranked it, run on the keys as anyone downloads them, agrees with both.
        assert replay(given.stdout).result == Result(final["score"], final["moves"], " ".join(map(str, cells)))
    finally:
        assert server.kill(15) == 0

    verified = [sys.executable, "-m", "ansi2048", "serve", "--data-dir", str(data), "--verify", DAY]
    clean = subprocess.run(verified, capture_output=True, env=child_env(), timeout=60)
    assert clean.returncode == 0 and b"2 ranked games replayed, 0 changed" in clean.stdout
    with sqlite3.connect(data / "serve.sqlite3") as database:  # altered by hand
        database.execute("UPDATE daily SET recording = recording || 'wwww' WHERE id = ?", (first["id"],))
    altered = subprocess.run(verified, capture_output=True, env=child_env(), timeout=60)
    assert altered.returncode == 1
    assert f"game {first['id']} of {DAY}".encode() in altered.stdout
