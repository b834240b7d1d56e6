"""Daily token budgets through the bot's own dispatch: a user past USER_DAILY_TOKENS gets one short notice with the
reset time (a Discord timestamp) and no model call, while others are served and memory keeps learning from them
all; a server past GUILD_DAILY_TOKENS likewise (DMs count only toward the user); the counts survive a restart, on
files and on PostgreSQL; `/usage` answers (the server's figures for admins only, estimates said as such); the
metric counts tokens by kind."""

from __future__ import annotations

import json
import re
from typing import Any

import discord

from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import Harness, calls, dispatch, extraction_input, make_interaction, run_slash
from tests.support.llm_server import extraction, raw_body

TIMESTAMP = re.compile(r"<t:(\d+):R>")


def chats(h: Harness) -> int:
    return len(h.llm.chat_requests)


async def say(h: Harness, channel: Any, author: Any, text: str) -> None:
    message = h.discord.message(channel, author, text) if channel.guild is None else h.discord.mention_bot(
        channel, author, text
    )
    await dispatch(h.bot, "message", message)


def learned_texts(h: Harness) -> list[str]:
    return [turn["text"] for body in h.llm.extraction_requests for turn in extraction_input(body)["newTurns"]]


async def usage(h: Harness, interaction: Any) -> str:
    await run_slash(h.bot, interaction, "usage")
    (call,) = calls(interaction)
    assert call.kwargs.get("ephemeral") is True
    return call.content


async def test_a_user_past_the_daily_budget_gets_a_notice_and_no_model_call(make_harness: MakeHarness) -> None:
    h = await make_harness(user_daily_tokens=50)  # one reply (the system prompt alone is larger) uses it up
    s = make_scene(h)
    h.llm.extract = lambda body: extraction()
    await say(h, s.general, s.alice, "What's a good name for a boat?")
    assert chats(h) == 1
    await h.settle()

    sent = len(h.discord.sent)
    await say(h, s.general, s.alice, "I'm painting the hull blue.")
    assert chats(h) == 1  # no model call
    notice = h.discord.sent[-1]
    assert len(h.discord.sent) == sent + 1 and "today's token budget" in notice.content
    match = TIMESTAMP.search(notice.content)
    assert match and int(match.group(1)) % 86400 == 0  # midnight UTC
    assert notice.kwargs["allowed_mentions"].everyone is False
    await h.settle()
    assert "I'm painting the hull blue." in learned_texts(h)  # memory keeps learning

    await say(h, s.alice_dm, s.alice_user, "Still there?")  # her budget holds in DMs too, told once a while
    assert chats(h) == 1 and len(h.discord.sent) == sent + 1

    await say(h, s.general, s.bob, "And a name for my canoe?")  # others are served
    assert chats(h) == 2 and h.discord.reply_text(h.discord.sent[-1].message.reference.resolved)

    member = make_interaction(s.alice, guild=s.guild, channel=s.general)
    member.permissions = discord.Permissions.none()
    text = await usage(h, member)
    assert "of the daily **50**" in text and "used up" in text and TIMESTAMP.search(text)
    assert "This server" not in text  # not an admin


async def test_counts_survive_a_restart_and_usage_shows_them(make_harness: MakeHarness) -> None:
    h = await make_harness(user_daily_tokens=100_000, guild_daily_tokens=100_000)
    s = make_scene(h)
    await say(h, s.general, s.alice, "Tell me about tides.")
    await h.settle()
    before = h.memory.budgets.report(s.alice.id, s.guild.id)
    assert before.user.tokens > 0 and before.user.estimated == 0 and before.guild == before.user
    await h.close()

    again = await make_harness(data_dir=h.settings.data_dir, user_daily_tokens=100_000, guild_daily_tokens=100_000)
    scene = make_scene(again)
    assert again.memory.budgets.report(scene.alice.id, s.guild.id) == before
    admin = make_interaction(scene.alice, guild=s.guild, channel=s.general)
    admin.permissions = discord.Permissions(manage_guild=True)
    text = await usage(again, admin)
    assert f"You have used **{before.user.tokens:,}** tokens of the daily **100,000**" in text
    assert f"This server has used **{before.guild.tokens:,}** tokens" in text  # type: ignore[union-attr]
    assert "estimated" not in text


async def test_a_server_past_its_budget_gets_no_replies_while_dms_go_on(make_harness: MakeHarness) -> None:
    h = await make_harness(guild_daily_tokens=50)
    s = make_scene(h)
    await say(h, s.general, s.alice, "Hello!")
    assert chats(h) == 1
    await say(h, s.thread, s.bob, "Anyone home?")
    assert chats(h) == 1 and "This server has used today's token budget" in h.discord.sent[-1].content
    await say(h, s.bob_dm, s.bob_user, "Hello in private")
    assert chats(h) == 2


async def test_an_endpoint_without_usage_is_counted_by_an_estimate(make_harness: MakeHarness) -> None:
    h = await make_harness(stream_replies=False)
    s = make_scene(h)
    body = {"choices": [{"message": {"role": "assistant", "content": "A reply of some length."}}]}
    h.llm.say(raw_body(json.dumps(body).encode()))
    await say(h, s.alice_dm, s.alice_user, "Count me without usage.")
    assert chats(h) == 1
    spent = h.memory.budgets.report(s.alice_user.id, None).user
    assert spent.tokens == spent.estimated > 0
    text = await usage(h, make_interaction(s.alice_user))
    assert "(no daily limit)" in text and f"about {spent.estimated:,} of them estimated" in text


async def test_the_metric_counts_tokens_by_kind(make_harness: MakeHarness) -> None:
    h = await make_harness()
    s = make_scene(h)
    h.llm.extract = lambda body: extraction()
    await say(h, s.alice_dm, s.alice_user, "I grow chillies on my balcony.")
    await h.settle()
    rendered = h.resources.metrics.render().decode()
    counts = dict(re.findall(r'memorybot_llm_tokens_total\{kind="(\w+)"\} (\d+)', rendered))
    assert set(counts) == {"chat", "extraction"} and all(float(v) > 0 for v in counts.values())


async def test_budgets_on_postgres_survive_a_restart(postgres_url: str, make_harness: MakeHarness) -> None:
    h = await make_harness(database_url=postgres_url, user_daily_tokens=50)
    s: Scene = make_scene(h)
    await say(h, s.alice_dm, s.alice_user, "First message.")
    assert chats(h) == 1
    await h.close()  # saves the counts to the database
    again = await make_harness(
        data_dir=h.settings.data_dir.parent / "other", database_url=postgres_url, user_daily_tokens=50
    )
    scene = make_scene(again)
    await say(again, scene.alice_dm, scene.alice_user, "Second message.")
    assert chats(again) == 1 and "today's token budget" in again.discord.sent[-1].content  # the same server
    await say(again, scene.bob_dm, scene.bob_user, "Bob is fine.")
    assert chats(again) == 2
    assert not (again.settings.data_dir / "token-usage.json").exists()
