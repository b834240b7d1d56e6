"""`/usage`: the tokens the caller spent with the bot today, their daily budget and when it resets; server admins
(Manage Server) also see the server's. And, while loaded, the save of the token counts every few seconds.

Counts are what the endpoint reported (`usage`) for replies and memory extraction, per UTC day; an endpoint that
reports nothing is counted by an estimate, and the answer says how much of the count is estimated. The counts are
kept in RAM and saved every `SAVE_EVERY_SECONDS` and at shutdown, so a crash loses at most that much counting.
The answer is in the caller's Discord language, its numbers written their way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.client.interactions import may_administer
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import ENGLISH_SPEECH, Speech
from bot.memory.doors import BudgetsDoor, UsageReport

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

SAVE_EVERY_SECONDS = 10.0


def _spent_line(server: bool, tokens: int, estimated: int, limit: int, speech: Speech) -> str:
    spent, most = speech.number(tokens), speech.number(limit)
    if server:
        line = (
            speech.tr("This server has used **{tokens}** tokens of the daily **{limit}**", tokens=spent, limit=most)
            if limit else speech.tr("This server has used **{tokens}** tokens (no daily limit)", tokens=spent)
        )
    else:
        line = (
            speech.tr("You have used **{tokens}** tokens of the daily **{limit}**", tokens=spent, limit=most)
            if limit else speech.tr("You have used **{tokens}** tokens (no daily limit)", tokens=spent)
        )
    if estimated:
        line += speech.tr(
            "; about {estimated} of them estimated (the model endpoint did not say what it used)",
            estimated=speech.number(estimated),
        )
    # TRANSLATORS: the end of a sentence made of the parts above (a full stop after it).
    return speech.tr("{sentence}.", sentence=line)


def usage_text(report: UsageReport, *, show_guild: bool, speech: Speech = ENGLISH_SPEECH) -> str:
    reset = discord.utils.format_dt(report.resets_at, "R")
    lines = [
        speech.tr("**Today** (the day ends {reset}, midnight UTC):", reset=reset),
        "- " + _spent_line(False, report.user.tokens, report.user.estimated, report.user_limit, speech),
    ]
    if report.user_limit and report.user.tokens >= report.user_limit:
        lines.append(speech.tr(
            "- Your budget is used up: I'll answer you again {reset}. What you say is still remembered.", reset=reset
        ))
    if show_guild and report.guild is not None:
        lines.append("- " + _spent_line(True, report.guild.tokens, report.guild.estimated, report.guild_limit, speech))
    lines.append(speech.tr("-# Counted: the tokens of my replies to you and of distilling what you said into memory."))
    return "\n".join(lines)


class UsageCog(commands.Cog):
    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.budgets: BudgetsDoor = bot.resources.memory.budgets
        self._saver: asyncio.Task[None] | None = None

    async def cog_load(self) -> None:
        self._saver = asyncio.create_task(self._save_periodically(), name="token usage saver")

    async def cog_unload(self) -> None:
        if self._saver is not None:
            self._saver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._saver
            self._saver = None  # what is left is saved when the storage closes (shutdown)

    async def _save_periodically(self) -> None:
        while True:
            await asyncio.sleep(SAVE_EVERY_SECONDS)
            await self.budgets.save()  # logs and carries on when the storage fails

    @app_commands.command(
        name=locale_str("usage"),
        description=locale_str("How many tokens you used with me today, and your daily budget"),
    )
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    async def usage(self, interaction: discord.Interaction) -> None:
        guild_id = interaction.guild.id if interaction.guild is not None else None
        report = self.budgets.report(interaction.user.id, guild_id)
        show_guild = guild_id is not None and may_administer(interaction)
        text = usage_text(report, show_guild=show_guild, speech=interaction_speech(interaction))
        await interaction.response.send_message(text, ephemeral=True)


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(UsageCog(bot))
