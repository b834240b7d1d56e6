"""`/bot-settings`: a server's admins choose how the bot speaks and which model it uses, per server or per channel
(a channel's threads follow it; a category's channels too), who may talk to it, and whether the server's members
may DM it.

Only members with Manage Server: the commands carry that default permission (Discord hides them from everyone else
unless a server changes it in its integration settings) and every call checks it again, because a server can grant
the command to anyone. Answers are ephemeral. A prompt is the operator's voice for that channel, not a user's: it
takes the place of SYSTEM_PROMPT there, and people's memory stays quoted data after it. A model must be one of the
operator's list (CHAT_MODEL and ALLOWED_CHAT_MODELS); any other name is refused with the list. Memory extraction
never changes: MEMORY_MODEL with its own fixed prompt. Everything a server set is deleted when the bot leaves it.
Answers are in the caller's Discord language; the prompts and model names an admin gives stay as they were written.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.client.interactions import may_administer
from bot.client.locations import location_of
from bot.client.reply_policy import roles_text
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import N_, Speech
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
NOT_ALLOWED = N_("Only members with the **Manage Server** permission can change my settings in this server.")
PROMPT_SHOWN_CHARS = 300
SET_FOR = {
    "thread": N_("set for this thread {place}"), "channel": N_("set for the channel {place}"),
    "category": N_("set for the category {place}"),
}


def _where(chosen: Chosen | None, what: str, speech: Speech) -> str:
    if chosen is None:
        return speech.tr("the bot's default ({setting})", setting=what) if what else speech.tr("the bot's default")
    if chosen.level == "server" or chosen.level not in SET_FOR:
        return speech.tr("set for the whole server")
    mention = f"<#{chosen.place_id}>"
    return speech.tr(SET_FOR[chosen.level], place=mention)


def _quoted(text: str) -> str:
    shown = text if len(text) <= PROMPT_SHOWN_CHARS else text[: PROMPT_SHOWN_CHARS - 1] + "…"
    return "\n".join(f"> {line}" for line in discord.utils.escape_mentions(shown).splitlines() or [""])


class SettingsCog(commands.Cog):
    settings_group = app_commands.Group(
        name=locale_str("bot-settings"),
        description=locale_str("How I speak and which model I use here, and who may talk to me (Manage Server)"),
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
        await interaction.response.send_message(interaction_speech(interaction).tr(NOT_ALLOWED), ephemeral=True)
        return True

    async def _target(
        self, interaction: discord.Interaction, scope: Scope, channel: SettingsChannel | None
    ) -> tuple[int | None, str] | None:
        """The place a change applies to (None for the server) and its name in words; None after answering why
        not (a channel of another server, or no channel)."""
        assert interaction.guild is not None
        speech = interaction_speech(interaction)
        if scope == "server":
            return None, speech.tr("the whole server")
        target = channel or interaction.channel
        guild = getattr(target, "guild", None)
        if target is None or guild is None:
            await interaction.response.send_message(speech.tr("Pick a channel of this server."), ephemeral=True)
            return None
        if guild.id != interaction.guild.id:
            await interaction.response.send_message(speech.tr("That channel is not in this server."), ephemeral=True)
            return None
        place = f"<#{target.id}>"
        if isinstance(target, discord.CategoryChannel):
            return target.id, speech.tr("the category {place}", place=place)
        if isinstance(target, discord.Thread):
            return target.id, speech.tr("the thread {place}", place=place)
        return target.id, speech.tr("the channel {place} and its threads", place=place)

    # --- the commands --------------------------------------------------------------------------------------

    @settings_group.command(
        name=locale_str("prompt"), description=locale_str("Set my persona and instructions for a channel or the server")
    )
    @app_commands.describe(
        scope=locale_str("This channel (its threads too) or the whole server"),
        text=locale_str("How I should speak and behave there (replaces the bot's default prompt)"),
        channel=locale_str("Another channel, a category or a thread instead of this channel"),
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
        said = interaction_speech(interaction).tr("From now on I use this prompt in {place}:", place=where)
        await interaction.followup.send(f"{said}\n{_quoted(text.strip())}", ephemeral=True)

    @settings_group.command(
        name=locale_str("model"), description=locale_str("Choose the chat model for a channel or the server")
    )
    @app_commands.describe(
        scope=locale_str("This channel (its threads too) or the whole server"),
        name=locale_str("One of the models this bot's operator allows"),
        channel=locale_str("Another channel, a category or a thread instead of this channel"),
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
            await interaction.response.send_message(interaction_speech(interaction).tr(
                "I can't use `{model}`. The models this bot's operator allows: {models}.",
                model=discord.utils.escape_markdown(name[:100]), models=listed,
            ), ephemeral=True)
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
        said = interaction_speech(interaction).tr(
            "From now on I answer with `{model}` in {place}.", model=name, place=where
        )
        await interaction.followup.send(said, ephemeral=True)

    @model.autocomplete("name")
    async def _model_names(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        wanted = current.strip().lower()
        return [
            app_commands.Choice(name=model[:100], value=model[:100])
            for model in self.settings.chat_models if wanted in model.lower()
        ][:25]

    @settings_group.command(
        name=locale_str("reset"),
        description=locale_str("Go back to the default prompt and model in a channel or server"),
    )
    @app_commands.describe(
        scope=locale_str("This channel or the whole server"),
        channel=locale_str("Another channel, a category or a thread instead of this channel"),
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
        speech = interaction_speech(interaction)
        text = speech.tr(
            "The prompt and model set for {place} are removed; what applies there now comes from the level above (or "
            "the bot's defaults).", place=where,
        ) if changed else speech.tr("Nothing was set for {place}.", place=where)
        await interaction.followup.send(text, ephemeral=True)

    @settings_group.command(
        name=locale_str("show"), description=locale_str("What applies here, and where each setting comes from")
    )
    @app_commands.describe(channel=locale_str("Another channel, a category or a thread instead of this channel"))
    async def show(self, interaction: discord.Interaction, channel: SettingsChannel | None = None) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        speech = interaction_speech(interaction)
        place: object = channel or interaction.channel
        place_guild = getattr(place, "guild", None)
        if place_guild is not None and place_guild.id != interaction.guild.id:
            await interaction.response.send_message(speech.tr("That channel is not in this server."), ephemeral=True)
            return
        await interaction.response.send_message(self.describe(interaction.guild, place, speech), ephemeral=True)

    def describe(self, guild: discord.Guild, place: object, speech: Speech) -> str:
        choice = self.community.at(location_of(place, guild))
        prompt, model = choice.prompt, choice.model(self.settings.chat_models)
        place_id = getattr(place, "id", None)
        mention = f"<#{place_id}>"
        here = speech.tr("In {place}", place=mention) if isinstance(place_id, int) else speech.tr("In this server")
        lines = [f"**{here}**"]
        lines.append(speech.tr("**Prompt**: {source}", source=_where(prompt, "SYSTEM_PROMPT", speech)))
        lines.append(_quoted(prompt.value if prompt else self.settings.system_prompt))
        model_name = model.value if model else self.settings.chat_model
        lines.append(speech.tr("**Model**: `{model}`, {source}", model=model_name,
                               source=_where(model, "CHAT_MODEL", speech)))
        stale = [chosen for chosen in choice.models if chosen.value not in self.settings.chat_models]
        if stale:
            lines.append("-# " + speech.tr(
                "`{model}` ({source}) is no longer allowed by the bot's operator, so it is skipped.",
                model=stale[0].value, source=_where(stale[0], "", speech),
            ))
        lines.append("-# " + speech.tr(
            "Memory extraction always uses the operator's memory model and its own fixed instructions."
        ))
        roles = self.community.allowed_roles(guild.id)
        who = speech.tr("members with {roles} (and anyone with Manage Server)", roles=roles_text(roles)) if roles else (
            speech.tr("everyone")
        )
        lines.append(speech.tr("**Who may talk to me in this server**: {who} (`/bot-settings roles`)", who=who))
        lines.append(speech.tr("**DMs**: {dms} (`/bot-settings dms`)", dms=self._dm_words(guild.id, speech)))
        allowed = ", ".join(f"`{m}`" for m in self.settings.chat_models)
        lines.append(speech.tr("**Models you can choose**: {models}", models=allowed))
        return "\n".join(lines)[:2000]

    def _dm_words(self, guild_id: int, speech: Speech) -> str:
        policy = self.settings.effective_dm_policy
        if policy == "all":
            return speech.tr("anyone may DM me (the operator's choice)")
        if policy == "off":
            return speech.tr("I answer no DMs (the operator's choice)")
        if self.community.dms_allowed(guild_id):
            return speech.tr("members of this server may DM me")
        return speech.tr("membership of this server does not let anyone DM me")

    @settings_group.command(
        name=locale_str("roles"), description=locale_str("Who may talk to me in this server: everyone, or some roles")
    )
    @app_commands.describe(
        add=locale_str("Let members with this role talk to me (only listed roles may, once any is listed)"),
        remove=locale_str("Take this role off the list"),
        everyone=locale_str("Clear the list: everyone may talk to me again"),
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
        speech = interaction_speech(interaction)
        text = speech.tr(
            "In this server only members with {roles} (and anyone with Manage Server) can talk to me.",
            roles=roles_text(listed),
        ) if listed else speech.tr("Everyone in this server can talk to me.")
        await self._say(interaction, text)

    @settings_group.command(name=locale_str("dms"), description=locale_str("Whether this server's members may DM me"))
    @app_commands.describe(
        allow=locale_str("Membership of this server lets people DM me (when DM_POLICY is members)")
    )
    async def dms(self, interaction: discord.Interaction, allow: bool | None = None) -> None:
        if await self._refused(interaction) or interaction.guild is None:
            return
        guild_id = interaction.guild.id
        if allow is not None and allow != self.community.dms_allowed(guild_id):
            await interaction.response.defer(ephemeral=True, thinking=True)
            await self.community.set_dms_allowed(guild_id, allow)
            log.info("community settings: DMs %s for guild %s (by user %s)", allow, guild_id, interaction.user.id)
        speech = interaction_speech(interaction)
        text = speech.tr("DMs: {dms}.", dms=self._dm_words(guild_id, speech))
        if self.settings.effective_dm_policy != "members":
            text += " " + speech.tr("This server's choice counts only when the operator sets DM_POLICY=members.")
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
