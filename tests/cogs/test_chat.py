"""The chat cog against spec'd Discord fakes and the real LLM path (AsyncOpenAI → the test Chat Completions server):
when it answers, what the prompt holds, how it sends, typing, learning, rate limiting, and surviving LLM errors."""

from __future__ import annotations

import itertools
import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

import discord
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.doors import PAUSE
from cogs.chat import LLM_ERROR_REPLY, readable_text
from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness, Scene, make_scene
from tests.helpers import (
    BOT_ID,
    Harness,
    dispatch,
    extraction_input,
    http_error,
    make_client_user,
    make_guild,
    make_member,
    make_role,
    make_user,
    memory_text,
    next_id,
    seed_memory,
    spec,
)
from tests.support.engine import parts
from tests.support.llm_server import error, extraction, reply

# --- when it answers --------------------------------------------------------------------------------------


def answered(h: Harness) -> int:
    return len(h.llm.chat_requests)


async def test_a_dm_gets_a_reply(scene: Scene) -> None:
    h = scene.h
    message = h.discord.message(scene.alice_dm, scene.alice_user, "hello, how are you?")
    await h.chat.on_message(message)
    assert answered(h) == 1
    assert [r.content for r in h.discord.replies_to(message)] == ["Happy to help with that!"]


async def test_a_server_message_without_a_mention_is_ignored(scene: Scene) -> None:
    h = scene.h
    message = h.discord.message(scene.general, scene.alice, "just chatting with friends here")
    await h.chat.on_message(message)
    assert h.llm.server.requests == []
    assert h.discord.replies_to(message) == []
    assert h.discord.typing[scene.general.id].entered == 0


async def test_a_mention_gets_a_reply(scene: Scene) -> None:
    h = scene.h
    message = h.discord.mention_bot(scene.general, scene.alice, "what's a monad?")
    await h.chat.on_message(message)
    assert answered(h) == 1
    assert len(h.discord.replies_to(message)) == 1


async def test_mentioning_the_bots_own_role_counts_as_a_mention(make_harness: MakeHarness) -> None:
    h = await make_harness()
    bot_role, other_role = make_role("MemoryBot", managed=True), make_role("Helpers")
    guild = make_guild(bot_role=bot_role)
    channel = h.discord.text_channel(guild)
    alice = make_member(make_user(ALICE_ID, "Alice"), guild)
    to_other = h.discord.message(channel, alice, f"<@&{other_role.id}> anyone?", role_mentions=[other_role])
    await h.chat.on_message(to_other)
    assert answered(h) == 0
    to_role = h.discord.message(channel, alice, f"<@&{bot_role.id}> what's up?", role_mentions=[bot_role])
    await h.chat.on_message(to_role)
    assert len(h.discord.replies_to(to_role)) == 1
    assert h.llm.chat_requests[0]["messages"][1:] == [
        {"role": "user", "content": "Alice: @Helpers anyone?"},
        {"role": "user", "content": "Alice: what's up?"},
    ]


async def test_a_mention_of_someone_else_is_ignored(scene: Scene) -> None:
    h = scene.h
    message = h.discord.message(scene.general, scene.alice, f"<@{BOB_ID}> look", mentions=[scene.bob])
    await h.chat.on_message(message)
    assert h.llm.server.requests == []


@pytest.mark.parametrize("resolved", [True, False], ids=["resolved", "fetched"])
async def test_a_reply_to_the_bots_message_gets_a_reply(scene: Scene, resolved: bool) -> None:
    h = scene.h
    await h.chat.on_message(h.discord.mention_bot(scene.general, scene.alice, "tell me a joke"))
    bot_message = h.discord.bot_messages(scene.general)[0].message
    follow_up = h.discord.reply_to(scene.general, scene.alice, bot_message, "another one", resolved=resolved)
    await h.chat.on_message(follow_up)
    assert answered(h) == 2
    assert len(h.discord.replies_to(follow_up)) == 1
    if resolved:
        scene.general.fetch_message.assert_not_awaited()
    else:
        scene.general.fetch_message.assert_awaited_once_with(bot_message.id)


