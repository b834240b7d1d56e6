"""Embeddings: the meaning of a text as a vector, from any OpenAI-compatible `/v1/embeddings` (optional).

Two kinds of call, priced differently because one has a person waiting:
- a **query** (the conversation a reply is for) is one text on the reply path: bounded by EMBEDDING_TIMEOUT_SECONDS
  as a whole, never retried. While the endpoint is down, only one query per `PROBE_SECONDS` tries it; the others
  go without a vector at once, so a hanging endpoint never makes every reply wait out its timeout;
- **facts** are embedded in batches off the reply path (`bot.memory.parts.vectors`), with the SDK's retries and a
  longer timeout.
An outage is logged once when the endpoint stops answering (WARNING) and once when it answers again (INFO), never
per call: replies meanwhile select facts by their words alone. Vectors come back L2-normalised float32.

A model's vectors all have one length: when EMBEDDING_DIMENSIONS is set, the request asks for it and an answer of
another length is refused with one line naming both; when unset, the length of the first answer is the model's.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import openai
from numpy.typing import NDArray
from openai import AsyncOpenAI

from bot.memory.errors import MemoryBotError
from bot.memory.stats import EmbeddingSnapshot

log = logging.getLogger(__name__)

Vector = NDArray[np.float32]
QUERY = "query"
FACTS = "facts"
PROBE_SECONDS = 10.0  # while the endpoint is down, how often a reply's query tries it again
FACTS_TIMEOUT_SECONDS = 30.0  # one batch of facts (off the reply path; the SDK retries within it)
FACTS_RETRIES = 2
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, math.inf)


class EmbeddingFailed(MemoryBotError):
    """No usable vectors came back; the message is one line without secrets or text."""


class EmbeddingMismatch(EmbeddingFailed):
    """The model answers vectors of another length than EMBEDDING_DIMENSIONS asks for: a setting to fix."""


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """What the operator chose (the EMBEDDING_* settings)."""

    model: str
    dimensions: int | None = None
    timeout_seconds: float = 1.0
    query_prefix: str = ""
    passage_prefix: str = ""
    send_input_type: bool = False  # `input_type: query|passage` in each request, for servers that take it
    batch_size: int = 64


@dataclass(slots=True)
class CallTimes:
    """Calls of one kind and how long they took, in the buckets of `LATENCY_BUCKETS` (not cumulative)."""

    count: int = 0
    seconds: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * len(LATENCY_BUCKETS))

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.seconds += seconds
        self.buckets[next(i for i, bound in enumerate(LATENCY_BUCKETS) if seconds <= bound)] += 1


@dataclass(slots=True)
class EmbeddingStats:
    """Plain counters for the metrics endpoint: calls and their times by kind, failures by kind and reason,
    queries not tried because the endpoint was down."""

    times: dict[str, CallTimes] = field(default_factory=lambda: {QUERY: CallTimes(), FACTS: CallTimes()})
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped_queries: int = 0


class EndpointHealth:
    """Up or down, with one log line at each change and the query probe's pacing while down."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.down_since: float | None = None
        self._last_probe = -math.inf

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def failed(self, reason: str) -> None:
        if self.down_since is None:
            self.down_since = self._clock()
            self._last_probe = self.down_since
            log.warning("embeddings: the endpoint failed (%s); replies select facts by their words until it answers",
                        reason)

    def answered(self) -> None:
        if self.down_since is not None:
            log.info("embeddings: the endpoint answers again after %.0f s", self._clock() - self.down_since)
            self.down_since = None

    def may_query(self) -> bool:
        """Up: yes. Down: once per `PROBE_SECONDS` (that query is the probe)."""
        if self.down_since is None:
            return True
        now = self._clock()
        if now - self._last_probe < PROBE_SECONDS:
            return False
        self._last_probe = now
        return True


def _reason(error: BaseException) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}"
    return type(error).__name__


def _normalised(values: object) -> Vector:
    vector = np.asarray(values, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(vector))
    if not vector.size or not math.isfinite(norm) or norm <= 0:
        raise EmbeddingFailed("the endpoint answered an empty or zero vector")
    result: Vector = vector / norm
    return result


