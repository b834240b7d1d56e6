"""Which users have paused learning (`/memory pause`), kept in `DATA_DIR/paused.json` so it survives restarts.

Pausing is a privacy promise: while paused, nothing new is learned from the user. The set is written atomically
like memory files, and it is separate from them so `/memory forget` does not silently un-pause anyone. Changes are
serialised, so concurrent pauses of different users all land. An unreadable file is kept aside (timestamped, never
overwritten) and treated as empty; a readable one with a few invalid entries keeps its valid ids (failing towards
"paused") and a copy of its bytes aside.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from bot.memory.atomic import AtomicWriter, fsync_dir, json_bytes, sweep_temp_files
from bot.memory.store import InvalidUserId, validate_user_id

log = logging.getLogger(__name__)


class PauseRegistry:
    def __init__(self, path: Path, *, writer: AtomicWriter | None = None) -> None:
        self.path = path
        self._writer = writer or AtomicWriter()
        self._paused: set[str] = set()
        self._lock = asyncio.Lock()

    def load(self) -> None:
        """Read the file; an unreadable one is kept aside and treated as empty (never silently overwritten).
        Also removes temp files of this file that a crash during a save left behind."""
        sweep_temp_files(self.path.parent, target=self.path.name)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            self._paused = set()
            return
        try:
            data = json.loads(raw)
            users = data["users"] if isinstance(data, dict) else None
            if not isinstance(users, list):
                raise ValueError("no list of users")
        except (ValueError, KeyError, RecursionError):
            aside = self._aside_path()
            os.replace(self.path, aside)
            fsync_dir(self.path.parent)
            log.warning("pause list unreadable; kept aside as %s, nobody is paused", aside.name)
            self._paused = set()
            return
        paused: set[str] = set()
        invalid = 0
        for entry in users:
            try:
                paused.add(validate_user_id(entry))
            except InvalidUserId:
                invalid += 1
        if invalid:
            aside = self._aside_path()
            aside.write_bytes(raw)
            log.warning("pause list had %d invalid entries (ignored); a copy is kept as %s", invalid, aside.name)
        self._paused = paused

    def _aside_path(self) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        counter = itertools.count(1)
        while target.exists():
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{next(counter)}")
        return target

    def paused_users(self) -> set[int]:
        return {int(uid) for uid in self._paused}

    def is_paused(self, user_id: int | str) -> bool:
        return validate_user_id(user_id) in self._paused

    async def set_paused(self, user_id: int | str, paused: bool) -> bool:
        """Pause or resume; returns whether anything changed. Saved before returning."""
        uid = validate_user_id(user_id)
        async with self._lock:
            if (uid in self._paused) == paused:
                return False
            updated = (self._paused | {uid}) if paused else (self._paused - {uid})
            await self._writer.write(self.path, json_bytes({"users": sorted(updated, key=int)}, indent=1))
            self._paused = updated
            return True
