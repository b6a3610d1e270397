"""The server's storage: one interface (:mod:`.base`), SQLite by default,
PostgreSQL when several servers share one database. The game code above
it does not know which database is underneath: :func:`open_store` picks one
from the ``--db`` URL."""

from __future__ import annotations

import importlib.util
import os
import re
from urllib.parse import unquote, urlsplit

from .base import Store, StoreError
from .common import DEFAULT_FILE

__all__ = ["open_store"]


def open_store(url: str, data_dir: str) -> Store:
    """The store a ``--db`` value names (not opened yet: call its ``open``):

    - empty: the SQLite file ``serve.sqlite3`` in ``data_dir``;
    - ``sqlite:///abs/path.db``, ``sqlite:relative.db`` or a plain path: that SQLite file;
    - ``postgresql://USER@HOST/DB`` (or ``postgres://``): that PostgreSQL database.

    :class:`StoreError` (one line) for any other URL."""
    from .sqlite import SQLiteStore

    if not url:
        return SQLiteStore(os.path.join(data_dir, DEFAULT_FILE))
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("postgresql", "postgres"):
        if not all(importlib.util.find_spec(name) for name in ("psycopg", "psycopg_pool")):
            install = 'pip install ".[postgres]" from a clone (or "ansi2048[postgres]")'
            raise StoreError(f"{scheme}:// needs the postgres extra: {install}")
        from .postgres import PostgresStore

        return PostgresStore(url)
    if scheme == "sqlite":
        path = unquote(urlsplit(url).path)
        if re.match(r"/[A-Za-z]:", path):  # sqlite:///C:/games.db: a Windows drive
            path = path[1:]
        if not path:
            raise StoreError(f"no file in the database URL {url!r}: sqlite:///path/to/file.db")
        return SQLiteStore(path)
    # A plain path; "C:\\..." is a drive, not a URL scheme.
    if "://" in url:
        raise StoreError(f"unknown database URL {url!r}: use sqlite:///path/to/file.db or postgresql://USER@HOST/DB")
    return SQLiteStore(url)
