"""The bot on PostgreSQL (DATABASE_URL), through discord.py's own dispatch: a DM is learned into the database, not
into DATA_DIR; the next reply's prompt carries it; forgetting deletes the row and the pending turns for real; a
database outage costs a reply its memory, never the reply, and the pool reconnects by itself afterwards."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest

from bot.memory.doors import PAUSE, ForgetEverything, Resume
from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness, make_scene
from tests.helpers import dispatch
from tests.support.engine import parts
from tests.support.llm_server import extraction
from tests.support.postgres import run_as_admin

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
    await h.memory.user(ALICE_ID).set_mode(PAUSE)
    await h.memory.user(ALICE_ID).set_mode(Resume())
    assert [row["user_id"] for row in await rows(postgres_url, "SELECT user_id FROM reply_records")] == [ALICE_ID] * 2
    await h.memory.ops.save_activity()
    assert [row["user_id"] for row in await rows(postgres_url, "SELECT user_id FROM user_activity")] == [ALICE_ID]
    # Nothing of Alice's is in DATA_DIR: not her memory, her words, her settings, her replies or her id.
    for path in h.settings.data_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"bees" not in data and b"Lyon" not in data and str(ALICE_ID).encode() not in data, path
    await dispatch(h.bot, "message", h.discord.message(scene.bob_dm, scene.bob_user, "hello there"))
    assert FACT not in str(h.llm.chat_requests[-1]["messages"])  # Bob's prompt never carries Alice's memory
    await h.settle()

    await h.memory.user(ALICE_ID).forget(ForgetEverything())
    assert [row["user_id"] for row in await rows(postgres_url, "SELECT user_id FROM memories")] == [BOB_ID]
    leftovers = await rows(postgres_url, "SELECT turn::text AS turn FROM pending_turns")
    assert not any("bees" in row["turn"] or "sell" in row["turn"] for row in leftovers)


VESPA = "Restores old Vespa scooters in a garage behind the bakery on Rue Oberkampf."


async def test_a_database_outage_costs_the_reply_its_memory_not_the_reply(
    postgres_url: str, make_harness: MakeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(database_url=postgres_url)
    scene = make_scene(h)
    h.llm.extract = lambda body: extraction(facts=[(VESPA, "personal")])
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I restore Vespas."))
    await h.settle()
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "what do I fix?"))
    assert VESPA in str(h.llm.chat_requests[-1]["messages"])

    name = postgres_url.rsplit("/", 1)[1]
    await run_as_admin(
        postgres_url,
        f"ALTER DATABASE {name} ALLOW_CONNECTIONS false",
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'",
    )
    caplog.set_level(logging.WARNING)
    caplog.clear()
    parts(h.memory).storage.memories._cache.clear()  # type: ignore[union-attr]  # a reply that must read the database
    sent = len(h.discord.sent)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "are you there?"))
    assert len(h.discord.sent) == sent + 1  # answered
    assert VESPA not in str(h.llm.chat_requests[-1]["messages"])
    said = [r.getMessage() for r in caplog.records if r.name.startswith("bot.memory")]
    # Once, whichever path met it first (or none, when a loaded machine's pool timeout began the outage before):
    # the database refuses connections from here on, so no probe can end it and no second line can begin.
    assert sum("storage unreachable" in line for line in said) <= 1, said
    assert parts(h.memory).learning.outage.down
    assert not any("Vespa" in r.getMessage() for r in caplog.records)  # ids and reasons, never the words

    await run_as_admin(postgres_url, f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "and now?"))
    assert VESPA in str(h.llm.chat_requests[-1]["messages"])  # the pool reconnected by itself
