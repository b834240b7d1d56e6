"""`/memory-admin` and the operator's lists: who may switch memory off, and that off really means off, through the
bot's own dispatch (`bot.dispatch("message", ...)`) and the real LLM path: nothing journaled, extracted or saved
from there, and (recall off) none of the user's memory in the reply prompt. Users' own commands keep working."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.app import DataDirError, build_resources, start_memory
from bot.client.locations import location_of
from bot.memory.drivers.bundle import SWITCHES_FILE
from bot.memory.models import Location
from cogs.admin import NOT_ALLOWED
from tests.cogs.conftest import ALICE_ID, MakeHarness, Scene, make_scene
from tests.helpers import (
    Harness,
    calls,
    last_text,
    make_guild,
    make_interaction,
    make_member,
    make_settings,
    memory_text,
    seed_memory,
)
from tests.support.engine import parts

SECRET = "secret-1111-77 keeps bees on the roof of her flat in Leeds"


async def dispatched(h: Harness, message: Any) -> None:
    """Hand the message to the bot as discord.py's gateway does, wait for every listener, then for memory."""
    h.bot.loop = asyncio.get_running_loop()  # what logging in would have set
    h.bot.dispatch("message", message)
    listeners = [t for t in asyncio.all_tasks() if t.get_name() == "discord.py: on_message"]
    assert listeners
    await asyncio.gather(*listeners)
    await h.settle()


def admin_interaction(s: Scene, *, admin: bool, channel: Any = None) -> Any:
    interaction = make_interaction(s.alice, guild=s.guild, channel=channel or s.general)
    interaction.permissions = discord.Permissions(manage_guild=True) if admin else discord.Permissions.none()
    return interaction


async def admin(h: Harness, command: str, interaction: Any, **options: Any) -> str:
    cog: Any = h.bot.get_cog("AdminCog")
    await getattr(cog, command).callback(cog, interaction, **options)
    assert all(c.kwargs.get("ephemeral") is True for c in calls(interaction) if c.name != "edit_original_response")
    return last_text(interaction)


def data_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file())


def learned_anything(h: Harness) -> bool:
    return bool(h.llm.extraction_requests) or SECRET.encode() in data_bytes(h.settings.data_dir)


# --- who may switch -------------------------------------------------------------------------------------------


def test_the_commands_are_for_manage_server_and_servers_only(harness: Harness) -> None:
    group = harness.bot.tree.get_command("memory-admin")
    assert isinstance(group, discord.app_commands.Group)
    assert group.default_permissions is not None and group.default_permissions.manage_guild
    assert group.allowed_contexts is not None
    assert group.allowed_contexts.guild and not group.allowed_contexts.dm_channel
    assert {c.name for c in group.commands} == {"server", "channel"}
    definition = group.to_dict(harness.bot.tree)
    assert definition["dm_permission"] is False and definition["contexts"] == [0]  # servers only
    channel_option = next(o for o in definition["options"] if o["name"] == "channel")["options"][0]
    assert discord.ChannelType.category.value not in channel_option["channel_types"]  # no messages of its own
    assert discord.ChannelType.text.value in channel_option["channel_types"]


async def test_a_member_without_manage_server_is_refused_at_run_time(scene: Scene) -> None:
    h = scene.h
    text = await admin(h, "server", admin_interaction(scene, admin=False), learning=False, recall=False)
    assert text == NOT_ALLOWED
    text = await admin(h, "channel", admin_interaction(scene, admin=False), channel=scene.general, learning=False)
    assert text == NOT_ALLOWED
    assert not (h.settings.data_dir / SWITCHES_FILE).exists()
    assert h.resources.memory.switches.at(location_of(scene.general)).learning


async def test_switches_persist_across_a_restart(make_harness: MakeHarness, tmp_path: Path) -> None:
    h = await make_harness()
    s = make_scene(h)
    text = await admin(h, "server", admin_interaction(s, admin=True), recall=False)
    assert "learning is on" in text and "replies is **off**" in text
    await admin(h, "channel", admin_interaction(s, admin=True), channel=s.general, learning=False)
    await h.close()
    again = await make_harness(data_dir=h.settings.data_dir)
    switches = again.resources.memory.switches
    assert switches.at(Location(guild_id=s.guild.id, channel_id=s.general.id)).learning is False
    another = Location(guild_id=s.guild.id, channel_id=s.thread.id + 1)
    assert switches.at(another).learning is True  # another channel still learns
    assert switches.at(Location(guild_id=s.guild.id, channel_id=s.general.id)).recall is False
    # DMs are never switched
    assert switches.at(Location.dm(s.alice_dm.id)) == switches.at(Location.dm(1))


# --- off means off --------------------------------------------------------------------------------------------


