"""PostgreSQL stopped and started under traffic, through the bot's real dispatch: a server of the test's own is
halted (`pg_ctl stop -m fast`, every connection cut) while two users talk to the bot, then started again.

While it is down every message is answered, without memory. The turns acknowledged meanwhile are kept, and when
the server is back they are written and learned without a restart, each once; the batches that failed are tried
again; the other process's change reaches this one's mirror over a reconnected LISTEN; nothing is left pending."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.memory.doors import PAUSE
from bot.ops.metrics import health
from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness, make_scene
from tests.conftest_postgres import SKIP_VARIABLE
from tests.conftest_state import seen_by
from tests.helpers import dispatch, extraction_input
from tests.support.engine import parts, wait_debouncer
from tests.support.llm_server import Response, extraction
from tests.support.postgres import PostgresServer, PostgresUnavailable
from tests.support.required import required_server

pytestmark = pytest.mark.postgres

BEFORE = "Alice keeps three beehives on the roof of her building in Lyon and sells the honey at the Croix-Rousse."
DURING = {
    ALICE_ID: [
        "I repair old mechanical typewriters for a small shop near the Saone and I am slowly rebuilding an Olympia.",
        "My brother and I are walking the GR5 across the Alps in stages, one week every summer for the next years.",
    ],
    BOB_ID: [
        "I teach chemistry at a lycee in Villeurbanne and I run the school's astronomy club on Thursday evenings.",
        "I brew my own cider from the apples of my grandmother's orchard in Normandy and age it in oak barrels.",
    ],
}


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server for this test alone: it is stopped and started, which the session's server must never be."""
    server = required_server(
        PostgresServer, unavailable=PostgresUnavailable, skip_variable=SKIP_VARIABLE, what="PostgreSQL tests"
    ).start()
    try:
        yield server
    finally:
        server.stop()


def each_said(body: dict[str, Any]) -> Response:
    turns = extraction_input(body)["newTurns"]
    return extraction(facts=[(t["text"], "personal") for t in turns if t["speaker"] == "user"])


async def facts_of(url: str) -> dict[int, list[str]]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT user_id, doc::text AS doc FROM memories ORDER BY user_id")
        pending = await conn.fetchval("SELECT count(*) FROM pending_turns")
    finally:
        await conn.close()
    assert pending == 0, "nothing left pending"
    return {int(row["user_id"]): [fact["content"] for fact in json.loads(row["doc"])["facts"]] for row in rows}


async def test_postgres_restarted_under_traffic_loses_nothing_and_learns_nothing_twice(
    own_server: PostgresServer, make_harness: MakeHarness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_server.create_database("restart")
    h = await make_harness(database_url=url)
    other = await make_harness(data_dir=tmp_path / "other", database_url=url)  # a second process on the database
    h.llm.extract = each_said
    scene = make_scene(h)
    outage = parts(h.memory).learning.outage
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I keep bees in Lyon."))
    h.llm.extract = lambda body: extraction(facts=[(BEFORE, "personal")])
    await h.memory.ops.flush(10)
    h.llm.extract = each_said
    assert (await facts_of(url))[ALICE_ID] == [BEFORE]

    caplog.set_level(logging.INFO)
    caplog.clear()
    own_server.halt()
    sent = len(h.discord.sent)
    for n in range(2):
        for dm, user in ((scene.alice_dm, scene.alice_user), (scene.bob_dm, scene.bob_user)):
            await dispatch(h.bot, "message", h.discord.message(dm, user, DURING[user.id][n]))
            assert BEFORE not in str(h.llm.chat_requests[-1]["messages"])  # answered without memory
    assert len(h.discord.sent) == sent + 4  # every message answered while the database is down
    await wait_debouncer(h.memory)  # the batches failed and wait for the database
    assert outage.down and outage.state().turns_unstored > 0
    assert health(h.memory.ops.snapshot())["status"] == "degraded"

    during = [r.getMessage() for r in caplog.records if r.name.startswith("bot.memory")]
    own_server.resume()
    await asyncio.wait_for(outage.wait_up(), 60)
    await h.settle()
    assert await facts_of(url) == {ALICE_ID: [BEFORE, *DURING[ALICE_ID]], BOB_ID: DURING[BOB_ID]}  # each once
    assert not any(r.levelno >= logging.ERROR and r.name.startswith("bot.") for r in caplog.records)  # not given up
    assert sum("storage unreachable" in line for line in during) == 1, during  # once while it was down
    assert not any("typewriters" in r.getMessage() or "cider" in r.getMessage() for r in caplog.records)

    # The LISTEN connection and the pools came back by themselves: the other process's pause reaches this one.
    await other.memory.user(BOB_ID).set_mode(PAUSE)
    storage = parts(h.memory).storage
    await seen_by(storage.privacy.table, lambda: storage.privacy.of(BOB_ID, h.memory.clock()).paused)  # type: ignore[arg-type]
    # And the next turn is claimed and learned as usual.
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I also grow lavender."))
    await h.settle()
    assert (await facts_of(url))[ALICE_ID] == [BEFORE, *DURING[ALICE_ID], "I also grow lavender."]
