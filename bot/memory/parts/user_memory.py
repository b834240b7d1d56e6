"""The user's controls: see, add, correct, share and forget their memory, and their privacy modes.

Every forget (one fact, a section, the last n minutes, everything) and every pause starts the same way: the user's
forget generation is bumped first, so nothing begun before it (a reply being written, a batch in the debouncer, an
extraction in flight, in this process or another) can write afterwards; then the user's pending work is sorted:
- everything: all of it is dropped;
- the last n minutes: what was said in the window is dropped; older turns continue under the new generation;
- a fact or a section: the bot's replies waiting to be learned are dropped (they were written from the memory
  before the forget and may restate it); the user's own words continue;
- a pause or incognito: all of it is dropped (nothing more is learned).
Then the change itself goes through the writer (and its gate) under the new generation. Forgetting removes bytes,
not just the view: copies kept aside are deleted and the pending turns leave the disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.interfaces import PendingTurn
from bot.memory.errors import InvalidRequest
from bot.memory.models import ORIGIN_CORRECTED, ORIGIN_USER, SECTION_NAMES, Fact, MemoryFile, Place, iso, new_fact_id
from bot.memory.parts.learning import Learning
from bot.memory.parts.recall import Recall
from bot.memory.parts.writer import MemoryWriter
from bot.memory.records.privacy_modes import MAX_MODE_MINUTES, PrivacyRecord
from bot.memory.rules.guard import rejection_reason
from bot.memory.rules.write_gate import UserAuthor, derived_from

log = logging.getLogger(__name__)

MAX_USER_FACT_CHARS = 400
MAX_FORGET_MINUTES = 1440
USER_FACT_CATEGORY = "context"


@dataclass(frozen=True, slots=True)
class WithdrawnReply:
    """What became of a reply the user deleted or replaced: how many of its turns were still waiting to be learned
    (now dropped), and whether it had already been learned (distilled together with the user's words)."""

    dropped: int
    learned: bool


@dataclass(frozen=True, slots=True)
class ForgetWindowReport:
    facts: int
    sections: int
    turns: int


def _nothing(_item: PendingTurn) -> bool:
    return False


def _users_own_words(item: PendingTurn) -> bool:
    return item.turn.role == "user"


class Controls:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        writer: MemoryWriter,
        learning: Learning,
        recall: Recall,
        clock: Callable[[], datetime],
    ) -> None:
        self.storage = storage
        self.writer = writer
        self.learning = learning
        self.recall = recall
        self.clock = clock

    async def _begin_forget(self, user_id: int, keep: Callable[[PendingTurn], bool]) -> tuple[int, int]:
        """Bump the generation, then sort the pending work (see the module); returns (generation, turns dropped)."""
        generation = await self.storage.generations.bump(user_id)
        dropped = await self.learning.drop_pending(user_id, keep, generation)
        return generation, dropped

    # --- seeing --------------------------------------------------------------------------------------------

    async def show(self, user_id: int) -> MemoryFile:
        """The user's whole memory (shared with the cache: read-only)."""
        return await self.storage.memories.load(user_id)

    async def export(self, user_id: int) -> bytes:
        """The user's whole memory as pretty JSON, for `/memory export` and the console."""
        return await self.storage.memories.export_bytes(user_id)

    # --- adding and correcting -----------------------------------------------------------------------------

    @staticmethod
    def _clean_text(text: str) -> str:
        """A fact the user typed, checked: one clear `InvalidRequest` line for what cannot be stored."""
        content = " ".join(text.split())
        if not content:
            raise InvalidRequest("The text is empty.")
        if len(content) > MAX_USER_FACT_CHARS:
            raise InvalidRequest(f"That is {len(content)} characters; a fact can have at most {MAX_USER_FACT_CHARS}.")
        reason = rejection_reason(content)
        if reason:
            raise InvalidRequest(f"I can't store that as a fact: {reason}.")
        return content

    async def add_fact(self, user_id: int, text: str, *, place: Place, everywhere: bool = False) -> Fact:
        """Store a fact in the user's own words: confidence 1.0, marked as written by them, so the model never
        removes or evicts it. It belongs to `place` unless `everywhere` (then it is shared)."""
        content = self._clean_text(text)
        stamp = iso(self.clock())
        async with self.writer.change(user_id, UserAuthor()) as draft:
            taken = {fact.id for fact in draft.facts}
            while (fact_id := new_fact_id()) in taken:
                pass
            fact = Fact(
                id=fact_id, content=content, category=USER_FACT_CATEGORY, confidence=1.0, createdAt=stamp,
                lastConfirmedAt=stamp, source="user", origin=ORIGIN_USER, place=place.key, shared=everywhere,
            )
            draft.facts.append(fact)
        return fact

    async def edit_fact(self, user_id: int, fact_id: str, text: str) -> Fact:
        """Rewrite one of the user's facts in place: same id, the new text only, marked as corrected by them."""
        content = self._clean_text(text)
        stamp = iso(self.clock())
        async with self.writer.change(user_id, UserAuthor()) as draft:
            fact = draft.fact_by_id(fact_id)
            if fact is None:
                raise InvalidRequest(f"You have no fact with the id `{fact_id}`.")
            fact.content = content
            fact.confidence = 1.0
            fact.lastConfirmedAt = stamp
            fact.origin = ORIGIN_CORRECTED
        return fact

    async def set_shared(self, user_id: int, fact_id: str, shared: bool) -> bool | None:
        """Make a fact usable in every place (`shared`) or only where it was learned; None when the user has no
        such fact, else whether anything changed."""
        async with self.writer.change(user_id, UserAuthor()) as draft:
            fact = draft.fact_by_id(fact_id)
            if fact is None:
                return None
            if fact.shared == shared:
                return False
            fact.shared = shared
        log.info("fact %s of user %s %s", fact_id, user_id, "shared everywhere" if shared else "unshared")
        return True

    # --- forgetting ----------------------------------------------------------------------------------------

    async def forget_fact(self, user_id: int, fact_id: str) -> bool:
        """Remove one fact by id (and the rewordings of it the bot stored for other places); False when the user
        has no such fact. The fact leaves the disk: copies kept aside are deleted, and the pending turns drop
        every turn already applied (the words it was learned from)."""
        if (await self.show(user_id)).fact_by_id(fact_id) is None:
            return False
        generation, _ = await self._begin_forget(user_id, _users_own_words)
        async with self.writer.change(user_id, UserAuthor(), generation=generation) as draft:
            before = len(draft.facts)
            draft.facts = [f for f in draft.facts if f.id != fact_id and derived_from(f) != fact_id]
            removed = len(draft.facts) != before
        if removed:
            await self.storage.memories.delete_copies(user_id)
            await self.storage.turns.compact()
        return removed

    async def forget_section(self, user_id: int, name: str) -> bool:
        """Clear one of the six summaries, in every place, with its previous values; False when it was empty
        everywhere."""
        if name not in SECTION_NAMES:
            raise InvalidRequest(f"There is no summary called `{name}`.")
        generation, _ = await self._begin_forget(user_id, _users_own_words)
        had = False
        async with self.writer.change(user_id, UserAuthor(), generation=generation) as draft:
            for place in draft.summary_places():
                summaries = draft.place_memory(place)
                section = summaries.section(name)
                had = had or bool(section.summary or section.previous)
                section.clear()
                draft.set_place_memory(place, summaries)
        if had:
            await self.storage.memories.delete_copies(user_id)
        return had

    async def forget_since(self, user_id: int, minutes: int) -> ForgetWindowReport:
        """Forget the last `minutes` (1 to 1,440): facts created in the window, turns still waiting to be learned
        from it, each summary changed in it put back to its value from before, and each fact closed by what was
        said in it (or by a fact it removes) open again."""
        if not 1 <= minutes <= MAX_FORGET_MINUTES:
            raise InvalidRequest(f"Minutes must be between 1 and {MAX_FORGET_MINUTES}.")
        since = self.clock() - timedelta(minutes=minutes)
        generation, turns = await self._begin_forget(user_id, lambda item: item.turn.at < since)
        cutoff = iso(since)
        async with self.writer.change(user_id, UserAuthor(), generation=generation) as draft:
            before = len(draft.facts)
            gone = {fact.id for fact in draft.facts if fact.createdAt and fact.createdAt >= cutoff}
            draft.facts = [fact for fact in draft.facts if fact.id not in gone]
            facts = before - len(draft.facts)
            draft.reopen_replaced(removed=gone, since=cutoff)  # what the window closed holds again
            sections = 0
            for place in draft.summary_places():  # every place's summaries
                summaries = draft.place_memory(place)
                sections += sum(1 for _, section in summaries.sections() if section.rewind(since))
                draft.set_place_memory(place, summaries)
        if facts or sections:
            await self.storage.memories.delete_copies(user_id)
        log.info("user %s forgot their last %d minutes: %d facts, %d summaries, %d turns",
                 user_id, minutes, facts, sections, turns)
        return ForgetWindowReport(facts=facts, sections=sections, turns=turns)

    async def forget_all(self, user_id: int, *, quiet: bool = False, settings: bool = False) -> bool:
        """Wipe the user's memory, the records of which memory their replies used, their activity and everything
        pending for them (and their privacy choices too with `settings`: the retention sweep), so nothing forgotten
        comes back: on return, no file or row holds their memory or their words from before. `quiet` (the
        retention sweep) logs the user id at DEBUG instead of INFO."""
        await self._begin_forget(user_id, _nothing)
        existed = not (await self.show(user_id)).is_empty()
        await self.storage.forget_user(user_id, settings=settings)
        self.recall.forget_user(user_id)
        log.log(logging.DEBUG if quiet else logging.INFO, "memory of user %s wiped", user_id)
        return existed

    async def withdraw_reply(self, user_id: int, message_ids: Sequence[int]) -> WithdrawnReply:
        """A reply of the bot to the user was deleted or replaced: it is not learned. Its turn leaves the pending
        work (the user's own words stay, under the same generation) and is refused if it arrives later; what was
        already distilled stays (facts come only from the user's own words: a reply gives them context)."""
        wanted = {str(message_id) for message_id in message_ids}
        self.learning.withdraw(sorted(wanted))
        pending = await self.storage.turns.pending_turns_of(user_id)
        dropped = 0
        if self.learning.holds(user_id, wanted) or any(item.turn.turn_id in wanted for item in pending):
            generation = self.storage.generations.current(user_id)
            dropped = await self.learning.drop_pending(
                user_id, lambda item: item.turn.turn_id not in wanted, generation
            )
        learned = not dropped and bool(wanted & set((await self.show(user_id)).appliedTurnIds))
        log.info("reply of user %s withdrawn: %d turns dropped, learned before: %s", user_id, dropped, learned)
        return WithdrawnReply(dropped, learned)

    # --- privacy modes -------------------------------------------------------------------------------------

    def privacy_of(self, user_id: int) -> PrivacyRecord:
        return self.storage.privacy.of(user_id, self.clock())

    async def update_privacy(self, user_id: int, **fields: Any) -> PrivacyRecord:
        """Change fields of the user's privacy record (where a new per-user setting lives); returns the record as
        it reads now. A setting that stops learning must start with `set_incognito`'s generation bump instead."""
        _, after = await self.storage.privacy.update(user_id, self.clock(), **fields)
        return after

    @staticmethod
    def _check_minutes(minutes: int) -> None:
        if not 0 <= minutes <= MAX_MODE_MINUTES:
            raise InvalidRequest(f"Minutes must be between 0 (until /memory resume) and {MAX_MODE_MINUTES}.")

    async def set_incognito(self, user_id: int, minutes: int) -> PrivacyRecord:
        """Learn nothing from the user for `minutes` (0: until resumed, which is a pause); what was waiting to be
        learned from them is dropped too."""
        self._check_minutes(minutes)
        now = self.clock()
        if minutes == 0:
            await self.storage.privacy.update(user_id, now, paused=True, incognito_until=None)
        else:
            await self.storage.privacy.update(user_id, now, incognito_until=now + timedelta(minutes=minutes))
        await self._begin_forget(user_id, _nothing)  # after the record: a message between the two is refused
        return self.privacy_of(user_id)

    async def set_fresh(self, user_id: int, minutes: int) -> PrivacyRecord:
        """Replies use none of the user's memory for `minutes` (0: until resumed). Nothing is deleted."""
        self._check_minutes(minutes)
        now = self.clock()
        if minutes == 0:
            await self.storage.privacy.update(user_id, now, fresh_until=None, fresh_until_resume=True)
        else:
            until = now + timedelta(minutes=minutes)
            await self.storage.privacy.update(user_id, now, fresh_until=until, fresh_until_resume=False)
        return self.privacy_of(user_id)

    async def resume(self, user_id: int) -> bool:
        """End the pause, incognito and fresh modes; True when any was on."""
        before, _ = await self.storage.privacy.update(
            user_id, self.clock(), paused=False, incognito_until=None, fresh_until=None, fresh_until_resume=False
        )
        return before.anything_on

    async def set_paused(self, user_id: int, paused: bool) -> bool:
        """Pause (incognito until resumed) or resume; pausing also drops what was waiting to be learned."""
        if not paused:
            return await self.resume(user_id)
        before, _ = await self.storage.privacy.update(user_id, self.clock(), paused=True)
        await self._begin_forget(user_id, _nothing)
        return not before.paused
