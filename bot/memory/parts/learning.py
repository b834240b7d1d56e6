"""Learning: from a user's messages to their memory. The only place "may we learn this?" is decided.

Messages come in (filtered here into turns) → the queue of pending turns (durable before `remember` returns) →
the per-key debouncer → the extractor (shown only what the batch's place may use) → the writer (the write gate,
then an atomic save). What it promises:
- a message is learned only when its user is neither paused nor incognito, memory learning is switched on where it
  was said, and no forget or pause of the user began since the message arrived (its `LearningTicket`): the turn
  carries the user's forget generation from arrival to save, and every write refuses an older one, so a forget is
  final against a reply still being written, a batch waiting in the debouncer and an extraction in flight;
- a transient failure of the endpoint is tried again after another quiet period, a few times, and a batch that
  keeps failing across restarts is parked; an unreachable storage (database down, disk full) is waited for however
  long it lasts (`StorageOutage`), and the batch is tried again when it is back; a batch is marked done only once
  its result is saved; a bad answer never changes memory;
- CPU-heavy work (applying an extraction to a full memory) runs on the engine's worker thread, never on the loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.files.journal import PARKED_RETENTION
from bot.memory.drivers.interfaces import Claim, ClaimLost, PendingTurn, Stale
from bot.memory.errors import ExtractionFailed
from bot.memory.models import ConversationKey, IncomingMessage, Location, MemoryFile, Turn
from bot.memory.parts.forget_barrier import ForgetBarrier
from bot.memory.parts.outage import StorageOutage
from bot.memory.parts.withdrawn import Withdrawn
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.answer import ExtractionResult
from bot.memory.pipeline.apply import ApplyReport, apply_extraction
from bot.memory.pipeline.debouncer import Debouncer
from bot.memory.pipeline.extractor import Extraction, MemoryExtractor, memory_for_prompt
from bot.memory.pipeline.filter import filter_messages
from bot.memory.policy import MemoryPolicy
from bot.memory.rules import lifetimes
from bot.memory.rules.forgotten import stamp as received
from bot.memory.rules.places import extraction_view, merge_extraction_view
from bot.memory.rules.sources import snapshot, stamp, user_message_ids
from bot.memory.rules.withhold import for_the_queue, redacted_together, requests_in
from bot.memory.rules.write_gate import GateReport, ModelAuthor

log = logging.getLogger(__name__)

APPLIED_IDS_KEPT = 500
RECENT_PROBLEMS_KEPT = 20
MAX_REQUEUES = 3
# A batch is parked (no longer tried) after this many refusals of the model (a 400: content filter, context length,
# an unusable answer), or this many transient failures, counted across restarts.
MAX_PERMANENT_FAILURES = 3
MAX_TRANSIENT_FAILURES = 3 * (MAX_REQUEUES + 1)

OffLoop = Callable[..., Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class LearningTicket:
    """Taken when a message arrives: its user's forget generation then. Turns and reply records under a ticket
    older than the user's latest forget or pause are never written, however long the reply took."""

    user_id: int
    generation: int


@dataclass(frozen=True, slots=True)
class WithdrawnReply:
    """What became of a reply the user deleted or replaced: how many of its turns were still waiting to be learned
    (now dropped), and whether it had already been learned (distilled together with the user's words)."""

    dropped: int
    learned: bool


@dataclass(slots=True)
class LearningStats:
    batches_saved: int = 0
    batches_failed: int = 0
    batches_parked: int = 0
    batches_discarded: int = 0  # extracted, then thrown away: forgotten meanwhile, or taken over by another process
    batches_requeued: int = 0
    turns_skipped_paused: int = 0
    turns_skipped_switched_off: int = 0
    turns_skipped_forgotten: int = 0
    facts_added: int = 0
    facts_held_back: int = 0  # by the write gate
    problems: int = 0


