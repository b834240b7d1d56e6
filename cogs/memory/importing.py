"""`/memory import file:`: the ephemeral preview of a memory file and its three buttons, `Import`,
`Import including sensitive` and `Cancel`.

The buttons carry the owner and the pending import's token in their custom id (the import itself waits in the
engine, `memory.user(id).import_preview`), so a press after a restart works, only the owner can press, and a late
press hears that it expired. The preview lists what will be added, what is already known, what is refused (a
credential by its kind, never its words) and what is sensitive, within Discord's limits, in the reader's language
(the memories themselves in the words of the file).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.client.interactions import SafeView
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech
from bot.memory.doors import Imported, ImportPreview
from bot.memory.errors import InvalidRequest
from cogs.memory.rendering import clip
from cogs.memory.views import _answering_failures, _memory_cog, _owner_only

if TYPE_CHECKING:
    from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

PREVIEW_LIMIT = 4000  # characters of the embed's description (Discord allows 4096)
LISTED = 15  # items listed per heading; the rest are counted
INCLUDING_SENSITIVE = N_("Import including sensitive")
ACTIONS = {"add": N_("Import"), "all": INCLUDING_SENSITIVE, "no": N_("Cancel")}


def _listed(heading: str, lines: list[str], speech: Speech) -> list[str]:
    if not lines:
        return []
    shown = [f"- {clip(discord.utils.escape_markdown(line), 200)}" for line in lines[:LISTED]]
    if len(lines) > LISTED:
        more = len(lines) - LISTED
        shown.append("- " + speech.trn("… and {count} more", "… and {count} more", more))
    return [f"**{heading}** ({speech.number(len(lines))})", *shown, ""]


def preview_text(preview: ImportPreview, speech: Speech = ENGLISH_SPEECH) -> str:
    """The preview as one embed description: each heading with its count and its first items."""
    sensitive = [f"{text} ({speech.tr(kind)})" for text, kind in preview.sensitive]
    lines = [
        *_listed(speech.tr("Will be added"), list(preview.adding), speech),
        *_listed(speech.tr("Sensitive: added only with “{button}”", button=speech.tr(INCLUDING_SENSITIVE)), sensitive,
                 speech),
        *_listed(speech.tr("Already known, skipped"), list(preview.known), speech),
        *_listed(speech.tr("Refused"), [speech.phrase(line) for line in preview.refused], speech),
    ]
    if preview.adding or preview.sensitive:
        lines.append(speech.tr("Imported memories count as your own words: I never change them, and only you remove "
                               "them."))
    else:
        lines.append(speech.tr("Nothing new to import."))
    return clip("\n".join(lines), PREVIEW_LIMIT)


def done_text(done: Imported, speech: Speech = ENGLISH_SPEECH) -> str:
    count = len(done.fact_ids)
    if done.fact_ids:
        text = speech.trn("Imported {count} memory: `{first}` …", "Imported {count} memories: `{first}` …", count,
                          first=done.fact_ids[0])
    else:
        text = speech.trn("Imported {count} memory.", "Imported {count} memories.", count)
    if done.sensitive_left_out:
        left_out = done.sensitive_left_out
        text += " " + speech.trn("{count} sensitive one was left out.", "{count} sensitive ones were left out.",
                                 left_out)
    return text


class ImportButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=r"memory:import:(?P<action>add|all|no):(?P<owner>[0-9]{1,20}):(?P<token>[0-9a-f]{16})",
):
    """One of the preview's buttons; owner and token are in the custom id (see the module)."""

    def __init__(
        self, action: str, owner_id: int, token: str, *, memory: MemoryService | None = None,
        speech: Speech = ENGLISH_SPEECH,
    ) -> None:
        style = discord.ButtonStyle.secondary if action == "no" else discord.ButtonStyle.primary
        if action == "all":
            style = discord.ButtonStyle.danger
        super().__init__(discord.ui.Button(
            label=speech.tr(ACTIONS[action]), style=style, custom_id=f"memory:import:{action}:{owner_id}:{token}"
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
        speech = interaction_speech(interaction)
        try:
            if self.action == "no":
                cancelled = await mine.import_cancel(self.token)
                text = speech.tr("Cancelled: nothing was imported.") if cancelled else speech.tr(
                    "There was no import waiting."
                )
            else:
                text = done_text(await mine.import_confirm(self.token, sensitive=self.action == "all"), speech)
        except InvalidRequest as refused:
            text = speech.phrase(refused.phrase)
        await interaction.edit_original_response(content=text, embed=None, view=None)


class ImportPreviewView(SafeView):
    """The three buttons under a preview; they keep working across a restart (`ImportButton`)."""

    def __init__(
        self, owner_id: int, preview: ImportPreview, memory: MemoryService | None = None,
        speech: Speech = ENGLISH_SPEECH,
    ) -> None:
        super().__init__(timeout=None)
        self.owner_id = owner_id
        actions = (["add"] if preview.adding or preview.sensitive else []) + (["all"] if preview.sensitive else [])
        for action in [*actions, "no"]:
            self.add_item(ImportButton(action, owner_id, preview.token, memory=memory, speech=speech))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await _owner_only(interaction, self.owner_id)
