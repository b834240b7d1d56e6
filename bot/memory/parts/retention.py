"""Retention: the memory of a user who has been silent for MEMORY_RETENTION_DAYS is deleted, with every trace.

"Silent" means no message from the user has reached the bot (whether or not it was learned) and nothing was
learned from them for that long. A user's last activity is the later of:
- the day the activity store recorded (updated in RAM on every message, saved hourly, at the sweep and at
  shutdown; counted to the end of that day, so rounding always keeps a user longer, never shorter), and
- when their memory was last written (every extraction rewrites it), which also covers a crash that lost the last
  hour of activity, and memory written before activity was recorded.
A user known only by a setting (a privacy record; no memory, no recorded activity) has their clock started at the
first sweep that sees them.

The sweep deletes through the one forget-everything path (`forget`: the generation bumped, pending work dropped,
then every part of the storage bundle, privacy choices included), and compacts the pending turns once at the end
so the bytes of dropped turns leave the disk. It lists the storage first, a page at a time: the activity days and
the memory write times, both in user id order, merged page by page, so what it holds is a page and the silent
users, never every user (a million users do not sit in RAM). It then deletes in small concurrent chunks that
yield to the event loop, so 10,000 users do not stall replies. Where processes share the storage, one sweeps at a
time. Counts are logged at INFO, user ids only at DEBUG.

The same daily round drops each summary's earlier values once they are a day old (`sweep_history`): the upkeep
schedule names the users whose memory holds one that expired, so only those memories are read, and each is
rewritten through the writer as the bot's own change. The message ledger's entries past their day go too.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.interfaces import ActivityStore, MemoryDocuments
from bot.memory.errors import Stale
from bot.memory.parts.writer import MemoryWriter
from bot.memory.rules import summary_expiry as history
from bot.memory.rules.write_gate import SystemAuthor

log = logging.getLogger(__name__)
_V = TypeVar("_V")

SWEEP_CHUNK = 2  # deletions in flight: few, so the loop never waits long for the GIL or the thread pool

Listed = tuple[int, datetime | None, float | None]  # a user, the end of their last day seen, their memory's write


def last_activity(seen: datetime | None, written: float | None) -> datetime | None:
    touched = datetime.fromtimestamp(written, UTC) if written is not None else None
    known = [moment for moment in (seen, touched) if moment is not None]
    return max(known) if known else None


class _Pages(Generic[_V]):
    """One of the sweep's sorted listings, read a page at a time: the items of the page in hand not taken yet."""

    def __init__(self, pages: AsyncIterator[list[tuple[int, _V]]]) -> None:
        self.pages = pages
        self.items: list[tuple[int, _V]] = []
        self.done = False

    async def fill(self) -> None:
        """Read pages until one has items, or the listing ends."""
        while not self.items and not self.done:
            page = await anext(self.pages, None)
            if page is None:
                self.done = True
            else:
                self.items = page

    def take(self, bound: int) -> dict[int, _V]:
        """The items up to user id `bound`, taken out of the page."""
        cut = bisect.bisect_right(self.items, bound, key=lambda item: item[0])
        taken, self.items = self.items[:cut], self.items[cut:]
        return dict(taken)


async def listed(activity: ActivityStore, memories: MemoryDocuments) -> AsyncIterator[list[Listed]]:
    """Every user with an activity day or memory, once, with both, in pages: the two listings come in user id
    order, so a page of each is merged up to the smaller of their last ids, and the rest waits for the next."""
    days: _Pages[datetime] = _Pages(activity.seen())
    writes: _Pages[float] = _Pages(memories.written())
    while True:
        await days.fill()
        await writes.fill()
        ends = [pages.items[-1][0] for pages in (days, writes) if pages.items]
        if not ends:
            return
        bound = min(ends)
        seen, written = days.take(bound), writes.take(bound)
        yield [(uid, seen.get(uid), written.get(uid)) for uid in seen.keys() | written.keys()]


def _silent(user: Listed, cutoff: datetime, stamp: float) -> bool:
    """Neither seen nor written since `cutoff` (`stamp`: the same moment in POSIX seconds)."""
    _, seen, written = user
    return (seen is None or seen < cutoff) and (written is None or written < stamp)


