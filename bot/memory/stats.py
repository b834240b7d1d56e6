"""Plain counters the engine keeps for monitoring, and the snapshot the service hands out.

The engine stays free of any metrics library: the application's metrics endpoint reads `MemoryService.snapshot()`
when it is scraped and turns it into Prometheus metrics.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)
class CallCounts:
    """Extraction calls (the SDK's retries happen inside one) and their errors by exception class name."""

    requests: int = 0
    errors: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class EngineSnapshot:
    batches_saved: int
    batches_failed: int
    batches_requeued: int
    batches_parked: int
    batches_discarded: int
    facts_stored: int
    turns_pending: int
    turns_taken_over: int
    cache_hits: int
    cache_misses: int
    extraction_requests: int
    extraction_errors: dict[str, int]
    llm_tokens: dict[str, int] = field(default_factory=dict)  # counted for budgets, by kind (chat, extraction)
    # A storage outage (database down, disk full): learning waits for it; the health endpoint says "degraded".
    storage_down: bool = False
    storage_outages: int = 0
    batches_waiting_for_storage: int = 0
    turns_unstored: int = 0  # acknowledged while the queue could not take them, kept in RAM
    turns_refused_unstored: int = 0  # past the bound of those, not learned
    embedding: EmbeddingSnapshot | None = None  # None: EMBEDDING_MODEL is not set


@dataclass(frozen=True, slots=True)
class EmbeddingSnapshot:
    """The embedding endpoint as this process sees it: up or down, calls and their times by kind ("query" on the
    reply path, "facts" off it), failures by kind and reason, and the facts' vectors kept."""

    model: str
    up: bool
    calls: dict[str, int]
    seconds: dict[str, float]
    buckets: dict[str, tuple[int, ...]]  # per kind, calls per bucket of `bounds` (not cumulative)
    bounds: tuple[float, ...]
    failures: dict[tuple[str, str], int]
    skipped_queries: int  # replies that did not ask while the endpoint was down
    vectors_attached: int
    users_waiting: int  # for the vector keeper
