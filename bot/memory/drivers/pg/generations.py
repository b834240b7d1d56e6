"""Forget generations in PostgreSQL, shared by every process: `user_generations`, mirrored in RAM.

`bump` runs under the user's lock (`pg_advisory_xact_lock(user id)`, the lock every write of that user's memory,
pending turns and reply records takes), so a write either commits before the bump, and the forget that follows
removes it, or checks the generation after it and is refused. `current` reads this process's mirror, which another
process's bump reaches a notification later: a ticket taken in that moment carries the old generation and its work
is refused at write time, the safe direction. Generations are never deleted (they hold no words, and forgetting one
would make work from before a forget valid again).
"""

from __future__ import annotations

from collections.abc import Mapping

import asyncpg

from bot.memory.errors import Stale
from bot.storage.ids import user_key
from bot.storage.pg.database import Database
from bot.storage.pg.mirror import Mirror

GENERATIONS_CHANNEL = "memory_generations"


async def lock_user(conn: asyncpg.Connection, uid: int) -> None:
    """The user's lock across processes, held until the transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock($1)", uid)


async def ensure_current(conn: asyncpg.Connection, what: str, uid: int, *generations: int) -> None:
    """`Stale` naming `what` when any of `generations` is not the user's generation as the database has it.

    Call it in the write's own transaction with the user's lock held (`lock_user`): `bump` takes that lock too, so
    the write either commits before a forget's bump, and the forget removes it, or sees the bump and is refused."""
    if not generations:
        return
    current = int(
        await conn.fetchval("SELECT coalesce((SELECT generation FROM user_generations WHERE user_id = $1), 0)", uid)
    )
    if any(generation != current for generation in generations):
        raise Stale(what, uid)


class PostgresGenerations(Mirror[int, int]):
    channel = GENERATIONS_CHANNEL

    def __init__(self, database: Database) -> None:
        super().__init__(database)

    async def _fetch(self, conn: asyncpg.Connection, keys: list[int] | None) -> Mapping[int, int]:
        rows = await conn.fetch(
            "SELECT user_id, generation FROM user_generations"
            " WHERE $1::bigint[] IS NULL OR user_id = ANY($1::bigint[])",
            keys,
        )
        return {int(row["user_id"]): int(row["generation"]) for row in rows}

    def _key_of(self, payload: str) -> int | None:
        return int(payload) if payload.isdigit() else None

    def _payload_of(self, key: int) -> str:
        return str(key)

    def current(self, user_id: int) -> int:
        return self._rows.get(user_key(user_id), 0)

    async def bump(self, user_id: int) -> int:
        uid = user_key(user_id)

        async def work(conn: asyncpg.Connection) -> int:
            await lock_user(conn, uid)
            return int(
                await conn.fetchval(
                    "INSERT INTO user_generations (user_id, generation) VALUES ($1, 1)"
                    " ON CONFLICT (user_id) DO UPDATE SET generation = user_generations.generation + 1"
                    " RETURNING generation",
                    uid,
                )
            )

        value = await self._change(uid, work)
        assert value is not None
        return value

    async def forget_user(self, user_id: int) -> None:
        """Kept (see the module)."""
