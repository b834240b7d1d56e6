"""Message menus on the bot's replies, for the person the reply answered: **Regenerate** (a new answer to the
same message, replacing the old one) and **Delete** (the reply goes).

Who may: the user the reply answered, as its reply record says (the record behind "What did you remember?"), or,
when there is none (forgotten, or older than the records kept), the author of the message it answers. Anyone else
is refused. What the old reply said is never learned: its turn is withdrawn from the pending work (the user's own
words stay) and refused if it arrives later; a reply already distilled stays part of what was learned from that
exchange (facts come only from the user's own words), and the answer says so and how to remove it. A regenerated
answer is learned in its place, and its reply record ("What did you remember?") describes the new answer.
Regenerate is a model call like any reply: it counts against the daily budgets and the per-user rate limit, and is
refused past them (saying when it can be used again), or when the user may no longer talk to the bot there. A
deleted reply's tokens stay counted: they were spent. What the bot says about it is in the caller's Discord language.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord
import openai
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.chat.concurrency import Busy
from bot.chat.ratelimit import describe_window, when_again
from bot.client.interactions import EVERYWHERE
from bot.client.locations import location_of
from bot.client.messages import describe_failure, readable_text
from bot.client.notices import BUSY_REPLY, LLM_ERROR_REPLY
from bot.i18n.readers import interaction_speech
from bot.i18n.speech import N_, Speech
from bot.memory.models import IncomingMessage

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot
    from cogs.chat import ChatCog

log = logging.getLogger(__name__)

NOT_MINE = N_("That isn't one of my replies: use this on a message I sent.")
NOT_YOURS = N_("Only the person that reply answered can do that.")
UNKNOWN_OWNER = N_("I can't tell whom that message answered, so I can't change it.")


@dataclass
class Reply:
    """One reply of the bot: its messages (first first), the user it answered and the message it answered."""

    message_ids: tuple[int, ...]
    user_id: int
    asked: discord.Message | None


class ReplyActionsCog(commands.Cog):
    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.memory = bot.resources.memory
        self.regenerate_menu = app_commands.ContextMenu(
            name=locale_str("Regenerate"), callback=self.regenerate, allowed_contexts=EVERYWHERE
        )
        self.delete_menu = app_commands.ContextMenu(
            name=locale_str("Delete"), callback=self.delete, allowed_contexts=EVERYWHERE
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.regenerate_menu)
        self.bot.tree.add_command(self.delete_menu)

    async def cog_unload(self) -> None:
        for menu in (self.regenerate_menu, self.delete_menu):
            self.bot.tree.remove_command(menu.name, type=menu.type)

    # --- which reply, and whose ----------------------------------------------------------------------------

    async def _reply_of(self, interaction: discord.Interaction, message: discord.Message) -> Reply | str:
        """The reply `message` belongs to, if the caller may act on it; else what to tell them."""
        me = self.bot.user
        if me is None or message.author.id != me.id:
            return NOT_MINE
        record = await self.memory.recall.reply_record(message.id)
        ids = record.message_ids if record is not None else (message.id,)
        first = message if message.id == ids[0] else await self._fetch(message.channel, ids[0]) or message
        asked = await self._answered(first)
        owner = record.user_id if record is not None else (asked.author.id if asked is not None else None)
        if owner is None:
            return UNKNOWN_OWNER
        if owner != interaction.user.id:
            return NOT_YOURS
        return Reply(tuple(ids), owner, asked)

    @staticmethod
    async def _fetch(channel: Any, message_id: int | None) -> discord.Message | None:
        if message_id is None:
            return None
        try:
            found = await channel.fetch_message(message_id)
        except discord.HTTPException:
            return None
        return found if isinstance(found, discord.Message) else None

    async def _answered(self, first: discord.Message) -> discord.Message | None:
        """The user's message a reply's first part answers (None when it is gone or there is none)."""
        reference = first.reference
        if reference is None or reference.message_id is None:
            return None
        resolved = reference.resolved
        if isinstance(resolved, discord.Message):
            return resolved
        return await self._fetch(first.channel, reference.message_id)

    async def _delete_messages(self, channel: Any, message_ids: tuple[int, ...]) -> None:
        for message_id in message_ids:
            message = await self._fetch(channel, message_id)
            if message is None:
                continue
            try:
                await message.delete()
            except discord.HTTPException as error:
                log.warning("could not delete reply message %s (HTTP %s)", message_id, error.status)

    # --- Delete --------------------------------------------------------------------------------------------

    async def delete(self, interaction: discord.Interaction, message: discord.Message) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        reply = await self._reply_of(interaction, message)
        if isinstance(reply, str):
            await interaction.followup.send(speech.tr(reply), ephemeral=True)
            return
        withdrawn = await self.memory.learning.withdraw_reply(reply.user_id, reply.message_ids)  # before it is learned
        await self._delete_messages(message.channel, reply.message_ids)
        log.info("reply %s deleted at the request of user %s", reply.message_ids[0], reply.user_id)
        text = speech.tr(
            "Deleted. It had already been distilled into memory with your message. Facts come only from your own "
            "words, but if something from that exchange should go, `/memory show` lists it and `/memory forget` "
            "removes it."
        ) if withdrawn.learned else speech.tr("Deleted. Nothing of it will be learned.")
        await interaction.followup.send(text, ephemeral=True)

    # --- Regenerate ----------------------------------------------------------------------------------------

    async def regenerate(self, interaction: discord.Interaction, message: discord.Message) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        speech = interaction_speech(interaction)
        chat: ChatCog | None = self.bot.get_cog("ChatCog")  # type: ignore[assignment]
        reply = await self._reply_of(interaction, message)
        if isinstance(reply, str):
            await interaction.followup.send(speech.tr(reply), ephemeral=True)
            return
        asked = reply.asked
        if chat is None or asked is None or not await chat.channels.admit(asked):
            await interaction.followup.send(
                speech.tr("The message that reply answered is gone, so I can't answer it again."), ephemeral=True
            )
            return
        refusal = await chat.policy.refusal(asked, always_tell=True, speech=speech)
        if refusal is not None:
            text = refusal.notice or speech.tr("I can't answer that again now.")
            await interaction.followup.send(text, ephemeral=True)
            return
        wait = chat.rate_wait(interaction.user.id)  # a new answer is a model call like any message
        if wait is not None:
            await interaction.followup.send(speech.trn(
                "You've reached the limit of {count} answer per {window}; you can regenerate again {when}.",
                "You've reached the limit of {count} answers per {window}; you can regenerate again {when}.",
                chat.limiter.max_events, window=describe_window(chat.limiter.window, speech),
                when=when_again(wait, speech=speech),
            ), ephemeral=True)
            return
        text = await self._answer_again(chat, asked, reply, speech)
        await interaction.followup.send(text, ephemeral=True)

    async def _answer_again(self, chat: ChatCog, asked: discord.Message, reply: Reply, speech: Speech) -> str:
        """Write and send a new answer to `asked`, then retire the old reply; what to tell the user."""
        me = self.bot.user
        bot_id = me.id if me else None
        ticket = self.memory.learning.ticket(reply.user_id)
        guild_id = asked.guild.id if asked.guild else None
        where = location_of(asked.channel)
        try:
            async with chat.gate.turn(guild_id) as turn:
                prompt = await chat.build_prompt(asked, readable_text(asked, bot_id), bot_id, where)
                sent = await chat.generate_and_send(asked, prompt, generated=turn.release)
        except Busy:
            return speech.tr(BUSY_REPLY)
        except openai.OpenAIError as error:
            log.error("regenerating the reply to message %s failed: %s", asked.id, describe_failure(error))
            return speech.tr(LLM_ERROR_REPLY)
        except discord.HTTPException as error:
            log.warning("could not send a regenerated reply in channel %s (HTTP %s)", asked.channel.id, error.status)
            return speech.tr("I couldn't post the new answer here.")
        chat.policy.count_reply(reply.user_id, guild_id, prompt.messages, sent.text, sent.tokens)
        await self.memory.learning.withdraw_reply(reply.user_id, reply.message_ids)
        await self._delete_messages(asked.channel, reply.message_ids)
        await self.memory.recall.record_reply(
            [part.id for part in sent.messages], reply.user_id, prompt.memory, ticket
        )
        with contextlib.suppress(OSError):  # the answer is out; learning it is a bonus the storage may refuse
            await self.memory.learning.remember(
                where,
                [
                    IncomingMessage(
                        message_id=sent.first.id, author_id=bot_id or 0, author_name="assistant", content=sent.text,
                        created_at=sent.first.created_at, is_self=True, reply_to_id=asked.id,
                    )
                ],
                ticket=ticket, bot_id=bot_id, shown=sent.shown,
            )
        log.info("reply to message %s regenerated at the request of user %s", asked.id, reply.user_id)
        return speech.tr("Here's a new answer; the old one is gone and won't be learned.")


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(ReplyActionsCog(bot))
