"""Discord deletes and edits, through the bot's real dispatch (discord.py's own raw event payloads into
`bot.dispatch`), on files and on PostgreSQL with two bot processes sharing the database: a message deleted while
the bot answers is never learned, one deleted after it was learned is retracted at once (cached or not, alone or
in a bulk delete, received by either process), and an edited one is learned as it reads now."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import discord
import pytest

from tests.cogs.conftest import ALICE_ID, MakeHarness, Scene, make_scene
from tests.helpers import Harness, dispatch, extraction_input, make_interaction, run_slash, spec
from tests.support.llm_server import Response, extraction


def writes_it_down(body: dict[str, Any]) -> Response:
    said = [t["text"] for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    return extraction(facts=[(f"Said: {text}", "context", 0.95) for text in said],
                      work=" ".join(f"They said {text}." for text in said) or None)


def learned_texts(h: Harness) -> list[str]:
    return [t["text"] for body in h.llm.extraction_requests for t in extraction_input(body)["newTurns"]]


def deleted(message: Any, *, cached: bool) -> discord.RawMessageDeleteEvent:
    """What discord.py hands `on_raw_message_delete` (the cached message only when it still had it)."""
    data: dict[str, Any] = {"id": str(message.id), "channel_id": str(message.channel.id)}
    if message.guild is not None:
        data["guild_id"] = str(message.guild.id)
    payload = discord.RawMessageDeleteEvent(data)  # type: ignore[arg-type]
    payload.cached_message = message if cached else None
    return payload


def bulk_deleted(messages: list[Any]) -> discord.RawBulkMessageDeleteEvent:
    first = messages[0]
    data = {"ids": [str(m.id) for m in messages], "channel_id": str(first.channel.id),
            "guild_id": str(first.guild.id)}
    return discord.RawBulkMessageDeleteEvent(data)  # type: ignore[arg-type]


def edited(message: Any, text: str, *, cached: bool) -> discord.RawMessageUpdateEvent:
    """What discord.py hands `on_raw_message_edit`: the message as it reads now, and the cached one as it read."""
    now = spec(
        discord.Message, id=message.id, content=text, author=message.author, channel=message.channel,
        guild=message.guild, mentions=message.mentions, role_mentions=message.role_mentions,
        reference=message.reference, type=message.type, attachments=message.attachments,
        created_at=message.created_at, edited_at=datetime.now(UTC), jump_url=message.jump_url,
    )
    payload = discord.RawMessageUpdateEvent({"id": str(message.id), "content": text}, now)  # type: ignore[arg-type]
    payload.cached_message = message if cached else None
    return payload


class Held:
    """Holds the bot's chat request until released: the reply is being written meanwhile."""

    def __init__(self, h: Harness) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        h.llm.on_chat = self._hold

    def _hold(self, body: dict[str, Any]) -> None:
        self.asked.set()
        self.release.wait(30)

    async def answering(self) -> None:
        assert await asyncio.to_thread(self.asked.wait, 30)


@pytest.fixture
def held(scene: Scene) -> Iterator[Held]:
    holding = Held(scene.h)
    yield holding
    holding.release.set()


async def test_a_message_deleted_while_the_bot_answers_is_never_learned(scene: Scene, held: Held) -> None:
    h = scene.h
    h.llm.extract = writes_it_down
    message = h.discord.message(scene.alice_dm, scene.alice_user, "My landlord is Mr Okafor at 12 Elm Road")
    answering = asyncio.create_task(dispatch(h.bot, "message", message))
    await held.answering()
    h.discord.delete(message)
    await dispatch(h.bot, "raw_message_delete", deleted(message, cached=True))
    held.release.set()
    await answering
    assert h.discord.reply_text(message)  # still answered
    other = h.discord.message(scene.alice_dm, scene.alice_user, "I play the cello")
    await dispatch(h.bot, "message", other)
    await h.settle()
    assert learned_texts(h) == ["I play the cello", "Happy to help with that!"]  # the deleted one, nor its reply
    assert "Okafor" not in str(h.memory_on_disk(ALICE_ID))


