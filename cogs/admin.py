"""`/memory-admin server` and `/memory-admin channel`: server admins switch memory off where it is not wanted.

Only members with Manage Server: the commands carry that default permission (Discord hides them from everyone
else unless a server changes it in its integration settings) and every call checks it again, because a server can
grant the command to anyone. Answers are ephemeral. Off means: no turn from there is journaled or extracted
(learning), and no memory goes into replies there (recall). Users' own `/memory` commands keep working everywhere.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.client.interactions import may_administer
from bot.client.locations import location_of
from bot.memory.doors import MemorySwitch, SwitchesDoor

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

# Channels people talk in (threads follow their parent; a category has no messages of its own).
SwitchableChannel = discord.TextChannel | discord.VoiceChannel | discord.StageChannel | discord.ForumChannel
NOT_ALLOWED = "Only members with the **Manage Server** permission can change where I learn and remember."
OPERATOR_LOCK = " (switched off by the bot's operator, which a server cannot override)"


def on_off(value: bool) -> str:
    return "on" if value else "**off**"


def server_report(switches: SwitchesDoor, guild: discord.Guild) -> str:
    chosen = switches.guild_switch(guild.id)
    text = (
        f"In this server, learning is {on_off(chosen.learning)} and using memory in replies is "
        f"{on_off(chosen.recall)}."
    )
    if switches.operator_disabled(location_of(guild)):
        text += "\nMemory is off here" + OPERATOR_LOCK + "."
    return text


class AdminCog(commands.Cog):
    admin_group = app_commands.Group(
        name="memory-admin",
        description="Switch my memory off in this server or in one channel (Manage Server)",
        default_permissions=discord.Permissions(manage_guild=True),
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        guild_only=True,
    )

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.switches = bot.resources.memory.switches

    @admin_group.command(name="server", description="Turn learning and/or using memory on or off in this server")
    @app_commands.describe(
        learning="Learn from conversations in this server",
        recall="Use what I remember about people in my replies here",
    )
    async def server(
        self, interaction: discord.Interaction, learning: bool | None = None, recall: bool | None = None
    ) -> None:
        if not may_administer(interaction) or interaction.guild is None:
            await interaction.response.send_message(NOT_ALLOWED, ephemeral=True)
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
            await interaction.followup.send(server_report(self.switches, guild), ephemeral=True)
            return
        await interaction.response.send_message(server_report(self.switches, guild), ephemeral=True)

    @admin_group.command(name="channel", description="Turn learning on or off in one channel (and its threads)")
    @app_commands.describe(channel="The channel", learning="Learn from conversations in this channel")
    async def channel(
        self, interaction: discord.Interaction, channel: SwitchableChannel, learning: bool | None = None
    ) -> None:
        if not may_administer(interaction) or interaction.guild is None:
            await interaction.response.send_message(NOT_ALLOWED, ephemeral=True)
            return
        if channel.guild.id != interaction.guild.id:
            await interaction.response.send_message("That channel is not in this server.", ephemeral=True)
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
        text = f"Learning in <#{channel_id}> and its threads is {on_off(chosen)}."
        effective = self.switches.at(where)
        if chosen and not effective.learning:
            reason = (
                "the bot's operator switched memory off here, which a server cannot override"
                if self.switches.operator_disabled(where)
                else "learning is off for the whole server"
            )
            text += f"\nIt stays off in practice: {reason}."
        if learning is not None:
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(AdminCog(bot))
