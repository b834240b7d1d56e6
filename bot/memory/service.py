"""The memory engine's front door: what the chat cog, the memory commands and the console call.

It wires filter output → journal → debouncer → extractor → store, and store → selector → rendering, and owns the
rules that span parts: work started before a `/memory forget` never writes, and a message that arrived before it is
never learned after it (`learning_ticket`); forgetting removes the bytes, not just the view; a paused user teaches
nothing; a transient failure is tried again before it is given up, and a batch that keeps failing across restarts
is parked; a batch is marked done in the journal only once its result is saved. (Extraction is serialised per user
by the debouncer, which runs one batch per user at a time.) CPU-heavy steps (applying an extraction to a full
memory, fitting a new selection index) run on one worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import secrets
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from bot.memory.apply import apply_extraction, evict_overflow
from bot.memory.backend import (
    ActivityStore,
    Claim,
    ClaimLost,
    ModeStore,
    PauseStore,
    PendingTurn,
    ReplyStore,
    TurnQueue,
    UserMemoryStore,
)
from bot.memory.debouncer import Debouncer
from bot.memory.extractor import ExtractionFailed, MemoryExtractor
from bot.memory.guard import rejection_reason
from bot.memory.journal import PARKED_RETENTION
from bot.memory.models import (
    DM_PLACE,
    ORIGIN_CORRECTED,
    ORIGIN_USER,
    SECTION_NAMES,
    ConversationKey,
    Fact,
    MemoryFile,
    Place,
    Turn,
    iso,
    new_fact_id,
    utc_now,
)
from bot.memory.modes import MAX_MODE_MINUTES, MODES_FILE, UNTIL_RESUME, ModeRegistry
from bot.memory.pauses import PauseRegistry
from bot.memory.places import (
    Scope,
    extraction_view,
    may_use,
    merge_extraction_view,
    reader,
    usable_facts,
    usable_summaries,
)
from bot.memory.render import PlacedSummary, parse_section_ref, render_block
from bot.memory.replies import REPLIES_FILE, ReplyLog, ReplyRecord
from bot.memory.retention import ActivityLog, sweep_silent_users
from bot.memory.selector import FactSelector
from bot.memory.stats import EngineSnapshot

log = logging.getLogger(__name__)
_T = TypeVar("_T")

APPLIED_IDS_KEPT = 500
RECENT_PROBLEMS_KEPT = 20
MAX_REQUEUES = 3
# A batch is parked (no longer tried) after this many refusals of the model (a 400: content filter, context length,
# an unusable answer), or this many transient failures, counted across restarts.
MAX_PERMANENT_FAILURES = 3
MAX_TRANSIENT_FAILURES = 3 * (MAX_REQUEUES + 1)

MAX_USER_FACT_CHARS = 400
MAX_FORGET_MINUTES = 1440
USER_FACT_CATEGORY = "context"


class InvalidRequest(ValueError):
    """A user's request that cannot be carried out as asked; the message is one line to show them."""


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    """The engine's knobs (built from `Settings` by the application)."""

    debounce_seconds: float = 30.0
    max_wait_seconds: float = 300.0
    max_concurrent_extractions: int = 4
    top_k: int = 15
    max_facts: int = 100
    min_confidence: float = 0.7
    duplicate_similarity: float = 0.85
    token_budget: int = 1000
    retention_days: int = 365
    scope: Scope = "place"  # "user": one memory everywhere


def _requeue_marker(key: ConversationKey, turns: list[Turn]) -> str:
    """Identifies a re-queued batch across attempts (re-queued turns go first, so its first turn stays first)."""
    return turns[0].turn_id or key.label()


@dataclass(frozen=True, slots=True)
class MemoryPrompt:
    """The memory block for one reply and what it carries (summary names, fact ids), for the reply's record."""

    text: str = ""
    sections: tuple[str, ...] = ()
    fact_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Modes:
    """A user's privacy modes right now. `*_until` is a UTC time, or None with `*_until_resume` for no timer."""

    paused: bool = False
    incognito_until: datetime | None = None
    fresh_until: datetime | None = None
    fresh_until_resume: bool = False

    @property
    def incognito(self) -> bool:
        """Nothing is learned from the user (paused, or incognito with a timer)."""
        return self.paused or self.incognito_until is not None

    @property
    def fresh(self) -> bool:
        """Replies use none of the user's memory."""
        return self.fresh_until_resume or self.fresh_until is not None


