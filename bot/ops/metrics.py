"""Prometheus metrics: one registry per process (never the library's global one, so tests stay isolated), the
bot's own counters, a collector that reads the memory engine's snapshot when scraped, and the HTTP endpoint.

Off unless METRICS_PORT is set; it binds 127.0.0.1 unless METRICS_HOST says otherwise. Every name starts with
`memorybot_` and says what it counts, so dashboards can rely on it:

- memorybot_replies_total{outcome}: replies sent (`sent`) or lost to Discord errors (`send_failed`)
- memorybot_reply_latency_seconds: from taking a message to the reply being sent (histogram)
- memorybot_llm_requests_total{purpose}: reply calls (`chat`) and extraction calls (`extraction`); the SDK's
  retries happen inside one call
- memorybot_llm_errors_total{purpose,kind}: their failures by kind (timeout, connection, rate_limited, ...)
- memorybot_llm_prompt_tokens_total{purpose} / memorybot_llm_cached_prompt_tokens_total{purpose}: prompt tokens the
  endpoint reported for reply calls (`chat`), and how many of them it served from its prompt cache (OpenAI's
  `usage.prompt_tokens_details.cached_tokens`); their ratio is the share of each prompt the cache reused
- memorybot_llm_tokens_total{kind}: tokens counted for the daily budgets, for replies (`chat`) and extractions
  (`extraction`): what the endpoint reported, or an estimate where it reported nothing
- memorybot_extractions_total{outcome}: extraction batches `saved`, `failed` (given up for now), `requeued` or
  `parked` (failed too often: no longer tried)
- memorybot_facts_stored_total: new facts saved by extractions
- memorybot_journal_pending_turns: turns waiting in the journal for extraction
- memorybot_memory_cache_hits_total / memorybot_memory_cache_misses_total: memory reads served from RAM / disk
- memorybot_gateway_connected: 1 while every gateway shard of this process is connected, 0 otherwise
- memorybot_event_loop_lag_seconds: how late the event loop wakes a 0.5 s timer (histogram)
- memorybot_storage_up: 0 while the storage is unreachable (database down, disk full), 1 otherwise
- memorybot_storage_outages_total: storage outages since start
- memorybot_turns_unstored: turns acknowledged during an outage, kept in RAM until the queue takes them

With EMBEDDING_MODEL set, also:
- memorybot_embedding_up: 0 while the embedding endpoint fails (replies select facts by their words), 1 otherwise
- memorybot_embedding_requests_total{kind}: calls for a reply's query (`query`) and for facts (`facts`)
- memorybot_embedding_failures_total{kind,reason}: their failures (timeout, HTTP status, connection, ...)
- memorybot_embedding_seconds{kind}: how long the calls that answered took (histogram)
- memorybot_embedding_queries_skipped_total: replies that did not ask because the endpoint was down
- memorybot_fact_vectors_attached_total / memorybot_fact_vectors_users_waiting: vectors computed for facts, and users
  whose facts wait for theirs

`GET /health` on the same port answers JSON: `{"status": "ok"}`, or `{"status": "degraded", ...}` while the storage
is unreachable (replies go on without memory; what was said is learned when it is back) or the embedding endpoint
fails (replies go on selecting facts by their words); with EMBEDDING_MODEL set it names the endpoint's state
(`"embeddings": "ok"` or `"unreachable"`). It is 200 either way: a restart would not bring either back, and would
lose the turns kept in RAM.

The endpoint is served by aiohttp on the bot's own event loop (collection runs there too, so nothing reads the
engine from another thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter as Tally
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TypeVar

from aiohttp import web
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from bot.chat.model import TokenUsage
from bot.memory.doors import EmbeddingSnapshot, EngineSnapshot
from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

T = TypeVar("T")

LAG_INTERVAL_SECONDS = 0.5
REPLY_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0)
LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

_ERROR_KINDS = {
    "APITimeoutError": "timeout",
    "TimeoutError": "timeout",
    "APIConnectionError": "connection",
    "RateLimitError": "rate_limited",
    "InternalServerError": "server_error",
    "AuthenticationError": "auth",
    "PermissionDeniedError": "auth",
    "BadRequestError": "bad_request",
    "NotFoundError": "bad_request",
    "UnprocessableEntityError": "bad_request",
    "ConflictError": "bad_request",
    "ExtractionParseError": "bad_answer",
    "APIResponseValidationError": "bad_answer",
}


def error_kind(class_name: str) -> str:
    """A small, stable set of label values for an LLM error, from its exception class name."""
    return _ERROR_KINDS.get(class_name, "server_error" if class_name == "APIStatusError" else "other")


class BotMetrics:
    """The process's metrics. The chat path reports into it; the engine's part is read when scraped."""

    def __init__(self, memory: MemoryService, chat_usage: TokenUsage | None = None) -> None:
        self.memory = memory
        self.chat_usage = chat_usage if chat_usage is not None else TokenUsage()  # the chat model's, read when scraped
        self.registry = CollectorRegistry()
        self.replies: Tally[str] = Tally()
        self.chat_requests = 0
        self.chat_errors: Tally[str] = Tally()
        self.gateway_connected = False
        self.reply_latency = Histogram(
            "memorybot_reply_latency_seconds", "Seconds from taking a message to the reply being sent.",
            buckets=REPLY_BUCKETS, registry=self.registry,
        )
        self.loop_lag = Histogram(
            "memorybot_event_loop_lag_seconds", "How late the event loop woke a 0.5 s timer, in seconds.",
            buckets=LAG_BUCKETS, registry=self.registry,
        )
        self.registry.register(_Collector(self))

    # --- reported by the chat path -------------------------------------------------------------------------

    async def chat_request(self, call: Awaitable[T]) -> T:
        """Await one chat LLM call, counting it and, when it raises, its error kind."""
        self.chat_requests += 1
        try:
            return await call
        except Exception as error:
            self.chat_errors[type(error).__name__] += 1
            raise

    def reply_finished(self, started: float, *, sent: bool) -> None:
        """A reply went out (or Discord refused it); `started` is `time.perf_counter()` when the message was taken."""
        self.replies["sent" if sent else "send_failed"] += 1
        if sent:
            self.reply_latency.observe(time.perf_counter() - started)

    # --- exposition ----------------------------------------------------------------------------------------

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Collector(Collector):
    def __init__(self, metrics: BotMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        snapshot = m.memory.ops.snapshot()
        replies = CounterMetricFamily("memorybot_replies", "Replies, by outcome.", labels=["outcome"])
        for outcome in ("sent", "send_failed"):
            replies.add_metric([outcome], m.replies[outcome])
        yield replies
        requests = CounterMetricFamily("memorybot_llm_requests", "LLM requests, by purpose.", labels=["purpose"])
        requests.add_metric(["chat"], m.chat_requests)
        requests.add_metric(["extraction"], snapshot.extraction_requests)
        yield requests
        errors = CounterMetricFamily(
            "memorybot_llm_errors", "Failed LLM requests, by purpose and kind.", labels=["purpose", "kind"]
        )
        for purpose, counts in (("chat", m.chat_errors.items()), ("extraction", snapshot.extraction_errors.items())):
            for kind, count in _by_kind(counts).items():
                errors.add_metric([purpose, kind], count)
        yield errors
        prompt_tokens = CounterMetricFamily(
            "memorybot_llm_prompt_tokens", "Prompt tokens the endpoint reported, by purpose.", labels=["purpose"]
        )
        prompt_tokens.add_metric(["chat"], m.chat_usage.prompt_tokens)
        yield prompt_tokens
        cached_tokens = CounterMetricFamily(
            "memorybot_llm_cached_prompt_tokens",
            "Prompt tokens the endpoint served from its prompt cache (usage.prompt_tokens_details.cached_tokens), "
            "by purpose.",
            labels=["purpose"],
        )
        cached_tokens.add_metric(["chat"], m.chat_usage.cached_tokens)
        yield cached_tokens
        tokens = CounterMetricFamily(
            "memorybot_llm_tokens",
            "Tokens counted for the daily budgets (reported by the endpoint, else estimated), by kind.",
            labels=["kind"],
        )
        for kind in ("chat", "extraction"):
            tokens.add_metric([kind], snapshot.llm_tokens.get(kind, 0))
        yield tokens
        extractions = CounterMetricFamily(
            "memorybot_extractions", "Extraction batches, by outcome.", labels=["outcome"]
        )
        extractions.add_metric(["saved"], snapshot.batches_saved)
        extractions.add_metric(["failed"], snapshot.batches_failed)
        extractions.add_metric(["requeued"], snapshot.batches_requeued)
        extractions.add_metric(["parked"], snapshot.batches_parked)
        extractions.add_metric(["discarded"], snapshot.batches_discarded)
        yield extractions
        yield CounterMetricFamily(
            "memorybot_facts_stored", "New facts saved by extractions.", value=snapshot.facts_stored
        )
        yield GaugeMetricFamily(
            "memorybot_journal_pending_turns", "Turns waiting in the journal for extraction.",
            value=snapshot.turns_pending,
        )
        yield CounterMetricFamily(
            "memorybot_turns_taken_over",
            "Pending turns this process took over from a process that died or shut down (PostgreSQL).",
            value=snapshot.turns_taken_over,
        )
        yield CounterMetricFamily(
            "memorybot_memory_cache_hits", "Memory reads answered from the in-RAM cache.", value=snapshot.cache_hits
        )
        yield CounterMetricFamily(
            "memorybot_memory_cache_misses", "Memory reads that went to disk.", value=snapshot.cache_misses
        )
        yield GaugeMetricFamily(
            "memorybot_gateway_connected", "1 while every Discord gateway shard of this process is connected.",
            value=int(m.gateway_connected),
        )
        yield from _storage_metrics(snapshot)
        if snapshot.embedding is not None:
            yield from _embedding_metrics(snapshot.embedding)


def _storage_metrics(snapshot: EngineSnapshot) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "memorybot_storage_up", "0 while the storage is unreachable (database down, disk full).",
        value=int(not snapshot.storage_down),
    )
    yield CounterMetricFamily(
        "memorybot_storage_outages", "Storage outages since start.", value=snapshot.storage_outages
    )
    yield GaugeMetricFamily(
        "memorybot_turns_unstored", "Turns acknowledged during an outage, kept in RAM until the queue takes them.",
        value=snapshot.turns_unstored,
    )


def _embedding_metrics(embedding: EmbeddingSnapshot) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "memorybot_embedding_up", "0 while the embedding endpoint fails (replies select facts by their words).",
        value=int(embedding.up),
    )
    requests = CounterMetricFamily("memorybot_embedding_requests", "Embedding calls, by kind.", labels=["kind"])
    seconds = HistogramMetricFamily(
        "memorybot_embedding_seconds", "How long the embedding calls that answered took, by kind.", labels=["kind"]
    )
    for kind, count in embedding.calls.items():
        requests.add_metric([kind], count)
        cumulative, buckets = 0, []
        for bound, calls in zip(embedding.bounds, embedding.buckets[kind], strict=True):
            cumulative += calls
            buckets.append(("+Inf" if bound == float("inf") else f"{bound:g}", cumulative))
        seconds.add_metric([kind], buckets, embedding.seconds[kind])
    yield requests
    yield seconds
    failures = CounterMetricFamily(
        "memorybot_embedding_failures", "Embedding calls that failed, by kind and reason.", labels=["kind", "reason"]
    )
    for (kind, reason), count in sorted(embedding.failures.items()):
        failures.add_metric([kind, reason], count)
    yield failures
    yield CounterMetricFamily(
        "memorybot_embedding_queries_skipped", "Replies that did not ask for a query vector: the endpoint was down.",
        value=embedding.skipped_queries,
    )
    yield CounterMetricFamily(
        "memorybot_fact_vectors_attached", "Vectors computed and stored for facts.", value=embedding.vectors_attached
    )
    yield GaugeMetricFamily(
        "memorybot_fact_vectors_users_waiting", "Users whose facts wait for their vectors.",
        value=embedding.users_waiting,
    )


def health(snapshot: EngineSnapshot) -> dict[str, object]:
    """What `GET /health` answers: ids and counts only."""
    answer: dict[str, object] = {"status": "ok"}
    if snapshot.storage_down:
        answer = {
            "status": "degraded",
            "storage": "unreachable",
            "batchesWaiting": snapshot.batches_waiting_for_storage,
            "turnsUnstored": snapshot.turns_unstored,
            "turnsRefused": snapshot.turns_refused_unstored,
        }
    if snapshot.embedding is not None:
        answer["embeddings"] = "ok" if snapshot.embedding.up else "unreachable"
        if not snapshot.embedding.up:
            answer["status"] = "degraded"
    return answer


def _by_kind(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for class_name, count in counts:
        kind = error_kind(class_name)
        kinds[kind] = kinds.get(kind, 0) + count
    return kinds


class MetricsServer:
    """`GET /metrics` on host:port, plus the event-loop lag probe, while running."""

    def __init__(
        self, metrics: BotMetrics, *, host: str, port: int, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.metrics = metrics
        self.host = host
        self.port = port
        self._clock = clock
        self._runner: web.AppRunner | None = None
        self._probe: asyncio.Task[None] | None = None

    async def start(self) -> bool:
        """Listen; False (with one ERROR line, the bot carries on) when the address cannot be used."""
        app = web.Application()
        app.router.add_get("/metrics", self._serve)
        app.router.add_get("/health", self._health)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError as error:
            await runner.cleanup()
            log.error(
                "metrics: cannot listen on %s:%d (%s); metrics are off", self.host, self.port,
                error.strerror or type(error).__name__,
            )
            return False
        self._runner = runner
        self._probe = asyncio.create_task(self._measure_lag(), name="event-loop lag probe")
        log.info("metrics: serving /metrics on %s:%d", self.host, self.port)
        return True

    async def stop(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe
            self._probe = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _serve(self, request: web.Request) -> web.Response:
        body = self.metrics.render()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response(health(self.metrics.memory.ops.snapshot()))

    async def _measure_lag(self) -> None:
        while True:
            before = self._clock()
            await asyncio.sleep(LAG_INTERVAL_SECONDS)
            self.metrics.loop_lag.observe(max(0.0, self._clock() - before - LAG_INTERVAL_SECONDS))