@dataclass(frozen=True, slots=True)
class _Batch:
    """A batch this process claimed: its turns, those the memory has not applied yet (`fresh`), and the memory
    loaded for its extraction (the save edits the latest copy)."""

    key: ConversationKey
    generation: int
    claim: Claim
    memory: MemoryFile
    turns: list[Turn]  # the claimed turns
    applied: frozenset[str]  # ids of the turns the memory had applied already
    fresh: list[Turn]
    ids: list[str]  # ids of the claimed turns

    @classmethod
    def of(cls, key: ConversationKey, generation: int, claim: Claim, memory: MemoryFile) -> _Batch:
        turns = list(claim.turns)
        applied = frozenset(memory.appliedTurnIds)
        # The batch read as a whole once more: turns queued apart (another process, before a restart) may hold
        # a secret only together.
        fresh = redacted_together([], [turn for turn in turns if turn.turn_id not in applied], key.user_id)
        ids = [turn.turn_id for turn in turns if turn.turn_id]
        return cls(key, generation, claim, memory, turns, applied, fresh, ids)

    @property
    def own_turns(self) -> list[Turn]:
        """The fresh turns the user wrote: the only words facts may come from."""
        return [turn for turn in self.fresh if turn.role == "user" and turn.author_id == self.key.user_id]


def _requeue_marker(key: ConversationKey, turns: list[Turn]) -> str:
    """Identifies a re-queued batch across attempts (re-queued turns go first, so its first turn stays first)."""
    return turns[0].turn_id or key.label()


