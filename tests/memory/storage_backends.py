"""Both storage backends, built by the one builder per backend, for the contract tests: files under a folder, or
PostgreSQL (`tests/memory/conftest.py` makes them fixtures)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.memory.drivers.bundle import StorageBundle, build_file_storage, build_postgres_storage
from bot.memory.drivers.interfaces import MemoryDocuments, TurnQueue
from bot.storage.pg.database import Database

BACKENDS = ("files", "postgres")


@dataclass(slots=True)
class Storage:
    kind: str
    bundle: StorageBundle

    @property
    def store(self) -> MemoryDocuments:
        return self.bundle.memories

    @property
    def queue(self) -> TurnQueue:
        return self.bundle.turns

    @property
    def database(self) -> Database | None:
        return self.bundle.database


@asynccontextmanager
async def open_storage(
    kind: str, folder: Path, url: str | None, *, lease_seconds: float = 60.0, orphan_seconds: float = 0.0
) -> AsyncIterator[Storage]:
    """One process's view of the storage (open it twice for two processes, or again for a restart).

    `orphan_seconds=0` makes unclaimed turns of a dead process immediately resumable, as the journal's replay is.
    """
    if kind == "files":
        bundle = build_file_storage(folder, durable=False)
    else:
        assert url is not None
        bundle = build_postgres_storage(
            Database(url, size=4), lease_seconds=lease_seconds, orphan_seconds=orphan_seconds
        )
    await bundle.open()
    try:
        yield Storage(kind, bundle)
    finally:
        await bundle.close()