@pytest.mark.parametrize("resolved", [True, False], ids=["resolved", "fetched"])
async def test_a_reply_to_someone_elses_message_is_ignored(scene: Scene, resolved: bool) -> None:
    h = scene.h
    bobs = h.discord.message(scene.general, scene.bob, "I made pancakes")
    message = h.discord.reply_to(scene.general, scene.alice, bobs, "nice, recipe?", resolved=resolved)
    await h.chat.on_message(message)
    assert h.llm.server.requests == []
    assert h.discord.replies_to(message) == []


async def test_a_reply_to_a_deleted_message_is_ignored(scene: Scene) -> None:
    h = scene.h
    gone = h.discord.message(scene.general, scene.bob, "deleted soon", log=False)  # fetch_message: 404
    message = h.discord.reply_to(scene.general, scene.alice, gone, "what did you say?", resolved=False)
    await h.chat.on_message(message)
    scene.general.fetch_message.assert_awaited_once_with(gone.id)
    assert h.llm.server.requests == []


async def test_forwarding_the_bots_message_is_not_talking_to_it(scene: Scene) -> None:
    h = scene.h
    await h.chat.on_message(h.discord.mention_bot(scene.general, scene.alice, "a fun fact please"))
    bot_message = h.discord.bot_messages(scene.general)[0].message
    reference = discord.MessageReference(
        message_id=bot_message.id, channel_id=scene.general.id, type=discord.MessageReferenceType.forward
    )
    reference.resolved = bot_message
    other = h.discord.text_channel(scene.guild)
    forward = h.discord.message(other, scene.bob, "", reference=reference)
    await h.chat.on_message(forward)
    assert answered(h) == 1


async def test_other_bots_and_itself_are_ignored(scene: Scene) -> None:
    h = scene.h
    robot = make_user(name="OtherBot", bot=True)
    await h.chat.on_message(h.discord.message(scene.alice_dm, robot, "beep"))
    await h.chat.on_message(h.discord.mention_bot(scene.general, make_member(robot, scene.guild), "beep boop"))
    itself = h.discord.me
    await h.chat.on_message(h.discord.message(scene.alice_dm, itself, "my own words"))
    not_flagged = make_user(BOT_ID, "MemoryBot", bot=False)  # even if the flag were missing, its id is ours
    await h.chat.on_message(h.discord.message(scene.alice_dm, not_flagged, "my own words again"))
    assert h.llm.server.requests == []
    assert h.discord.sent == []


@pytest.mark.parametrize(
    "kind",
    [discord.MessageType.pins_add, discord.MessageType.new_member, discord.MessageType.thread_created,
     discord.MessageType.channel_name_change],
)
async def test_system_messages_are_ignored(scene: Scene, kind: discord.MessageType) -> None:
    h = scene.h
    await h.chat.on_message(h.discord.message(scene.alice_dm, scene.alice_user, "pinned a message", type=kind))
    await h.chat.on_message(h.discord.mention_bot(scene.general, scene.alice, "joined", type=kind))
    assert h.llm.server.requests == []


async def test_the_guild_allow_list_is_respected(make_harness: MakeHarness) -> None:
    allowed = make_guild()
    h = await make_harness(allowed_guild_ids=frozenset({allowed.id}))
    s = make_scene(h)  # its guild is not on the list
    await h.chat.on_message(h.discord.mention_bot(s.general, s.alice, "hello?"))
    assert h.llm.server.requests == []
    inside = h.discord.text_channel(allowed)
    await h.chat.on_message(h.discord.mention_bot(inside, make_member(s.alice_user, allowed), "hello!"))
    await h.chat.on_message(h.discord.message(s.alice_dm, s.alice_user, "and in DMs"))  # DMs: ALLOW_DMS
    assert answered(h) == 2