async def test_server_learning_off_learns_nothing_there_and_dms_still_learn(scene: Scene) -> None:
    h = scene.h
    await admin(h, "server", admin_interaction(scene, admin=True), learning=False)
    await dispatched(h, h.discord.mention_bot(scene.general, scene.alice, f"fun fact: {SECRET}"))
    await dispatched(h, h.discord.mention_bot(scene.thread, scene.alice, f"and again: {SECRET}"))
    assert len(h.discord.sent) == 2  # it still answers
    assert not learned_anything(h)
    assert parts(h.memory).storage.turns is not None and parts(h.memory).storage.turns.pending == 0
    await dispatched(h, h.discord.message(scene.alice_dm, scene.alice_user, f"in private: {SECRET}"))
    assert len(h.llm.extraction_requests) == 1


async def test_recall_off_keeps_memory_out_of_replies_there_only(scene: Scene) -> None:
    h = scene.h
    await seed_memory(h.memory, ALICE_ID, [SECRET])
    await admin(h, "server", admin_interaction(scene, admin=True), learning=True, recall=False)
    await dispatched(h, h.discord.mention_bot(scene.general, scene.alice, "what do you know about bees?"))
    await dispatched(h, h.discord.mention_bot(scene.thread, scene.alice, "and about Leeds?"))
    prompts = [memory_text(body) for body in h.llm.chat_requests]
    assert len(prompts) == 2 and not any("secret-1111-77" in p for p in prompts)
    assert h.llm.extraction_requests  # learning stayed on
    await dispatched(h, h.discord.message(scene.alice_dm, scene.alice_user, "what do you know about bees?"))
    assert "secret-1111-77" in memory_text(h.llm.chat_requests[-1])


async def test_a_channel_switch_covers_its_threads_and_not_other_channels(scene: Scene) -> None:
    h = scene.h
    await admin(h, "channel", admin_interaction(scene, admin=True), channel=scene.general, learning=False)
    await dispatched(h, h.discord.mention_bot(scene.general, scene.alice, f"note: {SECRET}"))
    await dispatched(h, h.discord.mention_bot(scene.thread, scene.alice, f"note: {SECRET}"))
    assert not learned_anything(h)
    other = h.discord.text_channel(scene.guild, name="random")
    await dispatched(h, h.discord.mention_bot(other, scene.alice, f"note: {SECRET}"))
    assert len(h.llm.extraction_requests) == 1


@pytest.mark.parametrize("by", ["guild", "channel"])
async def test_the_operators_lists_switch_learning_and_recall_off(make_harness: MakeHarness, by: str) -> None:
    guild = make_guild()
    probe = await make_harness()
    channel = probe.discord.text_channel(guild)
    await probe.close()
    setting = {"guild": "memory_disabled_guild_ids", "channel": "memory_disabled_channel_ids"}[by]
    h = await make_harness(**{setting: frozenset({guild.id if by == "guild" else channel.id})})
    s = make_scene(h)
    channel = h.discord.text_channel(guild, channel_id=channel.id)
    alice = make_member(s.alice_user, guild)
    await seed_memory(h.memory, ALICE_ID, ["secret-1111-78 plays the oboe"])
    await dispatched(h, h.discord.mention_bot(channel, alice, f"remember: {SECRET}"))
    assert len(h.discord.sent) == 1 and not learned_anything(h)
    assert "secret-1111-78" not in memory_text(h.llm.chat_requests[-1])
    # An admin cannot switch it back on from Discord.
    interaction = make_interaction(alice, guild=guild, channel=channel)
    interaction.permissions = discord.Permissions(manage_guild=True)
    await admin(h, "server", interaction, learning=True, recall=True)
    assert h.resources.memory.switches.at(location_of(channel)).learning is False
    if by == "guild":
        assert "operator" in last_text(interaction)


async def test_users_own_commands_keep_working_where_memory_is_off(scene: Scene) -> None:
    h = scene.h
    await seed_memory(h.memory, ALICE_ID, [SECRET])
    await admin(h, "server", admin_interaction(scene, admin=True), learning=False, recall=False)
    interaction = make_interaction(scene.alice, guild=scene.guild, channel=scene.general)
    cog: Any = h.memory_cog
    await cog.show.callback(cog, interaction)
    shown = json.dumps([c.kwargs["embed"].to_dict() for c in calls(interaction) if "embed" in c.kwargs])
    assert "secret-1111-77" in shown


# --- the file ---------------------------------------------------------------------------------------------------


async def test_an_unreadable_switches_file_is_one_clear_error(chat_server: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / SWITCHES_FILE).write_bytes(b'{"records": {"guild:5": ')
    resources = build_resources(make_settings(chat_server, data))
    with pytest.raises(DataDirError) as caught:
        await start_memory(resources)
    assert SWITCHES_FILE in str(caught.value) and "\n" not in str(caught.value)
    assert (data / SWITCHES_FILE).read_bytes() == b'{"records": {"guild:5": '  # kept as it was
    await resources.aclose()
