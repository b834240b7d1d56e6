"""The day each user was last seen, for retention: `DATA_DIR/activity.json`, written atomically.

`note` runs for every message, so it only touches RAM; the file is saved hourly, at the sweep, at shutdown and when
a user is forgotten. Days count to the end of the day, so rounding always keeps a user longer, never shorter. An
unreadable file is logged and replaced at the next save: it holds only dates, and the memory files' own times still
protect every user with memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime
from pathlib import Path

from bot.memory.drivers.days import Seen, day_of, end_of
from bot.storage.atomic import AtomicWriter, json_bytes

log = logging.getLogger(__name__)

ACTIVITY_FILE = "activity.json"
PAGE = 5_000  # users per page of `seen`


class ActivityLog:
    """The day each user was last seen, in RAM (a file serves one process, and the file holds every day anyway),
    saved (atomically) when it changed; `path=None` keeps it in RAM."""

    def __init__(self, path: Path | None, *, writer: AtomicWriter | None = None) -> None:
        self._days: dict[int, date] = {}
        self.path = path
        self._writer = writer or AtomicWriter()
        self._dirty = False
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        """`load`, for the storage interface."""
        await asyncio.to_thread(self.load)

    def load(self) -> None:
        """Read the file; an unreadable one is logged and replaced at the next save (it holds only dates, and the
        memory files' own times still protect every user with memory)."""
        if self.path is None:
            return
        try:
            data = json.loads(self.path.read_bytes())
            self._days = {int(uid): date.fromisoformat(day) for uid, day in data["users"].items()}
        except FileNotFoundError:
            return
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            log.warning("activity file %s is unreadable; it will be rewritten", self.path.name)
            self._days = {}

    def note(self, user_id: int, now: datetime) -> None:
        """Runs for every message: a dict lookup, and a write only when the user's day changed."""
        day = day_of(now)
        if self._days.get(user_id) != day:
            self._days[user_id] = day
            self._dirty = True

    async def last_seen(self, user_id: int) -> datetime | None:
        """The end of the last day the user was seen (UTC), or None when never recorded."""
        day = self._days.get(user_id)
        return None if day is None else end_of(day)

    async def seen(self) -> AsyncIterator[list[Seen]]:
        """Every recorded user with the end of their last day, in pages in user id order."""
        ordered = sorted(self._days.items())
        for start in range(0, len(ordered), PAGE):
            yield [(uid, end_of(day)) for uid, day in ordered[start : start + PAGE]]

    async def forget_user(self, user_id: int) -> None:
        """Drop the user's day, from the file too (saved before returning)."""
        if self._days.pop(user_id, None) is not None:
            self._dirty = True
            await self.save()

    async def close(self) -> None:
        """Save what changed since the last save."""
        await self.save()

    async def save(self) -> None:
        """Write the file if anything changed since the last save."""
        async with self._lock:
            if self.path is None or not self._dirty:
                return
            self._dirty = False
            days = {str(uid): day.isoformat() for uid, day in sorted(self._days.items())}
            try:
                await self._writer.write(self.path, json_bytes({"users": days}, compact=True))
            except BaseException:
                self._dirty = True
                raise

    @asynccontextmanager
    async def sweep_lock(self) -> AsyncIterator[bool]:
        """Files serve one process: it may always sweep."""
        yield True
