"""Metrics: `/metrics` scraped over real HTTP after a reply and an extraction (through the bot's own dispatch and
the real LLM path) shows the counters moving; the endpoint is off by default, binds loopback, survives a busy
port, and uses its own registry."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from bot.ops.metrics import error_kind
from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.gateway import bind_shards, shard_connection_lost, shard_ready, shard_resumed
from tests.helpers import CHAT_MODEL, Harness, ScriptedLLM, build_harness
from tests.support.llm_server import ChatServer, error, extraction

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def scrape(port: int, host: str = "127.0.0.1") -> Samples:
    async with aiohttp.ClientSession() as session, session.get(f"http://{host}:{port}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def dispatched(h: Harness, message: Any) -> None:
    h.bot.loop = asyncio.get_running_loop()  # what logging in would have set
    h.bot.dispatch("message", message)
    await asyncio.gather(*[t for t in asyncio.all_tasks() if t.get_name() == "discord.py: on_message"])
    await h.settle()


@pytest.fixture
def llm(chat_server: ChatServer) -> ScriptedLLM:
    return ScriptedLLM(chat_server)


@pytest.fixture
async def make_harness(llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[MakeHarness]:
    made: list[Harness] = []

    async def make(**overrides: Any) -> Harness:
        harness = await build_harness(llm, tmp_path / f"data{len(made)}", **overrides)
        made.append(harness)
        return harness

    yield make
    for harness in reversed(made):
        await harness.close()


async def test_a_reply_and_an_extraction_move_the_counters(make_harness: MakeHarness) -> None:
    port = free_port()
    h = await make_harness(metrics_port=port)
    s = make_scene(h)
    before = await scrape(port)
    assert value(before, "memorybot_replies_total", outcome="sent") == 0
    assert value(before, "memorybot_gateway_connected") == 0  # never connected: no gateway in tests

    h.llm.extract = lambda body: extraction(facts=[("Keeps bees on the roof of her flat in Leeds", "context", 0.9)])
    await dispatched(h, h.discord.message(s.alice_dm, s.alice_user, "I keep bees on my roof in Leeds"))
    after = await scrape(port)
    assert value(after, "memorybot_replies_total", outcome="sent") == 1
    assert value(after, "memorybot_reply_latency_seconds_count") == 1
    assert value(after, "memorybot_reply_latency_seconds_sum") > 0
    assert value(after, "memorybot_llm_requests_total", purpose="chat") == 1
    assert value(after, "memorybot_llm_requests_total", purpose="extraction") == 1
    chat_request = h.llm.requests(CHAT_MODEL)[-1]
    assert value(after, "memorybot_llm_prompt_tokens_total", purpose="chat") == chat_request["prompt_tokens"] > 0
    assert value(after, "memorybot_llm_cached_prompt_tokens_total", purpose="chat") == 0  # a short first prompt
    assert value(after, "memorybot_extractions_total", outcome="saved") == 1
    assert value(after, "memorybot_facts_stored_total") == 1
    assert value(after, "memorybot_journal_pending_turns") == 0
    reads = value(after, "memorybot_memory_cache_hits_total") + value(after, "memorybot_memory_cache_misses_total")
    assert reads >= 1

    # A chat error and a failing extraction are counted by kind.
    h.llm.say(error(500), error(500))  # the reply call and the SDK's one quick retry
    h.llm.extract = lambda body: error(429)
    await dispatched(h, h.discord.message(s.alice_dm, s.alice_user, "and I play the oboe on Sundays"))
    await dispatched(h, h.discord.message(s.alice_dm, s.alice_user, "still there?"))
    failed = await scrape(port)
    assert value(failed, "memorybot_llm_errors_total", purpose="chat", kind="server_error") == 1
    assert value(failed, "memorybot_llm_errors_total", purpose="extraction", kind="rate_limited") >= 1
    assert value(failed, "memorybot_extractions_total", outcome="requeued") >= 1
    assert ("memorybot_extractions_total", (("outcome", "parked"),)) in failed  # exported, even at 0
    assert value(failed, "memorybot_extractions_total", outcome="discarded") == 0
    assert value(failed, "memorybot_turns_taken_over_total") == 0  # one process on files: never

    # The gateway gauge follows the session, as discord.py's own gateway code reports it.
    h.bot.shard_count = 1
    bind_shards(h.bot)
    await shard_ready(h.bot, 0)
    await shard_connection_lost(h.bot, 0)
    await shard_resumed(h.bot, 0)
    assert value(await scrape(port), "memorybot_gateway_connected") == 1
    await shard_connection_lost(h.bot, 0)
    assert value(await scrape(port), "memorybot_gateway_connected") == 0
    assert b"memorybot_" not in generate_latest(REGISTRY)  # the global registry is never used
    assert ALICE_ID  # (the scene's user)


async def test_prompt_tokens_reused_by_the_endpoints_cache_are_exported(make_harness: MakeHarness) -> None:
    """Two DM replies through the gateway with a long system prompt: the second prompt starts with the first (the
    layout keeps it so), the endpoint reports that prefix as cached, and the metric carries its figure."""
    port = free_port()
    h = await make_harness(metrics_port=port, system_prompt="You are a patient, thorough helper. " * 150)
    s = make_scene(h)
    await dispatched(h, h.discord.message(s.alice_dm, s.alice_user, "hello there"))
    await dispatched(h, h.discord.message(s.alice_dm, s.alice_user, "tell me more"))
    first, second = h.llm.requests(CHAT_MODEL)
    assert first["cached_tokens"] == 0 and second["cached_tokens"] >= 1024
    metrics = await scrape(port)
    assert value(metrics, "memorybot_llm_cached_prompt_tokens_total", purpose="chat") == second["cached_tokens"]
    assert value(metrics, "memorybot_llm_prompt_tokens_total", purpose="chat") == (
        first["prompt_tokens"] + second["prompt_tokens"]
    )


async def test_off_by_default_and_loopback_only(make_harness: MakeHarness) -> None:
    h = await make_harness()
    assert h.settings.metrics_port is None
    cog: Any = h.bot.get_cog("MetricsCog")
    assert cog.server is None
    port = free_port()
    h2 = await make_harness(metrics_port=port)
    assert h2.bot.get_cog("MetricsCog").server.host == "127.0.0.1"  # type: ignore[union-attr]
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


async def test_a_busy_port_is_one_error_line_and_the_bot_carries_on(
    make_harness: MakeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with caplog.at_level(logging.ERROR):
            h = await make_harness(metrics_port=port)
    assert not h.bot.failed_extensions
    assert any(f"cannot listen on 127.0.0.1:{port}" in r.getMessage() for r in caplog.records)


def test_error_kinds_are_a_small_stable_set() -> None:
    assert error_kind("APITimeoutError") == "timeout"
    assert error_kind("RateLimitError") == "rate_limited"
    assert error_kind("ExtractionParseError") == "bad_answer"
    assert error_kind("SomethingNew") == "other"
