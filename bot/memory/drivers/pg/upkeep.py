"""The upkeep schedule and the record of forgotten users in PostgreSQL, and whether bots have used the database.

- `memory_upkeep`: when each user's memory next holds something the bot must remove on its own (see
  `UpkeepSchedule`); the migration that created it made every existing memory due at once, so history written
  before it is visited too.
- `forgotten_users`: who made the bot forget everything, or was deleted by retention, and when (ids only), so
  `import-files` never brings them back.
- `bot_use`: one row, written when a bot's storage opens the database: `import-files` refuses a database that a bot
  has used unless told `--force` (what a user changed or forgot there would be undone by older files).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import asyncpg

from bot.storage.ids import user_key
from bot.storage.pg.database import Database


class PostgresUpkeep:
    def __init__(self, database: Database) -> None:
        self.database = database

    async def open(self) -> None:
        """Nothing to prepare: the schema is migrated when the database is opened."""

    async def close(self) -> None:
        """Nothing to close: the pool belongs to the bundle."""

    async def plan(self, user_id: int, due: datetime | None) -> None:
        if due is None:
            await self.database.execute("DELETE FROM memory_upkeep WHERE user_id = $1", user_key(user_id))
        else:
            await self.database.execute(
                "INSERT INTO memory_upkeep (user_id, due_at) VALUES ($1, $2)"
                " ON CONFLICT (user_id) DO UPDATE SET due_at = EXCLUDED.due_at",
                user_key(user_id),
                due,
            )

    async def due(self, now: datetime) -> list[int]:
        rows = await self.database.fetch(
            "SELECT user_id FROM memory_upkeep WHERE due_at <= $1 ORDER BY due_at, user_id", now
        )
        return [int(row["user_id"]) for row in rows]

    async def forget_user(self, user_id: int) -> None:
        await self.database.execute("DELETE FROM memory_upkeep WHERE user_id = $1", user_key(user_id))


class PostgresForgotten:
    def __init__(self, database: Database) -> None:
        self.database = database

    async def open(self) -> None:
        """Note that a bot uses this database (see the module)."""
        await self.database.run(note_bot_use)

    async def close(self) -> None:
        """Nothing to close: the pool belongs to the bundle."""

    async def record(self, user_id: int) -> None:
        await self.database.execute(
            "INSERT INTO forgotten_users (user_id, forgotten_at) VALUES ($1, now())"
            " ON CONFLICT (user_id) DO UPDATE SET forgotten_at = now()",
            user_key(user_id),
        )

    async def among(self, user_ids: Collection[int]) -> set[int]:
        return await forgotten_among(self.database, user_ids)


async def note_bot_use(conn: asyncpg.Connection) -> None:
    await conn.execute(
        "INSERT INTO bot_use (only_row, first_start, last_start) VALUES (true, now(), now())"
        " ON CONFLICT (only_row) DO UPDATE SET last_start = now()"
    )


async def bot_use(database: Database) -> tuple[datetime, datetime] | None:
    """When a bot first and last opened this database, or None when none ever has."""
    row = await database.run(
        lambda conn: conn.fetchrow("SELECT first_start, last_start FROM bot_use"), transaction=False
    )
    return None if row is None else (row["first_start"], row["last_start"])


async def forgotten_among(database: Database, user_ids: Collection[int]) -> set[int]:
    rows = await database.fetch(
        "SELECT user_id FROM forgotten_users WHERE user_id = ANY($1::bigint[])", sorted(set(user_ids))
    )
    return {int(row["user_id"]) for row in rows}
