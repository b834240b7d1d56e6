"""The message menus on the bot's replies, as the command tree runs them: Regenerate posts a new answer to the same
message and removes the old one, the reply record follows the new answer, and only the new answer is learned;
Delete removes the reply and its words are never learned (or the user is told they already were); only the person
the reply answered may use either; Regenerate counts against the budgets and is refused past them. On files and
on PostgreSQL."""

from __future__ import annotations

from typing import Any

import asyncpg
import discord

from bot.memory.doors import ForgetEverything
from cogs.reply_actions import NOT_MINE, NOT_YOURS
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import (
    Harness,
    Sent,
    calls,
    dispatch,
    extraction_input,
    last_text,
    make_interaction,
    run_message_menu,
)
from tests.support.llm_server import extraction, reply

SLOW_LEARNING = {"memory_debounce_seconds": 30.0, "memory_max_wait_seconds": 60.0}  # flushed by the test




async def menu(h: Harness, name: str, user: Any, s: Scene, target: Any, channel: Any = None) -> str:
    interaction = make_interaction(user, guild=s.guild, channel=channel or s.general)
    await run_message_menu(h.bot, interaction, name, target)
    assert calls(interaction)[0].name == "defer" and all(c.kwargs.get("ephemeral") for c in calls(interaction))
    return last_text(interaction)


async def asked(h: Harness, s: Scene, text: str, answer: str) -> tuple[Any, Sent]:
    """Alice asks in #general; the bot answers `answer`. Her message and the reply's (only) message."""
    h.llm.say(reply(answer))
    message = h.discord.mention_bot(s.general, s.alice, text)
    await dispatch(h.bot, "message", message)
    (sent,) = h.discord.replies_to(message)
    assert sent.content == answer
    return message, sent


def learned(h: Harness) -> list[list[str]]:
    return [[turn["text"] for turn in extraction_input(body)["newTurns"]] for body in h.llm.extraction_requests]


def test_the_menus_are_registered_everywhere(harness: Harness) -> None:
    for name in ("Regenerate", "Delete"):
        command = harness.bot.tree.get_command(name, type=discord.AppCommandType.message)
        assert command is not None and {0, 1, 2} <= set(command.to_dict(harness.bot.tree)["contexts"])


async def test_regenerate_replaces_the_reply_and_only_the_new_answer_is_learned(make_harness: MakeHarness) -> None:
    h = await make_harness(**SLOW_LEARNING)
    s = make_scene(h)
    h.llm.extract = lambda body: extraction()
    question, old = await asked(h, s, "What should I call my dog?", "Call him Rex.")
    h.llm.say(reply("Call him Biscuit."))
    said = await menu(h, "Regenerate", s.alice, s, old.message)
    assert "new answer" in said

    assert old.deleted
    (new,) = h.discord.replies_to(question)
    assert new.content == "Call him Biscuit." and new.message.id != old.message.id
    assert new.kwargs["allowed_mentions"].everyone is False
    prompt = h.llm.chat_requests[-1]["messages"]
    assert "What should I call my dog?" in str(prompt[-1]["content"]) and "Rex" not in str(prompt)
    record = await h.memory.recall.reply_record(new.message.id)
    assert record is not None and record.user_id == s.alice.id and record.message_ids == (new.message.id,)

    # "What did you remember?" follows the new answer.
    inspect = make_interaction(s.alice, guild=s.guild, channel=s.general)
    await run_message_menu(h.bot, inspect, "What did you remember?", new.message)
    assert "Nothing" in last_text(inspect)

    await h.memory.ops.flush()
    assert learned(h) == [["What should I call my dog?", "Call him Biscuit."]]
    assert h.memory.budgets.report(s.alice.id, s.guild.id).user.tokens > 0  # both answers counted


async def test_only_the_person_answered_may_use_them(make_harness: MakeHarness) -> None:
    h = await make_harness(**SLOW_LEARNING)
    s = make_scene(h)
    question, old = await asked(h, s, "Recommend a book?", "Try Dune.")
    for name in ("Regenerate", "Delete"):
        assert await menu(h, name, s.bob, s, old.message) == NOT_YOURS
        assert await menu(h, name, s.alice, s, question) == NOT_MINE
    assert not old.deleted and len(h.llm.chat_requests) == 1

    # After Alice wiped her memory (reply records included), the reply still answers her message: hers to delete.
    await h.memory.user(s.alice.id).forget(ForgetEverything())
    assert await h.memory.recall.reply_record(old.message.id) is None
    assert await menu(h, "Delete", s.bob, s, old.message) == NOT_YOURS
    assert (await menu(h, "Delete", s.alice, s, old.message)).startswith("Deleted.")
    assert old.deleted


