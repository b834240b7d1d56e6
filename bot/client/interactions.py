"""Every slash command and button answers, even when something fails inside it.

An exception after `defer()` would otherwise leave the user looking at "thinking…" until Discord gives up, and a
failed button at "This interaction failed". The command tree's and the views' error hooks here answer every
failure with a short private message (a follow-up when the interaction was already answered) and log one line:
which command, which user id, what went wrong and where, never the message or memory text. The traceback is
kept for LOG_LEVEL=DEBUG. Views that do work in their buttons subclass `SafeView`.

A request the memory engine refuses on purpose (`InvalidRequest`: an unknown fact id, minutes out of range, text
that cannot be stored) is not a failure: its one line is the answer, so commands need not catch it themselves. Every
answer here is in the language of the person who used the interaction (`bot.i18n.readers`); the engine's line is
translated from the `Phrase` it carries. The tree also notes each user's language (`LocaleBook`) for the messages
the bot later sends them in DMs.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

import discord
from discord import app_commands

from bot.i18n.readers import LocaleBook, interaction_speech
from bot.i18n.speech import N_, Speech
from bot.memory.errors import InvalidRequest

log = logging.getLogger(__name__)

EVERYWHERE = app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True)
APOLOGY = N_("Sorry, something went wrong on my side and that didn't work. Please try again in a moment.")
OUTDATED = N_("This command changed since your Discord app loaded it. Please try again in a minute.")
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def failure_summary(error: BaseException) -> str:
    """`OSError: No space left on device (at cogs/memory/commands.py:120 in show)`: the type, the OS reason when there
    is one, and the innermost frame in the project's own code. Exception text is left out (it may quote input)."""
    reason = error.strerror if isinstance(error, OSError) and error.strerror else None
    where = None
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = Path(frame.filename)
        if path.is_relative_to(_PROJECT_ROOT) and "site-packages" not in path.parts:
            where = f"{path.relative_to(_PROJECT_ROOT)}:{frame.lineno} in {frame.name}"
            break
    text = type(error).__name__ + (f": {reason}" if reason else "")
    return f"{text} (at {where})" if where else text


def may_administer(interaction: discord.Interaction[Any]) -> bool:
    """Manage Server in this server, as Discord resolved it for this very interaction (administrators have it)."""
    return interaction.guild is not None and interaction.permissions.manage_guild


def user_reply(error: app_commands.AppCommandError, speech: Speech) -> tuple[str, int]:
    """What to tell the user about a failed command, in their language, and how loudly to log it."""
    original = error.original if isinstance(error, app_commands.CommandInvokeError) else error
    if isinstance(original, InvalidRequest):
        return speech.phrase(original.phrase), logging.DEBUG
    if isinstance(error, app_commands.MissingPermissions | app_commands.MissingAnyRole | app_commands.MissingRole):
        return speech.tr("You don't have the permission this command needs."), logging.INFO
    if isinstance(error, app_commands.BotMissingPermissions):
        missing = ", ".join(error.missing_permissions).replace("_", " ")
        return speech.tr("I need the {permissions} permission here to do that.", permissions=missing), logging.WARNING
    if isinstance(error, app_commands.CommandOnCooldown):
        seconds = speech.number(max(1, round(error.retry_after)))
        return speech.tr("Please wait {seconds} s before using this again.", seconds=seconds), logging.INFO
    if isinstance(error, app_commands.NoPrivateMessage):
        return speech.tr("This command only works in a server."), logging.INFO
    if isinstance(error, app_commands.CheckFailure):
        return speech.tr("You can't use this command here."), logging.INFO
    if isinstance(error, app_commands.TransformerError):
        return speech.tr("One of the options has a value I can't use. Please check it and try again."), logging.INFO
    if isinstance(error, app_commands.CommandNotFound | app_commands.CommandSignatureMismatch):
        return speech.tr(OUTDATED), logging.WARNING
    return speech.tr(APOLOGY), logging.ERROR


async def answer_privately(interaction: discord.Interaction[Any], text: str) -> bool:
    """Send `text` only the user can see: as the response, or as a follow-up when already answered or deferred.
    False when Discord refused (the interaction expired, say)."""
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as error:
        log.warning("could not answer interaction %s (HTTP %s)", interaction.id, error.status)
        return False
    return True


def _log_failure(level: int, what: str, interaction: discord.Interaction[Any], error: BaseException) -> None:
    log.log(level, "%s failed for user %s: %s", what, interaction.user.id, failure_summary(error))
    if level >= logging.ERROR and log.isEnabledFor(logging.DEBUG):
        log.debug("traceback of the failure above", exc_info=error)


class MemoryCommandTree(app_commands.CommandTree[Any]):
    """The bot's command tree: one error hook for every slash command, whatever cog defines it, and the book of
    its users' languages."""

    def __init__(self, client: discord.Client, **options: Any) -> None:
        super().__init__(client, **options)
        self.locales = LocaleBook()

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        """Every command and message menu passes here first: note the language the user's Discord speaks."""
        self.locales.note(interaction)
        return True

    async def on_error(self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError) -> None:
        original = error.original if isinstance(error, app_commands.CommandInvokeError) else error
        command = interaction.command
        what = f"/{command.qualified_name}" if command is not None else "a slash command"
        text, level = user_reply(error, interaction_speech(interaction))
        _log_failure(level, what, interaction, original)
        await answer_privately(interaction, text)


class SafeView(discord.ui.View):
    """A view whose failed button answers: the buttons are taken away (so nobody presses a dead one again) and
    the message says sorry."""

    async def on_error(
        self, interaction: discord.Interaction[Any], error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        label = getattr(item, "label", None) or type(item).__name__
        _log_failure(logging.ERROR, f"button {label!r} of {type(self).__name__}", interaction, error)
        self.stop()
        await apologise_in_place(interaction)


async def apologise_in_place(interaction: discord.Interaction[Any]) -> None:
    """A pressed button failed: the message it sits on becomes the apology, without its buttons (so nobody presses
    a dead one again); privately when that message cannot be edited."""
    apology = interaction_speech(interaction).tr(APOLOGY)
    try:
        if interaction.response.is_done():
            await interaction.edit_original_response(content=apology, view=None)
        else:
            await interaction.response.edit_message(content=apology, view=None)
    except discord.HTTPException:
        await answer_privately(interaction, apology)
