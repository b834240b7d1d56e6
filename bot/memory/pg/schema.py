"""The database schema, as numbered migrations applied in order, each once (`python -m bot migrate`).

`schema_version` records what was applied. Migrating takes a session advisory lock, so processes starting
together apply each migration once; a database newer than this code is refused rather than written to.
Migrations are append-only: a released one is never edited, a change is a new one.

Memory is one row per user holding the memory document as JSONB (the same document as a memory file), not
normalised tables: the engine reads and rewrites a user's memory as a whole (selection, extraction, export), so a
row is one read per reply and one write per extraction, and the file and database formats cannot drift apart.
`revision` comes from one sequence, so a number never names two different contents, even after a user's row is
deleted and recreated (caches key on it).

The small per-user state (pauses, privacy modes, reply records, last activity) and the admins' memory switches are
plain rows, one table each; only what is on (a pause, a live mode, a switch that is off) has a row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

log = logging.getLogger(__name__)

MIGRATION_LOCK = 0x6D656D6F7279  # "memory": far below any Discord snowflake, which the per-user locks use


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "memory documents and pending turns",
        """
        CREATE SEQUENCE memory_revisions;
        CREATE TABLE user_wipes (
            user_id     bigint PRIMARY KEY,
            wiped_at    timestamptz NOT NULL
        );
        CREATE TABLE memories (
            user_id     bigint PRIMARY KEY,
            doc         jsonb NOT NULL,
            revision    bigint NOT NULL,
            updated_at  timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE pending_turns (
            user_id             bigint NOT NULL,
            turn_id             text NOT NULL,
            seq                 bigserial,
            conversation_id     bigint NOT NULL,
            place               jsonb NOT NULL,
            turn                jsonb NOT NULL,
            received_at         timestamptz NOT NULL DEFAULT now(),
            lease_owner         text,
            lease_until         timestamptz,
            permanent_failures  integer NOT NULL DEFAULT 0,
            transient_failures  integer NOT NULL DEFAULT 0,
            parked_at           timestamptz,
            PRIMARY KEY (user_id, turn_id)
        );
        CREATE INDEX pending_turns_expired ON pending_turns (lease_until) WHERE parked_at IS NULL;
        CREATE INDEX pending_turns_parked ON pending_turns (parked_at) WHERE parked_at IS NOT NULL;
        """,
    ),
    Migration(
        2,
        "pauses, privacy modes, reply records, activity and memory switches",
        """
        CREATE TABLE paused_users (
            user_id     bigint PRIMARY KEY,
            paused_at   timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE user_modes (
            user_id             bigint PRIMARY KEY,
            incognito_until     timestamptz,
            fresh_until         timestamptz,
            fresh_until_resume  boolean NOT NULL DEFAULT false
        );
        CREATE TABLE reply_records (
            reply_id     bigserial PRIMARY KEY,
            user_id      bigint NOT NULL,
            message_ids  bigint[] NOT NULL,
            sections     text[] NOT NULL,
            fact_ids     text[] NOT NULL,
            recorded_at  timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX reply_records_messages ON reply_records USING gin (message_ids);
        CREATE INDEX reply_records_user ON reply_records (user_id);
        CREATE TABLE user_activity (
            user_id     bigint PRIMARY KEY,
            last_day    date NOT NULL
        );
        CREATE TABLE guild_switches (
            guild_id    bigint PRIMARY KEY,
            learning    boolean NOT NULL,
            recall      boolean NOT NULL
        );
        CREATE TABLE channel_switches (
            channel_id  bigint PRIMARY KEY,
            learning    boolean NOT NULL
        );
        """,
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version


class SchemaError(Exception):
    """The database's schema cannot be used by this version; the message is one line for the operator."""


async def applied_version(conn: asyncpg.Connection) -> int:
    """The highest migration applied (0 for an empty database)."""
    exists = await conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def migrate(conn: asyncpg.Connection) -> list[int]:
    """Apply every migration not yet applied, each in its own transaction; returns the versions applied now.
    Idempotent, and safe when several processes run it at once."""
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = await applied_version(conn)
        if current > LATEST_VERSION:
            raise SchemaError(
                f"the database schema is version {current}, newer than this bot knows ({LATEST_VERSION}): "
                "upgrade the bot"
            )
        done = []
        for migration in MIGRATIONS:
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
