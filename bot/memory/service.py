"""The memory engine's front door: what the chat cog, the memory commands, the admin commands and the console call.

A thin facade over parts that each own their state and their promise:
- `Learning` (`learning.py`): messages in, memory out; the only place "may we learn this?" is decided;
- `Recall` (`recall.py`): the memory a reply may carry, and the record of what each reply used;
- `Controls` (`controls.py`): the user's commands: see, add, correct, share, forget, privacy modes;
- `Deletes` (`deletes.py`): Discord deletes and edits, honoured;
- the storage bundle (`storage/bundle.py`), built once per backend, which every part writes through: memory only
  through the `MemoryWriter` and its gate, every forget through one generation per user.
Callers never reach behind this class; what they need of the engine's data is in `bot.memory.models`, its errors
in `bot.memory.errors`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.interfaces import ReplyRecord
from bot.memory.drivers.tally import Kind
from bot.memory.errors import InvalidRequest
from bot.memory.models import ConversationKey, Fact, IncomingMessage, MemoryFile, Place, SwitchTarget, utc_now
from bot.memory.parts.budgets import Budgets, Exceeded, UsageReport, estimate_tokens
from bot.memory.parts.deletes import DeleteReport, Deletes, EditOutcome
from bot.memory.parts.learning import Learning, LearningTicket
from bot.memory.parts.recall import Recall, RecalledItem
from bot.memory.parts.retention import HistorySweep, Sweeper, sweep_history, sweep_silent_users
from bot.memory.parts.user_memory import (
    MAX_FORGET_MINUTES,
    MAX_USER_FACT_CHARS,
    Controls,
    ForgetWindowReport,
    WithdrawnReply,
)
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.render import MemoryPrompt
from bot.memory.pipeline.selector import FactSelector
from bot.memory.policy import MemoryPolicy
from bot.memory.records.community_settings import MAX_PROMPT_CHARS, ChannelPath, Chosen, CommunityChoice
from bot.memory.records.privacy_modes import MAX_MODE_MINUTES, PrivacyRecord
from bot.memory.records.switches import MemorySwitch
from bot.memory.stats import EngineSnapshot

__all__ = [
    "MAX_FORGET_MINUTES",
    "MAX_MODE_MINUTES",
    "MAX_PROMPT_CHARS",
    "MAX_USER_FACT_CHARS",
    "ChannelPath",
    "Chosen",
    "CommunityChoice",
    "DeleteReport",
    "EditOutcome",
    "Exceeded",
    "FlushReport",
    "ForgetWindowReport",
    "HistorySweep",
    "InvalidRequest",
    "LearningTicket",
    "MemoryPolicy",
    "MemoryPrompt",
    "MemoryService",
    "MemorySwitch",
    "PrivacyRecord",
    "RecalledItem",
    "ReplyRecord",
    "UsageReport",
    "WithdrawnReply",
    "estimate_tokens",
]

log = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class FlushReport:
    """What one `flush` did: how many batches were waiting, how the batches ended, and what was learned."""

    finished: bool  # False when the timeout ran out first (what is left stays pending)
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
        storage: StorageBundle,
        extractor: MemoryExtractor,
        selector: FactSelector,
        policy: MemoryPolicy,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.storage = storage
        self.policy = policy
        self.clock = clock
        # One thread for the engine's CPU work: each extra thread running Python competes with the event loop for
        # the interpreter lock, so a burst of extractions would slow every reply even with the work off the loop.
        self._cpu = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-cpu")
        now = self._now  # every part reads the time through here, so one clock (a test's fake one) serves all
        self.writer = MemoryWriter(
            storage.memories, max_facts=policy.max_facts, max_places=policy.max_places, ledger=storage.ledger,
            upkeep=storage.upkeep, clock=now,
        )
        self.learning = Learning(
            storage=storage, writer=self.writer, extractor=extractor, policy=policy, clock=now,
            off_loop=self._off_loop,
        )
        self.recall = Recall(storage=storage, selector=selector, policy=policy, clock=now, off_loop=self._off_loop)
        self.controls = Controls(
            storage=storage, writer=self.writer, learning=self.learning, recall=self.recall, clock=now
        )
        self.deletes = Deletes(
            storage=storage, writer=self.writer, learning=self.learning, scope=policy.scope, clock=now
        )
        self.budgets = Budgets(
            storage.usage, user_daily=policy.user_daily_tokens, guild_daily=policy.guild_daily_tokens, clock=now
        )

    def _now(self) -> datetime:
        return self.clock()

    async def _off_loop(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """Run CPU-heavy `fn` on the engine's worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._cpu, functools.partial(fn, *args, **kwargs))

    # --- lifecycle -----------------------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """Where memory is kept, in words for the start-up line (never a password)."""
        return self.storage.where

    async def open(self) -> int:
        """Open every part of the storage and put turns a crash left pending back into the debouncer; returns
        how many."""
        await self.storage.open()
        return await self.learning.resume()

    async def shutdown(self, timeout: float) -> bool:
        """Stop taking turns and flush everything pending through extraction and the store, within `timeout`,
        then close the storage. What does not finish in time stays pending for the next start; returns True when
        all finished."""
        learning = self.learning
        learning.accepting = False
        await self.save_activity()
        await self.save_usage()
        finished = await learning.debouncer.flush(timeout)
        if not finished:
            log.warning(
                "shutdown: flush timed out after %gs; %d turns stay pending", timeout, self.storage.turns.pending
            )
            await learning.debouncer.close()
        await self.storage.close()
        self._cpu.shutdown(wait=False)
        return finished

    async def flush(self, timeout: float | None = None) -> FlushReport:
        """Extract and save everything pending now, without waiting for the quiet time; report what happened.
        Counts are the engine's totals before and after: an operator's "learn now", not a per-user transaction."""
        learning, stats = self.learning, self.learning.stats
        waiting = learning.debouncer.pending_keys + learning.debouncer.running
        before = (stats.batches_saved, stats.batches_failed, stats.facts_added, stats.problems, stats.facts_held_back)
        finished = await learning.debouncer.flush(timeout)
        recent = learning.recent_problems
        new_problems = min(stats.problems - before[3], len(recent))
        problems = list(recent)[len(recent) - new_problems :]
        return FlushReport(
            finished=finished,
            batches_pending=waiting,
            batches_saved=stats.batches_saved - before[0],
            batches_failed=stats.batches_failed - before[1],
            facts_added=stats.facts_added - before[2],
            facts_held_back=stats.facts_held_back - before[4],
            problems=tuple(dict.fromkeys(problems)),
        )

    async def wait_idle(self) -> None:
        """Until no batch is waiting or being extracted (tests and the console await this instead of sleeping)."""
        await self.learning.debouncer.wait_idle()

    # --- learning ------------------------------------------------------------------------------------------

    def learning_ticket(self, user_id: int) -> LearningTicket:
        """Take this when a message arrives and pass it to `remember` and `record_reply`: a forget or pause that
        begins meanwhile wins."""
        return self.learning.ticket(user_id)

    async def remember(
        self,
        key: ConversationKey,
        messages: Sequence[IncomingMessage],
        *,
        ticket: LearningTicket,
        target: SwitchTarget,
        bot_id: int | None,
    ) -> bool:
        """Take a user's message and the bot's reply to it for later extraction (filtered here); False when nothing
        is kept. The user counts as active either way."""
        return await self.learning.remember(key, messages, ticket=ticket, target=target, bot_id=bot_id)

    async def forget_messages(self, message_ids: Collection[int]) -> DeleteReport:
        """Messages deleted on Discord (any user's, cached or not): never learned if they were on their way, and
        what they taught retracted (see `bot.memory.parts.deletes`)."""
        return await self.deletes.deleted(message_ids)

    async def message_edited(
        self, key: ConversationKey, message: IncomingMessage, *, target: SwitchTarget, bot_id: int | None
    ) -> EditOutcome:
        """`message` was edited (its text as it reads now): learned as edited if it was pending or learned."""
        ticket = self.learning.ticket(key.user_id)
        return await self.deletes.edited(key, message, ticket=ticket, target=target, bot_id=bot_id)

    def note_activity(self, user_id: int) -> None:
        """A message from the user reached the bot but is not handed to `remember` (rate-limited, say)."""
        self.storage.activity.note(user_id, self.clock())

    # --- recall --------------------------------------------------------------------------------------------

    async def memory_prompt(
        self, user_id: int, recent_texts: Sequence[str], *, user_label: str, place: Place, target: SwitchTarget
    ) -> MemoryPrompt:
        return await self.recall.memory_prompt(
            user_id, recent_texts, user_label=user_label, place=place, target=target
        )

    async def record_reply(
        self, message_ids: Sequence[int], user_id: int, prompt: MemoryPrompt, ticket: LearningTicket
    ) -> None:
        await self.recall.record_reply(message_ids, user_id, prompt, ticket)

    async def reply_record(self, message_id: int) -> ReplyRecord | None:
        """What the reply with this message id used, if it is among the recorded replies (of any process)."""
        return await self.recall.reply_record(message_id)

    async def recalled(self, user_id: int, record: ReplyRecord) -> list[RecalledItem]:
        return await self.recall.recalled(user_id, record)

    def can_use(self, place: Place, fact: Fact) -> bool:
        return self.recall.can_use(place, fact)

    def can_use_summaries_of(self, place: Place, item_place: str) -> bool:
        return self.recall.can_use_summaries_of(place, item_place)

    # --- the user's controls -------------------------------------------------------------------------------

    async def show(self, user_id: int) -> MemoryFile:
        return await self.controls.show(user_id)

    async def export(self, user_id: int) -> bytes:
        return await self.controls.export(user_id)

    async def add_fact(self, user_id: int, text: str, *, place: Place, everywhere: bool = False) -> Fact:
        return await self.controls.add_fact(user_id, text, place=place, everywhere=everywhere)

    async def edit_fact(self, user_id: int, fact_id: str, text: str) -> Fact:
        return await self.controls.edit_fact(user_id, fact_id, text)

    async def set_shared(self, user_id: int, fact_id: str, shared: bool) -> bool | None:
        return await self.controls.set_shared(user_id, fact_id, shared)

    async def forget_fact(self, user_id: int, fact_id: str) -> bool:
        return await self.controls.forget_fact(user_id, fact_id)

    async def forget_section(self, user_id: int, name: str) -> bool:
        return await self.controls.forget_section(user_id, name)

    async def forget_since(self, user_id: int, minutes: int) -> ForgetWindowReport:
        return await self.controls.forget_since(user_id, minutes)

    async def forget_all(self, user_id: int) -> bool:
        return await self.controls.forget_all(user_id)

    def privacy_of(self, user_id: int) -> PrivacyRecord:
        return self.controls.privacy_of(user_id)

    async def update_privacy(self, user_id: int, **fields: Any) -> PrivacyRecord:
        """Change fields of the user's privacy record (how a new per-user setting is set)."""
        return await self.controls.update_privacy(user_id, **fields)

    def is_paused(self, user_id: int) -> bool:
        """Nothing is being learned from the user right now (paused or incognito)."""
        return self.privacy_of(user_id).incognito

    async def set_incognito(self, user_id: int, minutes: int) -> PrivacyRecord:
        return await self.controls.set_incognito(user_id, minutes)

    async def set_fresh(self, user_id: int, minutes: int) -> PrivacyRecord:
        return await self.controls.set_fresh(user_id, minutes)

    async def resume(self, user_id: int) -> bool:
        return await self.controls.resume(user_id)

    async def set_paused(self, user_id: int, paused: bool) -> bool:
        return await self.controls.set_paused(user_id, paused)

    # --- the admins' switches ------------------------------------------------------------------------------

    def switch_at(self, target: SwitchTarget) -> MemorySwitch:
        """The effective memory switch where `target` says a message was sent."""
        return self.storage.switches.at(target)

    def guild_switch(self, guild_id: int) -> MemorySwitch:
        return self.storage.switches.guild_switch(guild_id)

    def channel_learning(self, channel_id: int) -> bool:
        return self.storage.switches.channel_learning(channel_id)

    def operator_disabled(self, target: SwitchTarget) -> bool:
        return self.storage.switches.operator_disabled(target)

    async def set_guild_switch(self, guild_id: int, *, learning: bool, recall: bool) -> None:
        await self.storage.switches.set_guild(guild_id, learning=learning, recall=recall)

    async def set_channel_learning(self, channel_id: int, *, learning: bool) -> None:
        await self.storage.switches.set_channel(channel_id, learning=learning)

    # --- replies the user deleted or regenerated -----------------------------------------------------------

    async def withdraw_reply(self, user_id: int, message_ids: Sequence[int]) -> WithdrawnReply:
        """The bot's reply (these message ids) to the user is gone or replaced: it is never learned."""
        return await self.controls.withdraw_reply(user_id, message_ids)

    # --- the servers' community settings -------------------------------------------------------------------

    def community_at(self, path: ChannelPath) -> CommunityChoice:
        """Every prompt and model set from this reply's thread up to its server, most specific first."""
        return self.storage.community.at(path)

    def community_set_here(self, guild_id: int, place_id: int | None) -> dict[str, Any]:
        """What is set exactly at one place (the server when `place_id` is None)."""
        return self.storage.community.set_here(guild_id, place_id)

    async def set_persona_prompt(self, guild_id: int, place_id: int | None, text: str) -> None:
        await self.storage.community.set_prompt(guild_id, place_id, text)

    async def set_chat_model(self, guild_id: int, place_id: int | None, name: str) -> None:
        await self.storage.community.set_model(guild_id, place_id, name)

    async def reset_community(self, guild_id: int, place_id: int | None) -> bool:
        return await self.storage.community.reset(guild_id, place_id)

    def allowed_roles(self, guild_id: int) -> frozenset[int]:
        return self.storage.community.allowed_roles(guild_id)

    async def set_allowed_roles(self, guild_id: int, roles: frozenset[int]) -> None:
        await self.storage.community.set_allowed_roles(guild_id, roles)

    def dms_allowed(self, guild_id: int) -> bool:
        return self.storage.community.dms_allowed(guild_id)

    async def set_dms_allowed(self, guild_id: int, allowed: bool) -> None:
        await self.storage.community.set_dms_allowed(guild_id, allowed)

    async def forget_guild(self, guild_id: int) -> int:
        """The bot left the server: everything its admins set is deleted (its token counts expire with the day)."""
        return await self.storage.community.forget_guild(guild_id)

    # --- budgets -------------------------------------------------------------------------------------------

    def count_tokens(
        self, kind: Kind, *, user_id: int, guild_id: int | None, tokens: int, estimated: bool = False
    ) -> None:
        """Count tokens a model call spent for the user (and their server outside DMs)."""
        self.budgets.count(kind, user_id=user_id, guild_id=guild_id, tokens=tokens, estimated=estimated)

    def budget_exceeded(self, user_id: int, guild_id: int | None) -> Exceeded | None:
        """The daily budget that stops a reply to this user here now, or None."""
        return self.budgets.exceeded(user_id, guild_id)

    def usage_today(self, user_id: int, guild_id: int | None) -> UsageReport:
        return self.budgets.report(user_id, guild_id)

    async def save_usage(self) -> None:
        """Persist the token counts (every few seconds and at shutdown); a failure only delays it, so it is
        logged."""
        try:
            await self.storage.usage.save()
        except OSError as error:
            log.warning("could not save the token counts (%s); will retry", error.strerror or type(error).__name__)

    # --- operations ----------------------------------------------------------------------------------------

    def snapshot(self) -> EngineSnapshot:
        """The engine's counters and gauges, as plain values, for the metrics endpoint."""
        stats, turns = self.learning.stats, self.storage.turns
        return EngineSnapshot(
            batches_saved=stats.batches_saved,
            batches_failed=stats.batches_failed,
            batches_requeued=stats.batches_requeued,
            batches_parked=stats.batches_parked,
            batches_discarded=stats.batches_discarded,
            facts_stored=stats.facts_added,
            turns_pending=turns.pending,
            turns_taken_over=turns.taken_over,
            cache_hits=self.storage.memories.cache_hits,
            cache_misses=self.storage.memories.cache_misses,
            extraction_requests=self.learning.extractor.calls.requests,
            extraction_errors=dict(self.learning.extractor.calls.errors),
            llm_tokens=self.budgets.totals(),
        )

    async def save_activity(self) -> None:
        """Persist last-activity days (hourly and at shutdown); a failure only delays it, so it is logged."""
        try:
            await self.storage.activity.save()
        except OSError as error:
            log.warning("could not save the activity records (%s); will retry", error.strerror or type(error).__name__)

    async def sweep_retention(self, now: datetime | None = None) -> int:
        """The daily sweep: delete the memory, and every trace, of users silent for `retention_days`, then drop
        the summary values kept past their day and the message ledger's stale entries; returns how many users were
        deleted."""
        moment = now or self.clock()
        sweeper = Sweeper(
            storage=self.storage,
            busy=self.learning.debouncer.has_pending_for,
            forget=functools.partial(self.controls.forget_all, quiet=True, settings=True),
        )
        deleted = await sweep_silent_users(sweeper, moment, days=self.policy.retention_days)
        await self.sweep_history(moment)
        return deleted

    async def sweep_history(self, now: datetime | None = None) -> HistorySweep:
        """Drop every summary value kept past its day and the message ledger's stale entries (part of the daily
        sweep)."""
        return await sweep_history(self.storage, self.writer, now or self.clock())

    def longest_pending_seconds(self, attempt_timeout: float) -> float:
        return self.learning.longest_pending_seconds(attempt_timeout)
