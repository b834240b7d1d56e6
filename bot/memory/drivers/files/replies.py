"""Which memory each reply used, for "What did you remember?": `DATA_DIR/replies.json`.

One record per reply: the reply's message ids, the user it answered, and the summaries (`topOfMind`, or
`topOfMind@guild:<id>` for a place other than DMs) and fact ids its prompt carried. Ids only, never text: the
inspector shows the current text of what is still there, and "since forgotten" for the rest. The newest `keep`
replies are kept (older ones drop off), and a user's records go when their memory is wiped. The file is replaced
atomically; saves that queue up behind one another are merged into one write. An unreadable file is kept aside and
the log starts empty (losing it only loses the inspector's answers).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from pathlib import Path
from typing import Any

from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.interfaces import REPLIES_KEPT, ReplyRecord, section_refs_ok
from bot.memory.models import SECTION_NAMES
from bot.storage.atomic import AtomicWriter, json_bytes, sweep_temp_files
from bot.storage.ids import validate_user_id
from bot.storage.quarantine import move_aside

log = logging.getLogger(__name__)

REPLIES_FILE = "replies.json"


def record_to_json(record: ReplyRecord) -> list[Any]:
    return [[str(m) for m in record.message_ids], str(record.user_id), list(record.sections), list(record.fact_ids)]


def record_from_json(data: Any) -> ReplyRecord:
    messages, user, sections, facts = data
    if not all(isinstance(item, str) for item in [*sections, *facts]):
        raise TypeError("ids must be strings")
    return ReplyRecord(
        message_ids=tuple(int(m) for m in messages),
        user_id=int(validate_user_id(user)),
        sections=section_refs_ok(sections, frozenset(SECTION_NAMES)),
        fact_ids=tuple(facts),
    )


class ReplyLog:
    def __init__(
        self,
        path: Path,
        generations: FileGenerations | None = None,
        *,
        keep: int = REPLIES_KEPT,
        writer: AtomicWriter | None = None,
    ) -> None:
        self.path = path
        self.generations = generations or FileGenerations()  # alone: its own; in a bundle: the shared one
        self.keep = keep
        self._writer = writer or AtomicWriter()
        self._records: OrderedDict[int, ReplyRecord] = OrderedDict()  # first message id -> record, oldest first
        self._by_message: dict[int, ReplyRecord] = {}
        self._lock = asyncio.Lock()
        self._dirty = False

    async def open(self) -> None:
        """`load`, for the storage interface."""
        await asyncio.to_thread(self.load)

    def load(self) -> None:
        sweep_temp_files(self.path.parent, target=self.path.name)
        self._records.clear()
        self._by_message.clear()
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            records = [record_from_json(item) for item in json.loads(raw)["replies"]]
        except (ValueError, KeyError, TypeError, RecursionError):
            aside = move_aside(self.path) or self.path
            log.warning("reply record file unreadable; kept aside as %s, starting empty", aside.name)
            return
        for record in records[-self.keep :]:
            self._add(record)

    def __len__(self) -> int:
        return len(self._records)

    async def count(self) -> int:
        return len(self._records)

    async def get(self, message_id: int) -> ReplyRecord | None:
        return self._by_message.get(message_id)

    def _add(self, record: ReplyRecord) -> None:
        if not record.message_ids:
            return
        self._records[record.message_ids[0]] = record
        for message_id in record.message_ids:
            self._by_message[message_id] = record
        while len(self._records) > self.keep:
            _, old = self._records.popitem(last=False)
            for message_id in old.message_ids:
                if self._by_message.get(message_id) is old:
                    del self._by_message[message_id]

    async def record(self, record: ReplyRecord, *, generation: int) -> None:
        """Remember what one reply (all its messages) used; returns once it is on disk. `Stale` when the user
        forgot since the reply was begun: its record would name what they asked to forget."""
        self.generations.ensure_current("reply record", int(validate_user_id(record.user_id)), generation)
        self._add(record)
        await self._save()

    async def close(self) -> None:
        """Nothing to close: every save is complete when it returns."""

    async def forget_user(self, user_id: int) -> int:
        """Drop every record of replies to the user; returns how many (saved before returning)."""
        uid = int(validate_user_id(user_id))
        gone = [key for key, record in self._records.items() if record.user_id == uid]
        for key in gone:
            record = self._records.pop(key)
            for message_id in record.message_ids:
                self._by_message.pop(message_id, None)
        if gone:
            await self._save()
        return len(gone)

    async def _save(self) -> None:
        """Write the current records; a save waiting behind another finds its change already written and returns."""
        self._dirty = True
        async with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            document = {"replies": [record_to_json(record) for record in self._records.values()]}
            try:
                await self._writer.write(self.path, json_bytes(document, compact=True))
            except BaseException:
                self._dirty = True
                raise
