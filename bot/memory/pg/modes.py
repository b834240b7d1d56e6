"""Pauses (`/memory pause`) and timed privacy modes (`/memory incognito`, `/memory fresh`) in PostgreSQL.

Same contract as the file registries (`bot.memory.pauses`, `bot.memory.modes`), shared by every process: reads are
synchronous, from a mirror of the table (see `mirror.py`); a change is committed before the command answers and is
seen by the other processes within a notification's round trip (a full reload every `REFRESH_SECONDS` at worst).
Whether a change changed anything is decided by the database, so two processes never both report "paused now".

The files' fail-closed rules guard against a file that cannot be parsed; rows are typed, so there is nothing to
hold: `held` is always False and no "everyone is incognito" state exists. A database that cannot be reached at
start stops the start (`StorageUnavailable`), and one lost later leaves the mirror as it was last read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from bot.memory.modes import UNTIL_RESUME
from bot.storage.ids import user_key
from bot.storage.pg.mirror import Mirror

PAUSES_CHANNEL = "memory_pauses"
MODES_CHANNEL = "memory_modes"


def _user_of(payload: str) -> int | None:
    return int(payload) if payload.isdigit() else None


class PostgresPauseRegistry(Mirror[int, bool]):
    """Who paused learning: a row in `paused_users` per paused user."""

    channel = PAUSES_CHANNEL

    @property
    def held(self) -> bool:
        """Always False: a table cannot be half-readable the way a damaged file can (see the module)."""
        return False

    async def _fetch(self, conn: asyncpg.Connection, keys: list[int] | None) -> Mapping[int, bool]:
        if keys is None:
            rows = await conn.fetch("SELECT user_id FROM paused_users")
        else:
            rows = await conn.fetch("SELECT user_id FROM paused_users WHERE user_id = ANY($1::bigint[])", keys)
        return {int(row["user_id"]): True for row in rows}

    def _key_of(self, payload: str) -> int | None:
        return _user_of(payload)

    def _payload_of(self, key: int) -> str:
        return str(key)

    def paused_users(self) -> set[int]:
        return set(self._rows)

    def is_paused(self, user_id: int | str) -> bool:
        return user_key(user_id) in self._rows

    async def set_paused(self, user_id: int | str, paused: bool) -> bool:
        """Pause or resume; returns whether anything changed (in the database, for every process)."""
        uid = user_key(user_id)
        changed = False

        async def work(conn: asyncpg.Connection) -> bool | None:
            nonlocal changed
            if paused:
                query = "INSERT INTO paused_users (user_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING true"
            else:
                query = "DELETE FROM paused_users WHERE user_id = $1 RETURNING true"
            changed = await conn.fetchval(query, uid) is not None
            return True if paused else None

        await self._change(uid, work)
        return changed


@dataclass(frozen=True, slots=True)
class ModeRow:
    incognito: datetime | None = None
    fresh: datetime | str | None = None  # a time, UNTIL_RESUME, or None

    def live(self, now: datetime) -> bool:
        fresh_live = self.fresh == UNTIL_RESUME or (isinstance(self.fresh, datetime) and now < self.fresh)
        return fresh_live or (self.incognito is not None and now < self.incognito)


def _row(record: asyncpg.Record) -> ModeRow:
    fresh: datetime | str | None = UNTIL_RESUME if record["fresh_until_resume"] else record["fresh_until"]
    return ModeRow(incognito=record["incognito_until"], fresh=fresh)




class PostgresModeRegistry(Mirror[int, ModeRow]):
    """Timed incognito and fresh modes: a row in `user_modes` per user with a mode on (expired rows are deleted
    with the next change, as the file drops them)."""

    channel = MODES_CHANNEL

    async def open(self, now: datetime | None = None) -> None:
        """Listen, then load every row (`now` is accepted for the file registry's signature)."""
        await super().open()

    async def _fetch(self, conn: asyncpg.Connection, keys: list[int] | None) -> Mapping[int, ModeRow]:
        if keys is None:
            rows = await conn.fetch("SELECT * FROM user_modes")
        else:
            rows = await conn.fetch("SELECT * FROM user_modes WHERE user_id = ANY($1::bigint[])", keys)
        return {int(row["user_id"]): _row(row) for row in rows}

    def _key_of(self, payload: str) -> int | None:
        return _user_of(payload)

    def _payload_of(self, key: int) -> str:
        return str(key)

    # --- reading -------------------------------------------------------------------------------------------

    def incognito_until(self, user_id: int | str, now: datetime) -> datetime | None:
        """When the user's timed incognito ends, or None when it is off."""
        row = self._rows.get(user_key(user_id))
        if row is None or row.incognito is None or now >= row.incognito:
            return None
        return row.incognito

    def fresh_until(self, user_id: int | str, now: datetime) -> datetime | str | None:
        """When the user's fresh mode ends: a time, `UNTIL_RESUME`, or None when it is off."""
        row = self._rows.get(user_key(user_id))
        if row is None or row.fresh is None:
            return None
        if isinstance(row.fresh, datetime) and now >= row.fresh:
            return None
        return row.fresh

    def users(self) -> set[int]:
        """Users with a mode on record (the retention sweep deletes theirs with the rest of their data)."""
        return set(self._rows)

    # --- changing ------------------------------------------------------------------------------------------

    async def set_incognito(self, user_id: int | str, until: datetime | None, now: datetime) -> None:
        await self._set(
            user_id, now, "UPDATE user_modes SET incognito_until = $2 WHERE user_id = $1 RETURNING *", until
        )

    async def set_fresh(self, user_id: int | str, until: datetime | str | None, now: datetime) -> None:
        if until == UNTIL_RESUME:
            await self._set(
                user_id, now,
                "UPDATE user_modes SET fresh_until = NULL, fresh_until_resume = true WHERE user_id = $1 RETURNING *",
            )
        elif until is None or isinstance(until, datetime):
            await self._set(
                user_id, now,
                "UPDATE user_modes SET fresh_until = $2, fresh_until_resume = false WHERE user_id = $1 RETURNING *",
                until,
            )
        else:
            raise ValueError(f"fresh mode ends at a time, {UNTIL_RESUME!r} or None")

    async def clear(self, user_id: int | str, now: datetime) -> bool:
        """End both modes for the user; True when either was on (in the database, for every process)."""
        uid = user_key(user_id)
        was_on = False

        async def work(conn: asyncpg.Connection) -> ModeRow | None:
            nonlocal was_on
            row = await conn.fetchrow("DELETE FROM user_modes WHERE user_id = $1 RETURNING *", uid)
            was_on = row is not None and _row(row).live(now)
            return None

        await self._change(uid, work)
        return was_on

    async def _set(self, user_id: int | str, now: datetime, update: str, *args: datetime | None) -> None:
        """Change the user's row (created if missing) with `update`, delete it if nothing on it is live any more,
        and delete the rows of timers that ran out (`now` is the caller's clock, as the file registry uses it)."""
        uid = user_key(user_id)
        expired: list[int] = []

        async def work(conn: asyncpg.Connection) -> ModeRow | None:
            await conn.execute("INSERT INTO user_modes (user_id) VALUES ($1) ON CONFLICT DO NOTHING", uid)
            row = await conn.fetchrow(update, uid, *args)
            gone = await conn.fetch(
                "DELETE FROM user_modes WHERE NOT fresh_until_resume"
                " AND (incognito_until IS NULL OR incognito_until <= $1)"
                " AND (fresh_until IS NULL OR fresh_until <= $1) RETURNING user_id",
                now,
            )
            expired[:] = [int(record["user_id"]) for record in gone]
            mode = _row(row)
            return mode if mode.live(now) else None

        await self._change(uid, work)
        for other in expired:  # inert already (their times passed); other processes drop them at a full reload
            self._rows.pop(other, None)