async def test_a_learned_message_deleted_later_is_retracted_at_once_cached_or_not(scene: Scene) -> None:
    h = scene.h
    h.llm.extract = writes_it_down
    first = h.discord.message(scene.alice_dm, scene.alice_user, "I am training for the Lyon marathon")
    await dispatch(h.bot, "message", first)
    await h.settle()
    second = h.discord.message(scene.alice_dm, scene.alice_user, "I keep bees on the roof")
    await dispatch(h.bot, "message", second)
    await h.settle()
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None and len(memory["facts"]) == 2
    assert all(fact["sourceMessageIds"] for fact in memory["facts"])

    h.discord.delete(first)
    await dispatch(h.bot, "raw_message_delete", deleted(first, cached=False))  # long gone from the cache
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None
    assert [fact["content"] for fact in memory["facts"]] == ["Said: I keep bees on the roof"]
    assert "marathon" not in str(memory)  # the summary went back to before it too
    export = await run_slash(h.bot, make_interaction(scene.alice_user), "memory export")
    assert export.extras["calls"] and "marathon" not in (await h.memory.user(ALICE_ID).export()).decode()

    await dispatch(h.bot, "raw_message_delete", deleted(second, cached=True))
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None and memory["facts"] == []


async def test_a_bulk_delete_in_a_server_channel_retracts_what_every_message_taught(scene: Scene) -> None:
    h = scene.h
    h.llm.extract = writes_it_down
    said = []
    for text in ("I run a bakery", "I speak Welsh"):
        message = h.discord.mention_bot(scene.general, scene.alice, text)
        said.append(message)
        await dispatch(h.bot, "message", message)
        await h.settle()
    kept = h.discord.mention_bot(scene.general, scene.alice, "I collect stamps")
    await dispatch(h.bot, "message", kept)
    await h.settle()
    await dispatch(h.bot, "raw_bulk_message_delete", bulk_deleted(said))  # a moderator's purge
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None
    assert [fact["content"] for fact in memory["facts"]] == ["Said: I collect stamps"]


async def test_a_message_edited_while_the_bot_answers_is_learned_as_edited(scene: Scene, held: Held) -> None:
    h = scene.h
    h.llm.extract = writes_it_down
    message = h.discord.message(scene.alice_dm, scene.alice_user, "I live in Paris")
    answering = asyncio.create_task(dispatch(h.bot, "message", message))
    await held.answering()
    payload = edited(message, "I live in Lyon", cached=True)
    await dispatch(h.bot, "raw_message_edit", payload)
    message.content = "I live in Lyon"  # what discord.py does to its cached message after the raw event
    held.release.set()
    await answering
    await h.settle()
    assert learned_texts(h) == ["I live in Lyon"]  # and not the reply to the words that are gone
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None and [f["content"] for f in memory["facts"]] == ["Said: I live in Lyon"]


async def test_a_message_edited_after_it_was_learned_is_learned_again(scene: Scene) -> None:
    h = scene.h
    h.llm.extract = writes_it_down
    message = h.discord.message(scene.alice_dm, scene.alice_user, "I live in Paris")
    await dispatch(h.bot, "message", message)
    await h.settle()
    await dispatch(h.bot, "raw_message_edit", edited(message, "I live in Lyon", cached=False))
    await h.settle()
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None and [f["content"] for f in memory["facts"]] == ["Said: I live in Lyon"]
    assert learned_texts(h)[-1:] == ["I live in Lyon"]
    requests = len(h.llm.extraction_requests)
    # a link preview appearing (the same text) and the bot's own edits are no edits of anything learned
    await dispatch(h.bot, "raw_message_edit", edited(message, message.content, cached=True))
    await h.settle()
    assert len(h.llm.extraction_requests) == requests


# --- PostgreSQL: two bot processes on one database ------------------------------------------------------------


async def rows(url: str, query: str) -> list[Any]:
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(query))
    finally:
        await conn.close()


