"""The message ledger in PostgreSQL: `message_ledger`, one row per learned Discord message (ids, place, time).

Every process reads and writes the same rows, so a delete received by one shard finds the memory a message taught
whichever process learned it. See `MessageLedger` for what an entry means and how long it is kept.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

import asyncpg

from bot.memory.drivers.interfaces import LEDGER_RECENT, LedgerEntry
from bot.storage.ids import user_key
from bot.storage.pg.database import Database


def message_keys(message_ids: Collection[str]) -> list[int]:
    """The ids as the table's keys (anything that is no Discord message id is left out)."""
    return [int(message) for message in dict.fromkeys(message_ids) if message.isdigit() and len(message) <= 19]


class PostgresLedger:
    def __init__(self, database: Database) -> None:
        self.database = database

    async def open(self) -> None:
        """Nothing to prepare: the schema is migrated when the database is opened."""

    async def close(self) -> None:
        """Nothing to close: the pool belongs to the bundle."""

    async def note(self, user_id: int, place: str, message_ids: Sequence[str], at: datetime) -> None:
        keys = message_keys(message_ids)
        if not keys:
            return
        await self.database.execute(
            "INSERT INTO message_ledger (message_id, user_id, place, learned_at, cited)"
            " SELECT m, $2, $3, $4, true FROM unnest($1::bigint[]) AS m"
            " ON CONFLICT (message_id) DO UPDATE SET user_id = EXCLUDED.user_id, place = EXCLUDED.place,"
            " learned_at = EXCLUDED.learned_at, cited = true",
            keys,
            user_key(user_id),
            place,
            at,
        )

    async def cite(self, user_id: int, *, cited: Collection[str], uncited: Collection[str]) -> None:
        yes, no = message_keys(cited), message_keys(uncited)
        if not yes and not no:
            return
        uid = user_key(user_id)

        async def work(conn: asyncpg.Connection) -> None:
            if yes:  # a source without an entry (written before the ledger) gets one: it is kept from now on
                await conn.execute(
                    "INSERT INTO message_ledger (message_id, user_id, place, learned_at, cited)"
                    " SELECT m, $2, '', now(), true FROM unnest($1::bigint[]) AS m"
                    " ON CONFLICT (message_id) DO UPDATE SET cited = true WHERE message_ledger.user_id = $2",
                    yes,
                    uid,
                )
            if no:
                await conn.execute(
                    "UPDATE message_ledger SET cited = false WHERE user_id = $2 AND message_id = ANY($1::bigint[])",
                    no,
                    uid,
                )

        await self.database.run(work)

    async def lookup(self, message_ids: Collection[str]) -> dict[str, LedgerEntry]:
        rows = await self.database.fetch(
            "SELECT message_id, user_id, place, learned_at, cited FROM message_ledger"
            " WHERE message_id = ANY($1::bigint[])",
            message_keys(message_ids),
        )
        return {
            str(row["message_id"]): LedgerEntry(
                int(row["user_id"]), str(row["place"]), row["learned_at"], bool(row["cited"])
            )
            for row in rows
        }

    async def drop(self, message_ids: Collection[str]) -> None:
        keys = message_keys(message_ids)
        if keys:
            await self.database.execute("DELETE FROM message_ledger WHERE message_id = ANY($1::bigint[])", keys)

    async def prune(self, now: datetime) -> int:
        gone = await self.database.fetchval(
            "WITH gone AS (DELETE FROM message_ledger WHERE NOT cited AND learned_at < $1 RETURNING 1)"
            " SELECT count(*) FROM gone",
            now - LEDGER_RECENT,
        )
        return int(gone)

    async def forget_user(self, user_id: int) -> None:
        await self.database.execute("DELETE FROM message_ledger WHERE user_id = $1", user_key(user_id))
