"""The one door to a user's memory document: every change goes through `MemoryWriter.change`.

It takes the user's lock (across processes where they share the storage), refuses work from before the user's
latest forget or pause (`Stale`, checked by the store inside its lock or transaction), hands the body a private
copy, passes the changed copy through the write gate (`bot.memory.rules.write_gate`) and, for the model's
changes, enforces the fact cap and the cap on places with summaries (`place_cap.py`), drops summary values kept
past their day (`bot.memory.rules.summary_expiry`), then saves. Facts past their last day are closed before the
body runs (`bot.memory.rules.lifetimes`), so every change sees them as history and the cap evicts them first.
Extraction, the user's commands, retention and retraction all write through here, so each rule lives in one place.

After the save it tells the message ledger which messages the facts now name as sources (or no longer do) and the
upkeep schedule when the memory's oldest kept summary value expires. Those are bookkeeping beside the memory: a
failure there is logged, never undoes the change (the ledger errs on keeping an entry, the schedule on a visit).
Then `on_saved`, when set, is told of the memory as saved (the vector keeper: facts that now lack a vector).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime

from bot.memory.drivers.interfaces import Claim, MemoryDocuments, MessageLedger, UpkeepSchedule
from bot.memory.models import MemoryFile, Place, utc_now
from bot.memory.pipeline.apply import evict_overflow
from bot.memory.records.installation import InstallationKeys
from bot.memory.rules import lifetimes
from bot.memory.rules import summary_expiry as history
from bot.memory.rules.place_cap import evict_old_places
from bot.memory.rules.places import summary_place
from bot.memory.rules.sources import cited
from bot.memory.rules.write_gate import Author, GateReport, ModelAuthor, admit

log = logging.getLogger(__name__)


class MemoryWriter:
    def __init__(
        self,
        memories: MemoryDocuments,
        *,
        max_facts: int,
        max_places: int,
        ledger: MessageLedger | None = None,
        upkeep: UpkeepSchedule | None = None,
        clock: Callable[[], datetime] = utc_now,
        installation: InstallationKeys | None = None,
    ) -> None:
        self.memories = memories
        self.max_facts = max_facts
        self.max_places = max_places
        self.ledger = ledger
        self.upkeep = upkeep
        self.clock = clock
        self.installation = installation
        self.on_saved: Callable[[int, MemoryFile], None] | None = None

    @asynccontextmanager
    async def change(
        self,
        user_id: int,
        author: Author,
        *,
        generation: int | None = None,
        settles: Claim | None = None,
        report: GateReport | None = None,
        sources: tuple[Place, Sequence[str]] | None = None,
    ) -> AsyncIterator[MemoryFile]:
        """Yield the user's memory to change; on a normal exit the gate admits the change and it is saved (nothing
        is written when the body raises or changes nothing). `Stale` when `generation` is not the user's. What
        the gate held back is added to `report` when given. `sources` (an extraction's place and the user's
        messages it read) are noted in the message ledger before anything is saved, so a delete that comes after
        finds whose memory they taught; those no fact cites afterwards are marked so and age out."""
        noted: Sequence[str] = ()
        if sources is not None and self.ledger is not None and sources[1]:
            place, noted = sources
            await self.ledger.note(user_id, place.key, noted, self.clock())
        prints = await self.installation.fingerprints() if self.installation is not None else None
        async with self.memories.edit(user_id, generation=generation, settles=settles) as draft:
            lifetimes.lapse(draft, self.clock())  # before the body: what it, the gate and the cap see is history
            before = draft.model_copy(deep=True)
            yield draft
            held = admit(before, draft, author, prints=prints)
            if isinstance(author, ModelAuthor):
                evict_overflow(draft, self.max_facts)
                evicted = evict_old_places(draft, self.max_places, keep=summary_place(author.place, author.scope))
                if evicted:
                    log.info("memory of user %s: summaries of %d places updated longest ago dropped (cap %d)",
                             user_id, len(evicted), self.max_places)
            history.expire(draft, self.clock())
            if held.held_back():
                log.info(
                    "write gate for user %s: %d restored, %d stored as the place's own, %d ungrounded, %d withheld, "
                    "%d taken back before",
                    user_id, held.restored, held.split, held.ungrounded, held.withheld, held.forgotten,
                )
            if report is not None:
                report.restored += held.restored
                report.split += held.split
                report.ungrounded += held.ungrounded
                report.withheld += held.withheld
                report.forgotten += held.forgotten
        await self._bookkeeping(user_id, before, draft, noted)
        if self.on_saved is not None:
            self.on_saved(user_id, draft)

    async def _bookkeeping(self, user_id: int, before: MemoryFile, after: MemoryFile, noted: Sequence[str]) -> None:
        try:
            if self.ledger is not None:
                was, now = cited(before), cited(after)
                uncited = (was - now) | {message for message in noted if message not in now}
                if was != now or uncited:
                    await self.ledger.cite(user_id, cited=now - was, uncited=uncited)
            if self.upkeep is not None:
                due = history.due(after)
                if due != history.due(before):
                    await self.upkeep.plan(user_id, due)
        except OSError as error:
            log.warning(
                "memory of user %s saved; its bookkeeping failed (%s)", user_id, error.strerror or type(error).__name__
            )
