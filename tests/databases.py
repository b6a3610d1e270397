"""Databases for the server's tests (a pytest plugin, registered in
conftest.py): every test that takes ``store_url`` runs once per database.

``store_url`` is what ``ansi2048 serve --db`` takes: a fresh SQLite file, or
a fresh PostgreSQL schema on a throwaway cluster; ``open_store(store_url,
data_dir)`` opens it. ``store_kind`` says which (``"sqlite"``, ``"postgresql"``).
Two stores opened on one ``store_url`` are two servers sharing a database.

The cluster (:class:`Cluster`, fixture ``postgres_cluster``): the machine's
``initdb`` and ``pg_ctl`` (``/usr/lib/postgresql/*/bin`` or PATH), one per
pytest worker, started on first use, listening only on a Unix socket in a
temporary directory, removed at the end. PostgreSQL refuses to run as root:
under root (as in CI) it runs as the user ``postgres`` (or ``nobody``) by
``runuser``. Without the binaries or psycopg its tests are skipped, saying
why, except when the environment variable CI is ``true`` (.ci/run sets it;
GitHub Actions does): there they fail. On Windows they are skipped, as the
tests marked ``posix`` are.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Iterator, List, NoReturn, Optional, TypeVar
from urllib.parse import quote

import pytest

T = TypeVar("T")

DATABASES = ("sqlite", "postgresql")
RUN_TIMEOUT = 60.0  # seconds one test's coroutine may take
PG_TIMEOUT = 60  # seconds initdb or pg_ctl may take
_IN_CI = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    # Read before the tests' hermetic environment (conftest.py) hides it.
    config.stash[_IN_CI] = os.environ.get("CI") == "true"


def postgres_binaries() -> Optional[Path]:
    """The directory holding ``initdb`` and ``pg_ctl`` (the newest
    PostgreSQL's), or None."""

    def version(path: Path) -> int:  # /usr/lib/postgresql/15/bin, /opt/homebrew/opt/postgresql@16/bin
        digits = path.parent.name.rpartition("@")[2]
        return int(digits) if digits.isdigit() else 0

    patterns = ("/usr/lib/postgresql/*/bin", "/opt/homebrew/opt/postgresql@*/bin", "/usr/local/opt/postgresql@*/bin")
    found = sorted((Path(path) for pattern in patterns for path in glob.glob(pattern)), key=version, reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        found.append(Path(on_path).resolve().parent)
    return next((path for path in found if (path / "pg_ctl").exists()), None)


class Cluster:
    """A throwaway PostgreSQL cluster in ``root`` (data, socket and log)."""

    def __init__(self, binaries: Path, root: Path) -> None:
        self.binaries = binaries
        self.root = root
        self.data = root / "data"
        self.as_user: List[str] = []
        self._schemas = itertools.count(1)
        if os.geteuid() == 0:
            import pwd

            user = "postgres"
            try:
                entry = pwd.getpwnam(user)
            except KeyError:
                user, entry = "nobody", pwd.getpwnam("nobody")
            os.chown(root, entry.pw_uid, entry.pw_gid)
            self.as_user = ["runuser", "-u", user, "--"] if shutil.which("runuser") else [
                "setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
            ]  # fmt: skip

    def _run(self, *command: str) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(self.root)}
        done = subprocess.run(
            [*self.as_user, *command], capture_output=True, env=env, timeout=PG_TIMEOUT, check=False, cwd=self.root
        )
        if done.returncode != 0:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"{' '.join(command)}: {done.stderr.decode(errors='replace')}{log[-2000:]}")

    def create(self) -> None:
        initdb = str(self.binaries / "initdb")
        self._run(initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N")

    def start(self) -> None:
        # No TCP listener at all: only the socket in root. fsync stays on: the
        # tests of durability and the benchmark need real commits.
        options = f"-k {self.root} -c listen_addresses=''"
        self._run(
            str(self.binaries / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-w",
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def start_if_stopped(self) -> None:
        """Running again after a test that stopped it failed half-way."""
        if not (self.data / "postmaster.pid").exists():
            self.start()

    def url(self, schema: Optional[str] = None) -> str:
        """A connection URI; with ``schema``, its tables are made and found there."""
        url = f"postgresql://postgres@/postgres?host={quote(str(self.root), safe='')}"
        return url + (f"&options=-csearch_path%3D{schema}" if schema else "")

    def new_schema(self) -> str:
        """A URI to a schema of its own: a fresh database for one test, made in a millisecond."""
        import psycopg

        schema = f"test{next(self._schemas)}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}".encode())
        return self.url(schema)


def skip_outside_ci(request: pytest.FixtureRequest, what: str, missing: str) -> NoReturn:
    """Skips the test, saying what is ``missing``; in CI (CI=true, read at
    the start of the session) fails it instead: CI must test ``what``."""
    if request.config.stash.get(_IN_CI, False):
        pytest.fail(f"CI must test {what}: {missing}")
    pytest.skip(missing)


@pytest.fixture(scope="session")
def postgres_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """This worker's PostgreSQL cluster, started on first use."""
    if sys.platform == "win32":  # as tests marked posix are: skipped on Windows, in CI too
        pytest.skip("POSIX only: the PostgreSQL leg runs its cluster as an unprivileged user with runuser")
    missing = ""
    binaries = postgres_binaries()
    if binaries is None:
        missing = "no PostgreSQL server binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin, Homebrew's or on PATH"
    else:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError:
            missing = "psycopg 3 with its pool is not installed (pip install -e '.[test]')"
    if missing:
        skip_outside_ci(request, "PostgreSQL", missing)
    assert binaries is not None
    root = Path(tempfile.mkdtemp(prefix="a2048-pg-"))  # short: a socket's path has a length limit
    cluster = Cluster(binaries, root)
    try:
        cluster.create()
        cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def run(coroutine: Awaitable[T], timeout: float = RUN_TIMEOUT) -> T:
    """``coroutine`` run to its end on a new event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, timeout)

    return asyncio.run(bounded())


@pytest.fixture(params=DATABASES)
def store_kind(request: Any) -> str:
    return str(request.param)


@pytest.fixture
def store_url(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A database of its own for one test, as a ``--db`` value."""
    if store_kind == "postgresql":
        cluster: Cluster = request.getfixturevalue("postgres_cluster")
        return cluster.new_schema()
    return str(tmp_path / "store.sqlite3")
