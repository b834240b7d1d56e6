"""`/memory import file:`: the ephemeral preview of a memory file and its three buttons, `Import`,
`Import including sensitive` and `Cancel`.

The buttons carry the owner and the pending import's token in their custom id (the import itself waits in the
engine, `memory.user(id).import_preview`), so a press after a restart works, only the owner can press, and a late
press hears that it expired. The preview lists what will be added, what is already known, what is refused (a
credential by its kind, never its words) and what is sensitive, within Discord's limits.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.client.interactions import SafeView
from bot.memory.doors import Imported, ImportPreview
from bot.memory.errors import InvalidRequest
from cogs.memory.rendering import clip
from cogs.memory.views import _answering_failures, _memory_cog, _owner_only

if TYPE_CHECKING:
    from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

PREVIEW_LIMIT = 4000  # characters of the embed's description (Discord allows 4096)
LISTED = 15  # items listed per heading; the rest are counted
ACTIONS = {"add": "Import", "all": "Import including sensitive", "no": "Cancel"}


def _listed(heading: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    shown = [f"- {clip(discord.utils.escape_markdown(line), 200)}" for line in lines[:LISTED]]
    if len(lines) > LISTED:
        shown.append(f"- … and {len(lines) - LISTED} more")
    return [f"**{heading}** ({len(lines)})", *shown, ""]


def preview_text(preview: ImportPreview) -> str:
    """The preview as one embed description: each heading with its count and its first items."""
    lines = [
        *_listed("Will be added", list(preview.adding)),
        *_listed("Sensitive: added only with “Import including sensitive”",
                 [f"{text} ({kind})" for text, kind in preview.sensitive]),
        *_listed("Already known, skipped", list(preview.known)),
        *_listed("Refused", [str(line) for line in preview.refused]),
    ]
    if preview.adding or preview.sensitive:
        lines.append("Imported memories count as your own words: I never change them, and only you remove them.")
    else:
        lines.append("Nothing new to import.")
    return clip("\n".join(lines), PREVIEW_LIMIT)


def done_text(done: Imported) -> str:
    text = f"Imported {len(done.fact_ids)} memories" + (f": `{done.fact_ids[0]}` …" if done.fact_ids else ".")
    if done.sensitive_left_out:
        text += f" {done.sensitive_left_out} sensitive ones were left out."
    return text


class ImportButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=r"memory:import:(?P<action>add|all|no):(?P<owner>[0-9]{1,20}):(?P<token>[0-9a-f]{16})",
):
    """One of the preview's buttons; owner and token are in the custom id (see the module)."""

    def __init__(self, action: str, owner_id: int, token: str, *, memory: MemoryService | None = None) -> None:
        style = discord.ButtonStyle.secondary if action == "no" else discord.ButtonStyle.primary
        if action == "all":
            style = discord.ButtonStyle.danger
        super().__init__(discord.ui.Button(
            label=ACTIONS[action], style=style, custom_id=f"memory:import:{action}:{owner_id}:{token}"
        ))
        self.action, self.owner_id, self.token, self.memory = action, owner_id, token, memory

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ImportButton:
        return cls(match["action"], int(match["owner"]), match["token"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return await _owner_only(interaction, self.owner_id)

    async def callback(self, interaction: discord.Interaction) -> Any:
        await _answering_failures(interaction, ACTIONS[self.action], lambda: self._press(interaction), self.view)

    async def _press(self, interaction: discord.Interaction) -> None:
        if self.view is not None:
            self.view.stop()
        await interaction.response.defer(ephemeral=True)
        mine = (self.memory or _memory_cog(interaction).memory).user(self.owner_id)
        try:
            if self.action == "no":
                cancelled = await mine.import_cancel(self.token)
                text = "Cancelled: nothing was imported." if cancelled else "There was no import waiting."
            else:
                text = done_text(await mine.import_confirm(self.token, sensitive=self.action == "all"))
        except InvalidRequest as refused:
            text = str(refused)
        await interaction.edit_original_response(content=text, embed=None, view=None)


class ImportPreviewView(SafeView):
    """The three buttons under a preview; they keep working across a restart (`ImportButton`)."""

    def __init__(self, owner_id: int, preview: ImportPreview, memory: MemoryService | None = None) -> None:
        super().__init__(timeout=None)
        self.owner_id = owner_id
        if preview.adding or preview.sensitive:
            self.add_item(ImportButton("add", owner_id, preview.token, memory=memory))
        if preview.sensitive:
            self.add_item(ImportButton("all", owner_id, preview.token, memory=memory))
        self.add_item(ImportButton("no", owner_id, preview.token, memory=memory))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await _owner_only(interaction, self.owner_id)