@dataclass(frozen=True, slots=True)
class ForgetWindowReport:
    facts: int
    sections: int
    turns: int


@dataclass(frozen=True, slots=True)
class RecalledItem:
    """One thing a reply's prompt carried: a summary (by name) or a fact (by id), with its text now, if any."""

    kind: str  # "section" or "fact"
    key: str
    text: str | None  # None: forgotten since
    place: str = DM_PLACE  # where a summary was learned


class _Forgotten(Exception):
    """The user wiped their memory while this batch was being extracted."""


@dataclass(frozen=True, slots=True)
class LearningTicket:
    """Taken when a message arrives, handed to `remember` with its turns: turns whose ticket predates a
    `/memory forget` of their user are dropped, however long the reply took."""

    user_id: int
    epoch: int


@dataclass(slots=True)
class EngineStats:
    batches_saved: int = 0
    batches_failed: int = 0
    batches_parked: int = 0
    batches_discarded: int = 0  # extracted, then thrown away: forgotten meanwhile, or taken over by another process
    turns_skipped_paused: int = 0
    turns_skipped_forgotten: int = 0
    facts_added: int = 0
    batches_requeued: int = 0
    problems: int = 0


@dataclass(frozen=True, slots=True)
class FlushReport:
    """What one `flush` did: how many batches were waiting, how the batches ended, and what was learned."""

    finished: bool  # False when the timeout ran out first (what is left stays journaled)
    batches_pending: int  # batches waiting or being extracted when the flush began
    batches_saved: int = 0
    batches_failed: int = 0
    facts_added: int = 0
    facts_held_back: int = 0  # refused by the write gate
    problems: tuple[str, ...] = ()  # why batches failed or were put back for a retry, oldest first, no repeats

    @property
    def nothing_pending(self) -> bool:
        return self.batches_pending == 0


