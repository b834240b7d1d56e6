"""A summary's earlier values (kept for `/memory forget minutes:`) are gone a day after they were replaced, even when
the summary never changes again: the daily sweep visits the memories the upkeep schedule names, and only those.
Both backends; a fake clock drives the days; the stored bytes and the export are searched."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
from openai import AsyncOpenAI

from bot.memory.models import ConversationKey, MemoryFile, PreviousSummary
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.pg.database import Database
from tests.memory.test_service import turn
from tests.support.engine import (
    close_service,
    file_service,
    learn,
    parts,
    postgres_service,
    save_memory,
    sweep_history,
    wait_idle,
)
from tests.support.llm_server import ChatServer, extraction

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
ALICE, BOB = 612345678901234567, 612345678901234568


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Setup:
    service: MemoryService
    clock: Clock
    backend: str
    data: Path
    url: str | None
    reopen: Callable[[], MemoryService]

    async def stored_bytes(self) -> bytes:
        if self.url is None:  # the memory files (the words themselves leave the journal once learned)
            return b"".join(p.read_bytes() for p in (self.data / "memory").rglob("*") if p.is_file())
        conn = await asyncpg.connect(self.url)
        try:
            rows = await conn.fetch("SELECT doc::text AS doc FROM memories")
        finally:
            await conn.close()
        return "".join(row["doc"] for row in rows).encode()


@pytest.fixture(params=["files", "postgres"])
async def setup(request: pytest.FixtureRequest, tmp_path: Path, chat_server: ChatServer) -> AsyncIterator[Setup]:
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    clock = Clock(NOW - timedelta(days=90))
    url = str(request.getfixturevalue("postgres_url")) if request.param == "postgres" else None

    def build() -> MemoryService:
        extractor = MemoryExtractor(client, model="memory-model", max_retries=0)
        policy = MemoryPolicy(debounce_seconds=0.05, max_wait_seconds=5, retention_days=365)
        if url is None:
            return file_service(tmp_path / "data", extractor, policy, clock=clock, durable=False)
        return postgres_service(Database(url, size=4), extractor, policy, clock=clock)

    made = Setup(build(), clock, request.param, tmp_path / "data", url, build)
    await made.service.ops.open()
    yield made
    await close_service(made.service)
    await client.close()


async def test_a_90_day_old_earlier_value_is_gone_from_the_bytes_and_the_export_after_the_sweep(
    setup: Setup, chat_server: ChatServer
) -> None:
    service = setup.service
    chat_server.enqueue(
        extraction(personal="They are going through a divorce."),
        extraction(personal="They moved to Lisbon and took up surfing."),
    )
    key = ConversationKey(5, ALICE)
    await learn(service, key, [turn(ALICE, "my divorce is final next week")])
    await wait_idle(service)
    setup.clock.now += timedelta(minutes=5)
    await learn(service, key, [turn(ALICE, "I moved to Lisbon, surfing every day")])
    await wait_idle(service)
    memory = await service.user(ALICE).show()
    assert [old.summary for old in memory.user.personalContext.previous] == ["They are going through a divorce."]
    assert b"divorce" in await setup.stored_bytes()  # kept for a day, for /memory forget minutes:

    setup.clock.now = NOW  # 90 days on; the summary never changed again
    assert await service.ops.sweep() == 0  # the daily sweep (Housekeeping runs it): nobody silent for a year
    assert b"divorce" not in await setup.stored_bytes()
    assert b"divorce" not in await service.user(ALICE).export()
    memory = await service.user(ALICE).show()
    assert memory.user.personalContext.summary == "They moved to Lisbon and took up surfing."
    assert await parts(service).storage.upkeep.due(NOW + timedelta(days=365)) == []  # nothing left to visit


async def test_the_sweep_visits_only_the_memories_whose_history_expired(setup: Setup, chat_server: ChatServer) -> None:
    service = setup.service
    chat_server.enqueue(extraction(work="Writes Go."), extraction(work="Writes Go and Rust."),
                        extraction(work="Bakes bread."))
    await learn(service, ConversationKey(5, ALICE), [turn(ALICE, "I write Go")])
    await wait_idle(service)
    await learn(service, ConversationKey(5, ALICE), [turn(ALICE, "and Rust")])
    await wait_idle(service)
    await learn(service, ConversationKey(5, BOB), [turn(BOB, "I bake bread")])  # no earlier value: nothing to do
    await wait_idle(service)
    _, bob_before = await parts(service).storage.memories.load_with_revision(BOB)

    setup.clock.now += timedelta(hours=23)
    assert (await sweep_history(service)).visited == 0  # not a day old yet
    setup.clock.now += timedelta(hours=2)
    assert (await sweep_history(service)).pruned == 1
    _, bob_after = await parts(service).storage.memories.load_with_revision(BOB)
    assert bob_after == bob_before  # never read for writing, never rewritten
    assert (await service.user(ALICE).show()).user.workContext.previous == []


async def test_history_written_before_the_schedule_existed_is_visited_once(setup: Setup) -> None:
    """A memory from an earlier version: an old value, no schedule entry for it."""
    old = MemoryFile()
    old.user.topOfMind.summary = "Now"
    old.user.topOfMind.previous = [PreviousSummary(summary="Was in rehab", updatedAt="2025-01-01T00:00:00+00:00",
                                                   replacedAt="2025-02-01T00:00:00+00:00")]
    await save_memory(parts(setup.service).storage.memories, ALICE, old)
    await close_service(setup.service)
    if setup.url is not None:  # what the migration does for the memories already there
        conn = await asyncpg.connect(setup.url)
        try:
            await conn.execute("INSERT INTO memory_upkeep SELECT user_id, '1970-01-01T00:00:00Z' FROM memories"
                               " ON CONFLICT DO NOTHING")
        finally:
            await conn.close()
    else:  # a data folder from before: no schedule file
        (setup.data / "memory-upkeep.json").unlink()
    setup.service = setup.reopen()
    await setup.service.ops.open()
    setup.clock.now = NOW
    assert (await sweep_history(setup.service)).pruned == 1
    assert b"rehab" not in await setup.stored_bytes()
    assert await parts(setup.service).storage.upkeep.due(NOW + timedelta(days=400)) == []  # visited once, not again
    if setup.url is None:
        await parts(setup.service).storage.upkeep.close()  # the later write, done now
        assert json.loads((setup.data / "memory-upkeep.json").read_bytes())["users"] == {}
