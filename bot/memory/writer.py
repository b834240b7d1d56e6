"""The one door to a user's memory document: every change goes through `MemoryWriter.change`.

It takes the user's lock (across processes where they share the storage), refuses work from before the user's
latest forget or pause (`Stale`, checked by the store inside its lock or transaction), hands the body a private
copy, passes the changed copy through the write gate (`bot.memory.gate`) and, for the model's changes, enforces the
fact cap and the cap on places with summaries (`place_cap.py`), then saves. Extraction, the user's commands,
retention and retraction all write through here, so each rule lives in one place.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.memory.apply import evict_overflow
from bot.memory.gate import Author, GateReport, ModelAuthor, admit
from bot.memory.models import MemoryFile
from bot.memory.place_cap import evict_old_places
from bot.memory.places import summary_place
from bot.memory.storage.interfaces import Claim, MemoryDocuments

log = logging.getLogger(__name__)


class MemoryWriter:
    def __init__(self, memories: MemoryDocuments, *, max_facts: int, max_places: int) -> None:
        self.memories = memories
        self.max_facts = max_facts
        self.max_places = max_places

    @asynccontextmanager
    async def change(
        self,
        user_id: int,
        author: Author,
        *,
        generation: int | None = None,
        settles: Claim | None = None,
        report: GateReport | None = None,
    ) -> AsyncIterator[MemoryFile]:
        """Yield the user's memory to change; on a normal exit the gate admits the change and it is saved (nothing
        is written when the body raises or changes nothing). `Stale` when `generation` is not the user's. What
        the gate held back is added to `report` when given."""
        async with self.memories.edit(user_id, generation=generation, settles=settles) as draft:
            before = draft.model_copy(deep=True)
            yield draft
            held = admit(before, draft, author)
            if isinstance(author, ModelAuthor):
                evict_overflow(draft, self.max_facts)
                evicted = evict_old_places(draft, self.max_places, keep=summary_place(author.place, author.scope))
                if evicted:
                    log.info("memory of user %s: summaries of %d places updated longest ago dropped (cap %d)",
                             user_id, len(evicted), self.max_places)
            if held.held_back():
                log.info(
                    "write gate for user %s: %d restored, %d stored as the place's own, %d ungrounded, %d withheld",
                    user_id, held.restored, held.split, held.ungrounded, held.withheld,
                )
            if report is not None:
                report.restored += held.restored
                report.split += held.split
                report.ungrounded += held.ungrounded
                report.withheld += held.withheld
