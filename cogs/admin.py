"""`/memory-admin server` and `/memory-admin channel`: server admins switch memory off where it is not wanted.

Only members with Manage Server: the commands carry that default permission (Discord hides them from everyone
else unless a server changes it in its integration settings) and every call checks it again, because a server can
grant the command to anyone. Answers are ephemeral. Off means: no turn from there is journaled or extracted
(learning), and no memory goes into replies there (recall). Users' own `/memory` commands keep working everywhere.
Answers are in the caller's Discord language.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.client.interactions import may_administer
from bot.client.locations import location_of
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import N_, Speech
from bot.memory.doors import MemorySwitch, SwitchesDoor

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

# Channels people talk in (threads follow their parent; a category has no messages of its own).
SwitchableChannel = discord.TextChannel | discord.VoiceChannel | discord.StageChannel | discord.ForumChannel
NOT_ALLOWED = N_("Only members with the **Manage Server** permission can change where I learn and remember.")


def on_off(value: bool, speech: Speech) -> str:
    return speech.tr("on") if value else "**" + speech.tr("off") + "**"


def server_report(switches: SwitchesDoor, guild: discord.Guild, speech: Speech) -> str:
    chosen = switches.guild_switch(guild.id)
    text = speech.tr(
        "In this server, learning is {learning} and using memory in replies is {recall}.",
        learning=on_off(chosen.learning, speech), recall=on_off(chosen.recall, speech),
    )
    if switches.operator_disabled(location_of(guild)):
        text += "\n" + speech.tr(
            "Memory is off here (switched off by the bot's operator, which a server cannot override)."
        )
    return text


class AdminCog(commands.Cog):
    admin_group = app_commands.Group(
        name=locale_str("memory-admin"),
        description=locale_str("Switch my memory off in this server or in one channel (Manage Server)"),
        default_permissions=discord.Permissions(manage_guild=True),
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        guild_only=True,
    )

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.switches = bot.resources.memory.switches

    @admin_group.command(
        name=locale_str("server"),
        description=locale_str("Turn learning and/or using memory on or off in this server"),
    )
    @app_commands.describe(
        learning=locale_str("Learn from conversations in this server"),
        recall=locale_str("Use what I remember about people in my replies here"),
    )
    async def server(
        self, interaction: discord.Interaction, learning: bool | None = None, recall: bool | None = None
    ) -> None:
        speech = interaction_speech(interaction)
        if not may_administer(interaction) or interaction.guild is None:
            await interaction.response.send_message(speech.tr(NOT_ALLOWED), ephemeral=True)
            return
        guild = interaction.guild
        guild_id = guild.id
        if learning is not None or recall is not None:
            current = self.switches.guild_switch(guild_id)
            wanted = MemorySwitch(
                learning=current.learning if learning is None else learning,
                recall=current.recall if recall is None else recall,
            )
            await interaction.response.defer(ephemeral=True, thinking=True)
            await self.switches.set_guild(guild_id, learning=wanted.learning, recall=wanted.recall)
            log.info(
                "memory switches: guild %s learning=%s recall=%s (set by user %s)",
                guild_id, wanted.learning, wanted.recall, interaction.user.id,
            )
            await interaction.followup.send(server_report(self.switches, guild, speech), ephemeral=True)
            return
        await interaction.response.send_message(server_report(self.switches, guild, speech), ephemeral=True)

    @admin_group.command(
        name=locale_str("channel"), description=locale_str("Turn learning on or off in one channel (and its threads)")
    )
    @app_commands.describe(
        channel=locale_str("The channel"), learning=locale_str("Learn from conversations in this channel")
    )
    async def channel(
        self, interaction: discord.Interaction, channel: SwitchableChannel, learning: bool | None = None
    ) -> None:
        speech = interaction_speech(interaction)
        if not may_administer(interaction) or interaction.guild is None:
            await interaction.response.send_message(speech.tr(NOT_ALLOWED), ephemeral=True)
            return
        if channel.guild.id != interaction.guild.id:
            await interaction.response.send_message(speech.tr("That channel is not in this server."), ephemeral=True)
            return
        where = location_of(channel)
        channel_id = where.channel_id or channel.id
        if learning is not None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await self.switches.set_channel(channel_id, learning=learning)
            log.info(
                "memory switches: channel %s of guild %s learning=%s (set by user %s)",
                channel_id, where.guild_id, learning, interaction.user.id,
            )
        chosen = self.switches.channel_learning(channel_id)
        mention = f"<#{channel_id}>"
        text = speech.tr("Learning in {channel} and its threads is {state}.", channel=mention,
                         state=on_off(chosen, speech))
        effective = self.switches.at(where)
        if chosen and not effective.learning:
            text += "\n" + (
                speech.tr("It stays off in practice: the bot's operator switched memory off here, which a server "
                          "cannot override.")
                if self.switches.operator_disabled(where)
                else speech.tr("It stays off in practice: learning is off for the whole server.")
            )
        if learning is not None:
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(AdminCog(bot))
