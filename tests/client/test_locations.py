"""The one translator from Discord objects to a `Location`: every kind of channel gives the place, the conversation,
the channel whose memory switches count and the path the community settings are looked up along, consistently."""

from __future__ import annotations

from pathlib import Path

import discord

from bot.client.locations import location_of
from bot.memory.models import Location, Place
from bot.memory.records.community_settings import levels
from bot.memory.records.switches import MemorySwitch, SwitchBoard
from bot.storage.records import FileRecords
from tests.helpers import FakeDiscord, make_guild, make_user, next_id, spec


def world() -> tuple[FakeDiscord, discord.Guild, discord.CategoryChannel]:
    d = FakeDiscord(make_user(next_id(), "bot"))
    guild = make_guild()
    category = spec(discord.CategoryChannel, id=next_id(), name="Games", guild=guild)
    return d, guild, category


def test_a_dm_is_a_dm_with_no_server_path() -> None:
    d, _, _ = world()
    dm = d.dm(make_user(next_id(), "Ana"))
    where = location_of(dm)
    assert where == Location.dm(dm.id)
    assert where.place == Place.dm() and where.guild_id is None and levels(where) == []


def test_a_channel_in_a_category_is_its_own_conversation_switch_and_settings_level() -> None:
    d, guild, category = world()
    general = d.text_channel(guild, name="general")
    general.category_id = category.id
    where = location_of(general)
    assert where.place == Place.guild(guild.id)
    assert (where.conversation_id, where.guild_id, where.channel_id, where.thread_id) == (
        general.id, guild.id, general.id, None,
    )
    assert levels(where) == [("channel", general.id), ("category", category.id), ("server", guild.id)]


def test_a_thread_is_its_own_conversation_but_its_parents_switch_and_path() -> None:
    d, guild, category = world()
    staff = d.text_channel(guild, name="staff", private=True)
    staff.category_id = category.id
    thread = d.thread(staff)
    where = location_of(thread)
    assert where.place == Place.channel(staff.id, guild.id)  # a public thread of a staff room: the room's audience
    assert (where.conversation_id, where.channel_id, where.thread_id) == (thread.id, staff.id, thread.id)
    assert levels(where) == [
        ("thread", thread.id), ("channel", staff.id), ("category", category.id), ("server", guild.id),
    ]
    private = location_of(d.thread(staff, private=True))
    assert private.place.kind == "channel" and private.place.id == private.thread_id  # invited members only


def test_a_category_and_a_server_passed_themselves_are_their_own_levels() -> None:
    _, guild, category = world()
    assert levels(location_of(category)) == [("category", category.id), ("server", guild.id)]
    server = location_of(guild)
    assert server.place == Place.guild(guild.id) and server.channel_id is None
    assert levels(server) == [("server", guild.id)]


def test_an_interaction_without_a_channel_falls_back_to_its_server_and_is_restricted() -> None:
    _, guild, _ = world()
    where = location_of(None, guild)
    assert where.guild_id == guild.id and where.place == Place.channel(0, guild.id)  # nothing to go on: the safe answer


async def test_the_switches_read_a_threads_parent(tmp_path: Path) -> None:
    d, guild, _ = world()
    general = d.text_channel(guild, name="general")
    board = SwitchBoard(FileRecords(tmp_path / "switches.json", on_damaged="refuse"))
    await board.open()
    await board.set_channel(general.id, learning=False)
    assert board.at(location_of(d.thread(general))) == MemorySwitch(learning=False, recall=True)
    assert board.at(location_of(d.text_channel(guild))) == MemorySwitch()
    assert board.at(location_of(d.dm(make_user(next_id(), "Ana")))) == MemorySwitch()  # DMs: never switched off
    await board.close()
