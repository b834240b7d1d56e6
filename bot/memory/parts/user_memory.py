"""One person's memory, as they control it: see, add, correct, share and forget it, and their privacy modes.

`MemoryService.user(id)` hands out a `UserMemory` bound to one user id (cheap: it holds references to the shared
parts), so no call can mix up whose memory it acts on.

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

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.interfaces import PendingTurn, ReplyRecord
from bot.memory.errors import InvalidRequest, Phrase
from bot.memory.models import (
    DM_PLACE,
    ORIGIN_CORRECTED,
    ORIGIN_USER,
    SECTION_NAMES,
    Fact,
    MemoryFile,
    Place,
    iso,
    new_fact_id,
)
from bot.memory.parts.imports import PENDING_FIELD, Importer
from bot.memory.parts.learning import Learning
from bot.memory.parts.recall import Recall
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.render import parse_section_ref
from bot.memory.records.privacy_modes import MAX_MODE_MINUTES, PrivacyRecord
from bot.memory.requests import (
    MAX_FORGET_MINUTES,
    ForgetEverything,
    ForgetFact,
    ForgetMinutes,
    ForgetRequest,
    ForgetSection,
    Forgotten,
    Fresh,
    Imported,
    ImportPreview,
    Incognito,
    ModeChange,
    PrivacyMode,
    Resume,
)
from bot.memory.rules import lifetimes, vectors
from bot.memory.rules.forgotten import restates, scrub, taken_back, words_of
from bot.memory.rules.guard import rejection_reason
from bot.memory.rules.places import is_age_restricted
from bot.memory.rules.write_gate import UserAuthor, derived_from
from bot.storage.atomic import json_bytes

log = logging.getLogger(__name__)

MAX_USER_FACT_CHARS = 400
USER_FACT_CATEGORY = "context"


@dataclass(frozen=True, slots=True)
class RecalledItem:
    """One thing a reply's prompt carried: a summary (by name) or a fact (by id), with its text now, if any."""

    kind: str  # "section" or "fact"
    key: str
    text: str | None  # None: forgotten since
    place: str = DM_PLACE  # where a summary was learned


@dataclass(frozen=True, slots=True)
class Shared:
    """What every person's `UserMemory` works with: the storage, the writer, learning and recall, the clock."""

    storage: StorageBundle
    writer: MemoryWriter
    learning: Learning
    recall: Recall
    clock: Callable[[], datetime]


def _nothing(_item: PendingTurn) -> bool:
    return False


def _users_own_words(item: PendingTurn) -> bool:
    return item.turn.role == "user"


def _clean_text(text: str) -> str:
    """A fact the user typed, checked: one clear `InvalidRequest` line for what cannot be stored."""
    content = " ".join(text.split())
    if not content:
        raise InvalidRequest("The text is empty.")
    if len(content) > MAX_USER_FACT_CHARS:
        raise InvalidRequest(
            "That is {length} characters; a fact can have at most {most}.",
            length=len(content), most=MAX_USER_FACT_CHARS,
        )
    reason = rejection_reason(content)
    if reason:
        raise InvalidRequest("I can't store that as a fact: {reason}.", reason=Phrase(reason))
    return content


def _restatement_of(target: Fact, fact: Fact) -> bool:
    """`fact` goes with a forgotten `target`: it is that fact, a rewording the bot stored of it for another place,
    or one the model learned that restates all of it (with more detail, perhaps)."""
    if fact.id == target.id or derived_from(fact) == target.id:
        return True
    return not fact.user_owned and restates(target.content, fact.content)


def _check_mode_minutes(minutes: int) -> None:
    if not 0 <= minutes <= MAX_MODE_MINUTES:
        raise InvalidRequest("Minutes must be between 0 (until /memory resume) and {most}.", most=MAX_MODE_MINUTES)


