"""Discord's faults, through the bot's real dispatch and discord.py's own HTTP client against a Discord REST
stand-in (tests/support/discord_rest.py): 429s with Discord's headers on create and edit while a reply streams
(per route and global), a gateway drop resumed with the missed message answered once, and a chat endpoint that
hangs, bounded by its timeout with the concurrency cap holding."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from discord.http import Route

from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness
from tests.gateway import bind_shards, shard_connection_lost, shard_ready, shard_resumed
from tests.helpers import Harness
from tests.support.discord_rest import DiscordRest, discord_rest, user_message
from tests.support.llm_server import Stall, reply

ALICE_DM = 900000000000000001
BOB_DM = 900000000000000002
# Long enough for two Discord messages, streamed slowly enough for several edits.
ANSWER = " ".join(f"Step {n}: check the fuse box, then the breaker labelled {n}, then note what you see." for n in
                  range(1, 40))


@pytest.fixture
async def rest(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DiscordRest]:
    async with discord_rest() as found:
        monkeypatch.setattr(Route, "BASE", found.base)
        yield found


async def real_bot(make_harness: MakeHarness, rest: DiscordRest, **overrides: Any) -> Harness:
    """The harness's bot, with its real HTTP client logged in against the stand-in (the cogs' sends go there)."""
    h = await make_harness(stream_edit_seconds=0.2, **overrides)
    await h.bot.http.static_login("test-discord-token")
    return h


async def say(h: Harness, channel_id: int, user_id: int, text: str) -> None:
    """A MESSAGE_CREATE through discord.py's own parser (real Message and DMChannel objects), then wait for every
    handler it started."""
    before = asyncio.all_tasks()
    h.bot._connection.parse_message_create(user_message(channel_id, user_id, "alice", text))  # type: ignore[arg-type]
    await asyncio.gather(*(t for t in asyncio.all_tasks() - before if t.get_name().startswith("discord.py:")))


async def test_429s_on_create_and_edit_while_streaming_still_deliver_the_reply_whole_and_once(
    make_harness: MakeHarness, rest: DiscordRest
) -> None:
    h = await real_bot(make_harness, rest)
    h.llm.say(reply("Hi!"))  # a model's first answer is held whole (its reasoning habits are not known yet)
    await say(h, BOB_DM, BOB_ID, "hello")
    h.llm.say(reply(ANSWER, first_token_seconds=0.05, stream_seconds=1.5, chunks=30))
    rest.limit("POST", times=1, retry_after=0.3, scope="user")  # the first post of the reply: per route
    rest.limit("PATCH", times=1, retry_after=0.3, scope="shared")  # the first live edit
    rest.limit("PATCH", times=1, retry_after=0.2, scope="global")  # then a global limit
    await say(h, ALICE_DM, ALICE_ID, "How do I find which breaker trips?")

    shown = rest.messages(ALICE_DM)
    assert re.sub(r"\s+", "", "".join(shown)) == re.sub(r"\s+", "", ANSWER)  # whole (cuts fall on spaces)
    assert len(shown) == 2 and all(len(text) <= 2000 for text in shown)  # once: no duplicate, no stale mark
    assert not any("still writing" in text for text in shown)
    assert rest.statuses("POST").count(429) == 1 and rest.statuses("PATCH").count(429) == 2  # each honoured
    assert rest.statuses("POST").count(200) == 3  # Bob's, then one per message: a 429 is retried, not re-posted


async def test_a_dropped_gateway_is_resumed_and_the_missed_message_answered_once(
    make_harness: MakeHarness, rest: DiscordRest
) -> None:
    h = await real_bot(make_harness, rest)
    bind_shards(h.bot)
    await shard_ready(h.bot, 0)
    h.llm.say(reply("Hello again!"), reply("Still here."))
    await say(h, ALICE_DM, ALICE_ID, "hi")
    queued = await shard_connection_lost(h.bot, 0)
    assert len(queued) == 1  # discord.py queued its RESUME
    await shard_resumed(h.bot, 0)
    await say(h, ALICE_DM, ALICE_ID, "did you get this while you were away?")  # replayed after the RESUME
    assert rest.messages(ALICE_DM) == ["Hello again!", "Still here."]


async def test_a_hanging_chat_endpoint_is_bounded_by_its_timeout_and_the_cap_holds(
    make_harness: MakeHarness, rest: DiscordRest
) -> None:
    h = await real_bot(make_harness, rest, llm_timeout_seconds=1.0, chat_concurrency=1)
    gate = h.chat.gate
    running_at_arrival: list[int] = []
    h.llm.on_chat = lambda body: running_at_arrival.append(gate.running)  # on the stand-in's thread: a read
    h.llm.say(*[Stall(600.0)] * 8, reply("Here it is."), reply("And here."))  # hangs for every SDK attempt
    await asyncio.wait_for(
        asyncio.gather(say(h, ALICE_DM, ALICE_ID, "are you there?"), say(h, BOB_DM, BOB_ID, "hello?")), 120
    )  # bounded by the timeout (and the SDK's retries of it), not by the hang
    alice, bob = rest.messages(ALICE_DM), rest.messages(BOB_DM)
    assert len(alice) == 1 and len(bob) == 1, (alice, bob)  # each answered once: an apology or the answer
    assert running_at_arrival and set(running_at_arrival) == {1}  # never two model calls at once under a cap of 1
