"""Which users have paused learning (`/memory pause`), kept in `DATA_DIR/paused.json` so it survives restarts.

Pausing is a privacy promise: while paused, nothing new is learned from the user. The set is written atomically
like memory files, and it is separate from them so `/memory forget` does not silently un-pause anyone. Changes are
serialised, so concurrent pauses of different users all land.

A damaged list fails closed. Its bytes are kept aside (`paused.json.corrupt-<time>`), every id that can still be
read from them stays paused (written back to a fresh list), and while any such copy exists learning is held for
everyone: a pause that cannot be read is never taken for "not paused". The hold ends when an operator has checked
the copy, deleted it and restarted the bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from pathlib import Path

from bot.storage.atomic import AtomicWriter, json_bytes, make_private, replace_file_sync, sweep_temp_files
from bot.storage.errors import InvalidUserId
from bot.storage.ids import validate_user_id
from bot.storage.quarantine import copies_of, copy_aside, move_aside

log = logging.getLogger(__name__)

PAUSES_FILE = "paused.json"
_DIGITS = re.compile(rb"[0-9]+")


class PauseRegistry:
    def __init__(self, path: Path, *, writer: AtomicWriter | None = None) -> None:
        self.path = path
        self._writer = writer or AtomicWriter()
        self._paused: set[str] = set()
        self._held = False
        self._lock = asyncio.Lock()

    @property
    def held(self) -> bool:
        """True while a damaged pause list is kept aside: nobody is learned from until an operator has looked."""
        return self._held

    async def open(self) -> None:
        """`load`, for the storage interface."""
        await asyncio.to_thread(self.load)

    def load(self) -> None:
        """Read the file (failing closed when it is damaged, see the module's docstring), make it private, and
        remove temp files of it that a crash during a save left behind."""
        sweep_temp_files(self.path.parent, target=self.path.name)
        make_private(self.path)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raw = None
        self._paused = set() if raw is None else self._parse(raw)
        copies = copies_of(self.path)
        for copy in copies:
            make_private(copy)
        self._held = bool(copies)
        if self._held:
            log.error(
                "pause list: damaged copy %s kept aside; learning is paused for everyone until an operator checks "
                "it, deletes it and restarts (%d users are paused by the readable list)",
                copies[-1].name, len(self._paused),
            )

    def _parse(self, raw: bytes) -> set[str]:
        """The paused ids in `raw`. Damaged bytes are kept aside and every id still legible in them is kept
        paused (over-reading is the safe direction here), written back to a fresh list."""
        try:
            data = json.loads(raw)
            users = data["users"] if isinstance(data, dict) else None
            if not isinstance(users, list):
                raise ValueError("no list of users")
        except (ValueError, KeyError, RecursionError):
            paused = self._legible_ids(raw)
            move_aside(self.path)
            if paused:
                replace_file_sync(self.path, self._encode(paused))
            return paused
        paused = set()
        invalid = False
        for entry in users:
            try:
                paused.add(validate_user_id(entry))
            except InvalidUserId:
                invalid = True
        if invalid:
            copy_aside(self.path, raw)
            replace_file_sync(self.path, self._encode(paused))  # so the next start reads a clean list
        return paused

    @staticmethod
    def _legible_ids(raw: bytes) -> set[str]:
        found = set()
        for match in _DIGITS.finditer(raw):
            with contextlib.suppress(InvalidUserId):
                found.add(validate_user_id(match.group().decode()))
        return found

    @staticmethod
    def _encode(paused: set[str]) -> bytes:
        return json_bytes({"users": sorted(paused, key=int)}, indent=1)

    def paused_users(self) -> set[int]:
        return {int(uid) for uid in self._paused}

    def is_paused(self, user_id: int | str) -> bool:
        uid = validate_user_id(user_id)
        return self._held or uid in self._paused

    async def set_paused(self, user_id: int | str, paused: bool) -> bool:
        """Pause or resume; returns whether anything changed. Saved before returning."""
        uid = validate_user_id(user_id)
        async with self._lock:
            if (uid in self._paused) == paused:
                return False
            updated = (self._paused | {uid}) if paused else (self._paused - {uid})
            await self._writer.write(self.path, self._encode(updated))
            self._paused = updated
            return True