class UserMemory:
    """The memory of `user_id`, for the commands they use on it (`bot.memory.doors.UserDoor`)."""

    def __init__(self, shared: Shared, user_id: int) -> None:
        self._shared = shared
        self._storage = shared.storage
        self.user_id = user_id

    @asynccontextmanager
    async def _forgetting(self, keep: Callable[[PendingTurn], bool]) -> AsyncIterator[tuple[int, int]]:
        """Bump the generation, then sort the pending work (see the module); yields (generation, turns dropped).
        The user's extractions wait until the block has changed the memory, so none is shown what it forgets."""
        async with self._shared.learning.forgets.holding(self.user_id):
            generation = await self._storage.generations.bump(self.user_id)
            dropped = await self._shared.learning.drop_pending(self.user_id, keep, generation)
            yield generation, dropped

    # --- seeing --------------------------------------------------------------------------------------------

    async def show(self) -> MemoryFile:
        """The user's whole memory (shared with the cache: read-only); facts past their last day show as history
        even before the next save closes them."""
        memory = await self._storage.memories.load(self.user_id)
        now = self._shared.clock()
        if any(lifetimes.lapsed(fact, lifetimes.today(now)) for fact in memory.facts):
            memory = memory.model_copy(deep=True)
            lifetimes.lapse(memory, now)
        return memory

    async def export(self) -> bytes:
        """The user's whole memory as pretty JSON, for `/memory export` and the console. It names whose memory it
        is (`exportedFor`), so `/memory import` can refuse someone else's, and leaves out a pending import and the
        facts' vectors."""
        data = json.loads(await self._storage.memories.export_bytes(self.user_id))
        data.pop(PENDING_FIELD, None)
        for fact in data.get("facts", []):
            vectors.strip(fact)  # numbers derived from the words, of one model: the words are what is theirs
        data["exportedFor"] = str(self.user_id)
        return json_bytes(data, indent=2)

    # --- importing (`bot.memory.parts.imports`) --------------------------------------------------------------

    def _importer(self) -> Importer:
        similarity = self._shared.learning.policy.duplicate_similarity
        return Importer(self._shared.writer, self._shared.clock, self.user_id, similarity=similarity)

    async def import_preview(self, data: bytes | None, *, size: int) -> ImportPreview:
        return await self._importer().preview(data, size=size)

    async def import_confirm(self, token: str, *, sensitive: bool) -> Imported:
        return await self._importer().confirm(token, sensitive=sensitive)

    async def import_cancel(self, token: str) -> bool:
        return await self._importer().cancel(token)

    def take_unreadable_notice(self) -> bool:
        """Whether to tell the user, now and once, that their earlier memory was unreadable and kept aside."""
        return self._storage.memories.take_unreadable(self.user_id)

    async def recalled(self, record: ReplyRecord) -> list[RecalledItem]:
        """The summaries and facts a recorded reply to this user used, with their current text (None for what is
        gone). `InvalidRequest` when the reply answered someone else."""
        if record.user_id != self.user_id:
            raise InvalidRequest("That reply was to someone else: I can only show you your own.")
        memory = await self.show()
        items = []
        for ref in record.sections:
            name, place = parse_section_ref(ref)
            summary = memory.section_of(place, name).summary
            items.append(RecalledItem("section", name, summary or None, place))
        for fact_id in record.fact_ids:
            fact = memory.fact_by_id(fact_id)
            items.append(RecalledItem("fact", fact_id, fact.content if fact is not None else None))
        return items

    # --- adding and correcting -----------------------------------------------------------------------------

    async def add(self, text: str, *, place: Place, everywhere: bool = False) -> Fact:
        """Store a fact in the user's own words: confidence 1.0, marked as written by them, so the model never
        removes or evicts it. It belongs to `place` unless `everywhere` (then it is shared)."""
        content = _clean_text(text)
        stamp = iso(self._shared.clock())
        async with self._shared.writer.change(self.user_id, UserAuthor()) as draft:
            taken = {fact.id for fact in draft.facts}
            while (fact_id := new_fact_id()) in taken:
                pass
            fact = Fact(
                id=fact_id, content=content, category=USER_FACT_CATEGORY, confidence=1.0, createdAt=stamp,
                lastConfirmedAt=stamp, source="user", origin=ORIGIN_USER, place=place.key, shared=everywhere,
            )
            draft.facts.append(fact)
        return fact

    async def edit(self, fact_id: str, text: str) -> Fact:
        """Rewrite one of the user's facts in place: same id, the new text only, marked as corrected by them. The
        words the correction takes out leave every summary and leave a fingerprint, as a forget's do."""
        content = _clean_text(text)
        now = self._shared.clock()
        stamp = iso(now)
        prints = await self._storage.installation.fingerprints()
        async with self._shared.writer.change(self.user_id, UserAuthor()) as draft:
            fact = draft.fact_by_id(fact_id)
            if fact is None:
                raise InvalidRequest("You have no fact with the id `{fact_id}`.", fact_id=fact_id)
            words = taken_back(
                [fact.content], content, others=(f.content for f in draft.live_facts() if f.id != fact_id)
            )
            scrub(draft, words)
            prints.leave(draft, words, now, texts=[fact.content], kept=words_of(fact.content) & words_of(content))
            fact.content = content
            fact.confidence = 1.0
            fact.lastConfirmedAt = stamp
            fact.origin = ORIGIN_CORRECTED
        return fact

    async def share(self, fact_id: str, shared: bool) -> bool | None:
        """Make a fact usable in every place (`shared`) or only where it was learned; None when the user has no
        such fact, else whether anything changed."""
        async with self._shared.writer.change(self.user_id, UserAuthor()) as draft:
            fact = draft.fact_by_id(fact_id)
            if fact is None:
                return None
            if shared and is_age_restricted(fact.place):
                raise InvalidRequest("That fact was learned in an age-restricted channel: it stays there.")
            if fact.shared == shared:
                return False
            fact.shared = shared
        log.info("fact %s of user %s %s", fact_id, self.user_id, "shared everywhere" if shared else "unshared")
        return True

    # --- forgetting ----------------------------------------------------------------------------------------

    async def forget(self, what: ForgetRequest) -> Forgotten:
        """Forget one fact, one summary everywhere, the last n minutes, or everything (see the module)."""
        if isinstance(what, ForgetFact):
            return await self._forget_fact(what.fact_id)
        if isinstance(what, ForgetSection):
            return await self._forget_section(what.name)
        if isinstance(what, ForgetMinutes):
            return await self._forget_since(what.minutes)
        assert isinstance(what, ForgetEverything)
        return await self.wipe()

    async def _forget_fact(self, fact_id: str) -> Forgotten:
        """Remove one fact by id (and the restatements of it the model stored, `_restatement_of`); nothing when
        the user has no such fact. Its words leave every summary of every place, current and earlier values, in the same
        save, and leave a fingerprint the write gate holds (`bot.memory.rules.forgotten`). The fact leaves the disk:
        copies kept aside are deleted, and the pending turns drop every turn already applied (the words it was
        learned from)."""
        if (await self.show()).fact_by_id(fact_id) is None:
            return Forgotten()
        prints = await self._storage.installation.fingerprints()
        async with (
            self._forgetting(_users_own_words) as (generation, _),
            self._shared.writer.change(self.user_id, UserAuthor(), generation=generation) as draft,
        ):
            target = draft.fact_by_id(fact_id)
            gone = [f for f in draft.facts if target is not None and _restatement_of(target, f)]
            draft.facts = [f for f in draft.facts if f not in gone]
            words = taken_back((f.content for f in gone), others=(f.content for f in draft.live_facts()))
            scrubbed = scrub(draft, words)
            prints.leave(draft, words, self._shared.clock(), texts=[f.content for f in gone])
        if gone:
            await self._storage.memories.delete_copies(self.user_id)
            await self._storage.turns.compact()
        log.info("user %s forgot fact %s: %d facts, %d summary values", self.user_id, fact_id, len(gone), scrubbed)
        return Forgotten(facts=len(gone), sections=scrubbed)

    async def _forget_section(self, name: str) -> Forgotten:
        """Clear one of the six summaries, in every place, with its previous values."""
        if name not in SECTION_NAMES:
            raise InvalidRequest("There is no summary called `{name}`.", name=name)
        cleared = 0
        async with (
            self._forgetting(_users_own_words) as (generation, _),
            self._shared.writer.change(self.user_id, UserAuthor(), generation=generation) as draft,
        ):
            for place in draft.summary_places():
                summaries = draft.place_memory(place)
                section = summaries.section(name)
                cleared += bool(section.summary or section.previous)
                section.clear()
                draft.set_place_memory(place, summaries)
        if cleared:
            await self._storage.memories.delete_copies(self.user_id)
        return Forgotten(sections=cleared)

    async def _forget_since(self, minutes: int) -> Forgotten:
        """Forget the last `minutes` (1 to 1,440): facts created in the window, turns still waiting to be learned
        from it, each summary changed in it put back to its value from before, and each fact closed by what was
        said in it (or by a fact it removes) open again."""
        if not 1 <= minutes <= MAX_FORGET_MINUTES:
            raise InvalidRequest("Minutes must be between 1 and {most}.", most=MAX_FORGET_MINUTES)
        since = self._shared.clock() - timedelta(minutes=minutes)
        cutoff = iso(since)
        async with (
            self._forgetting(lambda item: item.turn.at < since) as (generation, turns),
            self._shared.writer.change(self.user_id, UserAuthor(), generation=generation) as draft,
        ):
            gone = {fact.id for fact in draft.facts if fact.createdAt and fact.createdAt >= cutoff}
            draft.facts = [fact for fact in draft.facts if fact.id not in gone]
            draft.reopen_replaced(removed=gone, since=cutoff)  # what the window closed holds again
            sections = 0
            for place in draft.summary_places():  # every place's summaries
                summaries = draft.place_memory(place)
                sections += sum(1 for _, section in summaries.sections() if section.rewind(since))
                draft.set_place_memory(place, summaries)
        if gone or sections:
            await self._storage.memories.delete_copies(self.user_id)
        log.info("user %s forgot their last %d minutes: %d facts, %d summaries, %d turns",
                 self.user_id, minutes, len(gone), sections, turns)
        return Forgotten(facts=len(gone), sections=sections, turns=turns)

    async def wipe(self, *, quiet: bool = False, settings: bool = False) -> Forgotten:
        """Wipe the user's memory, the records of which memory their replies used, their activity and everything
        pending for them (and their privacy choices too with `settings`: the retention sweep), so nothing forgotten
        comes back: on return, no file or row holds their memory or their words from before. `quiet` (the
        retention sweep) logs the user id at DEBUG instead of INFO. Counts what the memory held."""
        async with self._forgetting(_nothing) as (_, turns):
            memory = await self.show()
            summaries = sum(
                1 for place in memory.summary_places() for _, section in memory.sections_of(place) if section.summary
            )
            held = Forgotten(facts=len(memory.facts), sections=summaries, turns=turns)
            await self._storage.forget_user(self.user_id, settings=settings)
            self._shared.recall.forget_user(self.user_id)
        log.log(logging.DEBUG if quiet else logging.INFO, "memory of user %s wiped", self.user_id)
        return held

    # --- privacy modes -------------------------------------------------------------------------------------

    @property
    def privacy(self) -> PrivacyRecord:
        """The user's privacy modes as they read now."""
        return self._storage.privacy.of(self.user_id, self._shared.clock())

    async def set_mode(self, mode: PrivacyMode) -> ModeChange:
        """Turn on incognito (0 minutes: a pause until resumed) or fresh mode, or resume; returns the record before
        and after. Incognito and pause also drop what was waiting to be learned, and start a new generation after
        the record is saved, so a message arriving between the two is refused."""
        now = self._shared.clock()
        if isinstance(mode, Resume):
            before, _ = await self._storage.privacy.update(
                self.user_id, now, paused=False, incognito_until=None, fresh_until=None, fresh_until_resume=False
            )
        elif isinstance(mode, Incognito):
            _check_mode_minutes(mode.minutes)
            if mode.minutes:
                until = now + timedelta(minutes=mode.minutes)
                before, _ = await self._storage.privacy.update(self.user_id, now, incognito_until=until)
            else:
                before, _ = await self._storage.privacy.update(self.user_id, now, paused=True, incognito_until=None)
            async with self._forgetting(_nothing):
                pass  # a new generation, and nothing pending: nothing more to change
        else:
            assert isinstance(mode, Fresh)
            _check_mode_minutes(mode.minutes)
            fresh_until = now + timedelta(minutes=mode.minutes) if mode.minutes else None
            before, _ = await self._storage.privacy.update(
                self.user_id, now, fresh_until=fresh_until, fresh_until_resume=not mode.minutes
            )
        return ModeChange(before, self.privacy)
