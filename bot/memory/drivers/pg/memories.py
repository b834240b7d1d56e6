"""Users' memory documents in PostgreSQL: one row per user, the memory file's JSON as JSONB.

- Reads are cached per process and revalidated by revision in the same round trip that would fetch the document,
  so an unchanged memory costs one short query, not a JSON parse.
- `edit` is the read-modify-write: one transaction holding the user's advisory lock (`pg_advisory_xact_lock` on
  the user id), so updates from any number of processes serialise and none is lost. The body runs inside it, so
  callers do slow work (the extraction's network call) before, never inside. Within a process, edits of one user
  queue on a local lock first, so waiters never sit on pooled connections other users' replies need.
- `edit(..., settles=claim)` deletes the claimed pending turns in that same transaction, or raises `ClaimLost`
  when they are gone: the memory and "these turns are done" commit together, so a batch is applied exactly once
  even when another process took it over.
- With MEMORY_ENCRYPTION_KEY the document is sealed with its user's key into `sealed` (bytea) and `doc` is NULL
  (`bot.storage.pg.codec`); a document whose key was destroyed (its user forgot) reads as empty.
- Deleting removes the row; rows hold no copies kept aside (a document that does not validate is logged, left in
  place for an operator, and read as empty; it is overwritten only by the user's next change or deleted by forget).
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg
from pydantic import ValidationError

from bot.memory.drivers.documents import DocumentStore
from bot.memory.drivers.interfaces import Claim, ClaimLost
from bot.memory.drivers.pg.generations import ensure_current, lock_user
from bot.memory.models import MemoryFile
from bot.storage.atomic import json_bytes
from bot.storage.ids import user_key
from bot.storage.lru import LruCache
from bot.storage.pg.codec import PostgresCodec
from bot.storage.pg.database import Database

log = logging.getLogger(__name__)

@dataclass(slots=True)
class _Cached:
    revision: int
    memory: MemoryFile


class PostgresMemoryStore(DocumentStore):
    """Same contract as the file `MemoryStore`, shared by every process using the database."""

    def __init__(self, database: Database, *, cache_size: int = 1024, codec: PostgresCodec | None = None) -> None:
        super().__init__()
        self.database = database
        self.codec = codec or PostgresCodec(database, None, lock_user=lock_user, data_tables=())
        self._cache: LruCache[int, _Cached] = LruCache(cache_size)
        self._empty_revisions = itertools.count(-1, -1)  # a missing row: a number no stored revision can be

    async def open(self) -> None:
        """Nothing to prepare: the schema is migrated when the database is opened."""

    async def close(self) -> None:
        """Nothing to close: the pool belongs to the bundle."""

    # --- reading -------------------------------------------------------------------------------------------

    async def load_with_revision(self, user_id: int | str) -> tuple[MemoryFile, int]:
        uid = user_key(user_id)
        entry, hit = await self.database.run(lambda conn: self._read(conn, uid), transaction=False)
        if hit:
            self.cache_hits += 1
        else:
            self.cache_misses += 1
        return entry.memory, entry.revision

    async def _read(self, conn: asyncpg.Connection, uid: int) -> tuple[_Cached, bool]:
        """The user's memory, cached: the cached copy while it is still current (the row's revision, or still no
        row; the document is then not even sent), else the row's document parsed and cached. True when the cache
        answered."""
        cached = self._cache.peek(uid)
        known = cached.revision if cached is not None else 0
        row = await conn.fetchrow(
            "SELECT revision, CASE WHEN revision = $2 THEN NULL ELSE doc::text END AS doc,"
            " CASE WHEN revision = $2 THEN NULL ELSE sealed END AS sealed FROM memories WHERE user_id = $1",
            uid,
            known,
        )
        if row is None:
            if cached is not None and cached.revision < 0:
                return cached, True
            return self._remember(uid, next(self._empty_revisions), MemoryFile()), False
        if row["doc"] is None and row["sealed"] is None and cached is not None:
            self._cache.get(uid)  # now the newest
            return cached, True
        return self._remember(uid, int(row["revision"]), await self._parse(conn, uid, row)), False

    async def _parse(self, conn: asyncpg.Connection, uid: int, row: asyncpg.Record) -> MemoryFile:
        try:
            raw = await self.codec.decode(conn, uid, "memory", row["doc"], row["sealed"])
            if raw is None:
                return MemoryFile()
            return MemoryFile.model_validate(json.loads(raw))
        except (ValueError, ValidationError, RecursionError) as error:
            log.warning("memory of user %s does not validate (%s); read as empty", uid, type(error).__name__)
            return MemoryFile()

    def _remember(self, uid: int, revision: int, memory: MemoryFile) -> _Cached:
        return self._cache.put(uid, _Cached(revision, memory))

    # --- writing -------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def edit(
        self, user_id: int | str, *, generation: int | None = None, settles: Claim | None = None
    ) -> AsyncIterator[MemoryFile]:
        """Read-modify-write in one transaction under the user's lock; saves the yielded copy if it changed.
        `Stale` (the transaction rolled back) when `generation` is not the user's: a forget or pause in any process
        began since this work did."""
        uid = user_key(user_id)
        lock = functools.partial(lock_user, uid=uid)
        async with self._lock_for(uid), self.database.transaction(prepare=lock) as conn:
            if generation is not None:
                await ensure_current(conn, "memory write", uid, generation)
            if settles is not None and settles.owner is not None:
                await self._settle(conn, uid, settles)
            current = (await self._read(conn, uid))[0].memory
            draft = current.model_copy(deep=True)
            yield draft
            if draft.model_dump() != current.model_dump():
                revision = await self._write(conn, uid, draft)
                self._remember(uid, revision, draft.model_copy(deep=True))

    @staticmethod
    async def _settle(conn: asyncpg.Connection, uid: int, claim: Claim) -> None:
        ids = claim.turn_ids
        gone = await conn.fetch(
            "DELETE FROM pending_turns WHERE user_id = $1 AND turn_id = ANY($2::text[]) AND lease_owner = $3"
            " RETURNING turn_id",
            uid,
            ids,
            claim.owner,
        )
        if len(gone) != len(set(ids)):
            raise ClaimLost(f"{len(ids) - len(gone)} of {len(ids)} claimed turns are gone")

    async def _write(self, conn: asyncpg.Connection, uid: int, memory: MemoryFile) -> int:
        doc, sealed = await self.codec.encode(conn, uid, "memory", json_bytes(memory.model_dump(mode="json")).decode())
        revision = await conn.fetchval(
            "INSERT INTO memories (user_id, doc, sealed, revision, updated_at)"
            " VALUES ($1, $2::jsonb, $3, nextval('memory_revisions'), now())"
            " ON CONFLICT (user_id) DO UPDATE SET doc = EXCLUDED.doc, sealed = EXCLUDED.sealed,"
            " revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at RETURNING revision",
            uid,
            doc,
            sealed,
        )
        return int(revision)

    async def delete(self, user_id: int | str) -> bool:
        """Delete the user's row (under their lock, so a concurrent edit elsewhere finishes first or sees none)."""
        uid = user_key(user_id)

        async def work(conn: asyncpg.Connection) -> bool:
            await lock_user(conn, uid)
            return await conn.fetchval("DELETE FROM memories WHERE user_id = $1 RETURNING true", uid) is not None

        existed = await self.database.run(work)
        self._remember(uid, next(self._empty_revisions), MemoryFile())
        return bool(existed)

    async def delete_copies(self, user_id: int | str) -> int:
        """The database keeps no copies aside: nothing to remove."""
        user_key(user_id)
        return 0

    async def written(self) -> AsyncIterator[list[tuple[int, float]]]:
        """When each user's memory was last written (POSIX seconds), in pages in user id order, for the retention
        sweep: a million users never sit in RAM or hold the loop at once."""
        async for rows in self.database.fetch_pages(
            "SELECT user_id, extract(epoch FROM updated_at)::float8 AS at FROM memories"
            " WHERE $1::bigint IS NULL OR user_id > $1 ORDER BY user_id LIMIT $2"
        ):
            yield [(int(row["user_id"]), float(row["at"])) for row in rows]

    async def last_written(self) -> dict[int, float]:
        return {uid: at async for page in self.written() for uid, at in page}

    async def user_ids(self) -> list[int]:
        rows = await self.database.fetch("SELECT user_id FROM memories ORDER BY user_id")
        return [int(row["user_id"]) for row in rows]
