"""``ansi2048 serve --backup FILE`` (serve/backup.py): a consistent copy of
a SQLite store taken while a server writes it, holding every write
committed before it began; made 0600, put in place whole or not at all."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts")

from ansi2048.serve.backup import backup_sqlite  # noqa: E402
from ansi2048.serve.store.sqlite import SQLiteStore  # noqa: E402

from .conftest import child_env  # noqa: E402

BOARD = "4x4:2048"


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ansi2048", "serve", *args], capture_output=True, text=True, env=child_env(), timeout=60
    )


def test_a_backup_taken_during_writes_holds_every_write_committed_before_it(tmp_path: Path) -> None:
    database, copy = tmp_path / "serve.sqlite3", tmp_path / "backups" / "serve.sqlite3"
    copy.parent.mkdir()
    store = SQLiteStore(str(database))
    committed: List[int] = []  # the appends that had returned (been shown) so far
    stop = threading.Event()

    async def writing() -> None:
        await store.open()
        player = await store.player("SHA256:writer", "writer")
        assert await store.claim(player.id, BOARD, "holder", 60) is None
        number = 0
        while not stop.is_set() and number < 20_000:  # bounded: the backup ends it sooner
            await store.append(player.id, BOARD, "holder", b"%d\n" % number)
            committed.append(number)
            number += 1
        await store.close()

    writer = threading.Thread(target=asyncio.run, args=(writing(),), daemon=True)
    writer.start()
    deadline = time.monotonic() + 30
    while len(committed) < 200:  # a game under way
        if not writer.is_alive() or time.monotonic() > deadline:
            pytest.fail("the writer ended early, or never began")
        time.sleep(0.001)
    shown_before = len(committed)
    backed_up = backup_sqlite(str(database), str(copy))
    after_backup = len(committed)
    stop.set()
    writer.join(30)
    assert not writer.is_alive()
    assert len(committed) > after_backup or after_backup > shown_before  # written while the copy was taken, or after

    async def read_copy() -> bytes:
        copied = SQLiteStore(str(copy))
        await copied.open()
        try:
            player = await copied.player("SHA256:writer", "writer")
            return await copied.load(player.id, BOARD) or b""
        finally:
            await copied.close()

    items = asyncio.run(read_copy()).split()
    # Consistent: the writes in order from the first, none missing in between,
    # and every one shown before the backup began is in it.
    assert items == [b"%d" % n for n in range(len(items))]
    assert len(items) >= shown_before
    assert (backed_up.players, backed_up.playing, backed_up.finished) == (1, 1, 0)
    assert stat.S_IMODE(os.stat(copy).st_mode) == 0o600  # it holds the daily secret
    assert os.listdir(copy.parent) == ["serve.sqlite3"]  # no partial file left


def test_the_command_says_what_it_copied_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    data = tmp_path / "data"

    async def make() -> None:
        store = SQLiteStore(str(data / "serve.sqlite3"))
        await store.open()
        await store.player("SHA256:a", "alice")
        await store.close()

    asyncio.run(make())
    done = _serve("--data-dir", str(data), "--backup", str(tmp_path / "copy.sqlite3"))
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout == (
        f"backed up {data / 'serve.sqlite3'} to {tmp_path / 'copy.sqlite3'}: 1 players, 0 games in progress,"
        f" 0 finished ({os.path.getsize(tmp_path / 'copy.sqlite3')} bytes)\n"
    )
    before = (tmp_path / "copy.sqlite3").read_bytes()
    for args, said in (
        (["--data-dir", str(tmp_path / "none")], "no database at"),
        (["--db", "postgresql://nobody@127.0.0.1:1/none"], "back up PostgreSQL with pg_dump"),
        (["--data-dir", str(data), "--db", str(tmp_path / "copy.sqlite3")], "is the database itself"),
        (["--data-dir", str(data), "--backup", str(tmp_path / "no" / "such" / "dir.sqlite3")], "No such file"),
    ):
        args = args if "--backup" in args else [*args, "--backup", str(tmp_path / "copy.sqlite3")]
        done = _serve(*args)
        assert done.returncode == 1 and not done.stdout, args
        assert done.stderr.startswith("ansi2048 serve: error: --backup: ") and said in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1
    assert (tmp_path / "copy.sqlite3").read_bytes() == before  # a refused backup leaves the old copy as it was
