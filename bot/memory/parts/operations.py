"""Operations: the engine's life cycle and upkeep, for whoever runs it (the bot, the console, the health checks).

Open the storage and resume what a crash left pending; flush everything pending now ("learn now") or at shutdown;
hand out the counters as plain values for the metrics endpoint; save the activity days; and run the daily sweep:
silent users deleted through the one forget-everything path (`bot.memory.parts.retention`), then summary values
past their day and stale ledger entries dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.parts.budgets import Budgets
from bot.memory.parts.learning import Learning
from bot.memory.parts.retention import Sweeper, sweep_history, sweep_silent_users
from bot.memory.parts.vector_keeper import VectorKeeper
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.embeddings import Embedder, EmbeddingFailed, EmbeddingMismatch
from bot.memory.policy import MemoryPolicy
from bot.memory.rules import credential_reader, seed_phrases, sensitive_reader
from bot.memory.stats import EmbeddingSnapshot, EngineSnapshot

log = logging.getLogger(__name__)


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


class Operations:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        writer: MemoryWriter,
        learning: Learning,
        budgets: Budgets,
        policy: MemoryPolicy,
        wipe: Callable[[int], Awaitable[object]],
        cpus: Sequence[ThreadPoolExecutor],
        clock: Callable[[], datetime],
        keeper: VectorKeeper | None = None,
    ) -> None:
        self._storage = storage
        self._writer = writer
        self._learning = learning
        self._budgets = budgets
        self._policy = policy
        self._wipe = wipe  # forget everything of a user, privacy choices included, quietly (retention)
        self._cpus = cpus  # the engine's CPU threads, ended at shutdown
        self._clock = clock
        self._keeper = keeper
        self._embedder: Embedder | None = keeper.embedder if keeper is not None else None

    @property
    def where(self) -> str:
        """Where memory is kept, in words for the start-up line (never a password)."""
        return self._storage.where

    async def open(self) -> int:
        """Check the embedding model (when on), load the trained readers of the credential gate and the sensitive
        backstop and the seed phrases' word list (in a thread, so that neither the loop nor the first write waits for
        them), open every part of the storage and put turns a crash left pending back into the debouncer; returns how
        many."""
        await self._check_embeddings()
        await asyncio.to_thread(credential_reader.warm)
        await asyncio.to_thread(seed_phrases.warm)
        await asyncio.to_thread(sensitive_reader.warm)
        await self._storage.open()
        return await self._learning.resume()

    async def _check_embeddings(self) -> None:
        """With EMBEDDING_MODEL, one call at start: the model's vector length in the log, or one WARNING when the
        endpoint does not answer (replies select by words until it does). `EmbeddingMismatch` (one line) when it
        answers vectors of another length than EMBEDDING_DIMENSIONS: a setting to fix before anything is embedded."""
        if self._embedder is None:
            return
        try:
            dimensions = await self._embedder.probe()
        except EmbeddingMismatch:
            raise
        except EmbeddingFailed:
            return  # logged once by the endpoint's health
        log.info("embeddings: %s answers vectors of %d numbers; recall ranks facts by meaning too",
                 self._embedder.model, dimensions)

    async def shutdown(self, timeout: float) -> bool:
        """Stop taking turns and flush everything pending through extraction and the store, within `timeout`,
        then close the storage. What does not finish in time stays pending for the next start; returns True when
        all finished."""
        learning = self._learning
        learning.accepting = False
        await learning.outage.close()
        for key, turns in learning.outage.drain():  # one last try; what fails stays pending for the next start
            learning.debouncer.add(key, turns, first=True)
        await self.save_activity()
        await self._budgets.save()
        finished = await learning.debouncer.flush(timeout)
        if not finished:
            log.warning(
                "shutdown: flush timed out after %gs; %d turns stay pending", timeout, self._storage.turns.pending
            )
            await learning.debouncer.close()
        if self._keeper is not None:
            await self._keeper.close()  # vectors not yet attached are computed again when next needed
        unstored = learning.outage.state().turns_unstored
        if unstored:  # acknowledged while the storage was down, and it never came back before the end
            log.error("shutdown: %d turns taken while the storage was unreachable were never stored", unstored)
        await self._storage.close()
        for executor in self._cpus:
            executor.shutdown(wait=False)
        return finished

    async def flush(self, timeout: float | None = None) -> FlushReport:
        """Extract and save everything pending now, without waiting for the quiet time; report what happened.
        Counts are the engine's totals before and after: an operator's "learn now", not a per-user transaction."""
        learning, stats = self._learning, self._learning.stats
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

    def snapshot(self) -> EngineSnapshot:
        """The engine's counters and gauges, as plain values, for the metrics endpoint."""
        stats, turns, memories = self._learning.stats, self._storage.turns, self._storage.memories
        calls = self._learning.extractor.calls
        outage = self._learning.outage.state()
        return EngineSnapshot(
            batches_saved=stats.batches_saved,
            batches_failed=stats.batches_failed,
            batches_requeued=stats.batches_requeued,
            batches_parked=stats.batches_parked,
            batches_discarded=stats.batches_discarded,
            facts_stored=stats.facts_added,
            turns_pending=turns.pending,
            turns_taken_over=turns.taken_over,
            cache_hits=memories.cache_hits,
            cache_misses=memories.cache_misses,
            extraction_requests=calls.requests,
            extraction_errors=dict(calls.errors),
            llm_tokens=self._budgets.totals(),
            storage_down=outage.down,
            storage_outages=outage.outages,
            batches_waiting_for_storage=outage.batches_waiting,
            turns_unstored=outage.turns_unstored,
            turns_refused_unstored=outage.turns_refused,
            embedding=self._embedding_snapshot(),
        )

    def _embedding_snapshot(self) -> EmbeddingSnapshot | None:
        keeper = self._keeper
        if keeper is None:
            return None
        return keeper.embedder.snapshot(vectors_attached=keeper.vectors_attached, users_waiting=keeper.waiting)

    async def save_activity(self) -> None:
        """Persist last-activity days (hourly and at shutdown); a failure only delays it, so it is logged."""
        try:
            await self._storage.activity.save()
        except OSError as error:
            log.warning("could not save the activity records (%s); will retry", error.strerror or type(error).__name__)

    async def sweep(self, now: datetime | None = None) -> int:
        """The daily sweep: delete the memory, and every trace, of users silent for `retention_days`, then drop
        the summary values kept past their day and the message ledger's stale entries; returns how many users were
        deleted."""
        moment = now or self._clock()
        sweeper = Sweeper(storage=self._storage, busy=self._learning.debouncer.has_pending_for, forget=self._wipe)
        deleted = await sweep_silent_users(sweeper, moment, days=self._policy.retention_days)
        await sweep_history(self._storage, self._writer, moment)
        return deleted

    def longest_pending_seconds(self, attempt_timeout: float) -> float:
        """How long a turn can wait before it is distilled while the endpoint answers at all (for `/privacy`)."""
        return self._learning.longest_pending_seconds(attempt_timeout)
