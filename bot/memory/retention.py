"""Retention: the memory of a user who has been silent for MEMORY_RETENTION_DAYS is deleted, with every trace.

"Silent" means no message from the user has reached the bot (whether or not it was learned) and nothing was
learned from them for that long. A user's last activity is the later of:
- the day recorded in `DATA_DIR/activity.json` (updated in RAM on every message, saved hourly, at the sweep and at
  shutdown; counted to the end of that day, so rounding always keeps a user longer, never shorter), and
- the modification time of their memory file (rewritten by every extraction), which also covers a crash that lost
  the last hour of the activity file, and files written before the activity file existed.
A user known only by a setting (a pause or a mode; no memory, no recorded activity) has their clock started at the first
sweep that sees them.

The sweep deletes through the service's forget-everything path (memory file, corrupt copies, pending turns, the
records of which memory their replies used, the activity record), then the user's pause and modes, and compacts the
journal once at the end so the bytes of dropped turns leave the disk. It lists the folder in a worker thread and
deletes in small concurrent chunks that yield to the event loop, so 10,000 users on disk do not stall replies.
Counts are logged at INFO, user ids only at DEBUG.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from bot.storage.atomic import AtomicWriter, json_bytes

if TYPE_CHECKING:
    from bot.memory.backend import ActivityStore
    from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

ACTIVITY_FILE = "activity.json"
SWEEP_CHUNK = 2  # deletions in flight: few, so the loop never waits long for the GIL or the thread pool


class DayBook:
    """The day each user was last seen, in RAM: what both activity stores answer from. `note` runs for every
    message, so it only touches a dict; `_noted` tells the store what to write at its next save."""

    def __init__(self) -> None:
        self._days: dict[int, date] = {}

    def note(self, user_id: int, now: datetime) -> None:
        day = now.astimezone(UTC).date()
        if self._days.get(user_id) != day:
            self._days[user_id] = day
            self._noted(user_id, day)

    def _noted(self, user_id: int, day: date) -> None:
        """A user's day changed in RAM (the store saves it later)."""

    def last_seen(self, user_id: int) -> datetime | None:
        """The end of the last day the user was seen (UTC), or None when never recorded."""
        day = self._days.get(user_id)
        if day is None:
            return None
        return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)

    def users(self) -> list[int]:
        return list(self._days)


class ActivityLog(DayBook):
    """The day each user was last seen, in RAM, saved (atomically) when it changed; `path=None` keeps it in RAM."""

    def __init__(self, path: Path | None, *, writer: AtomicWriter | None = None) -> None:
        super().__init__()
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

    def _noted(self, user_id: int, day: date) -> None:
        self._dirty = True

    async def remove(self, user_id: int) -> None:
        """Drop the user's day (from the file at the next save, which the caller does)."""
        if self._days.pop(user_id, None) is not None:
            self._dirty = True

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


def last_activity(activity: ActivityStore, file_times: dict[int, float], user_id: int) -> datetime | None:
    seen = activity.last_seen(user_id)
    mtime = file_times.get(user_id)
    touched = datetime.fromtimestamp(mtime, UTC) if mtime is not None else None
    known = [moment for moment in (seen, touched) if moment is not None]
    return max(known) if known else None


async def sweep_silent_users(service: MemoryService, now: datetime, *, days: int) -> int:
    """Delete everything of users silent for more than `days` (0: nothing); returns how many were deleted."""
    if days <= 0:
        return 0
    async with service.activity.sweep_lock() as mine:
        if not mine:
            log.debug("retention: another process is sweeping; skipping this round")
            return 0
        return await _sweep(service, now, days)


async def _sweep(service: MemoryService, now: datetime, days: int) -> int:
    cutoff = now - timedelta(days=days)
    activity = service.activity
    await activity.save()  # where processes share the records, this also reads what the others saw
    file_times = await service.store.last_written()
    with_modes = service.modes.users()
    candidates: set[int] = set(file_times) | set(activity.users()) | service.pauses.paused_users() | with_modes
    silent: list[int] = []
    for user_id in candidates:
        last = last_activity(activity, file_times, user_id)
        if last is None:
            activity.note(user_id, now)  # known only by a setting: its clock starts now
        elif last < cutoff:
            silent.append(user_id)
    deleted = 0
    for start in range(0, len(silent), SWEEP_CHUNK):
        chunk = silent[start : start + SWEEP_CHUNK]
        results = await asyncio.gather(
            *(_erase_if_still_silent(service, uid, cutoff, file_times, now, uid in with_modes) for uid in chunk)
        )
        deleted += sum(results)
        await asyncio.sleep(0)
    if deleted and service.journal is not None:
        await service.journal.compact()
    await activity.save()
    log.info(
        "retention: deleted the memory of %d users silent for over %d days (%d users checked)",
        deleted, days, len(candidates),
    )
    return deleted


async def _erase_if_still_silent(
    service: MemoryService, user_id: int, cutoff: datetime, file_times: dict[int, float], now: datetime, modes: bool
) -> bool:
    """The user may have spoken since the folder was listed: check again just before deleting."""
    last = last_activity(service.activity, file_times, user_id)
    if last is None or last >= cutoff or service.debouncer.has_pending_for(user_id):
        return False
    if service.journal is not None and await service.journal.active_since(user_id, cutoff):
        return False  # they spoke (perhaps to another process) and nothing was learned or recorded yet
    await service.forget_all(user_id, quiet=True)
    await service.pauses.set_paused(user_id, False)
    if modes:
        await service.modes.clear(user_id, now)
    log.debug("retention: deleted the memory of silent user %s", user_id)
    return True
