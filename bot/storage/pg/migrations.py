"""Numbered schema migrations, applied in order, each once, under an advisory lock (`python -m bot migrate`).

`schema_version` records what was applied. Migrating takes a session advisory lock, so processes starting
together apply each migration once; a database newer than the code is refused rather than written to. Migrations
are append-only: a released one is never edited, a change is a new one. This module runs any list of them; the
memory engine's list is `bot.memory.drivers.pg.schema.MIGRATIONS`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from bot.storage.errors import SchemaError

log = logging.getLogger(__name__)

MIGRATION_LOCK = 0x6D656D6F7279  # "memory": far below any Discord snowflake, which the per-user locks use


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


async def applied_version(conn: asyncpg.Connection) -> int:
    """The highest migration applied (0 for an empty database)."""
    exists = await conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def apply_migrations(conn: asyncpg.Connection, migrations: Sequence[Migration]) -> list[int]:
    """Apply every migration not yet applied, each in its own transaction; returns the versions applied now.
    Idempotent, and safe when several processes run it at once."""
    latest = migrations[-1].version
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = await applied_version(conn)
        if current > latest:
            raise SchemaError(
                f"the database schema is version {current}, newer than this bot knows ({latest}): upgrade the bot"
            )
        done = []
        for migration in migrations:
            if migration.version <= current:
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_version (version, name) VALUES ($1, $2)", migration.version, migration.name
                )
            log.info("database: applied migration %d (%s)", migration.version, migration.name)
            done.append(migration.version)
        return done
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)