@dataclass(frozen=True, slots=True)
class Sweeper:
    """What the sweep needs: the storage, whether a user has work waiting in this process, and how to forget
    everything of a user (privacy choices included)."""

    storage: StorageBundle
    busy: Callable[[int], bool]
    forget: Callable[[int], Awaitable[object]]


async def sweep_silent_users(sweeper: Sweeper, now: datetime, *, days: int) -> int:
    """Delete everything of users silent for more than `days` (0: nothing); returns how many were deleted."""
    if days <= 0:
        return 0
    async with sweeper.storage.activity.sweep_lock() as mine:
        if not mine:
            log.debug("retention: another process is sweeping; skipping this round")
            return 0
        return await _sweep(sweeper, now, days)


async def _sweep(sweeper: Sweeper, now: datetime, days: int) -> int:
    cutoff = now - timedelta(days=days)
    storage = sweeper.storage
    activity = storage.activity
    await activity.save()  # where processes share the records, the listing then holds this process's days too
    unlisted = set(storage.privacy.users())
    silent: list[Listed] = []
    checked, stamp = 0, cutoff.timestamp()
    async for page in listed(activity, storage.memories):
        checked += len(page)
        if unlisted:
            unlisted.difference_update(uid for uid, _, _ in page)
        silent.extend(user for user in page if _silent(user, cutoff, stamp))
        await asyncio.sleep(0)  # a million users take seconds to check: replies run between the pages
    for user_id in unlisted:
        activity.note(user_id, now)  # known only by a setting: its clock starts now
    deleted = 0
    for start in range(0, len(silent), SWEEP_CHUNK):
        chunk = silent[start : start + SWEEP_CHUNK]
        results = await asyncio.gather(*(_erase_if_still_silent(sweeper, user, cutoff) for user in chunk))
        deleted += sum(results)
        await asyncio.sleep(0)
    if deleted:
        await storage.turns.compact()
    await storage.privacy.prune(now)  # timers that ran out: nothing left to keep
    await activity.save()
    log.info(
        "retention: deleted the memory of %d users silent for over %d days (%d users checked)",
        deleted, days, checked + len(unlisted),
    )
    return deleted


async def _erase_if_still_silent(sweeper: Sweeper, user: Listed, cutoff: datetime) -> bool:
    """The user may have spoken since the storage was listed: check again just before deleting."""
    user_id, _, written = user
    last = last_activity(await sweeper.storage.activity.last_seen(user_id), written)
    if last is None or last >= cutoff or sweeper.busy(user_id):
        return False
    if await sweeper.storage.turns.active_since(user_id, cutoff):
        return False  # they spoke (perhaps to another process) and nothing was learned or recorded yet
    await sweeper.forget(user_id)
    log.debug("retention: deleted the memory of silent user %s", user_id)
    return True


@dataclass(frozen=True, slots=True)
class HistorySweep:
    visited: int = 0  # memories the schedule named
    pruned: int = 0  # earlier summary values dropped
    ledger: int = 0  # message ledger entries past their day, dropped


async def sweep_history(storage: StorageBundle, writer: MemoryWriter, now: datetime) -> HistorySweep:
    """Drop every summary value kept past its day, in the memories the upkeep schedule says hold one, and prune the
    message ledger. One process at a time where processes share the storage."""
    async with storage.activity.sweep_lock() as mine:
        if not mine:
            return HistorySweep()
        due = await storage.upkeep.due(now)
        pruned = 0
        for start in range(0, len(due), SWEEP_CHUNK):
            chunk = due[start : start + SWEEP_CHUNK]
            pruned += sum(await asyncio.gather(*(_prune_history(storage, writer, uid, now) for uid in chunk)))
            await asyncio.sleep(0)
        ledger = await storage.ledger.prune(now)
    log.info("history sweep: %d memories visited, %d earlier summary values dropped, %d ledger entries dropped",
             len(due), pruned, ledger)
    return HistorySweep(len(due), pruned, ledger)


async def _prune_history(storage: StorageBundle, writer: MemoryWriter, user_id: int, now: datetime) -> int:
    try:
        async with writer.change(user_id, SystemAuthor()) as draft:
            dropped = history.expire(draft, now)
            next_due = history.due(draft)
    except Stale:  # a forget began meanwhile: nothing of theirs to keep for a day
        return 0
    await storage.upkeep.plan(user_id, next_due)
    return dropped
