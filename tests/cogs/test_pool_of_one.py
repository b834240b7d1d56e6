"""The bot on PostgreSQL with `DATABASE_POOL_SIZE=1`, through discord.py's own dispatch: while the retention sweep
runs, DMs are answered with their memory and learned; nothing waits forever on the one connection."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg

from bot.memory.models import Fact, MemoryFile
from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.helpers import dispatch
from tests.support.engine import parts, save_memory
from tests.support.llm_server import extraction

SILENT = [512345678901234560 + n for n in range(5)]
FACT = "Restores old motorbikes in a shed behind the house."
DONE_WITHIN = 120.0  # a deadlock never ends; a loaded machine still finishes in seconds


async def test_replies_and_learning_go_on_while_the_sweep_runs_on_one_connection(
    postgres_url: str, make_harness: MakeHarness
) -> None:
    h = await make_harness(database_url=postgres_url, database_pool_size=1, memory_retention_days=30)
    scene = make_scene(h)
    h.llm.extract = lambda body: extraction(facts=[(FACT, "preference")])
    for user in SILENT:
        old = Fact(id=f"fact_{user % 0xFFFF:08x}", content="Collects stamps", category="context", confidence=0.9,
                   createdAt="2025-01-01T00:00:00+00:00")
        await save_memory(parts(h.memory).storage.memories, user, MemoryFile(facts=[old]))
    conn = await asyncpg.connect(postgres_url)
    try:
        await conn.execute("UPDATE memories SET updated_at = $1", datetime.now(UTC) - timedelta(days=400))
    finally:
        await conn.close()

    async def chat() -> None:
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I restore motorbikes."))
        await h.settle()
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "what do I restore?"))

    deleted, _ = await asyncio.wait_for(asyncio.gather(h.memory.ops.sweep(), chat()), DONE_WITHIN)
    assert deleted == len(SILENT)
    assert len(h.discord.bot_messages(scene.alice_dm)) == 2  # both answered
    assert FACT in str(h.llm.chat_requests[-1]["messages"])  # learned, and used by the next reply
    stored = await parts(h.memory).storage.memories.load(ALICE_ID)
    assert [fact.content for fact in stored.facts] == [FACT]
