"""The bot on PostgreSQL (DATABASE_URL), through discord.py's own dispatch: a DM is learned into the database, not
into DATA_DIR; the next reply's prompt carries it; forgetting deletes the row and the pending turns for real."""

from __future__ import annotations

from typing import Any

import asyncpg

from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness, make_scene
from tests.helpers import dispatch
from tests.llm_server import extraction

FACT = "Keeps bees on a rooftop in Lyon and sells the honey at the Saturday market."


async def rows(url: str, query: str) -> list[Any]:
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(query))
    finally:
        await conn.close()


async def test_memory_goes_to_the_database_and_comes_back_in_the_next_reply(
    postgres_url: str, make_harness: MakeHarness  # in this order: the bot closes before its database is dropped
) -> None:
    h = await make_harness(database_url=postgres_url)
    scene = make_scene(h)
    h.llm.extract = lambda body: extraction(personal="Beekeeper in Lyon", facts=[(FACT, "personal")])
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I keep bees in Lyon."))
    await h.settle()

    stored = await rows(postgres_url, "SELECT user_id, doc::text AS doc FROM memories")
    assert [row["user_id"] for row in stored] == [ALICE_ID] and FACT in stored[0]["doc"]
    assert await rows(postgres_url, "SELECT * FROM pending_turns") == []  # settled with the save
    assert not h.memory_path(ALICE_ID).exists()  # files are not the store any more
    assert not any((h.settings.data_dir / "memory").glob("*.json"))

    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "what do I sell?"))
    assert FACT in str(h.llm.chat_requests[-1]["messages"])
    await dispatch(h.bot, "message", h.discord.message(scene.bob_dm, scene.bob_user, "hello there"))
    assert FACT not in str(h.llm.chat_requests[-1]["messages"])  # Bob's prompt never carries Alice's memory
    await h.settle()

    await h.memory.forget_all(ALICE_ID)
    assert [row["user_id"] for row in await rows(postgres_url, "SELECT user_id FROM memories")] == [BOB_ID]
    leftovers = await rows(postgres_url, "SELECT turn::text AS turn FROM pending_turns")
    assert not any("bees" in row["turn"] or "sell" in row["turn"] for row in leftovers)