class Embedder:
    """Calls the embedding model. One instance per process, with the client built for EMBEDDING_BASE_URL."""

    def __init__(
        self, client: AsyncOpenAI, settings: EmbeddingSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        # `client.embeddings` imports the SDK's resources on first access: here, at start-up, not on the loop.
        self._query_api = client.with_options(max_retries=0, timeout=settings.timeout_seconds).embeddings
        self._facts_api = client.with_options(max_retries=FACTS_RETRIES, timeout=FACTS_TIMEOUT_SECONDS).embeddings
        self.settings = settings
        self.dimensions = settings.dimensions  # the model's vector length, once known
        self._clock = clock
        self.health = EndpointHealth(clock)
        self.stats = EmbeddingStats()

    @property
    def model(self) -> str:
        return self.settings.model

    def may_query(self) -> bool:
        """Whether a reply's query should ask the endpoint now (not while it is down, but for the probe)."""
        if self.health.may_query():
            return True
        self.stats.skipped_queries += 1
        return False

    async def query(self, text: str) -> Vector:
        """The vector of a reply's query; `EmbeddingFailed` past EMBEDDING_TIMEOUT_SECONDS or on any error."""
        try:
            async with asyncio.timeout(self.settings.timeout_seconds):
                vectors = await self._call(QUERY, [self.settings.query_prefix + text])
        except TimeoutError:
            self._failed(QUERY, "timeout")
            raise EmbeddingFailed(f"no answer within {self.settings.timeout_seconds:g} s") from None
        return vectors[0]

    async def facts(self, texts: Sequence[str]) -> list[Vector]:
        """The vectors of facts' words, in batches of `batch_size`; `EmbeddingFailed` when any batch fails."""
        vectors: list[Vector] = []
        size = max(1, self.settings.batch_size)
        for start in range(0, len(texts), size):
            batch = [self.settings.passage_prefix + text for text in texts[start : start + size]]
            vectors += await self._call(FACTS, batch)
        return vectors

    async def probe(self) -> int:
        """Embed one word as a query, bounded like one, and return the model's vector length (checked against
        EMBEDDING_DIMENSIONS: `EmbeddingMismatch`)."""
        return len(await self.query("hello"))

    def snapshot(self, *, vectors_attached: int, users_waiting: int) -> EmbeddingSnapshot:
        stats = self.stats
        return EmbeddingSnapshot(
            model=self.model,
            up=not self.health.down,
            calls={kind: times.count for kind, times in stats.times.items()},
            seconds={kind: times.seconds for kind, times in stats.times.items()},
            buckets={kind: tuple(times.buckets) for kind, times in stats.times.items()},
            bounds=LATENCY_BUCKETS,
            failures=dict(stats.failures),
            skipped_queries=stats.skipped_queries,
            vectors_attached=vectors_attached,
            users_waiting=users_waiting,
        )

    async def _call(self, kind: str, texts: list[str]) -> list[Vector]:
        api = self._query_api if kind == QUERY else self._facts_api
        extra: dict[str, Any] = {}
        if self.settings.dimensions is not None:
            extra["dimensions"] = self.settings.dimensions
        if self.settings.send_input_type:
            extra["extra_body"] = {"input_type": "query" if kind == QUERY else "passage"}
        started = self._clock()
        try:
            response = await api.create(model=self.model, input=texts, encoding_format="float", **extra)
            vectors = self._vectors_of(response, len(texts))
        except EmbeddingFailed as error:
            self._failed(kind, str(error))
            raise
        except openai.OpenAIError as error:
            self._failed(kind, _reason(error))
            raise EmbeddingFailed(_reason(error)) from None
        except (ValueError, TypeError, AttributeError, KeyError) as error:  # a body that is not an embeddings list
            self._failed(kind, "unreadable answer")
            raise EmbeddingFailed(f"unreadable answer ({type(error).__name__})") from None
        self.stats.times[kind].observe(self._clock() - started)
        self.health.answered()
        return vectors

    def _failed(self, kind: str, reason: str) -> None:
        self.stats.failures[(kind, reason.split(":")[0][:40])] += 1
        self.health.failed(reason)

    def _vectors_of(self, response: object, expected: int) -> list[Vector]:
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            raise EmbeddingFailed(f"the endpoint answered {len(data) if isinstance(data, list) else 'no'} vectors "
                                  f"for {expected} texts")
        ordered = sorted(data, key=lambda item: getattr(item, "index", 0))
        vectors = [_normalised(getattr(item, "embedding", None)) for item in ordered]
        lengths = {len(vector) for vector in vectors}
        if len(lengths) != 1:
            raise EmbeddingFailed("the endpoint answered vectors of different lengths")
        length = lengths.pop()
        if self.settings.dimensions is not None and length != self.settings.dimensions:
            raise EmbeddingMismatch(
                f"EMBEDDING_DIMENSIONS is {self.settings.dimensions} but {self.model} answers vectors of {length}"
            )
        if self.dimensions != length:
            if self.dimensions is not None:
                log.warning("embeddings: %s now answers vectors of %d (was %d); facts are embedded again as used",
                            self.model, length, self.dimensions)
            self.dimensions = length
        return vectors


class QueryVector:
    """A reply's query vector on its way: requested when made, so it is computed while the rest of the prompt is
    (the history fetch, the memory load); `result()` is None when there is none, it failed or it timed out."""

    def __init__(self, task: asyncio.Task[Vector | None] | None = None) -> None:
        self._task = task

    @classmethod
    def start(cls, embedder: Embedder, text: str) -> QueryVector:
        async def vector() -> Vector | None:
            try:
                return await embedder.query(text)
            except EmbeddingFailed as error:
                log.debug("query vector: %s", error)
                return None

        return cls(asyncio.get_running_loop().create_task(vector(), name="query vector"))

    async def result(self) -> Vector | None:
        if self._task is None:
            return None
        await asyncio.wait({self._task})  # not `await task`: a cancelled one reads as None, not as our cancellation
        return None if self._task.cancelled() else self._task.result()

    def cancel(self) -> None:
        """Not needed after all (no reply, or no memory to rank): stop waiting for it."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


NO_QUERY = QueryVector()