async def test_the_channel_allow_list_counts_a_thread_as_its_parent(make_harness: MakeHarness) -> None:
    guild = make_guild()
    allowed_id = next_id()
    h = await make_harness(allowed_channel_ids=frozenset({allowed_id}))
    alice = make_member(make_user(ALICE_ID, "Alice"), guild)
    allowed = h.discord.text_channel(guild, allowed_id)
    other = h.discord.text_channel(guild)
    places = {
        "allowed channel": (allowed, True),
        "thread in the allowed channel": (h.discord.thread(allowed), True),
        "another channel": (other, False),
        "thread in another channel": (h.discord.thread(other), False),
    }
    outcome = {}
    for name, (channel, _) in places.items():
        message = h.discord.mention_bot(channel, alice, f"hi from {name}")
        await h.chat.on_message(message)
        outcome[name] = len(h.discord.replies_to(message)) == 1
    assert outcome == {name: expected for name, (_, expected) in places.items()}
    assert answered(h) == 2


async def test_allow_dms_false_ignores_dms(make_harness: MakeHarness) -> None:
    h = await make_harness(allow_dms=False)
    s = make_scene(h)
    await h.chat.on_message(h.discord.message(s.alice_dm, s.alice_user, "anyone there?"))
    assert h.llm.server.requests == []
    await h.chat.on_message(h.discord.mention_bot(s.general, s.alice, "and here?"))
    assert answered(h) == 1


async def test_nothing_is_answered_while_shutting_down(scene: Scene) -> None:
    h = scene.h
    h.bot.accepting = False
    await h.chat.on_message(h.discord.message(scene.alice_dm, scene.alice_user, "still there?"))
    assert h.llm.server.requests == []


# --- what the prompt holds --------------------------------------------------------------------------------


def today_lines() -> set[str]:
    now = datetime.now(UTC)
    return {f"Today is {now:%A, %d %B %Y} (UTC)."}


