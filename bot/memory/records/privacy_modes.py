"""One privacy record per user: paused, incognito until, fresh until. The only place "don't learn" and "don't use
my memory" are decided.

- paused (`/memory pause`): nothing is learned from the user until `/memory resume`;
- incognito until a time (`/memory incognito minutes:n`): nothing is learned until then;
- fresh until a time or until resumed (`/memory fresh`): replies use none of the user's memory; nothing is deleted.

A record is stored only while something in it is on (`{"paused": true, "incognitoUntil": ..., "freshUntil": ... |
"resume"}` in a `RecordTable`, so a file or rows every process shares); expiries are absolute UTC times written
before a command answers, so a timer survives a restart and ends on time without a task running. Expired timers
read as off and are dropped with the next change.

It fails closed: when the table's file was unreadable (kept aside for an operator), every user counts as paused
and fresh (`held`) until the operator has checked the copy, deleted it and restarted. A privacy choice that cannot
be read is never taken for "off".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.memory.models import iso
from bot.storage.ids import validate_user_id
from bot.storage.records import Record, RecordTable

log = logging.getLogger(__name__)

MAX_MODE_MINUTES = 1440  # a day; longer is what `/memory pause` is for
UNTIL_RESUME = "resume"  # stored instead of an expiry for fresh mode without a timer


@dataclass(frozen=True, slots=True)
class PrivacyRecord:
    """A user's privacy choices right now. `*_until` is a UTC time, or None (with `fresh_until_resume` for fresh
    mode without a timer). `held`: the records could not be read, so everything counts as on."""

    paused: bool = False
    incognito_until: datetime | None = None
    fresh_until: datetime | None = None
    fresh_until_resume: bool = False
    held: bool = False

    @property
    def incognito(self) -> bool:
        """Nothing is learned from the user (paused, incognito with a timer, or held)."""
        return self.held or self.paused or self.incognito_until is not None

    @property
    def fresh(self) -> bool:
        """Replies use none of the user's memory."""
        return self.held or self.fresh_until_resume or self.fresh_until is not None

    @property
    def anything_on(self) -> bool:
        return self.incognito or self.fresh


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def read_record(raw: Record | None, now: datetime) -> PrivacyRecord:
    """The record as it reads at `now` (expired timers are off)."""
    if raw is None:
        return PrivacyRecord()
    incognito = _time(raw.get("incognitoUntil"))
    fresh_raw = raw.get("freshUntil")
    fresh = _time(fresh_raw)
    return PrivacyRecord(
        paused=raw.get("paused") is True,
        incognito_until=incognito if incognito is not None and now < incognito else None,
        fresh_until=fresh if fresh is not None and now < fresh else None,
        fresh_until_resume=fresh_raw == UNTIL_RESUME,
    )


def write_record(record: PrivacyRecord) -> Record | None:
    """What is stored for `record`: only what is on; None when nothing is."""
    stored: Record = {}
    if record.paused:
        stored["paused"] = True
    if record.incognito_until is not None:
        stored["incognitoUntil"] = iso(record.incognito_until)
    if record.fresh_until_resume:
        stored["freshUntil"] = UNTIL_RESUME
    elif record.fresh_until is not None:
        stored["freshUntil"] = iso(record.fresh_until)
    return stored or None


class PrivacyBook:
    """Every user's privacy record over one `RecordTable`; reads are synchronous (RAM)."""

    def __init__(self, table: RecordTable) -> None:
        self.table = table
        self._warned = False

    async def open(self) -> None:
        await self.table.open()
        if self.table.damaged:
            log.error(
                "privacy records: a damaged copy is kept aside; until an operator checks it, deletes it and "
                "restarts, nothing is learned from anyone and replies use no memory"
            )

    async def close(self) -> None:
        await self.table.close()

    @property
    def held(self) -> bool:
        return self.table.damaged

    def of(self, user_id: int, now: datetime) -> PrivacyRecord:
        record = read_record(self.table.get(validate_user_id(user_id)), now)
        if self.table.damaged:
            return PrivacyRecord(
                record.paused, record.incognito_until, record.fresh_until, record.fresh_until_resume, held=True
            )
        return record

    def users(self) -> set[int]:
        """Users with a record (the retention sweep deletes theirs with the rest of their data)."""
        return {int(key) for key in self.table.items() if key.isdigit()}

    async def update(self, user_id: int, now: datetime, **changes: Any) -> tuple[PrivacyRecord, PrivacyRecord]:
        """Change fields of the user's record (`paused`, `incognito_until`, `fresh_until`, `fresh_until_resume`),
        durably; returns (before, after) as they read at `now`."""
        uid = validate_user_id(user_id)

        def change(raw: Record | None) -> Record | None:
            current = read_record(raw, now)
            values = {
                "paused": current.paused,
                "incognito_until": current.incognito_until,
                "fresh_until": current.fresh_until,
                "fresh_until_resume": current.fresh_until_resume,
                **changes,
            }
            return write_record(PrivacyRecord(**values))

        before, after = await self.table.change(uid, change)
        return read_record(before, now), read_record(after, now)

    async def prune(self, now: datetime) -> int:
        """Delete the records whose every timer has run out (they read as off already); returns how many."""
        ended = [key for key, raw in self.table.items().items() if write_record(read_record(raw, now)) is None]
        return await self.table.delete(ended)

    async def forget_user(self, user_id: int) -> None:
        await self.table.delete([validate_user_id(user_id)])
