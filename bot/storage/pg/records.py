"""Tables of small records in PostgreSQL: every table is a `kind` of rows in one `records` table, mirrored in RAM.

Same contract as `bot.storage.records.FileRecords`, shared by every process: reads come from this process's mirror
(`bot.storage.pg.mirror`), a change commits before it returns and notifies the other processes, which re-read that
key (a full reload every few seconds catches a missed notification). `change` locks the key for the transaction
(an advisory lock on the kind and key), so two processes changing one record never lose either change. Rows are
typed JSON written by this code, so a table cannot be half readable the way a damaged file can: `damaged` is False.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import asyncpg

from bot.storage.pg.database import Database
from bot.storage.pg.mirror import Mirror
from bot.storage.records import Change, Record, RecordTable

RECORDS_CHANNEL = "memory_records"

# The table every `PostgresRecords` lives in; the application's migrations create it.
RECORDS_TABLE_SQL = """
CREATE TABLE records (
    kind        text NOT NULL,
    key         text NOT NULL,
    value       jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, key)
);
"""


class _RecordMirror(Mirror[str, Record]):
    channel = RECORDS_CHANNEL

    def __init__(self, database: Database, kind: str) -> None:
        super().__init__(database)
        self.kind = kind

    async def _fetch(self, conn: asyncpg.Connection, keys: list[str] | None) -> Mapping[str, Record]:
        rows = await conn.fetch(
            "SELECT key, value::text AS value FROM records WHERE kind = $1"
            " AND ($2::text[] IS NULL OR key = ANY($2::text[]))",
            self.kind,
            keys,
        )
        return {row["key"]: json.loads(row["value"]) for row in rows}

    def _key_of(self, payload: str) -> str | None:
        kind, _, key = payload.partition(":")
        return key if kind == self.kind and key else None

    def _payload_of(self, key: str) -> str:
        return f"{self.kind}:{key}"

    @property
    def rows(self) -> dict[str, Record]:
        return self._rows


class PostgresRecords(RecordTable):
    def __init__(self, database: Database, name: str) -> None:
        super().__init__(name)
        self.database = database
        self._mirror = _RecordMirror(database, name)
        self._rows = self._mirror.rows  # one dictionary: the mirror's rows are the table's RAM copy

    async def open(self) -> None:
        """Listen for other processes' changes, then load every row of this kind."""
        await self._mirror.open()

    async def close(self) -> None:
        await self._mirror.close()

    async def reload(self) -> None:
        """Re-read every row now (the periodic refresh does this on its own)."""
        await self._mirror.reload()

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Return once `predicate()` holds, checking it after every reload (callers bound the wait)."""
        await self._mirror.wait_for(predicate)

    async def change(self, key: str, update: Change) -> tuple[Record | None, Record | None]:
        outcome: list[Record | None] = [None, None]

        async def work(conn: asyncpg.Connection) -> Record | None:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 0))", self.name, key)
            raw = await conn.fetchval("SELECT value::text FROM records WHERE kind = $1 AND key = $2", self.name, key)
            before = None if raw is None else json.loads(raw)
            after = update(None if before is None else dict(before))
            if after is None:
                await conn.execute("DELETE FROM records WHERE kind = $1 AND key = $2", self.name, key)
            elif after != before:
                await conn.execute(
                    "INSERT INTO records (kind, key, value) VALUES ($1, $2, $3::jsonb)"
                    " ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
                    self.name,
                    key,
                    _encode(after),
                )
            outcome[:] = [before, after]
            return after

        await self._mirror._change(key, work)
        return outcome[0], outcome[1]

    async def delete(self, keys: Iterable[str]) -> int:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return 0
        gone = 0
        for key in wanted:  # one notification per key, as other processes re-read by key
            before, _ = await self.change(key, lambda _old: None)
            gone += before is not None
        return gone

    async def dump(self) -> dict[str, Record]:
        rows = await self.database.fetch(
            "SELECT key, value::text AS value FROM records WHERE kind = $1 ORDER BY key", self.name
        )
        return {row["key"]: json.loads(row["value"]) for row in rows}

    async def load_missing(self, records: Mapping[str, Record]) -> int:
        if not records:
            return 0
        keys, values = list(records), [_encode(value) for value in records.values()]
        added = await self.database.fetchval(
            "WITH added AS (INSERT INTO records (kind, key, value)"
            " SELECT $1, k, v::jsonb FROM unnest($2::text[], $3::text[]) AS t(k, v)"
            " ON CONFLICT (kind, key) DO NOTHING RETURNING 1) SELECT count(*) FROM added",
            self.name,
            keys,
            values,
        )
        await self._mirror.reload()
        return int(added)


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