async def test_delete_removes_the_reply_and_its_words_are_not_learned(make_harness: MakeHarness) -> None:
    h = await make_harness(**SLOW_LEARNING)
    s = make_scene(h)
    h.llm.extract = lambda body: extraction()
    _, old = await asked(h, s, "I'm moving to Porto next month.", "Porto has great tiled houses!")
    said = await menu(h, "Delete", s.alice, s, old.message)
    assert said == "Deleted. Nothing of it will be learned."
    assert old.deleted and not h.discord.bot_messages(s.general)
    await h.memory.ops.flush()
    assert learned(h) == [["I'm moving to Porto next month."]]


async def test_deleting_a_reply_already_learned_says_so(make_harness: MakeHarness) -> None:
    h = await make_harness()
    s = make_scene(h)
    h.llm.extract = lambda body: extraction()
    _, old = await asked(h, s, "I'm learning the cello.", "The cello is a lovely instrument.")
    await h.settle()
    assert learned(h) == [["I'm learning the cello.", "The cello is a lovely instrument."]]
    said = await menu(h, "Delete", s.alice, s, old.message)
    assert said.startswith("Deleted. It had already been distilled") and "/memory forget" in said
    assert old.deleted


async def test_regenerate_counts_against_the_budget_and_is_refused_past_it(make_harness: MakeHarness) -> None:
    h = await make_harness(user_daily_tokens=50, **SLOW_LEARNING)
    s = make_scene(h)
    _, old = await asked(h, s, "Name a river.", "The Danube.")
    said = await menu(h, "Regenerate", s.alice, s, old.message)
    assert "today's token budget" in said and "<t:" in said
    assert len(h.llm.chat_requests) == 1 and not old.deleted


async def test_regenerate_and_delete_on_postgres(postgres_url: str, make_harness: MakeHarness) -> None:
    h = await make_harness(database_url=postgres_url, **SLOW_LEARNING)
    s = make_scene(h)
    question, old = await asked(h, s, "Pick a colour for my bike.", "Go with teal.")
    h.llm.say(reply("Go with orange."))
    assert "new answer" in await menu(h, "Regenerate", s.alice, s, old.message)
    (new,) = h.discord.replies_to(question)
    conn = await asyncpg.connect(postgres_url)
    try:
        records = await conn.fetch("SELECT user_id, message_ids FROM reply_records ORDER BY reply_id")
        assert [list(row["message_ids"]) for row in records][-1] == [new.message.id]
        turns = [row["turn"] for row in await conn.fetch("SELECT turn::text AS turn FROM pending_turns")]
        assert any("orange" in turn for turn in turns) and not any("teal" in turn for turn in turns)
        assert (await menu(h, "Delete", s.alice, s, new.message)).startswith("Deleted. Nothing")
        turns = [row["turn"] for row in await conn.fetch("SELECT turn::text AS turn FROM pending_turns")]
        assert any("colour" in turn for turn in turns) and not any("orange" in turn for turn in turns)
    finally:
        await conn.close()
    assert new.deleted and old.deleted


async def test_regenerate_counts_against_the_rate_limit_and_says_when_it_can_be_used_again(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(rate_limit_messages=2, rate_limit_window_seconds=3600, **SLOW_LEARNING)
    s = make_scene(h)
    h.llm.extract = lambda body: extraction()
    question, old = await asked(h, s, "What should I call my dog?", "Call him Rex.")  # one call of two
    h.llm.say(reply("Call him Biscuit."))
    assert "new answer" in await menu(h, "Regenerate", s.alice, s, old.message)  # two of two
    (new,) = h.discord.replies_to(question)
    calls_before = len(h.llm.chat_requests)
    for _ in range(3):  # pressing again and again: no model call, one clear line each time
        said = await menu(h, "Regenerate", s.alice, s, new.message)
        assert said.startswith("You've reached the limit of 2 answers per hour; you can regenerate again <t:")
        assert said.endswith(("(in 1 hr).", "(in 60 min).", "(in 59 min)."))
    assert len(h.llm.chat_requests) == calls_before
    assert [r.content for r in h.discord.replies_to(question)] == ["Call him Biscuit."]
    # and the presses counted: a message now is over the limit too
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, s.alice, "hello?"))
    assert len(h.llm.chat_requests) == calls_before
