"""Discord deletes and edits reach memory (Discord's Developer Terms ask a bot that keeps message content to delete
it when its author does).

Listens to the raw events, so a bulk delete, and a delete or edit of a message discord.py no longer has in its
cache (older ones, or from before a restart), count as much as any other:
- a delete hands the ids to the engine's events door (`memory.events.deleted`): whoever wrote them, the engine
  finds what they taught (its message ledger) or what is still on its way, and removes it;
- every copy of message text the process keeps drops a deleted message and takes an edited one's new text
  (`MemoryBot.message_copies`, the inventory of `bot.chat.copies`);
- an edit of a user's message hands its text as it reads now to `memory.events.edited`, which learns it
  again when the old text was learned or waiting to be (a message still being answered is learned as it reads
  when the answer is done: the chat cog takes its text then). The bot's own edits (a reply streaming in) and
  updates that do not change the text (a link preview appearing) are not edits of anything learned.
A storage failure is tried again a few times; the log gets ids and counts, never the text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, TypeVar

import discord
from discord.ext import commands

from bot.client.channels import ChannelResolver
from bot.client.locations import location_of
from bot.client.messages import as_incoming, readable_text

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

RETRY_SECONDS = (5.0, 30.0, 120.0)
_T = TypeVar("_T")


class DeletesCog(commands.Cog):
    def __init__(self, bot: MemoryBot, *, retry_seconds: tuple[float, ...] = RETRY_SECONDS) -> None:
        self.bot = bot
        self.events = bot.resources.memory.events
        self.channels = ChannelResolver(bot, bot.fetch_channel)
        self.retry_seconds = retry_seconds

    async def _with_retries(self, what: str, work: Callable[[], Awaitable[_T]]) -> _T | None:
        for wait in (*self.retry_seconds, None):
            try:
                return await work()
            except OSError as error:  # the storage is unreachable (a full disk, the database down)
                if wait is None:
                    log.error("%s could not be honoured (%s); giving up", what, error.strerror or error)
                    return None
                log.warning("%s could not be honoured yet (%s); trying again in %gs", what,
                            error.strerror or error, wait)
                await asyncio.sleep(wait)
        return None

    async def _deleted(self, channel_id: int, message_ids: Collection[int]) -> None:
        self.bot.message_copies.deleted(message_ids)  # the process's own copies first: nothing to retry there
        await self._with_retries(
            f"{len(message_ids)} deleted messages in channel {channel_id}",
            lambda: self.events.deleted(message_ids),
        )

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self._deleted(payload.channel_id, {payload.message_id})

    @commands.Cog.listener()
    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        await self._deleted(payload.channel_id, payload.message_ids)

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        message = payload.message
        me = self.bot.user
        if me is None or message.edited_at is None:
            return  # an update that is no edit by the author
        before = payload.cached_message
        if before is not None and before.content == message.content:
            return  # a link preview or an embed, not new words
        self.bot.message_copies.edited(message.id, readable_text(message, me.id))  # anyone's: copies hold all
        if message.author.bot or message.author.id == me.id:
            return  # the bot's own edits (a reply streaming in) and other bots' teach no memory
        if not await self.channels.admit(message):
            return
        incoming = as_incoming(message, readable_text(message, me.id), is_self=False)
        where = location_of(message.channel)
        await self._with_retries(
            f"the edit of message {message.id}", lambda: self.events.edited(where, incoming, bot_id=me.id)
        )


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(DeletesCog(bot))
