"""The day each user was last seen, shared by every process, for retention (same contract as `ActivityLog`).

`note` stays in RAM (it runs for every message); `save` (hourly, at the sweep and at shutdown) upserts the days
noted since the last save with `GREATEST`, so no process ever moves a user's day back, then reads the whole table,
so `users()` and `last_seen` answer for every process's users. `remove` deletes the user's row at once (a forget
removes the record for real). `sweep_lock` lets one process at a time run the retention sweep: a named lock of the
process registry (a row, not a session lock), so the sweep holds no connection between its units of work and runs
even on a pool of one; a lock whose holder died is free once its liveness row went stale.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date

from bot.memory.drivers.days import DayBook
from bot.storage.errors import StorageUnavailable
from bot.storage.ids import user_key
from bot.storage.pg.database import Database
from bot.storage.pg.processes import ProcessRegistry

log = logging.getLogger(__name__)

SWEEP_LOCK = "retention-sweep"


class PostgresActivityLog(DayBook):
    def __init__(self, database: Database, processes: ProcessRegistry | None = None) -> None:
        super().__init__()
        self.database = database
        self.processes = processes or ProcessRegistry(database)
        self._unsaved: dict[int, date] = {}  # noted since the last save, not yet in the table

    async def open(self) -> None:
        """Read every process's days."""
        await self._read()

    def _noted(self, user_id: int, day: date) -> None:
        self._unsaved[user_id] = day

    async def close(self) -> None:
        """Save what was noted since the last save."""
        await self.save()

    async def forget_user(self, user_id: int) -> None:
        uid = user_key(user_id)
        await self.database.execute("DELETE FROM user_activity WHERE user_id = $1", uid)
        self._days.pop(uid, None)
        self._unsaved.pop(uid, None)

    async def save(self) -> None:
        """Write the days noted since the last save (never moving a day back), then read every process's days."""
        noted, self._unsaved = self._unsaved, {}
        if noted:
            ids, days = list(noted), list(noted.values())
            try:
                await self.database.execute(
                    "INSERT INTO user_activity (user_id, last_day)"
                    " SELECT * FROM unnest($1::bigint[], $2::date[])"
                    " ON CONFLICT (user_id) DO UPDATE"
                    " SET last_day = GREATEST(user_activity.last_day, EXCLUDED.last_day)",
                    ids,
                    days,
                )
            except BaseException:
                for uid, day in noted.items():  # keep them for the next save (newer notes win)
                    self._unsaved.setdefault(uid, day)
                raise
        await self._read()

    async def _read(self) -> None:
        days: dict[int, date] = {}
        async for rows in self.database.fetch_pages(
            "SELECT user_id, last_day FROM user_activity WHERE $1::bigint IS NULL OR user_id > $1"
            " ORDER BY user_id LIMIT $2"
        ):  # paged: every process reads this hourly, and a million rows must not hold the loop
            days.update((int(row["user_id"]), row["last_day"]) for row in rows)
        for uid, day in self._unsaved.items():  # noted while reading: not in the table yet
            days[uid] = max(day, days.get(uid, day))
        self._days = days

    @asynccontextmanager
    async def sweep_lock(self) -> AsyncIterator[bool]:
        """True for the one live process that may sweep now; False for the others, which skip this round."""
        locked = await self.processes.try_lock(SWEEP_LOCK)
        try:
            yield locked
        finally:
            if locked:
                try:
                    await self.processes.unlock(SWEEP_LOCK)
                except StorageUnavailable as error:  # it is free anyway once this process is gone
                    log.warning("retention: could not release the sweep lock (%s)", error)
