"""Timed privacy modes (`/memory incognito minutes:n`, `/memory fresh`), kept in `DATA_DIR/modes.json`.

- incognito: nothing is learned from the user until the expiry;
- fresh: replies use none of the user's memory until the expiry (or until `/memory resume`); nothing is deleted.
"Until resume" incognito is the pause list (`pauses.py`), so pausing has one home. Expiries are absolute UTC times
written atomically before a command answers, so a timer survives a restart and ends on time without a task running.

The file fails closed: an unreadable one is kept aside and, for the longest time any timer could have had left,
everyone counts as incognito and fresh except users who resume meanwhile (that state is written to the new file, so
it survives a restart too). A privacy mode is never silently dropped by a damaged file.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.memory.models import iso
from bot.storage.atomic import AtomicWriter, json_bytes, sweep_temp_files
from bot.storage.errors import InvalidUserId
from bot.storage.ids import validate_user_id
from bot.storage.quarantine import move_aside

log = logging.getLogger(__name__)

MODES_FILE = "modes.json"
MAX_MODE_MINUTES = 1440  # a day; longer is what `/memory pause` is for
UNTIL_RESUME = "resume"  # stored instead of an expiry for fresh mode without a timer


def _parse(value: Any) -> datetime | str | None:
    if value == UNTIL_RESUME:
        return UNTIL_RESUME
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


@dataclass(slots=True)
class _Entry:
    incognito: datetime | None = None
    fresh: datetime | str | None = None  # a time, UNTIL_RESUME, or None


@dataclass(slots=True)
class _Everyone:
    """The fail-closed state after an unreadable file: everyone incognito and fresh until `until`, but `exempt`."""

    until: datetime
    exempt: set[str] = field(default_factory=set)


class ModeRegistry:
    def __init__(self, path: Path, *, writer: AtomicWriter | None = None) -> None:
        self.path = path
        self._writer = writer or AtomicWriter()
        self._entries: dict[str, _Entry] = {}
        self._everyone: _Everyone | None = None
        self._lock = asyncio.Lock()

    async def open(self, now: datetime) -> None:
        """`load`, for the storage interface."""
        await asyncio.to_thread(self.load, now)

    def load(self, now: datetime) -> None:
        """Read the file (sweeping temp files a crash left); an unreadable one fails closed (see the module)."""
        sweep_temp_files(self.path.parent, target=self.path.name)
        self._entries, self._everyone = {}, None
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            data = json.loads(raw)
            users = data["users"]
            if not isinstance(users, dict):
                raise ValueError("users is not an object")
            for uid, entry in users.items():
                validate_user_id(uid)
                if not isinstance(entry, dict):
                    raise ValueError("entry is not an object")
                incognito = _parse(entry.get("incognitoUntil"))
                self._entries[uid] = _Entry(
                    incognito=incognito if isinstance(incognito, datetime) else None,
                    fresh=_parse(entry.get("freshUntil")),
                )
            everyone = data.get("everyone")
            if everyone is not None:
                until = _parse(everyone["until"])
                if not isinstance(until, datetime):
                    raise ValueError("bad fail-closed expiry")
                self._everyone = _Everyone(until, {validate_user_id(uid) for uid in everyone.get("exempt", [])})
        except (ValueError, KeyError, TypeError, RecursionError, InvalidUserId):
            aside = move_aside(self.path) or self.path
            self._entries = {}
            self._everyone = _Everyone(now + timedelta(minutes=MAX_MODE_MINUTES))
            log.error(
                "privacy modes file unreadable; kept aside as %s. Until %s everyone is treated as incognito and "
                "fresh (each user's /memory resume ends it for them)", aside.name, iso(self._everyone.until),
            )

    # --- reading -------------------------------------------------------------------------------------------

    def _fail_closed(self, uid: str, now: datetime) -> datetime | None:
        everyone = self._everyone
        if everyone is None or now >= everyone.until or uid in everyone.exempt:
            return None
        return everyone.until

    def incognito_until(self, user_id: int | str, now: datetime) -> datetime | None:
        """When the user's timed incognito ends, or None when it is off."""
        uid = validate_user_id(user_id)
        entry = self._entries.get(uid)
        own = entry.incognito if entry is not None and entry.incognito is not None and now < entry.incognito else None
        return max(filter(None, (own, self._fail_closed(uid, now))), default=None)

    def fresh_until(self, user_id: int | str, now: datetime) -> datetime | str | None:
        """When the user's fresh mode ends: a time, `UNTIL_RESUME`, or None when it is off."""
        uid = validate_user_id(user_id)
        entry = self._entries.get(uid)
        own = entry.fresh if entry is not None else None
        if isinstance(own, datetime) and now >= own:
            own = None
        if own == UNTIL_RESUME:
            return UNTIL_RESUME
        times = [moment for moment in (own, self._fail_closed(uid, now)) if isinstance(moment, datetime)]
        return max(times, default=None)

    # --- changing ------------------------------------------------------------------------------------------

    async def set_incognito(self, user_id: int | str, until: datetime | None, now: datetime) -> None:
        await self._change(user_id, now, incognito=until)

    async def set_fresh(self, user_id: int | str, until: datetime | str | None, now: datetime) -> None:
        await self._change(user_id, now, fresh=until)

    def users(self) -> set[int]:
        """Users with a mode on record (the retention sweep deletes theirs with the rest of their data)."""
        return {int(uid) for uid in self._entries}

    async def clear(self, user_id: int | str, now: datetime) -> bool:
        """End both modes for the user (and the fail-closed state for them); True when any was on."""
        uid = validate_user_id(user_id)
        was_on = self.incognito_until(uid, now) is not None or self.fresh_until(uid, now) is not None
        await self._change(uid, now, incognito=None, fresh=None, exempt=True)
        return was_on

    async def _change(self, user_id: int | str, now: datetime, *, exempt: bool = False, **changes: Any) -> None:
        uid = validate_user_id(user_id)
        async with self._lock:
            entries = {key: _Entry(value.incognito, value.fresh) for key, value in self._entries.items()}
            entry = entries.setdefault(uid, _Entry())
            for name, value in changes.items():
                setattr(entry, name, value)
            everyone = self._everyone
            if everyone is not None and now >= everyone.until:
                everyone = None
            if everyone is not None and exempt:
                everyone = _Everyone(everyone.until, everyone.exempt | {uid})
            entries = {key: value for key, value in entries.items() if self._live(value, now)}
            await self._writer.write(self.path, json_bytes(self._document(entries, everyone), indent=1))
            self._entries, self._everyone = entries, everyone

    @staticmethod
    def _live(entry: _Entry, now: datetime) -> bool:
        fresh_live = entry.fresh == UNTIL_RESUME or (isinstance(entry.fresh, datetime) and now < entry.fresh)
        return fresh_live or (entry.incognito is not None and now < entry.incognito)

    @staticmethod
    def _document(entries: dict[str, _Entry], everyone: _Everyone | None) -> dict[str, Any]:
        users: dict[str, dict[str, str]] = {}
        for uid, entry in sorted(entries.items(), key=lambda item: int(item[0])):
            record: dict[str, str] = {}
            if entry.incognito is not None:
                record["incognitoUntil"] = iso(entry.incognito)
            if entry.fresh is not None:
                record["freshUntil"] = entry.fresh if isinstance(entry.fresh, str) else iso(entry.fresh)
            users[uid] = record
        document: dict[str, Any] = {"users": users}
        if everyone is not None:
            document["everyone"] = {"until": iso(everyone.until), "exempt": sorted(everyone.exempt, key=int)}
        return document
