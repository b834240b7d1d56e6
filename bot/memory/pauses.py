"""Which users have paused learning (`/memory pause`), kept in `DATA_DIR/paused.json` so it survives restarts.

Pausing is a privacy promise: while paused, nothing new is learned from the user. The set is written atomically
like memory files, and it is separate from them so `/memory forget` does not silently un-pause anyone.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from bot.memory.atomic import AtomicWriter
from bot.memory.store import validate_user_id

log = logging.getLogger(__name__)


class PauseRegistry:
    def __init__(self, path: Path, *, writer: AtomicWriter | None = None) -> None:
        self.path = path
        self._writer = writer or AtomicWriter()
        self._paused: set[str] = set()

    def load(self) -> None:
        """Read the file; an unreadable one is kept aside and treated as empty (never silently overwritten)."""
        try:
            data = json.loads(self.path.read_bytes())
            self._paused = {validate_user_id(uid) for uid in data.get("users", [])}
        except FileNotFoundError:
            self._paused = set()
        except (ValueError, AttributeError, TypeError):
            aside = self.path.with_name(self.path.name + ".corrupt")
            self.path.replace(aside)
            log.warning("pause list unreadable; kept aside as %s", aside.name)
            self._paused = set()

    def is_paused(self, user_id: int | str) -> bool:
        return validate_user_id(user_id) in self._paused

    async def set_paused(self, user_id: int | str, paused: bool) -> bool:
        """Pause or resume; returns whether anything changed. Saved before returning."""
        uid = validate_user_id(user_id)
        if (uid in self._paused) == paused:
            return False
        updated = (self._paused | {uid}) if paused else (self._paused - {uid})
        body = json.dumps({"users": sorted(updated)}, indent=1).encode()
        await self._writer.write(self.path, body)
        self._paused = updated
        return True
