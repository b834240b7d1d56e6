"""Where the chat may look and speak, through the real bot's dispatch: reply chains stay in their channel, a thread
discord.py has not cached gets its real parent (and its switches), and a channel the bot cannot view (Discord's
hidden placeholder) is restricted, never answered and never learned from."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from bot.client.locations import HIDDEN_CHANNEL_NAME, location_of, place_name
from bot.memory.models import Place
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import (
    Harness,
    behave,
    dispatch,
    extraction_input,
    http_error,
    make_guild,
    make_member,
    make_user,
    spec,
)
from tests.support.llm_server import extraction, reply

SECRET = "staff-only: the raid starts at nine"


def prompt_texts(h: Harness) -> str:
    return "\n".join(str(m["content"]) for body in h.llm.chat_requests for m in body["messages"])


def mention(h: Harness, channel: Any, author: Any, text: str, **kwargs: Any) -> Any:
    return h.discord.mention_bot(channel, author, text, **kwargs)


# --- reply chains stay in their channel ---------------------------------------------------------------------


@pytest.mark.parametrize("where", ["another server", "a staff channel of this server"])
async def test_a_crossposted_reference_from_elsewhere_never_enters_the_prompt(
    make_harness: MakeHarness, where: str
) -> None:
    h = await make_harness(history_messages=0)
    s = make_scene(h)
    source_guild = make_guild(name="Announcer") if where == "another server" else s.guild
    source = h.discord.text_channel(source_guild, name="staff", private=True)
    original = h.discord.message(source, s.bob, SECRET)
    # A crossposted announcement (or any message pointing elsewhere) carries a reference to its source message,
    # which Discord resolves and discord.py hands over.
    reference = discord.MessageReference(message_id=original.id, channel_id=source.id, guild_id=source_guild.id)
    reference.resolved = original
    message = h.discord.message(
        s.general, s.alice, f"<@{h.discord.me.id}> what do you make of this?",
        mentions=[make_member(h.discord.me, s.guild)], reference=reference, type=discord.MessageType.reply,
    )
    await dispatch(h.bot, "message", message)

    assert len(h.llm.chat_requests) == 1
    assert SECRET not in prompt_texts(h)
    assert source.fetch_message.await_count == 0


async def test_a_reply_chain_follows_links_only_in_its_own_channel(make_harness: MakeHarness) -> None:
    h = await make_harness(history_messages=0, reply_chain_messages=10)
    s = make_scene(h)
    staff = h.discord.text_channel(s.guild, name="staff", private=True)
    secret = h.discord.message(staff, s.bob, SECRET)
    # A link in the chain (cached as the bot walked it) that itself points into the staff channel.
    elsewhere = discord.MessageReference(message_id=secret.id, channel_id=staff.id, guild_id=s.guild.id)
    elsewhere.resolved = secret
    middle = h.discord.message(s.general, s.bob, "the plan is public now", reference=elsewhere,
                               type=discord.MessageType.reply)
    message = h.discord.reply_to(s.general, s.alice, middle, f"<@{h.discord.me.id}> is it?",
                                 mentions=[make_member(h.discord.me, s.guild)])
    await dispatch(h.bot, "message", message)

    texts = prompt_texts(h)
    assert "the plan is public now" in texts  # the same-channel link is followed
    assert SECRET not in texts


async def test_a_forwarded_message_from_elsewhere_is_not_brought_in(make_harness: MakeHarness) -> None:
    h = await make_harness(history_messages=0)
    s = make_scene(h)
    staff = h.discord.text_channel(make_guild(), name="staff", private=True)
    secret = h.discord.message(staff, s.bob, SECRET)
    forward = discord.MessageReference(
        message_id=secret.id, channel_id=staff.id, type=discord.MessageReferenceType.forward
    )
    forward.resolved = secret
    message = h.discord.message(s.general, s.alice, f"<@{h.discord.me.id}> look", reference=forward,
                                mentions=[make_member(h.discord.me, s.guild)])
    await dispatch(h.bot, "message", message)
    assert len(h.llm.chat_requests) == 1
    assert SECRET not in prompt_texts(h)


# --- threads discord.py has not cached ----------------------------------------------------------------------


def in_uncached(h: Harness, channel: Any, author: Any, text: str) -> Any:
    """A message @mentioning the bot in `channel` as discord.py delivers it when it has not cached the channel (a
    thread, say): the channel is a real `PartialMessageable` (id and server id only), the server is known."""
    partial = discord.PartialMessageable(state=h.bot._connection, id=channel.id, guild_id=channel.guild.id)
    message = h.discord.message(partial, author, f"<@{h.discord.me.id}> {text}",
                                mentions=[make_member(h.discord.me, channel.guild)])
    message.guild = channel.guild
    return message


def serve_channels(h: Harness, *channels: Any, fail: BaseException | None = None) -> list[int]:
    """What `Client.fetch_channel` answers (Discord's GET /channels/{id}); returns the ids asked for."""
    asked: list[int] = []
    known = {channel.id: channel for channel in channels}

    async def fetch_channel(channel_id: int, /) -> Any:
        asked.append(channel_id)
        if fail is not None:
            raise fail
        if channel_id not in known:
            raise http_error(404, "Unknown Channel")
        return known[channel_id]

    h.bot.fetch_channel = fetch_channel  # type: ignore[method-assign]
    h.chat.channels._fetch = fetch_channel
    return asked


@pytest.mark.parametrize("switched_off_by", ["admin", "operator"])
async def test_an_uncached_thread_follows_its_parents_learning_switch(
    make_harness: MakeHarness, tmp_path: Any, switched_off_by: str
) -> None:
    guild = make_guild()
    parent_id = 987654321098765432
    overrides = {"memory_disabled_channel_ids": frozenset({parent_id})} if switched_off_by == "operator" else {}
    h = await make_harness(**overrides)
    general = h.discord.text_channel(guild, channel_id=parent_id)
    thread = h.discord.thread(general)
    if switched_off_by == "admin":
        await h.resources.memory.switches.set_channel(parent_id, learning=False)
    asked = serve_channels(h, thread)
    alice = make_member(make_user(name="Alice"), guild)
    for n in range(2):
        message = in_uncached(h, thread, alice, f"my favourite colour is teal {n}")
        await dispatch(h.bot, "message", message)
        assert h.discord.reply_text(message)  # answered
    await h.settle()
    assert h.llm.extraction_requests == []  # the parent's switch is off: nothing learned
    assert asked == [thread.id]  # fetched once, then kept


async def test_an_uncached_public_thread_of_a_public_channel_is_the_servers_public_place(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness()
    s = make_scene(h)
    serve_channels(h, s.thread)
    h.llm.extract = lambda body: extraction(facts=[("Alice likes teal", "preference", 0.9)])
    message = in_uncached(h, s.thread, s.alice, "I like teal")
    await dispatch(h.bot, "message", message)
    await h.settle()
    [request] = h.llm.extraction_requests
    assert extraction_input(request)["newTurns"]
    stored = h.memory_on_disk(s.alice.id)
    assert stored is not None
    assert {fact["place"] for fact in stored["facts"]} == {Place.guild(s.guild.id).key}


async def test_an_uncached_channel_that_cannot_be_fetched_is_neither_answered_nor_learned_from(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness()
    s = make_scene(h)
    serve_channels(h, fail=http_error(403, "Missing Access"))
    message = in_uncached(h, s.thread, s.alice, "my secret is 1234 apples")
    await dispatch(h.bot, "message", message)
    await h.settle()
    assert h.llm.chat_requests == []
    assert h.discord.bot_messages() == []
    assert h.llm.extraction_requests == []


# --- channels the bot cannot view: Discord's hidden placeholders -------------------------------------------


def hidden_channel(h: Harness, guild: Any, *, synthetic_rule: bool = True) -> Any:
    """A channel as Discord sends one the bot cannot view: the name replaced, and either a synthetic rule denying
    @everyone or no usable overwrites at all (Discord says not to rely on anything but id, type and position)."""
    channel = h.discord.text_channel(guild, name=HIDDEN_CHANNEL_NAME, private=synthetic_rule)
    return channel


@pytest.mark.parametrize("synthetic_rule", [True, False])
def test_a_hidden_placeholder_and_its_threads_are_restricted_places(harness: Harness, synthetic_rule: bool) -> None:
    guild = make_guild()
    hidden = hidden_channel(harness, guild, synthetic_rule=synthetic_rule)
    assert location_of(hidden, guild).place == Place.channel(hidden.id, guild.id)
    thread = harness.discord.thread(hidden)
    assert location_of(thread, guild).place == Place.channel(hidden.id, guild.id)


def test_a_hidden_placeholder_read_from_its_flag_is_restricted(harness: Harness) -> None:
    guild = make_guild()
    forum = spec(discord.ForumChannel, id=424242, name="looks-public", guild=guild,
                 flags=discord.ChannelFlags._from_value(1 << 17), type=discord.ChannelType.forum)
    behave(forum, discord.ForumChannel, "permissions_for",
           lambda target: discord.Permissions(view_channel=True, read_message_history=True))
    assert location_of(forum, guild).place == Place.channel(forum.id, guild.id)


def test_a_hidden_placeholders_name_is_never_shown(harness: Harness) -> None:
    guild = make_guild(name="Hikers")
    hidden = hidden_channel(harness, guild)

    class Cache:
        def get_guild(self, guild_id: int, /) -> Any:
            return guild

        def get_channel(self, channel_id: int, /) -> Any:
            return hidden

    assert place_name(f"channel:{hidden.id}", Cache()) == f"private channel {hidden.id}"


@pytest.mark.parametrize("synthetic_rule", [True, False])
async def test_the_bot_never_answers_or_learns_in_a_hidden_placeholder_or_its_threads(
    make_harness: MakeHarness, synthetic_rule: bool
) -> None:
    h = await make_harness(auto_reply_channel_ids=frozenset())
    s: Scene = make_scene(h)
    hidden = hidden_channel(h, s.guild, synthetic_rule=synthetic_rule)
    thread = h.discord.thread(hidden)
    h.llm.say(reply("sure"), reply("sure"))
    for channel in (hidden, thread):
        message = mention(h, channel, s.alice, "remember that my locker code is 4711")
        await dispatch(h.bot, "message", message)
        assert h.discord.reply_text(message) == ""
    await h.settle()
    assert h.llm.chat_requests == []
    assert h.llm.extraction_requests == []
    assert h.memory_on_disk(s.alice.id) is None
