"""`/memory show | remember | edit | share | unshare | forget | export | ...`: each user sees and controls their own
memory, privately. `show` names the place each item was learned in and marks what the place it was asked in cannot
use; `remember` stores a fact in the place where it is typed (or everywhere).

Every response is ephemeral (only the caller sees it) and only ever reads or changes the caller's own memory
(`memory.user(<the caller's id>)`): no command takes a user id. Slow work is deferred first so the 3-second
interaction deadline is never missed. A request the engine refuses (`InvalidRequest`) is answered with its one line
by the command tree's error hook (`bot.client.interactions`). Answers are in the caller's Discord language
(`interaction.locale`); names and descriptions are marked for the catalogs (`locale_str`), which the command tree's
translator gives Discord.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.client.interactions import EVERYWHERE
from bot.client.locations import location_of, place_name
from bot.client.notices import UNREADABLE_MEMORY_NOTICE
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import Speech
from bot.memory.doors import (
    MAX_FORGET_MINUTES,
    MAX_IMPORT_BYTES,
    MAX_MODE_MINUTES,
    MAX_USER_FACT_CHARS,
    PAUSE,
    ForgetFact,
    ForgetMinutes,
    ForgetSection,
    Fresh,
    Incognito,
    PrivacyMode,
    Resume,
)
from cogs.memory.importing import ImportButton, ImportPreviewView, preview_text
from cogs.memory.rendering import PlaceLabels, build_show_pages, clip, describe_modes, recalled_embed, section_label
from cogs.memory.views import SEARCH_KEPT, ConfirmForgetView, ForgetButton, PageButton, ShowPagesView

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

DEFAULT_MODE_MINUTES = 60
AUTOCOMPLETE_LIMIT = 25


SECTION_CHOICES = [  # the English name is the summary's key; its translations name the summary as /memory show does
    app_commands.Choice(name=locale_str("workContext"), value="workContext"),
    app_commands.Choice(name=locale_str("personalContext"), value="personalContext"),
    app_commands.Choice(name=locale_str("topOfMind"), value="topOfMind"),
    app_commands.Choice(name=locale_str("recentMonths"), value="recentMonths"),
    app_commands.Choice(name=locale_str("earlierContext"), value="earlierContext"),
    app_commands.Choice(name=locale_str("longTermBackground"), value="longTermBackground"),
]


class MemoryCog(commands.Cog):
    memory_group = app_commands.Group(
        name=locale_str("memory"),
        description=locale_str("See and control what I remember about you"),
        allowed_contexts=EVERYWHERE,
    )

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.memory = bot.resources.memory
        self.inspect_menu = app_commands.ContextMenu(
            name=locale_str("What did you remember?"), callback=self.what_did_you_remember,
            allowed_contexts=EVERYWHERE,
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.inspect_menu)
        self.bot.add_dynamic_items(ForgetButton, PageButton, ImportButton)  # buttons sent before a restart answer

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.inspect_menu.name, type=self.inspect_menu.type)
        self.bot.remove_dynamic_items(ForgetButton, PageButton, ImportButton)

    async def _answer(self, interaction: discord.Interaction, text: str, **kwargs: Any) -> None:
        """A private follow-up; an empty `text` sends no content at all (an embed alone), not an empty string. It
        carries the one notice that the caller's earlier memory was unreadable, when there is one to give."""
        if self.memory.user(interaction.user.id).take_unreadable_notice():
            notice = interaction_speech(interaction).tr(UNREADABLE_MEMORY_NOTICE)
            text = f"{text}\n{notice}" if text else notice
        if text:
            kwargs["content"] = text
        await interaction.followup.send(ephemeral=True, **kwargs)

    # --- seeing --------------------------------------------------------------------------------------------

    @memory_group.command(
        name=locale_str("show"), description=locale_str("Show what I remember about you (only you can see it)")
    )
    @app_commands.describe(search=locale_str("Only show facts containing this text (its first 40 characters)"))
    async def show(self, interaction: discord.Interaction, search: str | None = None) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        user_id = interaction.user.id
        mine = self.memory.user(user_id)
        memory = await mine.show()
        modes = describe_modes(mine.privacy, speech)
        if memory.is_empty():
            note = modes or speech.tr("Chat with me and I'll pick things up as we go.")
            await self._answer(interaction, speech.tr("I don't remember anything about you yet.") + " " + note)
            return
        search = search[:SEARCH_KEPT] if search else None  # what the page buttons can carry
        pages, attachment = build_show_pages(memory, search=search, labels=self.place_labels(interaction))
        extra: dict[str, Any] = {"embed": pages[0]}
        if attachment is not None:
            extra["file"] = attachment
        view = None
        if len(pages) > 1:
            view = ShowPagesView(user_id, pages, source=self, search=search, speech=speech)
            view.origin = interaction
            extra["view"] = view
        await self._answer(interaction, modes, **extra)

    # --- adding and correcting -----------------------------------------------------------------------------

    @memory_group.command(
        name=locale_str("remember"), description=locale_str("Tell me something to remember about you, in your words")
    )
    @app_commands.describe(
        text=locale_str("What to remember (up to 400 characters)"),
        everywhere=locale_str("Use it in every server and DM, not only where you say it"),
    )
    async def remember(
        self,
        interaction: discord.Interaction,
        text: app_commands.Range[str, 1, MAX_USER_FACT_CHARS],
        everywhere: bool = False,
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        here = location_of(interaction.channel, interaction.guild).place
        fact = await self.memory.user(interaction.user.id).add(text, place=here, everywhere=everywhere)
        content = discord.utils.escape_markdown(fact.content)
        if fact.shared:
            answer = speech.tr(
                "Remembered as `{fact_id}` (used everywhere): {content}", fact_id=fact.id, content=content
            )
        else:
            answer = speech.tr(
                "Remembered as `{fact_id}` (used in {place}): {content}",
                fact_id=fact.id, place=place_name(fact.place, self.bot, speech), content=content,
            )
        await self._answer(interaction, answer)

    @memory_group.command(
        name=locale_str("edit"), description=locale_str("Correct one of the facts I remember about you")
    )
    @app_commands.describe(
        fact=locale_str("The fact to correct"), text=locale_str("What it should say (up to 400 characters)")
    )
    async def edit(
        self,
        interaction: discord.Interaction,
        fact: str,
        text: app_commands.Range[str, 1, MAX_USER_FACT_CHARS],
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        fact_id = fact.strip().split(" ", 1)[0]
        updated = await self.memory.user(interaction.user.id).edit(fact_id, text)
        content = discord.utils.escape_markdown(updated.content)
        await self._answer(interaction, interaction_speech(interaction).tr(
            "Corrected `{fact_id}`: {content}", fact_id=updated.id, content=content
        ))

    # --- forgetting ----------------------------------------------------------------------------------------

    @memory_group.command(
        name=locale_str("forget"), description=locale_str("Forget a fact, a summary, the last minutes, or everything")
    )
    @app_commands.describe(
        fact=locale_str("The id of one fact to forget"),
        section=locale_str("One of the six summaries to clear (everywhere)"),
        minutes=locale_str("Forget what I learned in the last n minutes (1 to 1440)"),
    )
    @app_commands.choices(section=SECTION_CHOICES)
    async def forget(
        self,
        interaction: discord.Interaction,
        fact: str | None = None,
        section: str | None = None,
        minutes: app_commands.Range[int, 1, MAX_FORGET_MINUTES] | None = None,
    ) -> None:
        user_id = interaction.user.id
        speech = interaction_speech(interaction)
        given = [option for option in (fact, section, minutes) if option is not None]
        if not given:
            view = ConfirmForgetView(user_id, self.memory, speech=speech)
            view.origin = interaction
            await interaction.response.send_message(
                speech.tr("Forget everything I know about you? This cannot be undone."), view=view, ephemeral=True
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        if len(given) > 1:
            await self._answer(
                interaction, speech.tr("Pick one of fact, section or minutes (or none to forget everything).")
            )
            return
        await self._answer(interaction, await self._forget_one(user_id, fact, section, minutes, speech))

    async def _forget_one(
        self, user_id: int, fact: str | None, section: str | None, minutes: int | None, speech: Speech
    ) -> str:
        mine = self.memory.user(user_id)
        if fact is not None:
            fact_id = fact.strip().split(" ", 1)[0]
            removed = await mine.forget(ForgetFact(fact_id))
            if removed.facts:
                return speech.tr("Forgotten: `{fact_id}`.", fact_id=fact_id)
            return speech.tr("You have no fact with the id `{fact_id}`.", fact_id=fact_id)
        if section is not None:
            cleared = await mine.forget(ForgetSection(section))
            label = section_label(section, speech)
            if cleared.sections:
                return speech.tr("Cleared the “{label}” summary.", label=label)
            return speech.tr("The “{label}” summary was already empty.", label=label)
        assert minutes is not None
        report = await mine.forget(ForgetMinutes(minutes))
        if not (report.facts or report.sections or report.turns):
            return speech.trn(
                "I learned nothing from you in the last minute, so there was nothing to forget.",
                "I learned nothing from you in the last {count} minutes, so there was nothing to forget.", minutes,
            )
        return speech.trn(
            "Forgot the last minute. Facts removed: {facts}; summaries put back as they were: {summaries}; messages "
            "I hadn't learned from yet, dropped: {messages}.",
            "Forgot the last {count} minutes. Facts removed: {facts}; summaries put back as they were: {summaries}; "
            "messages I hadn't learned from yet, dropped: {messages}.",
            minutes, facts=speech.number(report.facts), summaries=speech.number(report.sections),
            messages=speech.number(report.turns),
        )

    async def _autocomplete_facts(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """The caller's own facts, matching what they typed in the id or the text."""
        memory = await self.memory.user(interaction.user.id).show()
        needle = current.strip().casefold()
        choices = []
        for item in reversed(memory.facts):  # newest first
            if needle and needle not in item.id and needle not in item.content.casefold():
                continue
            history = interaction_speech(interaction).tr("(history)") + " " if item.closed else ""
            label = f"{item.id} · {history}{item.content}"
            choices.append(app_commands.Choice(name=clip(label, 100), value=item.id))
            if len(choices) == AUTOCOMPLETE_LIMIT:
                break
        return choices

    @forget.autocomplete("fact")
    async def forget_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    @edit.autocomplete("fact")
    async def edit_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    # --- places -------------------------------------------------------------------------------------------

    def place_labels(self, interaction: discord.Interaction) -> PlaceLabels:
        """Names from the bot's cache, in the caller's language, and what the place the command was used in may
        use."""
        speech = interaction_speech(interaction)
        here = location_of(interaction.channel, interaction.guild).place
        if here.kind == "dm":
            here_name = speech.tr("DMs")
        elif here.kind == "guild":
            here_name = place_name(here.key, self.bot, speech)
        else:
            name = getattr(interaction.channel, "name", None)
            here_name = f"#{name}" if name else place_name(here.key, self.bot, speech)
        return PlaceLabels(
            here=here_name,
            name=lambda key: place_name(key, self.bot, speech),
            fact_usable=lambda fact: self.memory.recall.can_use(here, fact),
            summaries_usable=lambda key: self.memory.recall.can_use_summaries_of(here, key),
            speech=speech,
        )

    @memory_group.command(
        name=locale_str("share"), description=locale_str("Let me use one fact everywhere: DMs and every server")
    )
    @app_commands.describe(fact=locale_str("The id of the fact to share everywhere"))
    async def share(self, interaction: discord.Interaction, fact: str) -> None:
        await self._set_shared(interaction, fact, True)

    @share.autocomplete("fact")
    async def share_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    @memory_group.command(
        name=locale_str("unshare"), description=locale_str("Use one fact again only where I learned it")
    )
    @app_commands.describe(fact=locale_str("The id of the fact to keep to where it was learned"))
    async def unshare(self, interaction: discord.Interaction, fact: str) -> None:
        await self._set_shared(interaction, fact, False)

    @unshare.autocomplete("fact")
    async def unshare_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    async def _set_shared(self, interaction: discord.Interaction, fact: str, shared: bool) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        fact_id = fact.strip().split(" ", 1)[0]
        mine = self.memory.user(interaction.user.id)
        changed = await mine.share(fact_id, shared)
        if changed is None:
            text = speech.tr("You have no fact with the id `{fact_id}`.", fact_id=fact_id)
        elif shared:
            text = speech.tr(
                "Shared: I can now use `{fact_id}` everywhere, in DMs and in every server.", fact_id=fact_id
            ) if changed else speech.tr("`{fact_id}` was already shared everywhere.", fact_id=fact_id)
        else:
            item = (await mine.show()).fact_by_id(fact_id)
            where = place_name(item.place, self.bot, speech) if item is not None else speech.tr("where I learned it")
            text = speech.tr(
                "Unshared: I use `{fact_id}` again only where I learned it ({place}).", fact_id=fact_id, place=where
            ) if changed else speech.tr(
                "`{fact_id}` was not shared; I use it only where I learned it ({place}).", fact_id=fact_id, place=where
            )
        await self._answer(interaction, text)

    @memory_group.command(
        name=locale_str("export"), description=locale_str("Download everything I remember about you as JSON")
    )
    async def export(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        data = await self.memory.user(interaction.user.id).export()
        attachment = discord.File(io.BytesIO(data), filename=f"memory-{interaction.user.id}.json")
        text = interaction_speech(interaction).tr("Here is your memory file.")
        await interaction.followup.send(text, file=attachment, ephemeral=True)

    @memory_group.command(
        name=locale_str("import"), description=locale_str("Bring memories from a file: my export, or one per line")
    )
    @app_commands.describe(
        file=locale_str("My /memory export (JSON), or a text or Markdown file with one memory per line")
    )
    async def import_file(self, interaction: discord.Interaction, file: discord.Attachment) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        data = await file.read() if file.size <= MAX_IMPORT_BYTES else None  # a file over the limit is not fetched
        user_id = interaction.user.id
        preview = await self.memory.user(user_id).import_preview(data, size=file.size)
        embed = discord.Embed(
            title=speech.tr("Import preview (only you can see it)"), description=preview_text(preview, speech)
        )
        if preview.adding or preview.sensitive:
            view = ImportPreviewView(user_id, preview, self.memory, speech=speech)
            await self._answer(interaction, "", embed=embed, view=view)
        else:
            await self._answer(interaction, "", embed=embed)

    # --- privacy modes -------------------------------------------------------------------------------------

    @memory_group.command(
        name=locale_str("incognito"), description=locale_str("Don't learn anything from me for a while")
    )
    @app_commands.describe(minutes=locale_str("For how long (default 60; 0 = until /memory resume)"))
    async def incognito(
        self, interaction: discord.Interaction, minutes: app_commands.Range[int, 0, MAX_MODE_MINUTES] = 60
    ) -> None:
        await self._set_mode(interaction, Incognito(minutes))

    @memory_group.command(
        name=locale_str("fresh"),
        description=locale_str("Reply without using anything you remember about me, for a while"),
    )
    @app_commands.describe(minutes=locale_str("For how long (default 60; 0 = until /memory resume)"))
    async def fresh(
        self, interaction: discord.Interaction, minutes: app_commands.Range[int, 0, MAX_MODE_MINUTES] = 60
    ) -> None:
        await self._set_mode(interaction, Fresh(minutes))

    async def _set_mode(self, interaction: discord.Interaction, mode: PrivacyMode) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        change = await self.memory.user(interaction.user.id).set_mode(mode)
        note = " " + speech.tr("Nothing is deleted.") if isinstance(mode, Fresh) else ""
        await self._answer(interaction, describe_modes(change.after, speech) + note)

    @memory_group.command(
        name=locale_str("pause"),
        description=locale_str("Stop learning about you until /memory resume (I still use what I know)"),
    )
    async def pause(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        changed = not (await self.memory.user(interaction.user.id).set_mode(PAUSE)).before.paused
        await self._answer(
            interaction,
            speech.tr("Paused: I won't learn anything new about you until you use /memory resume.")
            if changed else speech.tr("Learning was already paused."),
        )

    @memory_group.command(
        name=locale_str("resume"), description=locale_str("Learn about you again and use your memory in replies")
    )
    async def resume(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        changed = (await self.memory.user(interaction.user.id).set_mode(Resume())).before.anything_on
        await self._answer(
            interaction,
            speech.tr("Resumed: I'll remember what you tell me again, and my replies use what I remember.")
            if changed else speech.tr("Nothing to resume: learning was on and my replies already use your memory."),
        )

    # --- what did you remember? ----------------------------------------------------------------------------

    async def what_did_you_remember(self, interaction: discord.Interaction, message: discord.Message) -> None:
        """On one of the bot's replies to the caller: the summaries and facts its prompt carried, as they are now."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        me = self.bot.user
        if me is None or message.author.id != me.id:
            await self._answer(interaction, speech.tr("That isn't one of my replies: use this on a message I sent."))
            return
        record = await self.memory.recall.reply_record(message.id)
        if record is None:
            await self._answer(interaction, speech.tr(
                "I have no record of what that message used: it isn't a chat reply, or it is older than the replies I "
                "keep track of."
            ))
            return
        items = await self.memory.user(interaction.user.id).recalled(record)
        if not items:
            await self._answer(interaction, speech.tr("Nothing: that reply used nothing I remember about you."))
            return
        embed = recalled_embed(items, lambda key: place_name(key, self.bot, speech), speech)
        await self._answer(interaction, "", embed=embed)
