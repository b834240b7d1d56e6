"""A pool of one connection (`DATABASE_POOL_SIZE=1`): waiting for a connection is bounded and ends in
`StorageUnavailable`, a reply goes out without memory while the pool is taken, and the retention sweep, replies and
extractions all run to the end side by side (no unit of work holds a connection while it waits for another)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from openai import AsyncOpenAI

from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.errors import StorageUnavailable
from bot.storage.pg.database import Database
from tests.support.engine import DM_HERE, learn, parts, postgres_service, save_memory
from tests.support.llm_server import ChatServer, extraction

ALICE = 712345678901234561
SILENT = [712345678901234570 + n for n in range(5)]
DONE_WITHIN = 120.0  # a deadlock never ends; a loaded machine still finishes in seconds


def old_memory(user: int) -> MemoryFile:
    return MemoryFile(facts=[Fact(id=f"fact_{user % 0xFFFF:08x}", content=f"Collects stamps {user}", category="context",
                                  confidence=0.9, createdAt="2025-01-01T00:00:00+00:00")])


async def test_waiting_for_a_connection_is_bounded_and_reported_as_storage_unavailable(postgres_url: str) -> None:
    database = Database(postgres_url, size=1, acquire_timeout=0.2)
    await database.open()
    try:
        async with database.connection():  # the only connection is taken (a long unit of work elsewhere)
            with pytest.raises(StorageUnavailable, match="no database connection free"):
                await database.fetchval("SELECT 1")
            with pytest.raises(StorageUnavailable, match="no database connection free"):
                async with database.transaction():
                    pass
        assert await database.fetchval("SELECT 1") == 1  # free again
    finally:
        await database.close()


def one_connection_service(url: str, chat_server: ChatServer, *, acquire_timeout: float | None = None) -> MemoryService:
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    policy = MemoryPolicy(debounce_seconds=0.05, max_wait_seconds=1, retention_days=30, min_confidence=0.5)
    return postgres_service(
        Database(url, size=1, acquire_timeout=acquire_timeout), MemoryExtractor(client, model="m", max_retries=0),
        policy,
    )


async def test_a_reply_goes_out_without_memory_while_the_only_connection_is_taken(
    postgres_url: str, chat_server: ChatServer
) -> None:
    service = one_connection_service(postgres_url, chat_server, acquire_timeout=0.2)
    await service.ops.open()
    try:
        await save_memory(parts(service).storage.memories, ALICE, old_memory(ALICE))
        database = parts(service).storage.database
        assert database is not None
        async with database.connection():
            prompt = await service.recall.prompt(
                ALICE, ["stamps?"], user_label="Alice", where=DM_HERE
            )
        assert prompt.text == ""
        prompt = await service.recall.prompt(ALICE, ["stamps?"], user_label="Alice", where=DM_HERE)
        assert "Collects stamps" in prompt.text
    finally:
        await service.ops.shutdown(5)


async def test_a_sweep_replies_and_extractions_all_finish_on_a_pool_of_one(
    postgres_url: str, chat_server: ChatServer
) -> None:
    chat_server.responder = lambda body: extraction(facts=[("Restores old motorbikes", "preference")])
    service = one_connection_service(postgres_url, chat_server)
    await service.ops.open()
    try:
        database = parts(service).storage.database
        assert database is not None
        for user in [ALICE, *SILENT]:
            await save_memory(parts(service).storage.memories, user, old_memory(user))
        long_ago = datetime.now(UTC) - timedelta(days=400)
        await database.execute("UPDATE memories SET updated_at = $1 WHERE user_id <> $2", long_ago, ALICE)

        async def replies() -> list[str]:
            texts = []
            for _ in range(20):
                prompt = await service.recall.prompt(
                    ALICE, ["stamps?"], user_label="Alice", where=DM_HERE
                )
                texts.append(prompt.text)
            return texts

        async def extractions() -> bool:
            turn = Turn("user", ALICE, "alice", "I restore old motorbikes", datetime.now(UTC), "t1")
            assert await learn(service, ConversationKey(5, ALICE), [turn])
            return await service.ops.flush(60)

        deleted, texts, flushed = await asyncio.wait_for(
            asyncio.gather(service.ops.sweep(), replies(), extractions()), DONE_WITHIN
        )
        assert deleted == len(SILENT)
        assert all("Collects stamps" in text for text in texts)
        assert flushed
        memory = await parts(service).storage.memories.load(ALICE)
        assert "Restores old motorbikes" in [fact.content for fact in memory.facts]
        assert await database.fetchval("SELECT count(*) FROM memories") == 1
    finally:
        await service.ops.shutdown(5)