class MemoryService:
    def __init__(
        self,
        *,
        store: UserMemoryStore,
        extractor: MemoryExtractor,
        selector: FactSelector,
        journal: TurnQueue | None,
        pauses: PauseStore,
        policy: MemoryPolicy,
        modes: ModeStore | None = None,
        replies: ReplyStore | None = None,
        clock: Callable[[], datetime] = utc_now,
        activity: ActivityStore | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor
        self.selector = selector
        self.journal = journal
        self.pauses = pauses
        if modes is None or replies is None:
            # The file defaults live next to the pause list; other backends hand every part in.
            if not isinstance(pauses, PauseRegistry):
                raise TypeError("modes and replies are required unless pauses is a file PauseRegistry")
            folder = pauses.path.parent
            modes = modes or ModeRegistry(folder / MODES_FILE)
            replies = replies or ReplyLog(folder / REPLIES_FILE)
        self.modes: ModeStore = modes
        self.replies: ReplyStore = replies
        self.policy = policy
        self.clock = clock
        self.activity: ActivityStore = activity or ActivityLog(None)
        self.debouncer = Debouncer(
            self._process_batch,
            quiet_seconds=policy.debounce_seconds,
            max_wait_seconds=policy.max_wait_seconds,
            max_concurrency=policy.max_concurrent_extractions,
        )
        self._requeues: dict[str, int] = {}
        self._forgets: dict[int, int] = {}  # user id -> how many times they wiped their memory in this process
        self._appending: dict[str, asyncio.Future[None]] = {}  # turn id -> its journal append, while in flight
        self._selection_keys: dict[int, set[str]] = {}  # user id -> the selector keys of their non-DM places
        self.stats = EngineStats()
        self._recent_problems: deque[str] = deque(maxlen=RECENT_PROBLEMS_KEPT)
        self.accepting = True
        # One thread for the engine's CPU work: each extra thread running Python competes with the event loop for
        # the interpreter lock, so a burst of extractions would slow every reply even with the work off the loop.
        self._cpu = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-cpu")

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def open(self) -> int:
        """Open every part of the storage and put turns a crash (of this or another process) left pending back
        into the debouncer; returns how many. Where several processes share the storage, turns abandoned later
        are taken over by a background sweep."""
        await self.store.open()
        await self.pauses.open()
        await self.activity.open()
        await self.modes.open(self.clock())
        await self.replies.open()
        if self.journal is None:
            return 0
        resumed = self._enqueue(await self.journal.resume(), first=False)
        self.journal.watch(self._taken_over)
        return resumed

    def _enqueue(self, pending: list[PendingTurn], *, first: bool) -> int:
        by_key: dict[ConversationKey, list[Turn]] = {}
        for item in pending:
            by_key.setdefault(item.key, []).append(item.turn)
        for key, turns in by_key.items():
            self.debouncer.add(key, turns, first=first)
        if pending:
            log.info("pending turns: resumed %d turns in %d batches", len(pending), len(by_key))
        return len(pending)

    def _taken_over(self, pending: list[PendingTurn]) -> None:
        """Turns another process abandoned, now claimed by this one: extracted after a quiet period as usual."""
        if self.accepting:
            self._enqueue(pending, first=True)

    async def shutdown(self, timeout: float) -> bool:
        """Stop taking turns and flush everything pending through extraction and the store, within `timeout`.

        What does not finish in time stays in the journal for the next start; returns True when all finished.
        """
        self.accepting = False
        await self.save_activity()
        finished = await self.debouncer.flush(timeout)
        if not finished:
            left = self.journal.pending if self.journal else self.debouncer.pending_turns
            log.warning("shutdown: flush timed out after %gs; %d turns stay journaled", timeout, left)
            await self.debouncer.close()
        if self.journal is not None:
            await self.journal.close()
        self._cpu.shutdown(wait=False)
        return finished

    async def flush(self, timeout: float | None = None) -> FlushReport:
        """Extract and save everything pending now, without waiting for the quiet time; report what happened.

        Counts are the engine's totals before and after, so batches of other users finishing meanwhile are
        included: this is an operator's "learn now", not a per-user transaction.
        """
        waiting = self.debouncer.pending_keys + self.debouncer.running
        before = (self.stats.batches_saved, self.stats.batches_failed, self.stats.facts_added, self.stats.problems)
        finished = await self.debouncer.flush(timeout)
        new_problems = min(self.stats.problems - before[3], len(self._recent_problems))
        problems = list(self._recent_problems)[len(self._recent_problems) - new_problems :]
        return FlushReport(
            finished=finished,
            batches_pending=waiting,
            batches_saved=self.stats.batches_saved - before[0],
            batches_failed=self.stats.batches_failed - before[1],
            facts_added=self.stats.facts_added - before[2],
            problems=tuple(dict.fromkeys(problems)),
        )

    async def _off_loop(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """Run CPU-heavy `fn` on the engine's worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._cpu, functools.partial(fn, *args, **kwargs))

    # --- learning ------------------------------------------------------------------------------------------

    def learning_ticket(self, user_id: int) -> LearningTicket:
        """Take this when a message arrives and pass it to `remember`: a wipe confirmed meanwhile wins."""
        return LearningTicket(user_id, self._forgets.get(user_id, 0))

    async def remember(
        self, key: ConversationKey, turns: Sequence[Turn], *, ticket: LearningTicket | None = None
    ) -> bool:
        """Take a user's turns for later extraction; False when nothing is kept: the user paused learning, or
        wiped their memory after `ticket` was taken (the message arrived before the wipe).

        Returns once the turns are in the journal (on disk), so an acknowledged turn survives a crash. They enter
        the debouncer first, on arrival: the quiet time is measured on the user's pace, not on how long the
        journal took, so a busy disk cannot split one burst into many extractions. Their "done" record waits for
        this append (`_mark_done`), so it can never land before it. If the append fails (disk full) the turns are
        still learned, just not crash-safe, and a WARNING says so.
        """
        if not turns:
            return False
        # Every pending turn needs an id: it is how a batch is claimed, settled and forgotten.
        turns = [turn if turn.turn_id else dataclasses.replace(turn, turn_id=f"anon-{secrets.token_hex(8)}")
                 for turn in turns]
        if ticket is not None and ticket.epoch != self._forgets.get(ticket.user_id, 0):
            self.stats.turns_skipped_forgotten += len(turns)
            log.info("turns for %s dropped: they arrived before the user wiped their memory", key.label())
            return False
        self.note_activity(key.user_id)
        if self.modes_of(key.user_id).incognito:
            self.stats.turns_skipped_paused += len(turns)
            return False
        if self.accepting:
            self.debouncer.add(key, turns)
        else:
            log.info("turns for %s arrived during shutdown; journaled for the next start", key.label())
        if self.journal is not None:
            try:
                await self._journal_turns(key, list(turns))
            except OSError as error:
                log.warning(
                    "journal append for %s failed (%s): %d turns will be learned but would not survive a crash",
                    key.label(), error.strerror or type(error).__name__, len(turns),
                )
        return True

    async def _journal_turns(self, key: ConversationKey, turns: Sequence[Turn]) -> None:
        assert self.journal is not None
        appended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ids = [turn.turn_id for turn in turns if turn.turn_id]
        for turn_id in ids:
            self._appending[turn_id] = appended
        try:
            await self.journal.add(key, turns)
        finally:
            for turn_id in ids:
                if self._appending.get(turn_id) is appended:
                    del self._appending[turn_id]
            appended.set_result(None)

    async def _process_batch(self, key: ConversationKey, turns: list[Turn]) -> None:
        """Extract one batch and save the result. The debouncer runs one batch per user at a time, so two
        extractions of the same memory never race; where processes share the storage, only the turns this process
        could claim are extracted, and the save settles them exactly once (`Claim`)."""
        epoch = self.store.epoch(key.user_id)
        claim: Claim | None = None
        try:
            if self.journal is not None:
                claim = await self.journal.claim(key, turns)
                if not claim.turns:  # settled, forgotten or being extracted by another process
                    return
                turns = list(claim.turns)
            memory = await self.store.load(key.user_id)
        except OSError as error:  # the database is unreachable: nothing changed, try again later
            self._requeue(key, turns, f"storage unavailable: {error.strerror or error}")
            return
        applied = set(memory.appliedTurnIds)
        fresh = [turn for turn in turns if not turn.turn_id or turn.turn_id not in applied]
        ids = [turn.turn_id for turn in turns if turn.turn_id]
        if not any(turn.role == "user" for turn in fresh):
            await self._mark_done(key, ids)
            return
        try:
            # Shown only what the batch's place may use: DM-only memory never reaches a public channel's prompt.
            extraction = await self.extractor.extract(
                extraction_view(memory, key.place, self.policy.scope),
                fresh,
                user_id=key.user_id,
                now=self.clock(),
                label=key.label(),
            )
        except ExtractionFailed as error:
            if await self._parked_after_failure(key, turns, ids, error):
                return
            if error.transient:  # the endpoint is down or overloaded: try again after another quiet period
                self._requeue(key, turns, error.reason)
            else:
                self._give_up(key, turns, error.reason)
            return
        try:
            async with self.store.edit(key.user_id, settles=claim) as draft:
                if self.store.epoch(key.user_id) != epoch:
                    raise _Forgotten
                # Applied to the place's view, then merged back: only the place's summaries and the facts it may
                # use can change; what it learned records the place.
                view = extraction_view(draft, key.place, self.policy.scope)
                # Off the loop: comparing new facts with a full memory is CPU work no reply should wait for.
                report = await self._off_loop(
                    apply_extraction,
                    view,
                    extraction.result,
                    now=self.clock(),
                    min_confidence=self.policy.min_confidence,
                    max_facts=self.policy.max_facts,
                    duplicate_similarity=self.policy.duplicate_similarity,
                    source=f"conversation:{key.conversation_id}",
                )
                merge_extraction_view(draft, view, key.place, self.policy.scope)
                report.facts_evicted += evict_overflow(draft, self.policy.max_facts)
                new_ids = [turn_id for turn_id in ids if turn_id not in applied]
                if new_ids:
                    draft.appliedTurnIds = (draft.appliedTurnIds + new_ids)[-APPLIED_IDS_KEPT:]
        except _Forgotten:
            self.stats.batches_discarded += 1
            log.info("memory update for %s discarded: the user wiped their memory meanwhile", key.label())
            return
        except ClaimLost:
            self.stats.batches_discarded += 1
            log.info("memory update for %s discarded: its turns were forgotten or taken over meanwhile", key.label())
            return
        except OSError as error:  # disk full, I/O error: the old file is intact
            self._requeue(key, turns, f"could not save: {error.strerror or type(error).__name__}")
            return
        self.stats.batches_saved += 1
        self.stats.facts_added += report.facts_added
        self._requeues.pop(_requeue_marker(key, turns), None)
        log.info(
            "memory updated for %s: %d turns, %d sections, +%d facts, %d confirmed, -%d removed, "
            "%d below threshold, %d refused, %d evicted",
            key.label(), len(fresh), report.sections_updated, report.facts_added, report.facts_confirmed,
            report.facts_removed, report.facts_below_threshold, report.facts_refused, report.facts_evicted,
        )
        if claim is None or claim.owner is None:  # a leased claim was settled by the save itself
            await self._mark_done(key, ids)

    def _requeue(self, key: ConversationKey, turns: list[Turn], reason: str) -> None:
        """A transient failure (the LLM endpoint down, the disk full) changed nothing; try the batch again after
        another quiet period, a few times, before giving up. Its turns stay journaled throughout."""
        marker = _requeue_marker(key, turns)
        attempts = self._requeues.get(marker, 0) + 1
        self._note_problem(reason)
        if attempts > MAX_REQUEUES or not self.accepting:
            self._give_up(key, turns, reason, noted=True)
            return
        self.stats.batches_requeued += 1
        self._requeues[marker] = attempts
        log.warning(
            "memory update for %s failed (%s); trying again later (%d/%d)", key.label(), reason, attempts, MAX_REQUEUES
        )
        self.debouncer.add(key, turns, first=True)  # older than anything that arrived meanwhile

    async def _parked_after_failure(
        self, key: ConversationKey, turns: list[Turn], ids: list[str], error: ExtractionFailed
    ) -> bool:
        """Count the failure in the journal (so it survives restarts); park the batch once it has failed too often.
        True when parked."""
        if self.journal is None or not ids:
            return False
        try:
            failures = await self.journal.failed(key.user_id, ids, permanent=not error.transient)
            if failures.permanent < MAX_PERMANENT_FAILURES and failures.transient < MAX_TRANSIENT_FAILURES:
                return False
            await self.journal.park(key.user_id, ids)
        except OSError as failed:  # the count is housekeeping: without it the batch is simply tried again
            log.warning("journal: could not record a failed extraction (%s)", failed.strerror or failed)
            return False
        self._requeues.pop(_requeue_marker(key, turns), None)
        self._note_problem(f"parked: {error.reason}")
        self.stats.batches_failed += 1
        self.stats.batches_parked += 1
        log.error(
            "memory update for %s parked after %d refusals and %d transient failures (%s); its %d turns are no "
            "longer tried and are deleted from the journal after %s",
            key.label(), failures.permanent, failures.transient, error.reason, len(turns), PARKED_RETENTION,
        )
        return True


    def _note_problem(self, reason: str) -> None:
        self.stats.problems += 1
        self._recent_problems.append(reason)

    def _give_up(self, key: ConversationKey, turns: list[Turn], reason: str, *, noted: bool = False) -> None:
        if not noted:
            self._note_problem(reason)
        self._requeues.pop(_requeue_marker(key, turns), None)
        self.stats.batches_failed += 1
        log.error(
            "memory update for %s given up (%s); %d turns kept in the journal for the next start",
            key.label(), reason, len(turns),
        )

    async def _mark_done(self, key: ConversationKey, turn_ids: list[str]) -> None:
        """Record the turns as done in the journal, after their own records (which may still be on the way)."""
        if self.journal is None:
            return
        appending = {self._appending[turn_id] for turn_id in turn_ids if turn_id in self._appending}
        if appending:
            await asyncio.wait(appending)
        await self.journal.done(key.user_id, turn_ids)

    # --- reading for replies -------------------------------------------------------------------------------

    async def memory_prompt(
        self, user_id: int, recent_texts: Sequence[str], *, user_label: str, place: Place
    ) -> MemoryPrompt:
        """The rendered memory block for a reply to `user_id` in `place`, with the summaries and fact ids that fit
        in it: only that user's memory, ever, and of it only what `place` may use (its own summaries and facts,
        its server's public ones, shared facts); empty while the user is in fresh mode."""
        if self.modes_of(user_id).fresh:
            return MemoryPrompt()
        try:
            memory, revision = await self.store.load_with_revision(user_id)
        except OSError as error:  # the database is down: answer without memory rather than not at all
            log.warning("memory of user %s unavailable for a reply (%s)", user_id, error.strerror or error)
            return MemoryPrompt()
        if memory.is_empty():
            return MemoryPrompt()
        reading = reader(place, self.policy.scope)
        facts = usable_facts(memory, reading)
        summaries = [
            PlacedSummary(name, section.summary, item_place, elsewhere=item_place != reading.key)
            for item_place, name, section in usable_summaries(memory, reading)
        ]
        if not facts and not summaries:
            return MemoryPrompt()
        key = self._selection_key(user_id, reading)
        if not self.selector.is_cached(key, revision):
            # Fitting the index of a new revision is CPU work a full memory makes noticeable: not on the loop.
            self.selector.put(key, revision, await self._off_loop(self.selector.build, facts))
        selected = self.selector.select(key, revision, facts, recent_texts, self.policy.top_k)
        block = render_block(
            memory, selected, user_label=user_label, token_budget=self.policy.token_budget, summaries=summaries
        )
        return MemoryPrompt(block.text, block.sections, block.fact_ids)

    def _selection_key(self, user_id: int, reading: Place) -> str:
        """The selector caches one index per key: the user's whole memory for DMs, a subset per other place."""
        if reading.kind == "dm":
            return str(user_id)
        keys = self._selection_keys.setdefault(user_id, set())
        key = f"{user_id}@{reading.key}"
        keys.add(key)
        return key

    def can_use(self, place: Place, fact: Fact) -> bool:
        """Whether a reply in `place` may use `fact` (under the configured scope)."""
        return may_use(reader(place, self.policy.scope), fact.place, shared=fact.shared)

    def can_use_summaries_of(self, place: Place, item_place: str) -> bool:
        """Whether a reply in `place` may use the summaries learned in `item_place`."""
        return may_use(reader(place, self.policy.scope), item_place)

    async def record_reply(self, message_ids: Sequence[int], user_id: int, prompt: MemoryPrompt) -> None:
        """Remember which memory a sent reply (all its messages) used, for "What did you remember?". Ids only.
        A failure to save is logged, never raised: the reply is already out."""
        try:
            await self.replies.record(message_ids, user_id, prompt.sections, prompt.fact_ids)
        except OSError as error:
            log.warning("could not save the reply record (%s)", error.strerror or type(error).__name__)

    async def reply_record(self, message_id: int) -> ReplyRecord | None:
        """What the reply with this message id used, if it is among the recorded replies (sent by any process
        sharing the storage)."""
        return await self.replies.get(message_id)

    async def recalled(self, user_id: int, record: ReplyRecord) -> list[RecalledItem]:
        """The summaries and facts a recorded reply to `user_id` used, with their current text (None for what is
        gone). `InvalidRequest` when the reply answered someone else: a user only ever sees their own memory."""
        if record.user_id != user_id:
            raise InvalidRequest("That reply was to someone else: I can only show you your own.")
        memory = await self.store.load(user_id)
        items = []
        for ref in record.sections:
            name, place = parse_section_ref(ref)
            summary = memory.section_of(place, name).summary
            items.append(RecalledItem("section", name, summary or None, place))
        for fact_id in record.fact_ids:
            fact = memory.fact_by_id(fact_id)
            items.append(RecalledItem("fact", fact_id, fact.content if fact is not None else None))
        return items

    # --- the user's controls -------------------------------------------------------------------------------

    async def show(self, user_id: int) -> MemoryFile:
        """The user's whole memory (shared with the cache: read-only)."""
        return await self.store.load(user_id)

    async def export(self, user_id: int) -> bytes:
        """The user's whole memory file as pretty JSON, for `/memory export` and the console."""
        return await self.store.export_bytes(user_id)

    async def forget_fact(self, user_id: int, fact_id: str) -> bool:
        """Remove one fact by id; False when the user has no such fact.

        The fact leaves the disk, not just the view: the memory file is replaced, copies of it kept aside as
        unreadable are deleted, and the journal drops every turn already applied (the words it was learned from).
        """
        async with self.store.edit(user_id) as draft:
            before = len(draft.facts)
            draft.facts = [fact for fact in draft.facts if fact.id != fact_id]
            removed = len(draft.facts) != before
        if removed:
            await self.store.delete_copies(user_id)
            if self.journal is not None:
                await self.journal.compact()
        return removed

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
        removes or evicts it. `InvalidRequest` for empty, over-long or refused text.

        It belongs to `place`, where the user typed it, unless `everywhere` (then it is shared: usable in every
        place the user talks to the bot; with `MEMORY_SCOPE=user` every fact already is).
        """
        content = self._clean_text(text)
        stamp = iso(self.clock())
        async with self.store.edit(user_id) as draft:
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
        """Rewrite one of the user's facts in place: same id, the new text only, marked as corrected by them.
        `InvalidRequest` for an unknown id or bad text."""
        content = self._clean_text(text)
        stamp = iso(self.clock())
        async with self.store.edit(user_id) as draft:
            fact = draft.fact_by_id(fact_id)
            if fact is None:
                raise InvalidRequest(f"You have no fact with the id `{fact_id}`.")
            fact.content = content
            fact.confidence = 1.0
            fact.lastConfirmedAt = stamp
            fact.origin = ORIGIN_CORRECTED
        return fact

    async def forget_section(self, user_id: int, name: str) -> bool:
        """Clear one of the six summaries, in every place, with its previous values; False when it was empty
        everywhere."""
        if name not in SECTION_NAMES:
            raise InvalidRequest(f"There is no summary called `{name}`.")
        had = False
        async with self.store.edit(user_id) as draft:
            for place in draft.summary_places():
                summaries = draft.place_memory(place)
                section = summaries.section(name)
                had = had or bool(section.summary or section.previous)
                section.clear()
                draft.set_place_memory(place, summaries)
        return had

    async def forget_since(self, user_id: int, minutes: int) -> ForgetWindowReport:
        """Forget the last `minutes` (1 to 1,440): facts created in the window, turns still waiting to be learned
        from it, and each summary changed in it put back to its value from before."""
        if not 1 <= minutes <= MAX_FORGET_MINUTES:
            raise InvalidRequest(f"Minutes must be between 1 and {MAX_FORGET_MINUTES}.")
        since = self.clock() - timedelta(minutes=minutes)
        turns = await self._drop_pending_since(user_id, since)
        cutoff = iso(since)
        async with self.store.edit(user_id) as draft:
            before = len(draft.facts)
            draft.facts = [fact for fact in draft.facts if not fact.createdAt or fact.createdAt < cutoff]
            facts = before - len(draft.facts)
            sections = 0
            for place in draft.summary_places():  # every place's summaries
                summaries = draft.place_memory(place)
                sections += sum(1 for _, section in summaries.sections() if section.rewind(since))
                draft.set_place_memory(place, summaries)
        log.info("user %s forgot their last %d minutes: %d facts, %d summaries, %d turns",
                 user_id, minutes, facts, sections, turns)
        return ForgetWindowReport(facts=facts, sections=sections, turns=turns)

    async def _drop_pending_since(self, user_id: int, since: datetime) -> int:
        """Drop the user's pending turns from `since` on; older pending turns stay and are learned as usual."""
        waiting = await self.journal.pending_turns_of(user_id) if self.journal is not None else []
        if not self.debouncer.cancel_user(user_id) and not waiting:
            return 0
        if self.journal is not None:
            await self.journal.purge(user_id)
        keep = [item for item in waiting if item.turn.at < since]
        by_key: dict[ConversationKey, list[Turn]] = {}
        for item in keep:
            by_key.setdefault(item.key, []).append(item.turn)
        for key, turns in by_key.items():
            self.debouncer.add(key, turns)
            if self.journal is not None:
                await self.journal.add(key, turns)
        return len(waiting) - len(keep)

    async def set_shared(self, user_id: int, fact_id: str, shared: bool) -> bool | None:
        """Make a fact usable in every place (`shared`) or only where it was learned; None when the user has no
        such fact, else whether anything changed."""
        async with self.store.edit(user_id) as draft:
            fact = draft.fact_by_id(fact_id)
            if fact is None:
                return None
            if fact.shared == shared:
                return False
            fact.shared = shared
        log.info("fact %s of user %s %s", fact_id, user_id, "shared everywhere" if shared else "unshared")
        return True

    async def forget_all(self, user_id: int, *, quiet: bool = False) -> bool:
        """Wipe the user's memory, the records of which memory their replies used, and everything pending for
        them, so nothing forgotten comes back: on return, no file under the data folder holds their memory or
        their words from before. `quiet` (the retention sweep) logs the user id at DEBUG instead of INFO and
        leaves saving the activity file to the caller."""
        self._forgets[user_id] = self._forgets.get(user_id, 0) + 1  # tickets taken before now are stale
        self.debouncer.cancel_user(user_id)
        if self.journal is not None:
            appending = set(self._appending.values())
            if appending:  # turns accepted just before: let them land, then purge them with the rest
                await asyncio.wait(appending)
            await self.journal.purge(user_id, wiped=True)
        existed = await self.store.delete(user_id)
        for selection_key in {str(user_id), *self._selection_keys.pop(user_id, set())}:
            self.selector.forget(selection_key)
        await self.activity.remove(user_id)
        await self.replies.forget_user(user_id)
        if not quiet:
            await self.save_activity()
        log.log(logging.DEBUG if quiet else logging.INFO, "memory of user %s wiped", user_id)
        return existed

    # --- privacy modes -------------------------------------------------------------------------------------

    def modes_of(self, user_id: int) -> Modes:
        now = self.clock()
        fresh = self.modes.fresh_until(user_id, now)
        return Modes(
            paused=self.pauses.is_paused(user_id),
            incognito_until=self.modes.incognito_until(user_id, now),
            fresh_until=fresh if isinstance(fresh, datetime) else None,
            fresh_until_resume=fresh == UNTIL_RESUME,
        )

    @staticmethod
    def _check_minutes(minutes: int) -> None:
        if not 0 <= minutes <= MAX_MODE_MINUTES:
            raise InvalidRequest(f"Minutes must be between 0 (until /memory resume) and {MAX_MODE_MINUTES}.")

    async def _drop_pending(self, user_id: int) -> None:
        self.debouncer.cancel_user(user_id)
        if self.journal is not None:
            await self.journal.purge(user_id)

    async def set_incognito(self, user_id: int, minutes: int) -> Modes:
        """Learn nothing from the user for `minutes` (0: until resumed, which is a pause); what was waiting to be
        learned from them is dropped too."""
        self._check_minutes(minutes)
        now = self.clock()
        if minutes == 0:
            await self.pauses.set_paused(user_id, True)
            await self.modes.set_incognito(user_id, None, now)
        else:
            await self.modes.set_incognito(user_id, now + timedelta(minutes=minutes), now)
        await self._drop_pending(user_id)
        return self.modes_of(user_id)

    async def set_fresh(self, user_id: int, minutes: int) -> Modes:
        """Replies use none of the user's memory for `minutes` (0: until resumed). Nothing is deleted."""
        self._check_minutes(minutes)
        now = self.clock()
        await self.modes.set_fresh(user_id, UNTIL_RESUME if minutes == 0 else now + timedelta(minutes=minutes), now)
        return self.modes_of(user_id)

    async def resume(self, user_id: int) -> bool:
        """End the pause, incognito and fresh modes; True when any was on."""
        unpaused = await self.pauses.set_paused(user_id, False)
        ended = await self.modes.clear(user_id, self.clock())
        return unpaused or ended

    async def set_paused(self, user_id: int, paused: bool) -> bool:
        """Pause (incognito until resumed) or resume; pausing also drops what was waiting to be learned."""
        if not paused:
            return await self.resume(user_id)
        changed = await self.pauses.set_paused(user_id, True)
        await self._drop_pending(user_id)
        return changed

    def is_paused(self, user_id: int) -> bool:
        """Nothing is being learned from the user right now (paused or incognito)."""
        return self.modes_of(user_id).incognito

    # --- operations ----------------------------------------------------------------------------------------

    def snapshot(self) -> EngineSnapshot:
        """The engine's counters and gauges, as plain values, for the metrics endpoint."""
        return EngineSnapshot(
            batches_saved=self.stats.batches_saved,
            batches_failed=self.stats.batches_failed,
            batches_requeued=self.stats.batches_requeued,
            batches_parked=self.stats.batches_parked,
            batches_discarded=self.stats.batches_discarded,
            facts_stored=self.stats.facts_added,
            turns_pending=self.journal.pending if self.journal is not None else self.debouncer.pending_turns,
            turns_taken_over=self.journal.taken_over if self.journal is not None else 0,
            cache_hits=self.store.cache_hits,
            cache_misses=self.store.cache_misses,
            extraction_requests=self.extractor.calls.requests,
            extraction_errors=dict(self.extractor.calls.errors),
        )

    def note_activity(self, user_id: int) -> None:
        """A message from the user reached the bot: they are not silent (retention counts from here)."""
        self.activity.note(user_id, self.clock())

    async def save_activity(self) -> None:
        """Persist last-activity days (hourly and at shutdown); a failure only delays it, so it is logged."""
        try:
            await self.activity.save()
        except OSError as error:
            log.warning("could not save the activity file (%s); will retry", error.strerror or type(error).__name__)

    async def sweep_retention(self, now: datetime | None = None) -> int:
        """Delete the memory, and every trace, of users silent for `retention_days`; returns how many."""
        return await sweep_silent_users(self, now or self.clock(), days=self.policy.retention_days)

    def longest_pending_seconds(self, attempt_timeout: float) -> float:
        """How long a turn can wait on disk before it is distilled while the LLM endpoint answers at all:
        the max wait, then up to MAX_REQUEUES + 1 extraction rounds (each the extractor's attempts of at most
        `attempt_timeout` plus its backoff), with a quiet period before each re-queued round."""
        one_round = self.extractor.longest_attempts_seconds(attempt_timeout)
        return (
            self.policy.max_wait_seconds
            + (MAX_REQUEUES + 1) * one_round
            + MAX_REQUEUES * self.policy.debounce_seconds
        )
