"""The upkeep schedule on files: `DATA_DIR/memory-upkeep.json`, `{"users": {"<user id>": "<due>"}}`.

When each user's memory next holds something the bot must remove on its own (a summary's earlier value past its
day), so the daily sweep visits those users and no others. User ids and times only; users with nothing due have no
entry, so the file stays as small as the number of users who spoke in the last day or so.

A sooner date is written at once (losing it could leave history unvisited); a later date or a removal is written
within a second, together with the others of a burst (losing one costs a visit that finds nothing). A missing or
unreadable file makes every user with a memory file due now: history written before the schedule existed, or
recorded in a file that was lost, is visited once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from bot.memory.models import iso
from bot.storage.atomic import AtomicWriter, json_bytes, make_private, sweep_temp_files
from bot.storage.quarantine import move_aside
from bot.storage.soon import Soon

log = logging.getLogger(__name__)

UPKEEP_FILE = "memory-upkeep.json"
AT_ONCE = datetime(1970, 1, 1, tzinfo=UTC)  # due at the next sweep, whatever the clock says
LATER_WRITE_DELAY = 1.0


class FileUpkeep:
    def __init__(
        self,
        path: Path,
        memory_users: Callable[[], Awaitable[list[int]]],
        *,
        writer: AtomicWriter | None = None,
        delay: float = LATER_WRITE_DELAY,
    ) -> None:
        self.path = path
        self._memory_users = memory_users
        self._writer = writer or AtomicWriter()
        self._due: dict[int, datetime] = {}
        self._lock = asyncio.Lock()
        self._later = Soon(self._save, delay, name="upkeep-save")
        self._dirty = False

    async def open(self) -> None:
        loaded = await asyncio.to_thread(self._load)
        if loaded is None:
            self._due = dict.fromkeys(await self._memory_users(), AT_ONCE)
            await self._save()
        else:
            self._due = loaded

    def _load(self) -> dict[int, datetime] | None:
        sweep_temp_files(self.path.parent, target=self.path.name)
        make_private(self.path)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            users = json.loads(raw)["users"]
            return {int(user): datetime.fromisoformat(str(when)) for user, when in users.items()}
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            aside = move_aside(self.path)
            log.warning("%s is unreadable%s; every memory is visited once", self.path.name,
                        f" (kept aside as {aside.name})" if aside else "")
            return None

    async def close(self) -> None:
        await self._later.close()
        if self._dirty:
            await self._save()

    async def _save(self) -> None:
        async with self._lock:
            data = {"users": {str(user): iso(when) for user, when in sorted(self._due.items())}}
            self._dirty = False
            try:
                await self._writer.write(self.path, json_bytes(data, indent=1))
            except BaseException:
                self._dirty = True
                raise

    async def plan(self, user_id: int, due: datetime | None) -> None:
        before = self._due.get(user_id)
        if due == before:
            return
        if due is None:
            self._due.pop(user_id, None)
        else:
            self._due[user_id] = due
        self._dirty = True
        if due is not None and (before is None or due < before):
            await self._save()
        else:
            self._later.ask()

    async def due(self, now: datetime) -> list[int]:
        return [user for user, when in sorted(self._due.items(), key=lambda item: item[1]) if when <= now]

    async def forget_user(self, user_id: int) -> None:
        if self._due.pop(user_id, None) is not None:
            self._dirty = True
            self._later.ask()

    def __len__(self) -> int:
        return len(self._due)
