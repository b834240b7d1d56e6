"""Tables of small records: `key -> JSON object`, read from RAM, changed durably, one interface for every backend.

The per-user settings and the switches a bot reads for every message (privacy modes, memory switches, what a model
is known to do...) are small, so each kind is one `RecordTable`: reads are synchronous, from a copy in RAM; a
change is durable before it returns (the storage first, then RAM, so a change that failed is never believed).
Two drivers pass the same contract tests:
- `FileRecords`: one JSON file per table (`DATA_DIR/<name>.json`), replaced atomically; one process owns it.
- `bot.storage.pg.records.PostgresRecords`: rows of one shared table, mirrored in each process and kept in step
  by notifications, so every process sees a change.
Both can `dump` what they hold and `load_missing` another driver's dump, which is all a migration between them
needs. A table knows nothing of what its records mean: their owners (the engine's privacy book, the switch board)
give them meaning, and decide what an unreadable file means (`on_damaged`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from bot.storage.atomic import AtomicWriter, json_bytes, make_private, sweep_temp_files
from bot.storage.errors import RecordsUnreadable
from bot.storage.quarantine import copies_of, move_aside

log = logging.getLogger(__name__)

Record = dict[str, Any]
Change = Callable[[Record | None], Record | None]
OnDamaged = Literal["refuse", "aside"]


class RecordTable(ABC):
    """One named table of small records. `get` and `items` are synchronous reads of the RAM copy."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._rows: dict[str, Record] = {}
        self._lock = asyncio.Lock()

    @property
    def damaged(self) -> bool:
        """True while an unreadable copy of the table is kept aside for an operator (files only)."""
        return False

    # --- reading (RAM) -------------------------------------------------------------------------------------

    def get(self, key: str) -> Record | None:
        return self._rows.get(key)

    def items(self) -> dict[str, Record]:
        return dict(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    # --- changing ------------------------------------------------------------------------------------------

    async def put(self, key: str, value: Record | None) -> None:
        """Store `value` under `key` (None deletes it); durable before it returns."""
        await self.change(key, lambda _old: value)

    @abstractmethod
    async def change(self, key: str, update: Change) -> tuple[Record | None, Record | None]:
        """Replace the record with `update(current)` as one atomic step (across processes where they share the
        table); returns (before, after). `update` may run more than once and must not have side effects."""

    @abstractmethod
    async def delete(self, keys: Iterable[str]) -> int:
        """Delete these records; returns how many existed."""

    # --- lifecycle and migration ---------------------------------------------------------------------------

    @abstractmethod
    async def open(self) -> None: ...

    async def close(self) -> None:
        """Stop following changes made elsewhere (nothing to do for a file)."""
        return None

    async def dump(self) -> dict[str, Record]:
        """Everything the table holds (for a migration to another driver)."""
        return self.items()

    @abstractmethod
    async def load_missing(self, records: Mapping[str, Record]) -> int:
        """Store the records whose keys this table lacks (never overwriting); returns how many were added."""


class FileRecords(RecordTable):
    """A table in one JSON file, `{"records": {key: value}}`, written atomically after every change.

    `on_damaged` says what a file that cannot be read means: "refuse" (start-up fails with one line; for choices
    that must never silently revert, such as a server's memory switched off) or "aside" (the bytes are kept aside
    as `<name>.json.corrupt-<time>`, the table starts empty and `damaged` stays True while such a copy exists, so
    its owner can fail closed until an operator has looked).
    """

    def __init__(self, path: Path, *, on_damaged: OnDamaged, writer: AtomicWriter | None = None) -> None:
        super().__init__(path.stem)
        self.path = path
        self.on_damaged = on_damaged
        self._writer = writer or AtomicWriter()
        self._damaged = False

    @property
    def damaged(self) -> bool:
        return self._damaged

    async def open(self) -> None:
        await asyncio.to_thread(self.load)

    def load(self) -> None:
        """Read the file (sweeping temp files a crash left and making it private)."""
        sweep_temp_files(self.path.parent, target=self.path.name)
        make_private(self.path)
        self._rows = {}
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raw = None
        if raw is not None:
            self._rows = self._parse(raw)
        copies = copies_of(self.path)
        for copy in copies:
            make_private(copy)
        self._damaged = self.on_damaged == "aside" and bool(copies)

    def _parse(self, raw: bytes) -> dict[str, Record]:
        try:
            data = json.loads(raw)
            records = data["records"]
            if not isinstance(records, dict) or not all(isinstance(v, dict) for v in records.values()):
                raise ValueError("records is not an object of objects")
            return {str(key): value for key, value in records.items()}
        except (ValueError, KeyError, TypeError, RecursionError):
            if self.on_damaged == "refuse":
                raise RecordsUnreadable(
                    f"{self.path} is unreadable; fix it or remove it (what it held is then forgotten)"
                ) from None
            aside = move_aside(self.path) or self.path
            log.error("%s is unreadable; kept aside as %s", self.path.name, aside.name)
            return {}

    async def change(self, key: str, update: Change) -> tuple[Record | None, Record | None]:
        async with self._lock:
            before = self._rows.get(key)
            after = update(None if before is None else dict(before))
            if after == before:
                return before, after
            rows = dict(self._rows)
            if after is None:
                rows.pop(key, None)
            else:
                rows[key] = after
            await self._save(rows)
            self._rows = rows
            return before, after

    async def delete(self, keys: Iterable[str]) -> int:
        async with self._lock:
            gone = [key for key in dict.fromkeys(keys) if key in self._rows]
            if not gone:
                return 0
            rows = {key: value for key, value in self._rows.items() if key not in set(gone)}
            await self._save(rows)
            self._rows = rows
            return len(gone)

    async def load_missing(self, records: Mapping[str, Record]) -> int:
        async with self._lock:
            new = {key: value for key, value in records.items() if key not in self._rows}
            if new:
                rows = {**self._rows, **new}
                await self._save(rows)
                self._rows = rows
            return len(new)

    async def _save(self, rows: dict[str, Record]) -> None:
        await self._writer.write(self.path, json_bytes({"records": dict(sorted(rows.items()))}, indent=1))
