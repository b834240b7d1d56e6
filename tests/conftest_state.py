"""Fixtures for the contract tests of the small per-user state (pauses, modes, reply records, activity, switches):
each such test runs once on files (under tmp_path) and once on a real PostgreSQL database.

`databases` opens one `Database` per call of `open()`, as separate bot processes would (each with its own pool and
its own listening connection), migrated once; all are closed at the end of the test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from bot.memory.drivers.pg.schema import migrate
from bot.storage.pg.database import Database
from bot.storage.pg.mirror import Mirror, notifications_of

BACKENDS = ["files", "postgres"]
WAIT_SECONDS = 30.0  # a loaded machine can be slow; a working notification arrives in milliseconds


class Databases:
    """`Database`s on one PostgreSQL database, one per simulated process."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._opened: list[Database] = []
        self._migrated = False

    async def open(self, *, refresh_seconds: float | None = None) -> Database:
        database = Database(self.url, size=2)
        await database.open()
        self._opened.append(database)
        if not self._migrated:
            await database.run(migrate, transaction=False)
            self._migrated = True
        if refresh_seconds is not None:
            notifications_of(database).refresh_seconds = refresh_seconds
        return database

    async def close(self) -> None:
        for database in self._opened:
            await database.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def databases(request: pytest.FixtureRequest, backend: str) -> AsyncIterator[Databases | None]:
    """None for the file backend; for PostgreSQL, an opener of processes' databases on a fresh database."""
    if backend != "postgres":
        yield None
        return
    found = Databases(request.getfixturevalue("postgres_url"))
    try:
        yield found
    finally:
        await found.close()


@pytest.fixture
async def pg_databases(postgres_url: str) -> AsyncIterator[Databases]:
    """For PostgreSQL-only tests (several processes on one database)."""
    found = Databases(postgres_url)
    try:
        yield found
    finally:
        await found.close()


async def seen_by(mirror: Mirror[object, object], predicate: Callable[[], bool]) -> None:
    """Wait until `predicate` holds for what another process's mirror has read (bounded, never a sleep)."""
    await asyncio.wait_for(mirror.wait_for(predicate), timeout=WAIT_SECONDS)
