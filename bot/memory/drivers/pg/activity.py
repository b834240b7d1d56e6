"""The day each user was last seen, shared by every process, for retention (same contract as `ActivityLog`).

The table is the record; no process holds it. `note` runs for every message, so it only touches RAM: the days this
process noted since its last save. `save` (hourly, at the sweep and at shutdown) upserts them with `GREATEST`, so
no process ever moves a user's day back (a row whose day is already as late is left unwritten), and forgets them:
what a process holds is bounded by the users it served in an hour, not by the users the database knows. Reads
go to the table: `last_seen` for one user (with this process's later, unsaved day), `seen` a page at a time for
the retention sweep. `forget_user` deletes the user's row at once (a forget removes the record for real).
`sweep_lock` lets one process at a time run the retention sweep: a named lock of the process registry (a row, not
a session lock), so the sweep holds no connection between its units of work and runs even on a pool of one; a
lock whose holder died is free once its liveness row went stale.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime

from bot.memory.drivers.days import Seen, day_of, end_of
from bot.storage.errors import StorageUnavailable
from bot.storage.ids import user_key
from bot.storage.pg.database import Database
from bot.storage.pg.processes import ProcessRegistry

log = logging.getLogger(__name__)

SWEEP_LOCK = "retention-sweep"


class PostgresActivityLog:
    def __init__(self, database: Database, processes: ProcessRegistry | None = None) -> None:
        self.database = database
        self.processes = processes or ProcessRegistry(database)
        self._unsaved: dict[int, date] = {}  # noted since the last save, not yet in the table

    async def open(self) -> None:
        """Nothing to read: the days stay in the table."""

    async def close(self) -> None:
        """Save what was noted since the last save."""
        await self.save()

    def note(self, user_id: int, now: datetime) -> None:
        day = day_of(now)
        known = self._unsaved.get(user_id)
        if known is None or known < day:
            self._unsaved[user_id] = day

    async def last_seen(self, user_id: int) -> datetime | None:
        """The end of the last day the user was seen (UTC) by any process that saved since, or by this one; None
        when never recorded."""
        saved: date | None = await self.database.fetchval(
            "SELECT last_day FROM user_activity WHERE user_id = $1", user_key(user_id)
        )
        days = [day for day in (saved, self._unsaved.get(user_id)) if day is not None]
        return end_of(max(days)) if days else None

    async def seen(self) -> AsyncIterator[list[Seen]]:
        """Every saved day (the sweep saves first), in pages in user id order: a million rows never sit in RAM
        or hold the loop at once."""
        async for rows in self.database.fetch_pages(
            "SELECT user_id, last_day FROM user_activity WHERE $1::bigint IS NULL OR user_id > $1"
            " ORDER BY user_id LIMIT $2"
        ):
            yield [(int(row["user_id"]), end_of(row["last_day"])) for row in rows]

    async def forget_user(self, user_id: int) -> None:
        uid = user_key(user_id)
        await self.database.execute("DELETE FROM user_activity WHERE user_id = $1", uid)
        self._unsaved.pop(uid, None)

    async def save(self) -> None:
        """Write the days noted since the last save, never moving a day back."""
        noted, self._unsaved = self._unsaved, {}
        if not noted:
            return
        try:
            await self.database.execute(
                "INSERT INTO user_activity (user_id, last_day)"
                " SELECT * FROM unnest($1::bigint[], $2::date[])"
                " ON CONFLICT (user_id) DO UPDATE SET last_day = EXCLUDED.last_day"
                " WHERE user_activity.last_day < EXCLUDED.last_day",
                list(noted),
                list(noted.values()),
            )
        except BaseException:
            for uid, day in noted.items():  # keep them for the next save (later notes win)
                if self._unsaved.get(uid, day) <= day:
                    self._unsaved[uid] = day
            raise

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