async def test_the_prompt_has_the_system_prompt_the_date_and_only_the_speakers_memory(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(system_prompt="You are Testy, the test bot of this server.")
    s = make_scene(h)
    here = f"guild:{s.guild.id}"  # learned in this server's public channels, so usable here
    await seed_memory(h.memory, ALICE_ID, ["Keeps bees on her roof"], place=here, workContext="Alice is a beekeeper")
    await seed_memory(
        h.memory, BOB_ID, ["Plays the oboe in an orchestra"], place=here, personalContext="Bob loves opera"
    )
    before = today_lines()
    await h.chat.on_message(h.discord.mention_bot(s.general, s.alice, "any advice about my bees?"))
    dates = before | today_lines()
    system = memory_text(h.llm.chat_requests[0])
    assert system.startswith("You are Testy, the test bot of this server.")
    assert any(date in system for date in dates)
    assert "Keeps bees on her roof" in system
    assert "Alice is a beekeeper" in system
    assert "<user_memory" in system
    assert "oboe" not in system and "opera" not in system


async def test_a_user_without_memory_gets_no_memory_block(scene: Scene) -> None:
    h = scene.h
    await seed_memory(h.memory, BOB_ID, ["Plays the oboe in an orchestra"])
    await h.chat.on_message(h.discord.message(scene.alice_dm, scene.alice_user, "hi!"))
    system = memory_text(h.llm.chat_requests[0])
    assert "<user_memory" not in system and "oboe" not in system


async def test_replies_share_their_start_and_carry_the_facts_last(scene: Scene) -> None:
    """Through the gateway: the memory profile sits in the system message and never changes with the facts, the
    facts chosen for a message end that message, and each prompt starts with the whole previous one except the
    facts (the part a prefix cache can reuse)."""
    h = scene.h
    await seed_memory(h.memory, ALICE_ID, ["Keeps bees on her roof", "Plays chess on Sundays"],
                      workContext="Alice is a beekeeper")
    for text in ("my bees are swarming", "what about chess openings?", "bees again: honey harvest", "thanks!"):
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
    prompts = [body["messages"] for body in h.llm.chat_requests]
    assert len(prompts) == 4
    assert len({str(messages[0]["content"]) for messages in prompts}) == 1  # the system message never moved
    system = str(prompts[0][0]["content"])
    assert "Alice is a beekeeper" in system and "bees on her roof" not in system and "chess" not in system
    for messages in prompts:
        said, facts = str(messages[-1]["content"]).split("\n\n", 1)
        assert facts.startswith('<user_memory about="Alice">\nFacts (most relevant first):')
        assert "Keeps bees on her roof" in facts and facts.endswith("</user_memory>")
    assert said == "Alice: thanks!"
    for before, after in itertools.pairwise(prompts):
        assert after[: len(before) - 1] == before[:-1]
        assert after[len(before) - 1]["content"] == str(before[-1]["content"]).split("\n\n", 1)[0]


async def test_history_is_in_order_with_names_and_the_bots_own_messages_as_assistant(scene: Scene) -> None:
    h = scene.h
    h.discord.message(scene.general, scene.bob, "first, from bob")
    h.discord.message(scene.general, h.discord.me, "second, from the bot")
    h.discord.message(scene.general, scene.alice, f"third, from alice to <@{BOT_ID}>")
    await h.chat.on_message(h.discord.mention_bot(scene.general, scene.alice, "so what now?"))
    messages = h.llm.chat_requests[0]["messages"]
    assert messages[0]["role"] == "system"
    assert messages[1:] == [
        {"role": "user", "content": "Bobby: first, from bob"},  # the display name (nick), not the username
        {"role": "assistant", "content": "second, from the bot"},
        {"role": "user", "content": "Alice: third, from alice to"},
        {"role": "user", "content": "Alice: so what now?"},
    ]


async def test_history_is_bounded_by_count(make_harness: MakeHarness) -> None:
    h = await make_harness(history_messages=3)
    s = make_scene(h)
    for n in range(6):
        h.discord.message(s.general, s.bob, f"old message {n}")
    await h.chat.on_message(h.discord.mention_bot(s.general, s.alice, "catch me up"))
    contents = [m["content"] for m in h.llm.chat_requests[0]["messages"][1:]]
    assert contents == ["Bobby: old message 3", "Bobby: old message 4", "Bobby: old message 5", "Alice: catch me up"]
    assert s.general.history.call_args.kwargs["limit"] == 3


async def test_history_is_bounded_by_characters_keeping_the_newest(make_harness: MakeHarness) -> None:
    h = await make_harness(history_chars=100)
    s = make_scene(h)
    for n in range(6):
        h.discord.message(s.general, s.bob, f"message number {n} " + "x" * 20)  # ~40 chars, ~47 with the name
    await h.chat.on_message(h.discord.mention_bot(s.general, s.alice, "summary please"))
    history = [m["content"] for m in h.llm.chat_requests[0]["messages"][1:-1]]
    assert [re.search(r"number (\d)", text).group(1) for text in history] == ["4", "5"]  # type: ignore[union-attr]
    assert sum(len(text) for text in history) <= 100


async def test_the_bot_mention_is_stripped_and_other_mentions_become_names(scene: Scene) -> None:
    h = scene.h
    message = h.discord.message(
        scene.general, scene.alice, f"<@{BOT_ID}> can you help <@!{BOB_ID}> with   his code?",
        mentions=[make_member(h.discord.me, scene.guild), scene.bob],
    )
    await h.chat.on_message(message)
    last = h.llm.chat_requests[0]["messages"][-1]
    assert last == {"role": "user", "content": "Alice: can you help @Bobby with his code?"}
    assert str(BOT_ID) not in str(h.llm.chat_requests[0]["messages"])


@settings(deadline=None, max_examples=60)
@given(st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=200))
def test_the_bot_mention_is_removed_from_any_text(text: str) -> None:
    me = make_client_user()
    addressed = spec(
        discord.Message, content=f"<@{BOT_ID}> {text} <@!{BOT_ID}>", mentions=[me], role_mentions=[], guild=None
    )
    plain = spec(discord.Message, content=text, mentions=[me], role_mentions=[], guild=None)
    assert readable_text(addressed, BOT_ID) == readable_text(plain, BOT_ID)
    assert f"{BOT_ID}>" not in readable_text(addressed, BOT_ID)


# --- how it sends -----------------------------------------------------------------------------------------


def assert_no_mentions(kwargs: dict[str, Any]) -> None:
    allowed = kwargs["allowed_mentions"]
    assert isinstance(allowed, discord.AllowedMentions)
    assert (allowed.everyone, allowed.users, allowed.roles, allowed.replied_user) == (False, False, False, False)
    assert allowed.to_dict() == discord.AllowedMentions.none().to_dict()


