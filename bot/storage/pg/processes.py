"""Which processes sharing a database are alive: one row per process, refreshed every few seconds.

Each process registers a row in `processes` (its owner name, when it was last seen) when it opens and refreshes it
every `beat_seconds`; a clean shutdown deletes it. A process whose row was not refreshed for `stale_seconds` (the
database's clock decides, so the processes' clocks never matter) is dead as far as the others are concerned: what
it held (pending turns, a named lock) is free for them at once, whatever its lease said. Being declared dead is
never unsafe, only wasteful: a process that was merely slow and comes back finds its claims gone when it settles
them (rows change owner under row locks), and its next beat registers it again.

Named locks (`try_lock`) are rows of `process_locks` held by a live process: a lock whose holder is dead is taken
over. They need no connection of their own while held, so work done under them can use the whole pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from datetime import timedelta

from bot.storage.errors import StorageUnavailable
from bot.storage.pg.database import Database

log = logging.getLogger(__name__)

BEAT_SECONDS = 5.0
STALE_SECONDS = 20.0  # four missed beats: a process this quiet is taken for dead
FORGET_DEAD_AFTER = timedelta(days=1)  # rows of dead processes are kept this long for an operator to see

# The tables, created by the application's migrations.
PROCESSES_TABLE_SQL = """
CREATE TABLE processes (
    owner       text PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE process_locks (
    name        text PRIMARY KEY,
    owner       text NOT NULL,
    taken_at    timestamptz NOT NULL DEFAULT now()
);
"""


def new_owner() -> str:
    """A process's name: the host and pid (for an operator reading the tables) and a random part, so a restarted
    process with the same pid (pid 1 in a container) never mistakes an old hold for its own."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class ProcessRegistry:
    """This process's row in `processes`, kept fresh by a background task while open."""

    def __init__(
        self,
        database: Database,
        *,
        owner: str | None = None,
        beat_seconds: float = BEAT_SECONDS,
        stale_seconds: float = STALE_SECONDS,
    ) -> None:
        self.database = database
        self.owner = owner or new_owner()
        self.beat_seconds = beat_seconds
        self.stale_seconds = stale_seconds
        self._beater: asyncio.Task[None] | None = None
        self.presumed_dead = 0  # beats that found this process already given up for dead by the others

    @property
    def stale(self) -> timedelta:
        return timedelta(seconds=self.stale_seconds)

    async def open(self) -> None:
        """Register this process (at once, so nothing it holds looks abandoned) and keep its row fresh."""
        if self._beater is not None:
            return
        await self.beat()
        self._beater = asyncio.get_running_loop().create_task(self._beat_forever(), name="process-liveness")

    async def close(self) -> None:
        """Stop beating and delete this process's row and locks: what it still holds is free at once."""
        beater, self._beater = self._beater, None
        if beater is None:
            return
        beater.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beater
        try:
            await self.database.execute("DELETE FROM process_locks WHERE owner = $1", self.owner)
            await self.database.execute("DELETE FROM processes WHERE owner = $1", self.owner)
        except StorageUnavailable as error:
            log.warning("processes: could not remove this process's row (%s); it goes stale instead", error)

    async def beat(self) -> None:
        """Say this process is alive. A row that was already stale or gone (a pause longer than `stale_seconds`)
        is logged: the others may have taken over what it held, and its claims on those are void."""
        gap = await self.database.fetchval(
            "WITH before AS (SELECT extract(epoch FROM now() - last_seen)::float8 AS gap FROM processes"
            "   WHERE owner = $1)"
            " INSERT INTO processes (owner) VALUES ($1)"
            " ON CONFLICT (owner) DO UPDATE SET last_seen = now()"
            " RETURNING (SELECT gap FROM before)",
            self.owner,
        )
        if self._beater is not None and (gap is None or gap > self.stale_seconds):
            self.presumed_dead += 1
            log.warning(
                "processes: this process was silent for %s and was presumed dead; what it held may have been "
                "taken over by another process (its own claims on that are void)",
                "too long" if gap is None else f"{gap:.0f}s",
            )

    async def _beat_forever(self) -> None:
        while True:
            await asyncio.sleep(self.beat_seconds)
            try:
                await self.beat()
                await self.database.execute(
                    "DELETE FROM processes WHERE last_seen < now() - $1::interval", FORGET_DEAD_AFTER
                )
            except StorageUnavailable as error:
                log.warning("processes: could not refresh this process's row (%s); will retry", error)
            except Exception as error:  # the beat must outlive any one bad round
                log.error("processes: beat failed (%s); will retry", type(error).__name__, exc_info=error)

    # --- named locks ---------------------------------------------------------------------------------------

    async def try_lock(self, name: str) -> bool:
        """Take the lock `name` unless a live process holds it; True when this process holds it now. (A registry
        not opened registers this process once here, so its lock is not free to the others at once.)"""
        if self._beater is None:
            await self.beat()
        holder = await self.database.fetchval(
            "INSERT INTO process_locks (name, owner) VALUES ($1, $2)"
            " ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, taken_at = now()"
            " WHERE process_locks.owner = EXCLUDED.owner OR NOT EXISTS (SELECT 1 FROM processes"
            "   WHERE processes.owner = process_locks.owner AND processes.last_seen > now() - $3::interval)"
            " RETURNING owner",
            name,
            self.owner,
            self.stale,
        )
        return bool(holder == self.owner)

    async def unlock(self, name: str) -> None:
        await self.database.execute("DELETE FROM process_locks WHERE name = $1 AND owner = $2", name, self.owner)
