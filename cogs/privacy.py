"""`/privacy`: what the bot stores about the caller, where, for how long, and how to see, export and delete it.

The answer is ephemeral and built from the live settings and the commands this process actually registered, so it
stays true when the operator changes MEMORY_RETENTION_DAYS or PRIVACY_CONTACT, or a command is added. It is in the
caller's Discord language, commands named as their Discord shows them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.client.locations import location_of
from bot.client.privacy_statement import CommandHelp, privacy_statement
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech
from bot.ops.housekeeping import Housekeeping

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

EMBED_DESCRIPTION_LIMIT = 4096
EMBED_TOTAL_LIMIT = 6000  # all the embeds of one message together
TITLE = N_("Privacy: what I keep about you")
MENU_HELP = {
    "What did you remember?": N_("on one of the bot's replies, what it used"),
    "Regenerate": N_("on one of its replies to you, a new answer in its place (the old one is not learned)"),
    "Delete": N_("on one of its replies to you, removes it (and it is not learned)"),
}
OTHER_MENU = N_("on one of the bot's replies")


def user_commands(tree: app_commands.CommandTree[MemoryBot]) -> list[CommandHelp]:
    """Every `/memory ...` subcommand and message menu this bot registered, with its description."""
    found: list[CommandHelp] = []
    group = tree.get_command("memory")
    if isinstance(group, app_commands.Group):
        for command in group.walk_commands():
            if isinstance(command, app_commands.Command):
                found.append(CommandHelp(command.qualified_name, command.description))
    for menu in tree.get_commands(type=discord.AppCommandType.message):
        found.append(CommandHelp(menu.name, MENU_HELP.get(menu.name, OTHER_MENU), message_menu=True))
    return found


def statement_embeds(text: str, speech: Speech = ENGLISH_SPEECH) -> list[discord.Embed]:
    """The statement in one embed, or, when it is longer than one embed's description, in several split between
    its sections; never more than one message holds (an operator's very long contact text is cut, never refused)."""
    title = speech.tr(TITLE)
    room = EMBED_TOTAL_LIMIT - len(title)
    if len(text) > room:
        text = text[: room - 1] + "…"
    parts: list[str] = []
    for section in text.split("\n\n"):
        while len(section) > EMBED_DESCRIPTION_LIMIT:
            parts.append(section[:EMBED_DESCRIPTION_LIMIT])
            section = section[EMBED_DESCRIPTION_LIMIT:]
        if parts and len(parts[-1]) + 2 + len(section) <= EMBED_DESCRIPTION_LIMIT:
            parts[-1] += "\n\n" + section
        else:
            parts.append(section)
    colour = discord.Colour.blurple()
    return [
        discord.Embed(title=title if n == 0 else None, description=part, colour=colour) for n, part in enumerate(parts)
    ]


class PrivacyCog(commands.Cog):
    """`/privacy`, and the upkeep that keeps its promises (the daily retention sweep) while the cog is loaded."""

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.housekeeping = Housekeeping(bot.resources.memory)

    async def cog_load(self) -> None:
        self.housekeeping.start()

    async def cog_unload(self) -> None:
        await self.housekeeping.stop()

    @app_commands.command(
        name=locale_str("privacy"), description=locale_str("What I store about you, for how long, and how to delete it")
    )
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    async def privacy(self, interaction: discord.Interaction) -> None:
        resources = self.bot.resources
        memory = resources.memory
        speech = interaction_speech(interaction)
        here = None
        server_name = None
        persona_here = False
        if interaction.guild is not None and interaction.channel is not None:
            where = location_of(interaction.channel, interaction.guild)
            here = memory.switches.at(where)
            server_name = interaction.guild.name
            persona_here = memory.community.at(where).prompt is not None
        text = privacy_statement(
            resources.settings,
            pending_seconds=memory.ops.longest_pending_seconds(resources.settings.llm_timeout_seconds),
            commands=user_commands(self.bot.tree),
            here=here,
            server_name=server_name,
            persona_here=persona_here,
            embedding_endpoint=resources.settings.embedding_endpoint,
            speech=speech,
        )
        embeds = statement_embeds(text, speech)
        if len(embeds) == 1:
            await interaction.response.send_message(embed=embeds[0], ephemeral=True)
        else:
            await interaction.response.send_message(embeds=embeds, ephemeral=True)


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(PrivacyCog(bot))