async def test_replies_are_sent_with_mentions_disabled(scene: Scene) -> None:
    h = scene.h
    h.llm.say(reply("@everyone look! <@&123456789> and <@222222222222222222> too"))
    message = h.discord.mention_bot(scene.general, scene.alice, "ping everyone for me")
    await h.chat.on_message(message)
    [sent] = h.discord.replies_to(message)
    kwargs = sent.kwargs
    assert kwargs["mention_author"] is False
    assert_no_mentions(kwargs)


async def test_a_long_answer_with_code_is_split_into_messages_of_at_most_2000(scene: Scene) -> None:
    h = scene.h
    prose = "\n\n".join(f"Paragraph {n}: " + "words and more words. " * 12 for n in range(6))
    code = "```python\n" + "\n".join(f"print('line {n}')  # {'z' * 20}" for n in range(72)) + "\n```"
    answer = prose + "\n\n" + code + "\n\nThat is all."
    assert len(answer) >= 4500
    h.llm.say(reply(answer))
    message = h.discord.message(scene.alice_dm, scene.alice_user, "show me a long example")
    await h.chat.on_message(message)
    sent = h.discord.bot_messages(scene.alice_dm)
    assert len(sent) >= 3
    assert all(len(s.content) <= 2000 for s in sent)
    assert all(s.content.count("```") % 2 == 0 for s in sent)  # every message renders its code as code
    assert h.discord.replies_to(message) == sent  # the first as a reply, the rest as follow-ups in the channel
    assert [isinstance(s.kwargs.get("reference"), discord.MessageReference) for s in sent] == [True] + [False] * (
        len(sent) - 1
    )
    for s in sent:
        assert_no_mentions(s.kwargs)
    joined = "\n".join(s.content for s in sent)
    for n in range(72):
        assert f"print('line {n}')" in joined
    assert "That is all." in sent[-1].content


async def test_an_llm_error_gets_a_friendly_message_and_one_log_line_and_the_bot_goes_on(
    scene: Scene, caplog: pytest.LogCaptureFixture
) -> None:
    h = scene.h
    h.llm.say(error(500), error(500))  # the chat client retries once
    first = h.discord.message(scene.alice_dm, scene.alice_user, "secret-one question that fails")
    with caplog.at_level(logging.ERROR, logger="cogs.chat"):
        await h.chat.on_message(first)
    assert len(h.llm.chat_requests) == 2
    [notice] = h.discord.replies_to(first)
    assert notice.content == LLM_ERROR_REPLY
    assert len(LLM_ERROR_REPLY) < 200
    assert_no_mentions(notice.kwargs)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and r.name == "cogs.chat"]
    assert len(errors) == 1 and errors[0].exc_info is None  # one line: the kind of failure, no traceback
    assert "InternalServerError (HTTP 500)" in errors[0].getMessage()
    assert "secret-one" not in caplog.text  # message contents are not logged

    second = h.discord.message(scene.alice_dm, scene.alice_user, "and now it works?")
    await h.chat.on_message(second)
    assert h.discord.reply_text(second) == "Happy to help with that!"
    await h.settle()
    learned = [turn["text"] for body in h.llm.extraction_requests for turn in extraction_input(body)["newTurns"]]
    # The user's words are learned even when the reply failed; the failure notice never is.
    assert learned == ["secret-one question that fails", "and now it works?", "Happy to help with that!"]


async def test_typing_is_shown_while_the_model_works(scene: Scene) -> None:
    h = scene.h
    typing = h.discord.typing[scene.general.id]
    seen: list[bool] = []
    h.llm.on_chat = lambda body: seen.append(typing.active)
    await h.chat.on_message(h.discord.mention_bot(scene.general, scene.alice, "think hard about this"))
    assert seen == [True]
    assert (typing.entered, typing.exited, typing.active) == (1, 1, False)


async def test_a_refused_typing_indicator_does_not_cost_the_reply(scene: Scene) -> None:
    h = scene.h
    h.discord.typing[scene.general.id].fail = http_error(403, "Missing Permissions")
    message = h.discord.mention_bot(scene.general, scene.alice, "are you there?")
    await h.chat.on_message(message)
    assert len(h.discord.replies_to(message)) == 1


