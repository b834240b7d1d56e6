"""The memory engine's front door: what the chat cog, the memory commands and the console call.

It wires filter output → journal → debouncer → extractor → store, and store → selector → rendering, and owns the
rules that span parts: work started before a `/memory forget` never writes; a paused user teaches nothing; a
transient failure is tried again before it is given up; a batch is marked done in the journal only once its result
is saved. (Extraction is serialised per user by the debouncer, which runs one batch per user at a time.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.memory.apply import apply_extraction
from bot.memory.debouncer import Debouncer
from bot.memory.extractor import ExtractionFailed, MemoryExtractor
from bot.memory.journal import Journal
from bot.memory.models import ConversationKey, MemoryFile, Turn, utc_now
from bot.memory.pauses import PauseRegistry
from bot.memory.render import render_memory
from bot.memory.retention import ActivityLog, sweep_silent_users
from bot.memory.selector import FactSelector
from bot.memory.stats import EngineSnapshot
from bot.memory.store import MemoryStore

log = logging.getLogger(__name__)

APPLIED_IDS_KEPT = 500
MAX_REQUEUES = 3


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


def _requeue_marker(key: ConversationKey, turns: list[Turn]) -> str:
    """Identifies a re-queued batch across attempts (re-queued turns go first, so its first turn stays first)."""
    return turns[0].turn_id or key.label()


class _Forgotten(Exception):
    """The user wiped their memory while this batch was being extracted."""


@dataclass(slots=True)
class EngineStats:
    batches_saved: int = 0
    batches_failed: int = 0
    turns_skipped_paused: int = 0
    facts_added: int = 0
    batches_requeued: int = 0


@dataclass(frozen=True, slots=True)
class FlushReport:
    """What one `flush` did: how many batches were waiting, how the batches ended, and what was learned."""

    finished: bool  # False when the timeout ran out first (what is left stays journaled)
    batches_pending: int  # batches waiting or being extracted when the flush began
    batches_saved: int = 0
    batches_failed: int = 0
    facts_added: int = 0

    @property
    def nothing_pending(self) -> bool:
        return self.batches_pending == 0


class MemoryService:
    def __init__(
        self,
        *,
        store: MemoryStore,
        extractor: MemoryExtractor,
        selector: FactSelector,
        journal: Journal | None,
        pauses: PauseRegistry,
        policy: MemoryPolicy,
        clock: Callable[[], datetime] = utc_now,
        activity: ActivityLog | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor
        self.selector = selector
        self.journal = journal
        self.pauses = pauses
        self.policy = policy
        self._clock = clock
        self.activity = activity or ActivityLog(None)
        self.debouncer = Debouncer(
            self._process_batch,
            quiet_seconds=policy.debounce_seconds,
            max_wait_seconds=policy.max_wait_seconds,
            max_concurrency=policy.max_concurrent_extractions,
        )
        self._requeues: dict[str, int] = {}
        self._appending: dict[str, asyncio.Future[None]] = {}  # turn id -> its journal append, while in flight
        self.stats = EngineStats()
        self.accepting = True

    # --- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> int:
        """Prepare the data folder and put turns a crash left in the journal back into the debouncer."""
        self.store.prepare()
        self.pauses.load()
        self.activity.load()
        if self.journal is None:
            return 0
        pending = self.journal.replay()
        by_key: dict[ConversationKey, list[Turn]] = {}
        for item in pending:
            by_key.setdefault(item.key, []).append(item.turn)
        for key, turns in by_key.items():
            self.debouncer.add(key, turns)
        if pending:
            log.info("journal: resumed %d pending turns in %d batches", len(pending), len(by_key))
        return len(pending)

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
        return finished

    async def flush(self, timeout: float | None = None) -> FlushReport:
        """Extract and save everything pending now, without waiting for the quiet time; report what happened.

        Counts are the engine's totals before and after, so batches of other users finishing meanwhile are
        included: this is an operator's "learn now", not a per-user transaction.
        """
        waiting = self.debouncer.pending_keys + self.debouncer.running
        before = (self.stats.batches_saved, self.stats.batches_failed, self.stats.facts_added)
        finished = await self.debouncer.flush(timeout)
        return FlushReport(
            finished=finished,
            batches_pending=waiting,
            batches_saved=self.stats.batches_saved - before[0],
            batches_failed=self.stats.batches_failed - before[1],
            facts_added=self.stats.facts_added - before[2],
        )

    # --- learning ------------------------------------------------------------------------------------------

    async def remember(self, key: ConversationKey, turns: Sequence[Turn]) -> bool:
        """Take a user's turns for later extraction; False when the user paused learning (nothing is kept).

        Returns once the turns are in the journal (on disk), so an acknowledged turn survives a crash. They enter
        the debouncer first, on arrival: the quiet time is measured on the user's pace, not on how long the
        journal took, so a busy disk cannot split one burst into many extractions. Their "done" record waits for
        this append (`_mark_done`), so it can never land before it. If the append fails (disk full) the turns are
        still learned, just not crash-safe, and a WARNING says so.
        """
        if not turns:
            return False
        self.note_activity(key.user_id)
        if self.pauses.is_paused(key.user_id):
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

    async def _journal_turns(self, key: ConversationKey, turns: list[Turn]) -> None:
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
        extractions of the same memory never race."""
        epoch = self.store.epoch(key.user_id)
        memory = await self.store.load(key.user_id)
        applied = set(memory.appliedTurnIds)
        fresh = [turn for turn in turns if not turn.turn_id or turn.turn_id not in applied]
        ids = [turn.turn_id for turn in turns if turn.turn_id]
        if not any(turn.role == "user" for turn in fresh):
            await self._mark_done(key, ids)
            return
        try:
            extraction = await self.extractor.extract(
                memory, fresh, user_id=key.user_id, now=self._clock(), label=key.label()
            )
        except ExtractionFailed as error:
            if error.transient:  # the endpoint is down or overloaded: try again after another quiet period
                self._requeue(key, turns, error.reason)
            else:
                self._give_up(key, turns, error.reason)
            return
        try:
            async with self.store.edit(key.user_id) as draft:
                if self.store.epoch(key.user_id) != epoch:
                    raise _Forgotten
                report = apply_extraction(
                    draft,
                    extraction.result,
                    now=self._clock(),
                    min_confidence=self.policy.min_confidence,
                    max_facts=self.policy.max_facts,
                    duplicate_similarity=self.policy.duplicate_similarity,
                    source=f"conversation:{key.conversation_id}",
                )
                new_ids = [turn_id for turn_id in ids if turn_id not in applied]
                if new_ids:
                    draft.appliedTurnIds = (draft.appliedTurnIds + new_ids)[-APPLIED_IDS_KEPT:]
        except _Forgotten:
            log.info("memory update for %s discarded: the user wiped their memory meanwhile", key.label())
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
        await self._mark_done(key, ids)

    def _requeue(self, key: ConversationKey, turns: list[Turn], reason: str) -> None:
        """A transient failure (the LLM endpoint down, the disk full) changed nothing; try the batch again after
        another quiet period, a few times, before giving up. Its turns stay journaled throughout."""
        marker = _requeue_marker(key, turns)
        attempts = self._requeues.get(marker, 0) + 1
        if attempts > MAX_REQUEUES or not self.accepting:
            self._give_up(key, turns, reason)
            return
        self.stats.batches_requeued += 1
        self._requeues[marker] = attempts
        log.warning(
            "memory update for %s failed (%s); trying again later (%d/%d)", key.label(), reason, attempts, MAX_REQUEUES
        )
        self.debouncer.add(key, turns, first=True)  # older than anything that arrived meanwhile

    def _give_up(self, key: ConversationKey, turns: list[Turn], reason: str) -> None:
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

    async def memory_prompt(self, user_id: int, recent_texts: Sequence[str], *, user_label: str) -> str:
        """The rendered memory block for a reply to `user_id` (only that user's memory, ever)."""
        memory, revision = await self.store.load_with_revision(user_id)
        if memory.is_empty():
            return ""
        facts = self.selector.select(str(user_id), revision, memory.facts, recent_texts, self.policy.top_k)
        return render_memory(memory, facts, user_label=user_label, token_budget=self.policy.token_budget)

    # --- the user's controls -------------------------------------------------------------------------------

    async def show(self, user_id: int) -> MemoryFile:
        """The user's whole memory (shared with the cache: read-only)."""
        return await self.store.load(user_id)

    async def export(self, user_id: int) -> bytes:
        """The user's whole memory file as pretty JSON, for `/memory export` and the console."""
        return await self.store.export_bytes(user_id)

    async def forget_fact(self, user_id: int, fact_id: str) -> bool:
        """Remove one fact by id; False when the user has no such fact."""
        async with self.store.edit(user_id) as draft:
            before = len(draft.facts)
            draft.facts = [fact for fact in draft.facts if fact.id != fact_id]
            removed = len(draft.facts) != before
        return removed

    async def forget_all(self, user_id: int, *, quiet: bool = False) -> bool:
        """Wipe the user's memory and everything pending for them, so nothing forgotten comes back.
        `quiet` (the retention sweep) logs the user id at DEBUG instead of INFO and leaves saving the activity
        file to the caller."""
        self.debouncer.cancel_user(user_id)
        if self.journal is not None:
            await self.journal.purge(user_id)
        existed = await self.store.delete(user_id)
        self.selector.forget(str(user_id))
        self.activity.remove(user_id)
        if not quiet:
            await self.save_activity()
        log.log(logging.DEBUG if quiet else logging.INFO, "memory of user %s wiped", user_id)
        return existed

    async def set_paused(self, user_id: int, paused: bool) -> bool:
        """Pause or resume learning; pausing also drops what was waiting to be learned from the user."""
        changed = await self.pauses.set_paused(user_id, paused)
        if paused:
            self.debouncer.cancel_user(user_id)
            if self.journal is not None:
                await self.journal.purge(user_id)
        return changed

    def is_paused(self, user_id: int) -> bool:
        return self.pauses.is_paused(user_id)

    # --- operations ----------------------------------------------------------------------------------------

    def snapshot(self) -> EngineSnapshot:
        """The engine's counters and gauges, as plain values, for the metrics endpoint."""
        return EngineSnapshot(
            batches_saved=self.stats.batches_saved,
            batches_failed=self.stats.batches_failed,
            batches_requeued=self.stats.batches_requeued,
            facts_stored=self.stats.facts_added,
            turns_pending=self.journal.pending if self.journal is not None else self.debouncer.pending_turns,
            cache_hits=self.store.cache_hits,
            cache_misses=self.store.cache_misses,
            extraction_requests=self.extractor.calls.requests,
            extraction_errors=dict(self.extractor.calls.errors),
        )

    def note_activity(self, user_id: int) -> None:
        """A message from the user reached the bot: they are not silent (retention counts from here)."""
        self.activity.note(user_id, self._clock())

    async def save_activity(self) -> None:
        """Persist last-activity days (hourly and at shutdown); a failure only delays it, so it is logged."""
        try:
            await self.activity.save()
        except OSError as error:
            log.warning("could not save the activity file (%s); will retry", error.strerror or type(error).__name__)

    async def sweep_retention(self, now: datetime | None = None) -> int:
        """Delete the memory, and every trace, of users silent for `retention_days`; returns how many."""
        return await sweep_silent_users(self, now or self._clock(), days=self.policy.retention_days)

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
