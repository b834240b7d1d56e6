"""`/bot-settings`: a server's admins choose how the bot speaks and which model it uses, per server or per channel
(a channel's threads follow it; a category's channels too), who may talk to it, and whether the server's members
may DM it.

Only members with Manage Server: the commands carry that default permission (Discord hides them from everyone else
unless a server changes it in its integration settings) and every call checks it again, because a server can grant
the command to anyone. Answers are ephemeral. A prompt is the operator's voice for that channel, not a user's: it
takes the place of SYSTEM_PROMPT there, and people's memory stays quoted data after it. A model must be one of the
operator's list (CHAT_MODEL and ALLOWED_CHAT_MODELS); any other name is refused with the list. Memory extraction
never changes: MEMORY_MODEL with its own fixed prompt. Everything a server set is deleted when the bot leaves it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.client.interactions import may_administer
from bot.client.locations import location_of
from bot.client.reply_policy import roles_text
from bot.memory.doors import MAX_PROMPT_CHARS, Chosen

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

# Where settings can be made: channels people talk in, their threads, and categories (their channels follow them).
SettingsChannel = (
    discord.TextChannel | discord.VoiceChannel | discord.StageChannel | discord.ForumChannel | discord.CategoryChannel
    | discord.Thread
)
Scope = Literal["channel", "server"]
NOT_ALLOWED = "Only members with the **Manage Server** permission can change my settings in this server."
PROMPT_SHOWN_CHARS = 300
LEVEL_WORDS = {"thread": "this thread", "channel": "the channel", "category": "the category", "server": "the server"}


def _where(chosen: Chosen | None, what: str) -> str:
    if chosen is None:
        return f"the bot's default ({what})"
    if chosen.level == "server":
        return "set for the whole server"
    return f"set for {LEVEL_WORDS[chosen.level]} <#{chosen.place_id}>"


def _quoted(text: str) -> str:
    shown = text if len(text) <= PROMPT_SHOWN_CHARS else text[: PROMPT_SHOWN_CHARS - 1] + "…"
    return "\n".join(f"> {line}" for line in discord.utils.escape_mentions(shown).splitlines() or [""])


class SettingsCog(commands.Cog):
    settings_group = app_commands.Group(
        name="bot-settings",
        description="How I speak and which model I use here, and who may talk to me (Manage Server)",
        default_permissions=discord.Permissions(manage_guild=True),
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        guild_only=True,
    )

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.community = bot.resources.memory.community
        self.settings = bot.resources.settings

    # --- helpers -------------------------------------------------------------------------------------------

    async def _refused(self, interaction: discord.Interaction) -> bool:
        """Answer (and return True) unless the caller has Manage Server in this server, checked on every call."""
        if may_administer(interaction) and interaction.guild is not None:
            return False
        await interaction.response.send_message(NOT_ALLOWED, ephemeral=True)
        return True

    async def _target(
        self, interaction: discord.Interaction, scope: Scope, channel: SettingsChannel | None
    ) -> tuple[int | None, str] | None:
        """The place a change applies to (None for the server) and its name in words; None after answering why
        not (a channel of another server, or no channel)."""
        assert interaction.guild is not None
        if scope == "server":
            return None, "the whole server"
        target = channel or interaction.channel
        guild = getattr(target, "guild", None)
        if target is None or guild is None:
            await interaction.response.send_message("Pick a channel of this server.", ephemeral=True)
            return None
        if guild.id != interaction.guild.id:
            await interaction.response.send_message("That channel is not in this server.", ephemeral=True)
            return None
        kind = "category" if isinstance(target, discord.CategoryChannel) else (
            "thread" if isinstance(target, discord.Thread) else "channel"
        )
        return target.id, f"the {kind} <#{target.id}>" + (" and its threads" if kind == "channel" else "")

    # --- the commands --------------------------------------------------------------------------------------

    @settings_group.command(name="prompt", description="Set my persona and instructions for a channel or the server")
    @app_commands.describe(
        scope="This channel (its threads too) or the whole server",
        text="How I should speak and behave there (replaces the bot's default prompt)",
        channel="Another channel, a category or a thread instead of this channel",
    )
    async def prompt(
        self,
        interaction: discord.Interaction,
        scope: Scope,
        text: app_commands.Range[str, 1, MAX_PROMPT_CHARS],
        channel: SettingsChannel | None = None,
    ) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        target = await self._target(interaction, scope, channel)
        if target is None:
            return
        place_id, where = target
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self.community.set_prompt(interaction.guild.id, place_id, text.strip())
        log.info(
            "community settings: prompt set for guild %s place %s (%d characters) by user %s",
            interaction.guild.id, place_id, len(text), interaction.user.id,
        )
        await interaction.followup.send(
            f"From now on I use this prompt in {where}:\n{_quoted(text.strip())}", ephemeral=True
        )

    @settings_group.command(name="model", description="Choose the chat model for a channel or the server")
    @app_commands.describe(
        scope="This channel (its threads too) or the whole server",
        name="One of the models this bot's operator allows",
        channel="Another channel, a category or a thread instead of this channel",
    )
    async def model(
        self, interaction: discord.Interaction, scope: Scope, name: str, channel: SettingsChannel | None = None
    ) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        allowed = self.settings.chat_models
        name = name.strip()
        if name not in allowed:
            listed = ", ".join(f"`{model}`" for model in allowed)
            await interaction.response.send_message(
                f"I can't use `{discord.utils.escape_markdown(name[:100])}`. The models this bot's operator "
                f"allows: {listed}.",
                ephemeral=True,
            )
            return
        target = await self._target(interaction, scope, channel)
        if target is None:
            return
        place_id, where = target
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self.community.set_model(interaction.guild.id, place_id, name)
        log.info(
            "community settings: model %s for guild %s place %s (set by user %s)",
            name, interaction.guild.id, place_id, interaction.user.id,
        )
        await interaction.followup.send(f"From now on I answer with `{name}` in {where}.", ephemeral=True)

    @model.autocomplete("name")
    async def _model_names(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        wanted = current.strip().lower()
        return [
            app_commands.Choice(name=model[:100], value=model[:100])
            for model in self.settings.chat_models if wanted in model.lower()
        ][:25]

    @settings_group.command(name="reset", description="Go back to the default prompt and model in a channel or server")
    @app_commands.describe(
        scope="This channel or the whole server",
        channel="Another channel, a category or a thread instead of this channel",
    )
    async def reset(
        self, interaction: discord.Interaction, scope: Scope, channel: SettingsChannel | None = None
    ) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        target = await self._target(interaction, scope, channel)
        if target is None:
            return
        place_id, where = target
        await interaction.response.defer(ephemeral=True, thinking=True)
        changed = await self.community.reset(interaction.guild.id, place_id)
        log.info(
            "community settings: reset for guild %s place %s (by user %s)", interaction.guild.id, place_id,
            interaction.user.id,
        )
        text = (
            f"The prompt and model set for {where} are removed; what applies there now comes from "
            "the level above (or the bot's defaults)."
            if changed else f"Nothing was set for {where}."
        )
        await interaction.followup.send(text, ephemeral=True)

    @settings_group.command(name="show", description="What applies here, and where each setting comes from")
    @app_commands.describe(channel="Another channel, a category or a thread instead of this channel")
    async def show(self, interaction: discord.Interaction, channel: SettingsChannel | None = None) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        place: object = channel or interaction.channel
        place_guild = getattr(place, "guild", None)
        if place_guild is not None and place_guild.id != interaction.guild.id:
            await interaction.response.send_message("That channel is not in this server.", ephemeral=True)
            return
        await interaction.response.send_message(self.describe(interaction.guild, place), ephemeral=True)

    def describe(self, guild: discord.Guild, place: object) -> str:
        choice = self.community.at(location_of(place, guild))
        prompt, model = choice.prompt, choice.model(self.settings.chat_models)
        place_id = getattr(place, "id", None)
        lines = [f"**In {f'<#{place_id}>' if isinstance(place_id, int) else 'this server'}**"]
        lines.append(f"**Prompt**: {_where(prompt, 'SYSTEM_PROMPT')}")
        lines.append(_quoted(prompt.value if prompt else self.settings.system_prompt))
        model_name = model.value if model else self.settings.chat_model
        lines.append(f"**Model**: `{model_name}`, {_where(model, 'CHAT_MODEL')}")
        stale = [chosen for chosen in choice.models if chosen.value not in self.settings.chat_models]
        if stale:
            lines.append(
                f"-# `{stale[0].value}` ({_where(stale[0], '')}) is no longer allowed by the bot's operator, so it is "
                "skipped."
            )
        lines.append("-# Memory extraction always uses the operator's memory model and its own fixed instructions.")
        roles = self.community.allowed_roles(guild.id)
        who = f"members with {roles_text(roles)} (and anyone with Manage Server)" if roles else "everyone"
        lines.append(f"**Who may talk to me in this server**: {who} (`/bot-settings roles`)")
        lines.append(f"**DMs**: {self._dm_words(guild.id)} (`/bot-settings dms`)")
        allowed = ", ".join(f"`{m}`" for m in self.settings.chat_models)
        lines.append(f"**Models you can choose**: {allowed}")
        return "\n".join(lines)[:2000]

    def _dm_words(self, guild_id: int) -> str:
        policy = self.settings.effective_dm_policy
        if policy == "all":
            return "anyone may DM me (the operator's choice)"
        if policy == "off":
            return "I answer no DMs (the operator's choice)"
        if self.community.dms_allowed(guild_id):
            return "members of this server may DM me"
        return "membership of this server does not let anyone DM me"

    @settings_group.command(name="roles", description="Who may talk to me in this server: everyone, or some roles")
    @app_commands.describe(
        add="Let members with this role talk to me (only listed roles may, once any is listed)",
        remove="Take this role off the list",
        everyone="Clear the list: everyone may talk to me again",
    )
    async def roles(
        self,
        interaction: discord.Interaction,
        add: discord.Role | None = None,
        remove: discord.Role | None = None,
        everyone: bool | None = None,
    ) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        guild_id = interaction.guild.id
        current = set(self.community.allowed_roles(guild_id))
        if everyone:
            current.clear()
        if add is not None:
            current.add(add.id)
        if remove is not None:
            current.discard(remove.id)
        if frozenset(current) != self.community.allowed_roles(guild_id):
            await interaction.response.defer(ephemeral=True, thinking=True)
            await self.community.set_allowed_roles(guild_id, frozenset(current))
            log.info(
                "community settings: %d allowed roles in guild %s (set by user %s)", len(current), guild_id,
                interaction.user.id,
            )
        listed = self.community.allowed_roles(guild_id)
        text = (
            f"In this server only members with {roles_text(listed)} (and anyone with Manage Server) can talk to me."
            if listed else "Everyone in this server can talk to me."
        )
        await self._say(interaction, text)

    @settings_group.command(name="dms", description="Whether this server's members may DM me")
    @app_commands.describe(allow="Membership of this server lets people DM me (when DM_POLICY is members)")
    async def dms(self, interaction: discord.Interaction, allow: bool | None = None) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        guild_id = interaction.guild.id
        if allow is not None and allow != self.community.dms_allowed(guild_id):
            await interaction.response.defer(ephemeral=True, thinking=True)
            await self.community.set_dms_allowed(guild_id, allow)
            log.info("community settings: DMs %s for guild %s (by user %s)", allow, guild_id, interaction.user.id)
        text = f"DMs: {self._dm_words(guild_id)}."
        if self.settings.effective_dm_policy != "members":
            text += " This server's choice counts only when the operator sets DM_POLICY=members."
        await self._say(interaction, text)

    async def _say(self, interaction: discord.Interaction, text: str) -> None:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)

    # --- leaving a server ----------------------------------------------------------------------------------

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """The bot left (or was removed from) a server: everything its admins set is deleted."""
        try:
            removed = await self.community.forget_guild(guild.id)
        except OSError as error:
            log.warning("could not delete the settings of guild %s (%s)", guild.id, error.strerror or error)
            return
        log.info("left guild %s: %d settings records deleted", guild.id, removed)


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(SettingsCog(bot))
