"""Sealing for the PostgreSQL drivers: the key store in tables of its own, the store's mark, and the codec the
memory rows and the pending-turn rows are sealed and opened with (see `bot.storage.sealing` for the scheme).

- The key store is the `memory_keys` table (each user's data key, wrapped by the master key) and
  `memory_key_store` (its name). They are tables of their own so that backups can leave them out
  (`pg_dump --exclude-table-data='memory_key*'`) and keep them separately: a backup holding both the data and the
  wrapped keys would outlive a forget.
- `memory_encryption` marks the data as sealed (`StoreMark`); `open` checks it against the key and the key store
  before anything is read, and marks an empty database when a key is first given.
- A sealed value is a `bytea` next to the plain column (`encode` gives the driver one or the other). A write looks
  the user's key up in its own transaction, under the user's lock: another process's forget deletes the key under
  the same lock, so nothing is ever sealed with a key that was destroyed. Reads find the key by the reference the
  blob carries, from a cache in RAM or the table.
- Without a master key nothing is sealed, so unencrypted databases keep their JSONB as it was.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence

import asyncpg

from bot.storage.errors import KeyDestroyed, KeyUnusable
from bot.storage.ids import user_key
from bot.storage.lru import LruCache
from bot.storage.pg.database import Database
from bot.storage.sealing import (
    DataKey,
    MasterKey,
    StoreMark,
    new_store_id,
    rotation_mark,
    sealed_ref,
    start_decision,
)

# The key store and the mark; the application's migrations create them.
KEY_TABLES_SQL = """
CREATE TABLE memory_keys (
    user_id     bigint PRIMARY KEY,
    ref         bytea NOT NULL,
    master      text NOT NULL,
    wrapped     bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE memory_key_store (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    store       text NOT NULL
);
CREATE TABLE memory_encryption (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    mark        jsonb NOT NULL
);
"""
ROTATE_BATCH = 500

LockUser = Callable[[asyncpg.Connection, int], Awaitable[None]]


async def read_mark(conn: asyncpg.Connection) -> StoreMark | None:
    raw = await conn.fetchval("SELECT mark::text FROM memory_encryption")
    return None if raw is None else StoreMark.from_json(json.loads(raw))


async def write_mark(conn: asyncpg.Connection, mark: StoreMark) -> None:
    await conn.execute(
        "INSERT INTO memory_encryption (mark) VALUES ($1::jsonb)"
        " ON CONFLICT (only_row) DO UPDATE SET mark = EXCLUDED.mark",
        json.dumps(mark.to_json()),
    )


async def key_store_id(conn: asyncpg.Connection) -> str | None:
    value = await conn.fetchval("SELECT store FROM memory_key_store")
    return None if value is None else str(value)


async def create_key_store(conn: asyncpg.Connection, store: str) -> None:
    await conn.execute("INSERT INTO memory_key_store (store) VALUES ($1) ON CONFLICT DO NOTHING", store)


class PostgresCodec:
    """What the memory rows and pending-turn rows are sealed and opened with; one per process."""

    def __init__(
        self,
        database: Database,
        master: MasterKey | None,
        *,
        lock_user: LockUser,
        data_tables: Sequence[str],
        cache_size: int = 1024,
    ) -> None:
        self.database = database
        self.master = master
        self._lock_user = lock_user
        self._data_tables = tuple(data_tables)
        self._cache: LruCache[int, DataKey] = LruCache(cache_size)

    @property
    def encrypting(self) -> bool:
        return self.master is not None

    @property
    def where(self) -> str:
        return f"PostgreSQL at {self.database.where}"

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Check the key against the database's mark and the key store (`EncryptionRefused` with one line); mark
        an empty database when a key is given for the first time (in one transaction, so processes starting
        together agree)."""
        await self.database.run(self._check)

    async def _check(self, conn: asyncpg.Connection) -> None:
        await conn.execute("LOCK TABLE memory_encryption IN SHARE ROW EXCLUSIVE MODE")
        exists = [f"EXISTS (SELECT 1 FROM {table})" for table in self._data_tables]  # noqa: S608 (the builder's names)
        has_data = bool(exists) and await conn.fetchval("SELECT " + " OR ".join(exists))
        store = await key_store_id(conn)
        decision = start_decision(
            where=self.where, keys_where="the tables memory_keys and memory_key_store", key=self.master,
            mark=await read_mark(conn), key_store=store,
            key_store_used=bool(await conn.fetchval("SELECT EXISTS (SELECT 1 FROM memory_keys)")),
            has_data=bool(has_data),
        )
        if decision == "new":
            assert self.master is not None
            if store is None:
                store = new_store_id()
                await create_key_store(conn, store)
            await write_mark(conn, StoreMark(store, self.master.fingerprint))

    async def close(self) -> None:
        """Nothing to close: the pool belongs to the bundle."""

    async def forget_user(self, user_id: int) -> None:
        """Destroy the user's data key (under their lock): every copy of their sealed rows stays sealed."""
        uid = user_key(user_id)
        if self.master is None:  # without one, the start check made sure no key exists
            return

        async def work(conn: asyncpg.Connection) -> None:
            await self._lock_user(conn, uid)
            await conn.execute("DELETE FROM memory_keys WHERE user_id = $1", uid)

        await self.database.run(work)
        self._cache.discard(uid)

    # --- records -------------------------------------------------------------------------------------------

    async def encode(
        self, conn: asyncpg.Connection, user_id: int, purpose: str, text: str
    ) -> tuple[str | None, bytes | None]:
        """(plain text, None) without a master key, else (None, sealed blob). Call inside the transaction that
        writes it, holding the user's lock."""
        if self.master is None:
            return text, None
        key = await self._current(conn, user_id)
        return None, key.seal(user_id, purpose, text.encode("utf-8"))

    async def decode(
        self, conn: asyncpg.Connection | None, user_id: int, purpose: str, text: str | None, sealed: bytes | None
    ) -> str | None:
        """The plain text of a row: `text` when it is plain, else `sealed` opened (`KeyDestroyed` when its key is
        gone, `SealedDamaged` when it does not open, `KeyUnusable` without a master key)."""
        if sealed is None:
            return text
        if self.master is None:
            raise KeyUnusable(f"{self.where} holds encrypted memory: MEMORY_ENCRYPTION_KEY is needed to read it")
        key = await self._for_blob(conn, user_id, sealed_ref(sealed))
        return key.open(user_id, purpose, sealed).decode("utf-8")

    # --- keys ----------------------------------------------------------------------------------------------

    async def _current(self, conn: asyncpg.Connection, uid: int) -> DataKey:
        """The user's key as the database has it now, made when there is none."""
        assert self.master is not None
        row = await conn.fetchrow("SELECT ref, wrapped FROM memory_keys WHERE user_id = $1", uid)
        if row is None:
            key = DataKey.new()
            row = await conn.fetchrow(
                "INSERT INTO memory_keys (user_id, ref, master, wrapped) VALUES ($1, $2, $3, $4)"
                " ON CONFLICT (user_id) DO NOTHING RETURNING ref, wrapped",
                uid, key.ref, self.master.fingerprint, self.master.wrap(uid, key),
            ) or await conn.fetchrow("SELECT ref, wrapped FROM memory_keys WHERE user_id = $1", uid)
        return self._known(uid, bytes(row["ref"]), bytes(row["wrapped"]))

    async def _for_blob(self, conn: asyncpg.Connection | None, uid: int, ref: bytes) -> DataKey:
        cached = self._cache.get(uid)
        if cached is not None and cached.ref == ref:
            return cached
        query = "SELECT ref, wrapped FROM memory_keys WHERE user_id = $1"
        row = await (conn.fetchrow(query, uid) if conn is not None else self._fetchrow(query, uid))
        if row is None or bytes(row["ref"]) != ref:
            raise KeyDestroyed("sealed with a data key that no longer exists (its user was forgotten)")
        return self._known(uid, ref, bytes(row["wrapped"]))

    async def _fetchrow(self, query: str, uid: int) -> asyncpg.Record | None:
        return await self.database.run(lambda conn: conn.fetchrow(query, uid), transaction=False)

    def _known(self, uid: int, ref: bytes, wrapped: bytes) -> DataKey:
        assert self.master is not None
        cached = self._cache.get(uid)
        if cached is not None and cached.ref == ref:
            return cached
        return self._cache.put(uid, self.master.unwrap(uid, ref, wrapped))

    # --- rotation ------------------------------------------------------------------------------------------

    async def rotate(self, old: MasterKey, new: MasterKey) -> tuple[int, int]:
        """Re-wrap every data key from `old` to `new` in batches (resumable), then mark the database as using
        `new`; returns (re-wrapped now, already re-wrapped)."""
        mark = await self.database.run(read_mark, transaction=False)
        rotating = rotation_mark(where=self.where, mark=mark, old=old, new=new)
        if rotating is None:
            return 0, int(await self.database.fetchval("SELECT count(*) FROM memory_keys"))
        await self.database.run(lambda conn: write_mark(conn, rotating))
        already = int(await self.database.fetchval(
            "SELECT count(*) FROM memory_keys WHERE master = $1", new.fingerprint
        ))
        done = 0

        async def batch(conn: asyncpg.Connection) -> int:
            rows = await conn.fetch(
                "SELECT user_id, ref, wrapped FROM memory_keys WHERE master = $1 LIMIT $2 FOR UPDATE",
                old.fingerprint, ROTATE_BATCH,
            )
            rewrapped = []
            for row in rows:
                uid, ref = int(row["user_id"]), bytes(row["ref"])
                rewrapped.append((uid, new.fingerprint, new.wrap(uid, old.unwrap(uid, ref, bytes(row["wrapped"])))))
            await conn.executemany("UPDATE memory_keys SET master = $2, wrapped = $3 WHERE user_id = $1", rewrapped)
            return len(rows)

        while count := await self.database.run(batch):
            done += count
        await self.database.run(lambda conn: write_mark(conn, StoreMark(rotating.store, new.fingerprint)))
        self._cache.clear()
        return done, already