async def two_bots(make_harness: MakeHarness, url: str, tmp_path: Path, **overrides: Any) -> tuple[Scene, Harness]:
    """The shard that sees Alice's DMs, and another process of the same bot (its own pool, its own RAM)."""
    first = await make_harness(database_url=url, data_dir=tmp_path / "first", **overrides)
    other = await make_harness(database_url=url, data_dir=tmp_path / "other", **overrides)
    for h in (first, other):
        h.llm.extract = writes_it_down
    return make_scene(first), other


async def test_on_postgres_a_delete_received_by_another_process_retracts_at_once(
    postgres_url: str, make_harness: MakeHarness, tmp_path: Path
) -> None:
    scene, other = await two_bots(make_harness, postgres_url, tmp_path)
    h = scene.h
    message = h.discord.message(scene.alice_dm, scene.alice_user, "I am a night nurse at Saint-Louis")
    await dispatch(h.bot, "message", message)
    await h.settle()
    assert "Saint-Louis" in str(await rows(postgres_url, "SELECT doc::text FROM memories"))

    await dispatch(other.bot, "raw_message_delete", deleted(message, cached=False))
    stored = await rows(postgres_url, "SELECT doc::text AS doc FROM memories")
    assert stored and "Saint-Louis" not in stored[0]["doc"]
    assert await rows(postgres_url, "SELECT * FROM message_ledger") == []
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "where do I work?"))
    assert "Saint-Louis" not in str(h.llm.chat_requests[-1]["messages"][0])  # not in the memory any more


async def test_on_postgres_a_waiting_message_deleted_in_another_process_is_never_extracted(
    postgres_url: str, make_harness: MakeHarness, tmp_path: Path
) -> None:
    scene, other = await two_bots(
        make_harness, postgres_url, tmp_path, memory_debounce_seconds=60, memory_max_wait_seconds=120
    )
    h = scene.h
    message = h.discord.message(scene.alice_dm, scene.alice_user, "my sister is Zofia Nowak")
    await dispatch(h.bot, "message", message)
    assert "Zofia" in str(await rows(postgres_url, "SELECT turn::text FROM pending_turns"))
    await dispatch(other.bot, "raw_message_delete", deleted(message, cached=False))
    assert await rows(postgres_url, "SELECT turn::text FROM pending_turns") == []  # the reply to it too
    await h.memory.ops.flush(30)
    assert h.llm.extraction_requests == []
    assert await rows(postgres_url, "SELECT * FROM memories") == []


async def test_on_postgres_an_edit_is_learned_as_edited(
    postgres_url: str, make_harness: MakeHarness, tmp_path: Path
) -> None:
    scene, _ = await two_bots(make_harness, postgres_url, tmp_path)
    h = scene.h
    message = h.discord.message(scene.alice_dm, scene.alice_user, "I drive a red Fiat")
    await dispatch(h.bot, "message", message)
    await h.settle()
    await dispatch(h.bot, "raw_message_edit", edited(message, "I drive a blue Volvo", cached=False))
    await h.settle()
    memory = await h.memory.user(ALICE_ID).show()
    assert [fact.content for fact in memory.facts] == ["Said: I drive a blue Volvo"]
    assert memory.user.workContext.summary == "They said I drive a blue Volvo."
    assert "Fiat" not in str(await rows(postgres_url, "SELECT turn::text FROM pending_turns"))


async def test_privacy_says_deletes_edits_and_the_summary_history_in_plain_words(scene: Scene) -> None:
    guild = scene.guild
    interaction = await run_slash(
        scene.h.bot, make_interaction(scene.alice_user, guild=guild, channel=scene.general), "privacy"
    )
    (call,) = interaction.extras["calls"]
    embeds = call.kwargs["embeds"] if "embeds" in call.kwargs else [call.kwargs["embed"]]
    assert all(len(embed.description) <= 4096 for embed in embeds)
    text = "\n\n".join(embed.description for embed in embeds)
    assert "Delete a message on Discord and what it taught goes too (not facts you wrote or corrected)" in text
    assert "an edited message is learned again as it reads now." in text
    assert "your summaries' earlier versions, for 24 hours" in text
