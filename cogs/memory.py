"""`/memory show | forget | export | pause | resume`: each user sees and controls their own memory, privately.

Every response is ephemeral (only the caller sees it) and only ever reads or changes the caller's own memory:
no command takes a user id. Slow work is deferred first so the 3-second interaction deadline is never missed.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.interactions import SafeView
from bot.memory.models import MemoryFile
from bot.memory.render import SECTION_LABELS

if TYPE_CHECKING:
    from bot.discord_bot import MemoryBot
    from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

CONFIRM_TIMEOUT_SECONDS = 60.0
EMBED_DESCRIPTION_LIMIT = 4096
EMBED_FIELD_LIMIT = 1024
EMBED_TOTAL_LIMIT = 6000
AUTOCOMPLETE_LIMIT = 25
EMBED_COLOUR = discord.Colour.blurple()
_POINTER_RESERVE = 120  # room for the description that points at the attached file
EVERYWHERE = app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fact_line(fact_id: str, content: str, category: str, confidence: float) -> str:
    return f"`{fact_id}` {discord.utils.escape_markdown(content)} · *{category}, {confidence:.0%}*"


def memory_as_markdown(memory: MemoryFile) -> str:
    """The whole memory as a Markdown document, for when it does not fit in an embed."""
    lines = ["# What I remember about you", ""]
    for name, section in memory.sections():
        if section.summary:
            lines += [f"## {SECTION_LABELS[name]}", section.summary, ""]
    if memory.facts:
        lines += ["## Facts", ""]
        lines += [f"- `{f.id}` {f.content} ({f.category}, {f.confidence:.0%})" for f in memory.facts]
    return "\n".join(lines) + "\n"


def build_show_response(memory: MemoryFile, *, paused: bool) -> tuple[discord.Embed, discord.File | None]:
    """An embed within Discord's limits; the full text attached as a file when it would not fit."""
    embed = discord.Embed(title="What I remember about you", colour=EMBED_COLOUR)
    footer = "Remove one with /memory forget fact:<id>, or everything with /memory forget."
    if paused:
        footer = "Learning is paused (/memory resume to turn it back on). " + footer
    embed.set_footer(text=footer)
    summaries = [(SECTION_LABELS[name], section.summary) for name, section in memory.sections() if section.summary]
    # Discord counts title, footer, field names and values and the description against one 6,000 limit: share
    # what is left between the summaries, keeping room for the line that points at the attachment.
    room = EMBED_TOTAL_LIMIT - len(embed) - sum(len(label) for label, _ in summaries) - _POINTER_RESERVE
    per_field = max(1, min(EMBED_FIELD_LIMIT, room // max(1, len(summaries))))
    clipped = False
    for label, summary in summaries:
        value = _clip(summary, per_field)
        clipped = clipped or value != summary
        embed.add_field(name=label, value=value, inline=False)
    description = ""
    if memory.facts:
        lines = [fact_line(f.id, f.content, f.category, f.confidence) for f in memory.facts]
        description = f"**Facts** ({len(lines)})\n" + "\n".join(lines)
    fits = len(description) <= EMBED_DESCRIPTION_LIMIT and len(embed) + len(description) <= EMBED_TOTAL_LIMIT
    if fits and not clipped:
        embed.description = description or None
        return embed, None
    # Something did not fit: show what does, point at the attachment (the reserve above keeps room for that).
    if not fits:
        embed.description = f"{len(memory.facts)} facts: the full list is in the attached file."
    else:
        pointer = "Some summaries are shortened here: the full text is in the attached file."
        both = f"{description}\n\n{pointer}" if description else pointer
        fits_both = len(both) <= EMBED_DESCRIPTION_LIMIT and len(embed) + len(both) <= EMBED_TOTAL_LIMIT
        embed.description = both if fits_both else pointer
    data = memory_as_markdown(memory).encode("utf-8")
    return embed, discord.File(io.BytesIO(data), filename="memory.md")


class ConfirmForgetView(SafeView):
    """Two buttons only the caller can press; expires after a minute."""

    def __init__(self, owner_id: int, memory: MemoryService, *, timeout: float = CONFIRM_TIMEOUT_SECONDS) -> None:
        super().__init__(timeout=timeout)
        self.owner_id = owner_id
        self.memory = memory
        self.origin: discord.Interaction | None = None
        self.outcome: str | None = None

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if interaction.user.id != self.owner_id:
            await interaction.response.send_message("Only the person who asked can press this.", ephemeral=True)
            return False
        return True

    @discord.ui.button(label="Forget everything", style=discord.ButtonStyle.danger)
    async def confirm(self, interaction: discord.Interaction, button: discord.ui.Button[ConfirmForgetView]) -> None:
        self.outcome = "forgotten"
        self.stop()
        await interaction.response.defer(ephemeral=True)
        existed = await self.memory.forget_all(self.owner_id)
        text = "Done: I've forgotten everything I knew about you." if existed else "Done: I had nothing stored."
        await interaction.edit_original_response(content=text, view=None)

    @discord.ui.button(label="Cancel", style=discord.ButtonStyle.secondary)
    async def cancel(self, interaction: discord.Interaction, button: discord.ui.Button[ConfirmForgetView]) -> None:
        self.outcome = "cancelled"
        self.stop()
        await interaction.response.edit_message(content="Cancelled: your memory is unchanged.", view=None)

    async def on_timeout(self) -> None:
        self.outcome = "expired"
        if self.origin is not None:
            try:
                await self.origin.edit_original_response(content="This confirmation expired.", view=None)
            except discord.HTTPException:
                log.debug("could not edit an expired confirmation", exc_info=True)


class MemoryCog(commands.Cog):
    memory_group = app_commands.Group(
        name="memory",
        description="See and control what I remember about you",
        allowed_contexts=EVERYWHERE,
    )

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.memory = bot.resources.memory

    @memory_group.command(name="show", description="Show what I remember about you (only you can see it)")
    async def show(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        memory = await self.memory.show(interaction.user.id)
        paused = self.memory.is_paused(interaction.user.id)
        if memory.is_empty():
            note = " Learning is paused." if paused else " Chat with me and I'll pick things up as we go."
            await interaction.followup.send("I don't remember anything about you yet." + note, ephemeral=True)
            return
        embed, attachment = build_show_response(memory, paused=paused)
        if attachment is None:
            await interaction.followup.send(embed=embed, ephemeral=True)
        else:
            await interaction.followup.send(embed=embed, file=attachment, ephemeral=True)

    @memory_group.command(name="forget", description="Forget one fact, or everything I know about you")
    @app_commands.describe(fact="The id of the fact to forget (leave empty to forget everything)")
    async def forget(self, interaction: discord.Interaction, fact: str | None = None) -> None:
        user_id = interaction.user.id
        if fact is None:
            view = ConfirmForgetView(user_id, self.memory)
            view.origin = interaction
            await interaction.response.send_message(
                "Forget everything I know about you? This cannot be undone.", view=view, ephemeral=True
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        fact_id = fact.strip().split(" ", 1)[0]
        removed = await self.memory.forget_fact(user_id, fact_id)
        text = f"Forgotten: `{fact_id}`." if removed else f"You have no fact with the id `{fact_id}`."
        await interaction.followup.send(text, ephemeral=True)

    @forget.autocomplete("fact")
    async def forget_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """The caller's own facts, matching what they typed in the id or the text."""
        memory = await self.memory.show(interaction.user.id)
        needle = current.strip().casefold()
        choices = []
        for item in reversed(memory.facts):  # newest first
            if needle and needle not in item.id and needle not in item.content.casefold():
                continue
            choices.append(app_commands.Choice(name=_clip(f"{item.id} · {item.content}", 100), value=item.id))
            if len(choices) == AUTOCOMPLETE_LIMIT:
                break
        return choices

    @memory_group.command(name="export", description="Download everything I remember about you as JSON")
    async def export(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        data = await self.memory.export(interaction.user.id)
        attachment = discord.File(io.BytesIO(data), filename=f"memory-{interaction.user.id}.json")
        await interaction.followup.send("Here is your memory file.", file=attachment, ephemeral=True)

    @memory_group.command(name="pause", description="Stop learning new things about you (I still use what I know)")
    async def pause(self, interaction: discord.Interaction) -> None:
        await self._set_paused(
            interaction,
            True,
            done="Paused: I won't learn anything new about you until you use /memory resume.",
            already="Learning was already paused.",
        )

    @memory_group.command(name="resume", description="Start learning about you again")
    async def resume(self, interaction: discord.Interaction) -> None:
        await self._set_paused(
            interaction,
            False,
            done="Resumed: I'll remember what you tell me again.",
            already="Learning was not paused.",
        )

    async def _set_paused(self, interaction: discord.Interaction, paused: bool, *, done: str, already: str) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        changed = await self.memory.set_paused(interaction.user.id, paused)
        await interaction.followup.send(done if changed else already, ephemeral=True)

async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(MemoryCog(bot))