async def test_an_unreadable_history_still_gets_a_reply_without_context(scene: Scene) -> None:
    h = scene.h
    h.discord.message(scene.general, scene.bob, "something earlier")
    h.discord.history_errors[scene.general.id] = http_error(403, "Missing Access")
    message = h.discord.mention_bot(scene.general, scene.alice, "hello?")
    await h.chat.on_message(message)
    assert len(h.discord.replies_to(message)) == 1
    assert h.llm.chat_requests[0]["messages"][1:] == [{"role": "user", "content": "Alice: hello?"}]


# --- learning ---------------------------------------------------------------------------------------------


async def test_the_exchange_is_learned_under_the_thread_and_the_user(scene: Scene) -> None:
    h = scene.h
    h.llm.say(reply("Rust is a great choice for that."))
    h.llm.extract = lambda body: extraction(facts=[("Is writing a compiler in Rust", "context", 0.95)])
    await h.chat.on_message(h.discord.mention_bot(scene.thread, scene.alice, "I'm writing a compiler in Rust"))
    assert parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)
    journal = (h.settings.data_dir / "pending.jsonl").read_text().splitlines()
    keys = {(r["conv"], r["user"]) for r in map(json.loads, journal) if r["op"] == "turn"}
    assert keys == {(str(scene.thread.id), str(ALICE_ID))}  # (thread, user): the key the batch waits under
    await h.settle()
    [body] = h.llm.extraction_requests
    turns = extraction_input(body)["newTurns"]
    assert [(t["speaker"], t["name"], t["text"]) for t in turns] == [
        ("user", "Alice", "I'm writing a compiler in Rust"),
        ("assistant", "assistant", "Rust is a great choice for that."),
    ]
    stored = h.memory_on_disk(ALICE_ID)
    assert stored is not None
    [fact] = stored["facts"]
    assert fact["content"] == "Is writing a compiler in Rust"
    assert fact["source"] == f"conversation:{scene.thread.id}"  # the key: the thread, not its parent channel
    assert h.memory_on_disk(BOB_ID) is None


async def test_a_paused_users_turns_are_not_learned(scene: Scene) -> None:
    h = scene.h
    h.llm.extract = lambda body: extraction(facts=[("Has a cat named Miso", "relationship")])
    await h.memory.user(ALICE_ID).set_mode(PAUSE)
    message = h.discord.message(scene.alice_dm, scene.alice_user, "my cat Miso is sick")
    await h.chat.on_message(message)
    assert len(h.discord.replies_to(message)) == 1  # still answered
    assert not parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)
    await h.settle()
    assert h.llm.extraction_requests == []
    assert h.memory_on_disk(ALICE_ID) is None


async def test_a_bare_mention_teaches_nothing(scene: Scene) -> None:
    h = scene.h
    await h.chat.on_message(h.discord.mention_bot(scene.general, scene.alice, ""))
    assert h.llm.chat_requests[0]["messages"][-1]["content"].startswith("Alice: (")  # the model is told
    await h.settle()
    assert h.llm.extraction_requests == []  # but our placeholder is not the user's words


# --- rate limit -------------------------------------------------------------------------------------------


async def test_over_the_rate_limit_gets_one_short_notice_and_no_llm_call(make_harness: MakeHarness) -> None:
    h = await make_harness(rate_limit_messages=2, rate_limit_window_seconds=60)
    s = make_scene(h)
    messages = [h.discord.message(s.alice_dm, s.alice_user, f"question {n}") for n in range(4)]
    for message in messages:
        await h.chat.on_message(message)
    assert len(h.llm.chat_requests) == 2
    [notice] = h.discord.replies_to(messages[2])
    assert "faster" in notice.content and len(notice.content) < 200
    assert_no_mentions(notice.kwargs)
    assert h.discord.replies_to(messages[3]) == []  # the notice comes once, not per message
    bob = h.discord.message(s.bob_dm, s.bob_user, "my turn")
    await h.chat.on_message(bob)  # one user's limit is not another's
    assert len(h.llm.chat_requests) == 3
    assert h.discord.reply_text(bob) == "Happy to help with that!"
