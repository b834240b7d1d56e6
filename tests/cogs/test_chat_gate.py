"""A bounded number of replies at once, through the real bot's dispatch: a burst in one server gets at most
CHAT_CONCURRENCY_PER_GUILD model calls at a time, the rest wait in line or hear that the bot is busy, and DMs are
not held up by a busy server."""

from __future__ import annotations

import asyncio
from typing import Any

from cogs.chat import BUSY_REPLY
from tests.cogs.conftest import MakeHarness, make_scene
from tests.helpers import Harness, make_member, make_user
from tests.inflight import Meter, Metered
from tests.support.llm_server import reply


async def dispatch_all(h: Harness, messages: list[Any]) -> None:
    """Deliver every message as the gateway would (each `on_message` runs as its own task), then wait for all."""
    before = asyncio.all_tasks()
    for message in messages:
        h.bot.dispatch("message", message)
    await asyncio.gather(*(t for t in asyncio.all_tasks() - before if t.get_name().startswith("discord.py:")))


async def test_a_burst_in_one_server_is_bounded_and_the_overflow_hears_that_the_bot_is_busy(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(chat_concurrency=4, chat_concurrency_per_guild=2, chat_queue_limit=2)
    s = make_scene(h)
    meter = Meter()
    h.llm.chat_reply = lambda body: Metered(reply("on it", first_token_seconds=0.3), meter)
    people = [make_member(make_user(name=f"user{n}"), s.guild) for n in range(6)]
    messages = [h.discord.mention_bot(s.general, person, f"question {n}") for n, person in enumerate(people)]
    await dispatch_all(h, messages)

    answers = [h.discord.reply_text(m) for m in messages]
    assert answers.count("on it") == 4  # two at a time, two more waited in line
    assert answers.count(BUSY_REPLY) == 2  # the line was full
    assert meter.peak == 2
    assert meter.total == 4


async def test_dms_are_not_held_up_by_a_busy_server(make_harness: MakeHarness) -> None:
    h = await make_harness(chat_concurrency=3, chat_concurrency_per_guild=1, chat_queue_limit=10)
    s = make_scene(h)
    meter = Meter()
    h.llm.chat_reply = lambda body: Metered(reply("on it", first_token_seconds=0.3), meter)
    busy_server = [h.discord.mention_bot(s.general, make_member(make_user(name=f"u{n}"), s.guild), f"q{n}")
                   for n in range(4)]
    dm = h.discord.message(s.alice_dm, s.alice_user, "a private question")
    await dispatch_all(h, [*busy_server, dm])
    assert all(h.discord.reply_text(m) == "on it" for m in [*busy_server, dm])
    assert meter.peak <= 2  # the server's one turn plus the DM, never more
    dm_reply = h.discord.replies_to(dm)[0].posted_at
    last_server_reply = max(h.discord.replies_to(m)[0].posted_at for m in busy_server)
    assert dm_reply < last_server_reply  # the DM did not wait for the server's line


async def test_a_message_that_waits_too_long_hears_that_the_bot_is_busy_once(make_harness: MakeHarness) -> None:
    h = await make_harness(chat_concurrency=1, chat_concurrency_per_guild=1, chat_queue_seconds=0.2)
    s = make_scene(h)
    h.llm.chat_reply = lambda body: reply("slow answer", first_token_seconds=1.0)
    first = h.discord.mention_bot(s.general, s.bob, "a slow one")
    waiting = [h.discord.mention_bot(s.general, s.alice, f"me too {n}") for n in range(2)]
    await dispatch_all(h, [first, *waiting])
    assert h.discord.reply_text(first) == "slow answer"
    assert [h.discord.reply_text(m) for m in waiting] == [BUSY_REPLY, ""]  # told once, not once per message
    assert len(h.llm.chat_requests) == 1
