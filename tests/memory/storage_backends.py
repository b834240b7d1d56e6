"""Both storage backends, built the same way, for the contract tests: files under a folder, or PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.memory.backend import TurnQueue, UserMemoryStore
from bot.memory.journal import Journal
from bot.memory.pg.schema import migrate
from bot.memory.pg.store import PostgresMemoryStore
from bot.memory.pg.turns import PostgresTurnQueue
from bot.memory.store import MemoryStore
from bot.storage.pg.database import Database

BACKENDS = ("files", "postgres")


@dataclass(slots=True)
class Storage:
    kind: str
    store: UserMemoryStore
    queue: TurnQueue
    database: Database | None


@asynccontextmanager
async def open_storage(
    kind: str, folder: Path, url: str | None, *, lease_seconds: float = 60.0, orphan_seconds: float = 0.0
) -> AsyncIterator[Storage]:
    """One process's view of the storage (open it twice for two processes, or again for a restart).

    `orphan_seconds=0` makes unclaimed turns of a dead process immediately resumable, as the journal's replay is.
    """
    if kind == "files":
        store = MemoryStore(folder / "memory")
        journal = Journal(folder / "pending.jsonl", durable=False)
        await store.open()
        yield Storage(kind, store, journal, None)
        await journal.close()
        return
    assert url is not None
    database = Database(url, size=4)
    await database.open()
    await database.run(migrate, transaction=False)
    queue = PostgresTurnQueue(database, lease_seconds=lease_seconds, orphan_seconds=orphan_seconds)
    pg_store = PostgresMemoryStore(database)
    await pg_store.open()
    try:
        yield Storage(kind, pg_store, queue, database)
    finally:
        await queue.close()
        await database.close()