class Learning:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        writer: MemoryWriter,
        extractor: MemoryExtractor,
        policy: MemoryPolicy,
        clock: Callable[[], datetime],
        off_loop: OffLoop,
    ) -> None:
        self.storage = storage
        self.writer = writer
        self.extractor = extractor
        self.policy = policy
        self.clock = clock
        self._off_loop = off_loop
        self.debouncer = Debouncer(
            self._process_batch,
            quiet_seconds=policy.debounce_seconds,
            max_wait_seconds=policy.max_wait_seconds,
            max_concurrency=policy.max_concurrent_extractions,
        )
        self.stats = LearningStats()
        self.recent_problems: deque[str] = deque(maxlen=RECENT_PROBLEMS_KEPT)
        self._requeues: dict[str, int] = {}
        self._appending: dict[str, asyncio.Future[None]] = {}  # turn id -> its queue append, while in flight
        self.withdrawn = Withdrawn()  # messages deleted or edited lately: never learned as they were
        self.forgets = ForgetBarrier()  # a forget changing a memory: its user's batches wait to load it
        self.accepting = True
        # The database down or the disk full: batches wait for it, turns the queue could not take are kept.
        self.outage = StorageOutage(probe=storage.probe, release=self._retry_after_outage)

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def resume(self) -> int:
        """Put turns a crash (of this or another process) left pending back into the debouncer; returns how many.
        Where several processes share the storage, turns abandoned later are taken over by a background sweep."""
        resumed = self._enqueue(await self.storage.turns.resume(), first=False)
        self.storage.turns.watch(self._taken_over)
        return resumed

    def _enqueue(self, pending: Sequence[PendingTurn], *, first: bool) -> int:
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

    # --- taking messages -----------------------------------------------------------------------------------

    def ticket(self, user_id: int) -> LearningTicket:
        return LearningTicket(user_id, self.storage.generations.current(user_id))

    def note_activity(self, user_id: int) -> None:
        """A message from the user reached the bot but is not handed to `remember` (rate-limited, say)."""
        self.storage.activity.note(user_id, self.clock())

    def refusal(self, user_id: int, where: Location, ticket: LearningTicket) -> str | None:
        """Why nothing of this user's message may be learned now, or None when it may."""
        if ticket.generation != self.storage.generations.current(user_id):
            return "forgotten"
        if self.storage.privacy.of(user_id, self.clock()).incognito:
            return "paused"
        if not self.storage.switches.at(where).learning:
            return "switched off"
        return None

    async def remember(
        self,
        where: Location,
        messages: Sequence[IncomingMessage],
        *,
        ticket: LearningTicket,
        bot_id: int | None,
        revision: str = "",
        shown: Sequence[str] = (),
    ) -> bool:
        """Take the ticket's user's messages said `where` (their own and the bot's reply to them) for later
        extraction; False when nothing is kept (see the module for why). The user counts as active either way
        (retention). A message deleted meanwhile is left out with the reply to it; `revision` names the text of an
        edited message learned again.

        Returns once the turns are in the queue (on disk or in the database), so an acknowledged turn survives a
        crash; a message that is nothing but one password-like word is written there cut (its name may come in the
        next message) and comes back cut after a crash. They enter the debouncer first, on arrival: the quiet time
        is measured on the user's pace, not on how long the write took. If the write fails (disk full) the turns
        are still learned, just not crash-safe, and a WARNING says so. `shown`: the earlier messages the reply was
        written from; a credential the gate finds there is cut from these turns too (a reply that quotes one from
        the channel's history), and nothing else of them is kept."""
        key = where.key(ticket.user_id)
        self.note_activity(key.user_id)
        turns = filter_messages(messages, bot_id=bot_id, max_chars=self.policy.max_turn_chars)
        if revision:  # the text of an edited message, learned again under a turn id of its own
            turns = [replace(t, turn_id=f"{t.turn_id}.{revision}") if t.role == "user" else t for t in turns]
        turns = self.withdrawn.keep(turns)
        if not turns:
            return False
        reason = self.refusal(key.user_id, where, ticket)
        if reason is not None:
            self._count_refusal(reason, len(turns))
            log.debug("turns for %s not learned: %s", key.label(), reason)
            return False
        # Every pending turn needs an id: it is how a batch is claimed, settled and forgotten. Secrets (keys,
        # passwords given as such, card and bank numbers) are cut out here, so they never reach the disk, the
        # database or the extraction model; read with the user's turns still waiting, so a password named in one
        # message and given in the next is cut too.
        turns = [
            dataclasses.replace(
                turn, turn_id=turn.turn_id or f"anon-{secrets.token_hex(8)}", generation=ticket.generation
            )
            for turn in redacted_together(self.debouncer.waiting(key), turns, key.user_id, shown=shown)
        ]
        if self.outage.full():  # the storage is down and as many turns as RAM may keep wait for it already
            self.outage.refused(len(turns))
            return False
        if self.accepting:
            self.debouncer.add(key, turns)
        else:
            log.info("turns for %s arrived during shutdown; kept for the next start", key.label())
        try:  # written down without a lone password-like word whose name may come next (`for_the_queue`)
            await self._queue_turns(key, for_the_queue(turns, key.user_id))
        except Stale:
            self._count_refusal("forgotten", len(turns))  # a forget in another process won: the batch drops them
            return False
        except OSError as error:  # kept in RAM and written to the queue when the storage is back (said once)
            self.outage.begin(f"pending turns not saved: {error.strerror or type(error).__name__}")
            self.outage.unstored(key.user_id, [turn.turn_id for turn in turns])
            log.debug("pending turns for %s kept in memory until the storage is back", key.label())
        return True

    def _count_refusal(self, reason: str, turns: int) -> None:
        if reason == "forgotten":
            self.stats.turns_skipped_forgotten += turns
        elif reason == "paused":
            self.stats.turns_skipped_paused += turns
        else:
            self.stats.turns_skipped_switched_off += turns

    async def _queue_turns(self, key: ConversationKey, turns: list[Turn]) -> None:
        appended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ids = [turn.turn_id for turn in turns]
        for turn_id in ids:
            self._appending[turn_id] = appended
        try:
            await self.storage.turns.add(key, turns)
        finally:
            for turn_id in ids:
                if self._appending.get(turn_id) is appended:
                    del self._appending[turn_id]
            appended.set_result(None)

    async def drop_pending(
        self, user_id: int, keep: Callable[[PendingTurn], bool], generation: int
    ) -> int:
        """After a forget or pause began (`generation` is the new one): cancel the user's batches and extractions
        in flight, delete their pending turns but those `keep` accepts, and put those back under `generation`;
        returns how many turns were dropped."""
        self.debouncer.cancel_user(user_id)
        self.outage.forget_user(user_id)
        await self._landed()  # turns accepted just before: let them land, then sort them with the rest
        kept, dropped = await self.storage.turns.keep_only(user_id, keep, generation)
        if self.accepting:
            self._enqueue(kept, first=True)
        return dropped

    async def _landed(self, turns: Sequence[Turn] | None = None) -> None:
        """Until the queue appends under way (of `turns`, or all of them) have landed."""
        wanted = None if turns is None else {turn.turn_id for turn in turns}
        appending = {f for turn_id, f in self._appending.items() if wanted is None or turn_id in wanted}
        if appending:
            await asyncio.wait(appending)

    async def pending_of(self, user_id: int) -> list[PendingTurn]:
        """The user's pending turns, once the turns accepted just before have landed."""
        await self._landed()
        return await self.storage.turns.pending_turns_of(user_id)

    async def drop_messages(self, message_ids: Collection[str]) -> dict[int, list[str]]:
        """Messages deleted or edited on Discord: once the turns accepted just before have landed, their pending
        turns and the bot's replies to them are deleted, in any process; returns the turn ids dropped by user. The
        caller withdraws them here first (`withdrawn`), so a batch in flight that read one is not saved."""
        await self._landed()
        return await self.storage.turns.drop_messages(message_ids)

    async def withdraw_reply(self, user_id: int, message_ids: Sequence[int]) -> WithdrawnReply:
        """A reply of the bot to the user was deleted or replaced: it is never learned. Its turn leaves the pending
        work (the user's own words stay, under the same generation) and is refused if it arrives later (its own
        hand-over may still be on its way); what was already distilled stays (facts come only from the user's own
        words: a reply gives them context)."""
        wanted = {str(message_id) for message_id in message_ids}
        self.withdrawn.deleted(sorted(wanted))
        pending = await self.storage.turns.pending_turns_of(user_id)
        dropped = 0
        if self._holds(user_id, wanted) or any(item.turn.turn_id in wanted for item in pending):
            generation = self.storage.generations.current(user_id)
            dropped = await self.drop_pending(user_id, lambda item: item.turn.turn_id not in wanted, generation)
        learned = not dropped and bool(wanted & set((await self.storage.memories.load(user_id)).appliedTurnIds))
        log.info("reply of user %s withdrawn: %d turns dropped, learned before: %s", user_id, dropped, learned)
        return WithdrawnReply(dropped, learned)

    def _holds(self, user_id: int, turn_ids: set[str]) -> bool:
        """Whether one of these turns is waiting in this process: in a batch, or on its way into the queue."""
        return self.debouncer.holds(user_id, turn_ids) or any(turn_id in self._appending for turn_id in turn_ids)

    # --- extracting ----------------------------------------------------------------------------------------

    async def _process_batch(self, key: ConversationKey, turns: list[Turn]) -> None:
        """Extract one batch and save the result. The debouncer runs one batch per user at a time, so two
        extractions of the same memory never race; where processes share the storage, only the turns this process
        could claim are extracted, and the save settles them exactly once (`Claim`). A batch of a user whose
        forget is under way waits for it (`ForgetBarrier`), so it is never shown what is being forgotten."""
        await self.forgets.passed(key.user_id)
        generation = self.storage.generations.current(key.user_id)
        # The forget disposed of turns under an older generation; deletes and edits of those withdrawn.
        turns = self.withdrawn.keep([turn for turn in turns if turn.generation == generation])
        if not turns:
            return
        batch = await self._claimed(key, turns, generation)
        if batch is None:
            return
        if not any(turn.role == "user" for turn in batch.fresh):
            await self._mark_done(key, batch.ids, batch.claim)
            return
        shown = extraction_view(batch.memory, key.place, self.policy.scope)
        shown.facts = lifetimes.current(shown.facts, self.clock())  # what is over is not shown as current
        extraction = await self._extracted(batch, shown)
        if extraction is None:
            return
        self._count_usage(key, extraction)
        author = self._author(batch, shown)
        held = GateReport()
        report = await self._saved(batch, extraction.result, author, held)
        if report is None:
            return
        self._note_saved(batch, report, held)
        if batch.claim.owner is None:  # a leased claim was settled by the save itself
            await self._mark_done(key, batch.ids, batch.claim)

    async def _claimed(self, key: ConversationKey, turns: list[Turn], generation: int) -> _Batch | None:
        """Claim the turns and load the memory they are extracted against; None when no turn could be claimed or
        the storage is unreachable (then nothing changed, and the batch is tried again later). Turns enter the
        debouncer before their queue write lands; a claim made before it would find nothing to claim."""
        await self._landed(turns)
        try:
            if not await self.outage.store(self.storage.turns, key, turns):
                return None
            claim = await self.storage.turns.claim(key, turns)
            if not claim.turns:  # settled, forgotten or being extracted by another process
                return None
            turns = list(claim.turns)
            memory = await self.storage.memories.load(key.user_id)
        except OSError as error:  # the storage is unreachable: nothing changed, try again when it is back
            self._wait_for_storage(key, turns, f"storage unavailable: {error.strerror or error}")
            return None
        return _Batch.of(key, generation, claim, memory)

    def _retry_after_outage(self, key: ConversationKey, turns: list[Turn]) -> None:
        self.debouncer.add(key, turns, first=True)  # older than anything that arrived meanwhile

    def _wait_for_storage(self, key: ConversationKey, turns: list[Turn], reason: str) -> None:
        """The storage is unreachable: the batch waits for its return, however long (during shutdown its turns
        stay pending for the next start)."""
        if not self.accepting:
            self._give_up(key, turns, reason)
            return
        self._note_problem(reason)
        self.outage.begin(reason)
        self.outage.hold(key, turns)
        log.debug("memory update for %s waits for the storage (%s)", key.label(), reason)

    async def _extracted(self, batch: _Batch, shown: MemoryFile) -> Extraction | None:
        """The model's extraction of the batch's fresh turns, shown `shown`; None when it failed (the batch is then
        tried again, parked or given up)."""
        key = batch.key
        try:
            return await self.extractor.extract(
                shown, batch.fresh, user_id=key.user_id, now=self.clock(), label=key.label()
            )
        except ExtractionFailed as error:
            if await self._parked_after_failure(key, batch.turns, batch.ids, error):
                return None
            if error.transient:  # the endpoint is down or overloaded: try again after another quiet period
                self._requeue(key, batch.turns, error.reason)
            else:
                self._give_up(key, batch.turns, error.reason)
            return None

    def _count_usage(self, key: ConversationKey, extraction: Extraction) -> None:
        self.storage.usage.add(
            "extraction", user_id=key.user_id, guild_id=key.place.guild_id if key.place.kind != "dm" else None,
            tokens=extraction.prompt_tokens + extraction.completion_tokens, estimated=extraction.estimated,
            now=self.clock(),
        )

    def _author(self, batch: _Batch, shown: MemoryFile) -> ModelAuthor:
        """The write gate's view of the batch: its place, and what the model may take identifiers and sensitive
        data from (the user's own words, the memory it was shown, what the user asked to remember)."""
        key = batch.key
        own_words = [turn.text for turn in batch.own_turns]
        return ModelAuthor(
            key.place, self.policy.scope, self.clock(),
            grounding="\n".join([*own_words, json.dumps(memory_for_prompt(shown), ensure_ascii=False)]),
            requests=requests_in(batch.fresh, key.user_id),  # "remember that ...": the sensitive data it may keep
            said=tuple((received(turn.at), turn.text) for turn in batch.own_turns),  # what may lift a fingerprint
        )

    async def _saved(
        self, batch: _Batch, result: ExtractionResult, author: ModelAuthor, held: GateReport
    ) -> ApplyReport | None:
        """Apply the extraction through the writer (the gate's holds added to `held`); None when the save was
        discarded (a forget, pause or lost claim meanwhile) or failed (the batch is tried again)."""
        key = batch.key
        sources = user_message_ids(batch.fresh, key.user_id)
        try:
            async with self.writer.change(
                key.user_id, author, generation=batch.generation, settles=batch.claim, report=held,
                sources=(key.place, sources),
            ) as draft:
                return await self._apply_to(draft, batch, result, author.now, sources)
        except (Stale, ClaimLost) as lost:
            self._discarded(batch, lost)
            return None
        except OSError as error:  # disk full, I/O error, database gone: the old memory is intact
            self._wait_for_storage(key, batch.turns, f"could not save: {error.strerror or type(error).__name__}")
            return None

    async def _apply_to(
        self, draft: MemoryFile, batch: _Batch, result: ExtractionResult, now: datetime, sources: list[str]
    ) -> ApplyReport:
        """Apply the extraction to the part of `draft` the batch's place may use, stamp the new facts' sources and
        record the batch's turns as applied; `ClaimLost` when one of its messages was withdrawn meanwhile."""
        key = batch.key
        if any(map(self.withdrawn.covers, batch.turns)):
            raise ClaimLost("a message of the batch was deleted or edited meanwhile")
        before = snapshot(draft)
        view = extraction_view(draft, key.place, self.policy.scope)
        # Off the loop: comparing new facts with a full memory is CPU work no reply should wait for.
        report: ApplyReport = await self._off_loop(
            apply_extraction,
            view,
            result,
            now=now,
            min_confidence=self.policy.min_confidence,
            max_facts=self.policy.max_facts,
            duplicate_similarity=self.policy.duplicate_similarity,
            source=f"conversation:{key.conversation_id}",
            turns=batch.own_turns,
        )
        merge_extraction_view(draft, view, key.place, self.policy.scope)
        stamp(before, draft, sources)
        new_ids = [turn_id for turn_id in batch.ids if turn_id not in batch.applied]
        if new_ids:
            draft.appliedTurnIds = (draft.appliedTurnIds + new_ids)[-APPLIED_IDS_KEPT:]
        return report

    def _discarded(self, batch: _Batch, lost: Stale | ClaimLost) -> None:
        """An extraction thrown away unsaved. After a lost claim (not a forget) the batch's remaining turns are
        claimed again."""
        key = batch.key
        self.stats.batches_discarded += 1
        why = "the user forgot or paused" if isinstance(lost, Stale) else "turns were deleted, forgotten or taken"
        log.info("memory update for %s discarded: %s meanwhile", key.label(), why)
        if isinstance(lost, ClaimLost) and self.storage.generations.current(key.user_id) == batch.generation:
            self.debouncer.add(key, self.withdrawn.keep(batch.turns), first=True)  # the rest, claimed again

    def _note_saved(self, batch: _Batch, report: ApplyReport, held: GateReport) -> None:
        key = batch.key
        self.stats.batches_saved += 1
        self.stats.facts_added += report.facts_added
        self.stats.facts_held_back += held.held_back()
        self._requeues.pop(_requeue_marker(key, batch.turns), None)
        log.info(
            "memory updated for %s: %d turns, %d sections, +%d facts, %d confirmed, %d closed, -%d removed, "
            "%d below threshold, %d refused, %d evicted, %d held back by the gate (%d withheld)",
            key.label(), len(batch.fresh), report.sections_updated, report.facts_added, report.facts_confirmed,
            report.facts_closed, report.facts_removed, report.facts_below_threshold, report.facts_refused,
            report.facts_evicted,
            held.held_back(), held.withheld,
        )

    def _requeue(self, key: ConversationKey, turns: list[Turn], reason: str) -> None:
        """A transient failure changed nothing; try the batch again after another quiet period, a few times,
        before giving up. Its turns stay pending throughout."""
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
        """Count the failure with the pending turns (so it survives restarts); park the batch once it has failed
        too often. True when parked."""
        if not ids:
            return False
        try:
            failures = await self.storage.turns.failed(key.user_id, ids, permanent=not error.transient)
            if failures.permanent < MAX_PERMANENT_FAILURES and failures.transient < MAX_TRANSIENT_FAILURES:
                return False
            await self.storage.turns.park(key.user_id, ids)
        except OSError as failed:  # the count is housekeeping: without it the batch is simply tried again
            log.warning("pending turns: could not record a failed extraction (%s)", failed.strerror or failed)
            return False
        self._requeues.pop(_requeue_marker(key, turns), None)
        self._note_problem(f"parked: {error.reason}")
        self.stats.batches_failed += 1
        self.stats.batches_parked += 1
        log.error(
            "memory update for %s parked after %d refusals and %d transient failures (%s); its %d turns are no "
            "longer tried and are deleted after %s",
            key.label(), failures.permanent, failures.transient, error.reason, len(turns), PARKED_RETENTION,
        )
        return True

    def _note_problem(self, reason: str) -> None:
        self.stats.problems += 1
        self.recent_problems.append(reason)

    def _give_up(self, key: ConversationKey, turns: list[Turn], reason: str, *, noted: bool = False) -> None:
        if not noted:
            self._note_problem(reason)
        self._requeues.pop(_requeue_marker(key, turns), None)
        self.stats.batches_failed += 1
        log.error(
            "memory update for %s given up (%s); %d turns kept pending for the next start",
            key.label(), reason, len(turns),
        )

    async def _mark_done(self, key: ConversationKey, turn_ids: list[str], claim: Claim) -> None:
        """Record the turns as done, after their own records (which may still be on the way)."""
        appending = {self._appending[turn_id] for turn_id in turn_ids if turn_id in self._appending}
        if appending:
            await asyncio.wait(appending)
        try:
            await self.storage.turns.done(key.user_id, turn_ids)
        except OSError as error:  # harmless: the memory records them as applied, so a replay skips them
            log.warning("pending turns of %s not marked done (%s)", key.label(), error.strerror or error)

    def longest_pending_seconds(self, attempt_timeout: float) -> float:
        """How long a turn can wait before it is distilled while the LLM endpoint answers at all: the max wait,
        then up to MAX_REQUEUES + 1 extraction rounds (each the extractor's attempts of at most `attempt_timeout`
        plus its backoff), with a quiet period before each re-queued round."""
        one_round = self.extractor.longest_attempts_seconds(attempt_timeout)
        return (
            self.policy.max_wait_seconds
            + (MAX_REQUEUES + 1) * one_round
            + MAX_REQUEUES * self.policy.debounce_seconds
        )
