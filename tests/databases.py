"""Databases for the server's tests (a pytest plugin, registered in
conftest.py): every test that takes ``store_url`` runs once per database.

``store_url`` is what ``ansi2048 serve --db`` takes: a fresh SQLite file, or
a fresh PostgreSQL schema on a throwaway cluster; ``open_store(store_url,
data_dir)`` opens it. ``store_kind`` says which (``"sqlite"``, ``"postgresql"``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, TypeVar

import pytest

T = TypeVar("T")

DATABASES = ("sqlite",)
RUN_TIMEOUT = 60.0  # seconds one test's coroutine may take


def run(coroutine: Awaitable[T], timeout: float = RUN_TIMEOUT) -> T:
    """``coroutine`` run to its end on a new event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, timeout)

    return asyncio.run(bounded())


@pytest.fixture(params=DATABASES)
def store_kind(request: Any) -> str:
    return str(request.param)


@pytest.fixture
def store_url(store_kind: str, tmp_path: Path) -> str:
    """A database of its own for one test, as a ``--db`` value."""
    return str(tmp_path / "store.sqlite3")
