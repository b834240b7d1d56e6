"""Which memory each reply used ("What did you remember?"), as rows shared by every process.

Same contract as the file `ReplyLog`: one row per reply (its message ids, the user it answered, the summary names
and fact ids its prompt carried; ids only, never text), the newest `keep` replies of all processes kept, a user's
rows deleted with their memory. `get` asks the database, since another process may have sent the reply; a GIN
index on the message ids makes that one index lookup.
"""

from __future__ import annotations

import asyncpg

from bot.memory.drivers.interfaces import REPLIES_KEPT, ReplyRecord, section_refs_ok
from bot.memory.drivers.pg.generations import ensure_current, lock_user
from bot.memory.models import SECTION_NAMES
from bot.storage.ids import user_key
from bot.storage.pg.database import Database


class PostgresReplyLog:
    def __init__(self, database: Database, *, keep: int = REPLIES_KEPT) -> None:
        self.database = database
        self.keep = keep

    async def open(self) -> None:
        """Nothing to load: every lookup reads the table."""

    async def close(self) -> None:
        """Nothing to close: the pool belongs to the bundle."""

    async def count(self) -> int:
        return int(await self.database.fetchval("SELECT count(*) FROM reply_records"))

    async def get(self, message_id: int) -> ReplyRecord | None:
        row = await self.database.run(
            lambda conn: conn.fetchrow(
                "SELECT message_ids, user_id, sections, fact_ids FROM reply_records"
                " WHERE message_ids @> ARRAY[$1::bigint] ORDER BY reply_id DESC LIMIT 1",
                message_id,
            ),
            transaction=False,
        )
        if row is None:
            return None
        return ReplyRecord(
            message_ids=tuple(int(m) for m in row["message_ids"]),
            user_id=int(row["user_id"]),
            sections=section_refs_ok(row["sections"], frozenset(SECTION_NAMES)),
            fact_ids=tuple(row["fact_ids"]),
        )

    async def record(self, record: ReplyRecord, *, generation: int) -> None:
        """Remember what one reply (all its messages) used, and drop the replies beyond the newest `keep`; `Stale`
        when the user forgot (in any process) since the reply was begun."""
        messages = [int(m) for m in record.message_ids]
        uid = user_key(record.user_id)
        sections, fact_ids = record.sections, record.fact_ids
        if not messages:
            return

        async def work(conn: asyncpg.Connection) -> None:
            await lock_user(conn, uid)
            await ensure_current(conn, "reply record", uid, generation)
            await conn.execute(
                "INSERT INTO reply_records (user_id, message_ids, sections, fact_ids)"
                " VALUES ($1, $2::bigint[], $3::text[], $4::text[])",
                uid,
                messages,
                list(sections),
                list(fact_ids),
            )

        await self.database.run(work)
        await self.database.execute(
            "DELETE FROM reply_records WHERE reply_id <="
            " (SELECT reply_id FROM reply_records ORDER BY reply_id DESC OFFSET $1 LIMIT 1)",
            self.keep,
        )

    async def forget_user(self, user_id: int) -> int:
        """Delete every record of replies to the user; returns how many."""
        gone = await self.database.fetchval(
            "WITH gone AS (DELETE FROM reply_records WHERE user_id = $1 RETURNING 1) SELECT count(*) FROM gone",
            user_key(user_id),
        )
        return int(gone)
