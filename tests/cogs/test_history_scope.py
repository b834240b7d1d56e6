"""HISTORY_SCOPE: which of a channel's recent messages a reply sends to the model provider. `channel` (the default)
sends everyone's; `conversation` only messages to and from the bot, plus the reply chain, so a member who never
spoke to the bot is not sent. Through the bot's real dispatch and the test Chat Completions server."""

from __future__ import annotations

from typing import Any

import pytest

from bot.config import Settings
from tests.cogs.conftest import MakeHarness, make_scene
from tests.helpers import dispatch, make_member, make_user, next_id

BYSTANDER = "carol's unrelated chat about her weekend plans"


def prompt_texts(h: Any) -> list[str]:
    return [str(m["content"]) for m in h.llm.chat_requests[-1]["messages"][1:]]


async def busy_channel(make_harness: MakeHarness, scope: str) -> tuple[Any, Any, list[str]]:
    """Alice talks to the bot in #general while Carol, who never speaks to it, chats with Bob."""
    h = await make_harness(history_scope=scope, history_messages=30)
    s = make_scene(h)
    carol = make_member(make_user(next_id(), "Carol"), s.guild)
    me = make_member(h.discord.me, s.guild)
    h.discord.message(s.general, carol, BYSTANDER)
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, s.alice, "what's a good pasta recipe?"))
    h.discord.message(s.general, s.bob, "bob to carol: sounds fun!")
    answer = h.discord.bot_messages(s.general)[-1].message
    h.discord.reply_to(s.general, s.bob, answer, "bob, replying to the bot: add garlic")  # to the bot
    h.discord.message(s.general, s.bob, f"<@{h.discord.me.id}> bob asks the bot too", mentions=[me])
    h.discord.message(s.general, carol, "carol again, about the match tonight")
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, s.alice, "and for dessert?"))
    return h, s, prompt_texts(h)


async def test_by_default_the_whole_channel_goes_to_the_model(make_harness: MakeHarness) -> None:
    assert Settings.model_fields["history_scope"].default == "channel"
    _, _, texts = await busy_channel(make_harness, "channel")
    assert f"Carol: {BYSTANDER}" in texts and "Carol: carol again, about the match tonight" in texts
    assert "Bobby: bob to carol: sounds fun!" in texts


async def test_conversation_scope_sends_only_messages_to_and_from_the_bot(make_harness: MakeHarness) -> None:
    h, _, texts = await busy_channel(make_harness, "conversation")
    assert not any("carol" in text.lower() for text in texts)  # never spoke to the bot: never sent
    assert "Bobby: bob to carol: sounds fun!" not in texts
    assert texts == [
        "Alice: what's a good pasta recipe?",
        "Happy to help with that!",
        "Bobby: bob, replying to the bot: add garlic",
        "Bobby: bob asks the bot too",
        "Alice: and for dessert?",
    ]
    assert len(h.llm.chat_requests) == 2


async def test_conversation_scope_keeps_the_reply_chain_the_user_chose(make_harness: MakeHarness) -> None:
    h = await make_harness(history_scope="conversation")
    s = make_scene(h)
    bobs = h.discord.message(s.general, s.bob, "bob's pizza dough: 65% hydration")
    h.discord.message(s.general, s.bob, "bob's unrelated remark")
    me = make_member(h.discord.me, s.guild)
    question = h.discord.reply_to(s.general, s.alice, bobs, f"<@{h.discord.me.id}> is that right?", mentions=[me])
    await dispatch(h.bot, "message", question)
    texts = prompt_texts(h)
    assert texts == ["Bobby: bob's pizza dough: 65% hydration", "Alice: is that right?"]


@pytest.mark.parametrize("where", ["dm", "auto-reply"])
async def test_where_every_message_is_to_the_bot_conversation_scope_keeps_them(
    make_harness: MakeHarness, where: str
) -> None:
    if where == "dm":
        h = await make_harness(history_scope="conversation")
        s = make_scene(h)
        channel, author = s.alice_dm, s.alice_user
    else:
        probe = make_scene(await make_harness())
        h = await make_harness(history_scope="conversation", auto_reply_channel_ids=[probe.general.id])
        s = make_scene(h)
        channel = h.discord.text_channel(s.guild, probe.general.id)
        author = s.bob
    h.discord.message(channel, author, "an earlier message")
    await dispatch(h.bot, "message", h.discord.message(channel, author, "and now a question"))
    assert any("an earlier message" in text for text in prompt_texts(h))
