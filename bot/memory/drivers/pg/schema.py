"""The memory engine's database schema, as numbered migrations (`bot.storage.pg.migrations` applies them, each
once, at start or with `python -m bot migrate`). Append-only: a released migration is never edited.

Memory is one row per user holding the memory document as JSONB (the same document as a memory file), not
normalised tables: the engine reads and rewrites a user's memory as a whole (selection, extraction, export), so a
row is one read per reply and one write per extraction, and the file and database formats cannot drift apart.
`revision` comes from one sequence, so a number never names two different contents, even after a user's row is
deleted and recreated (caches key on it).

Reply records and last activity are plain rows, one table each. The small records read for every message (each
user's privacy record, the admins' memory switches, the servers' community settings, ...) are rows of one
`records` table keyed by kind and key (`bot.storage.pg.records`); only what is on has a row. Each user's forget
generation is a row of `user_generations`, and every pending turn carries the generation it arrived under
(migration 3 replaced the separate pause, mode, switch and wipe tables with these). Tokens spent for budgets are
counters per user or server and day (`token_usage`), added to by every process. Each running process keeps a row in
`processes` (`bot.storage.pg.processes`): the turns of a process whose row went stale are free for the others.

Migration 6 keeps ids and times only: which user each learned Discord message belongs to (`message_ledger`, so a
delete that names only a message finds the memory it taught), when each memory next needs upkeep
(`memory_upkeep`), who was forgotten (`forgotten_users`) and whether a bot has used the database (`bot_use`), the
last two for `import-files`. A database that already held forgets or pauses (only bots write those) is marked used.

Migration 7 is encryption at rest: with MEMORY_ENCRYPTION_KEY, a memory or a pending turn is a sealed `bytea` next
to its JSONB column, which is then NULL (exactly one of the two holds the value); the wrapped data keys are in
tables of their own (`bot.storage.pg.codec`), so backups can keep them apart from the data.
"""

from __future__ import annotations

import asyncpg

from bot.memory.drivers.pg.usage import USAGE_TABLE_SQL
from bot.storage.pg.codec import KEY_TABLES_SQL
from bot.storage.pg.migrations import Migration, apply_migrations
from bot.storage.pg.processes import PROCESSES_TABLE_SQL
from bot.storage.pg.records import RECORDS_TABLE_SQL

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
    Migration(
        3,
        "forget generations, one privacy record per user, small records in one table",
        RECORDS_TABLE_SQL  # noqa: S608 (constants, no input)
        + """
        CREATE TABLE user_generations (
            user_id     bigint PRIMARY KEY,
            generation  bigint NOT NULL
        );
        ALTER TABLE pending_turns ADD COLUMN generation bigint NOT NULL DEFAULT 0;
        INSERT INTO records (kind, key, value)
            SELECT 'privacy', u.user_id::text, jsonb_strip_nulls(jsonb_build_object(
                'paused', CASE WHEN p.user_id IS NOT NULL THEN true END,
                'incognitoUntil', to_char(m.incognito_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
                'freshUntil', CASE WHEN m.fresh_until_resume THEN 'resume'
                    ELSE to_char(m.fresh_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"') END))
            FROM (SELECT user_id FROM paused_users UNION SELECT user_id FROM user_modes) AS u
            LEFT JOIN paused_users AS p ON p.user_id = u.user_id
            LEFT JOIN user_modes AS m ON m.user_id = u.user_id;
        DELETE FROM records WHERE kind = 'privacy' AND value = '{}'::jsonb;
        INSERT INTO records (kind, key, value)
            SELECT 'switches', 'guild:' || guild_id, jsonb_build_object('learning', learning, 'recall', recall)
            FROM guild_switches;
        INSERT INTO records (kind, key, value)
            SELECT 'switches', 'channel:' || channel_id, jsonb_build_object('learning', learning)
            FROM channel_switches;
        DROP TABLE paused_users, user_modes, guild_switches, channel_switches, user_wipes;
        """,
    ),
    Migration(4, "tokens spent per user and per server per day", USAGE_TABLE_SQL),
    Migration(
        5,
        "process liveness and named locks",
        PROCESSES_TABLE_SQL,
    ),
    Migration(
        6,
        "message ledger, memory upkeep, forgotten users, bot use",
        """
        CREATE TABLE message_ledger (
            message_id  bigint PRIMARY KEY,
            user_id     bigint NOT NULL,
            place       text NOT NULL,
            learned_at  timestamptz NOT NULL,
            cited       boolean NOT NULL
        );
        CREATE INDEX message_ledger_user ON message_ledger (user_id);
        CREATE INDEX message_ledger_uncited ON message_ledger (learned_at) WHERE NOT cited;
        CREATE INDEX pending_turns_message ON pending_turns (split_part(turn_id, '.', 1));
        CREATE TABLE memory_upkeep (
            user_id     bigint PRIMARY KEY,
            due_at      timestamptz NOT NULL
        );
        CREATE INDEX memory_upkeep_due ON memory_upkeep (due_at);
        INSERT INTO memory_upkeep (user_id, due_at) SELECT user_id, '1970-01-01T00:00:00Z' FROM memories;
        CREATE TABLE forgotten_users (
            user_id       bigint PRIMARY KEY,
            forgotten_at  timestamptz NOT NULL
        );
        CREATE TABLE bot_use (
            only_row     boolean PRIMARY KEY CHECK (only_row),
            first_start  timestamptz NOT NULL,
            last_start   timestamptz NOT NULL
        );
        INSERT INTO bot_use (only_row, first_start, last_start)
            SELECT true, now(), now()
            WHERE EXISTS (SELECT 1 FROM user_generations);
        """,
    ),
    Migration(
        7,
        "encryption at rest: sealed memory and pending turns, the key store and its mark",
        KEY_TABLES_SQL
        + """
        ALTER TABLE memories ALTER COLUMN doc DROP NOT NULL, ADD COLUMN sealed bytea,
            ADD CONSTRAINT memories_one_form CHECK ((doc IS NULL) <> (sealed IS NULL));
        ALTER TABLE pending_turns ALTER COLUMN turn DROP NOT NULL, ADD COLUMN sealed bytea,
            ADD CONSTRAINT pending_turns_one_form CHECK ((turn IS NULL) <> (sealed IS NULL));
        """,
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version


async def migrate(conn: asyncpg.Connection) -> list[int]:
    """Apply the memory engine's migrations not yet applied; returns the versions applied now."""
    return await apply_migrations(conn, MIGRATIONS)
