"""Reply chains: the messages a message replies to, followed upwards, for the prompt's context.

Someone replying to a message from an hour ago means that message, even when it has long left the recent history.
The chain is walked from the nearest message upwards, bounded by a count and a character budget (the nearest
messages are kept), through the reference's resolved message, discord.py's cache, then one fetch. Walked links
are kept in a bounded cache, so a long back-and-forth costs one fetch per new message, not one per link.

A chain stays in its place: only messages of the channel (or thread) the message was said in are followed. A
reference into another channel or server (a crossposted announcement points at its source, a forward at the
forwarded message) ends the chain there, so a public reply never carries a staff channel's or another server's
words.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

import discord

from bot.chat.conversation import HistoryEntry
from bot.storage.lru import LruCache

log = logging.getLogger(__name__)

Describe = Callable[[discord.Message], str]
Fetch = Callable[[int, int], Awaitable[discord.Message | None]]


@dataclass(frozen=True, slots=True)
class Link:
    entry: HistoryEntry
    channel_id: int
    parent_id: int | None
    parent_channel_id: int | None


def _parent(message: discord.Message) -> tuple[int | None, int | None]:
    """The message `message` replies to, and its channel; (None, None) when it replies to nothing this chain may
    follow: a forward, or a reference into another channel or server."""
    reference = message.reference
    if reference is None or reference.message_id is None or reference.type is discord.MessageReferenceType.forward:
        return None, None
    channel_id = reference.channel_id or message.channel.id
    guild = message.guild
    if channel_id != message.channel.id or (
        reference.guild_id is not None and reference.guild_id != (guild.id if guild is not None else None)
    ):
        return None, None
    return reference.message_id, channel_id


class ReplyChains:
    def __init__(self, *, max_messages: int, max_chars: int, cache_size: int = 2000) -> None:
        self.max_messages = max_messages
        self.max_chars = max_chars
        self._cache: LruCache[int, Link] = LruCache(cache_size)

    def _link(self, message: discord.Message, describe: Describe, bot_id: int | None) -> Link:
        parent_id, parent_channel = _parent(message)
        entry = HistoryEntry(
            message.author.id, message.author.display_name, describe(message),
            is_self=message.author.id == bot_id, message_id=message.id,
        )
        link = Link(entry, message.channel.id, parent_id, parent_channel)
        self._cache.put(message.id, link)
        return link

    def link_for(self, message: discord.Message, describe: Describe, bot_id: int | None) -> Link:
        """Cache `message` as a link (and the message it replies to, when Discord sent that along)."""
        link = self._link(message, describe, bot_id)
        reference = message.reference
        if reference is not None and link.parent_id is not None and self._cache.peek(link.parent_id) is None:
            parent = reference.resolved or reference.cached_message
            if isinstance(parent, discord.Message) and parent.channel.id == link.parent_channel_id:
                self._link(parent, describe, bot_id)
        return link

    def drop_messages(self, message_ids: Collection[int]) -> int:
        """Deleted messages leave the cache (a chain through one ends there: Discord no longer has it)."""
        dropped = 0
        for message_id in message_ids:
            if self._cache.peek(message_id) is not None:
                self._cache.discard(message_id)
                dropped += 1
        return dropped

    def edit_message(self, message_id: int, text: str) -> int:
        """An edited message's link takes its new text."""
        link = self._cache.peek(message_id)
        if link is None:
            return 0
        self._cache.put(message_id, dataclasses.replace(link, entry=dataclasses.replace(link.entry, text=text)))
        return 1

    async def _load(
        self, message_id: int, channel_id: int, hint: object, describe: Describe, fetch: Fetch, bot_id: int | None
    ) -> Link | None:
        cached = self._cache.get(message_id)
        if cached is not None:
            return cached if cached.channel_id == channel_id else None
        message = hint if isinstance(hint, discord.Message) else await fetch(channel_id, message_id)
        if message is None or message.channel.id != channel_id:
            return None
        return self.link_for(message, describe, bot_id)

    async def chain(
        self, message: discord.Message, *, describe: Describe, fetch: Fetch, bot_id: int | None
    ) -> list[HistoryEntry]:
        """The messages `message` replies to in its own channel, oldest first, within the count and character
        bounds. `fetch(channel_id, message_id)` is only ever asked for the message's own channel."""
        reference = message.reference
        parent_id, channel_id = _parent(message)
        hint: object = None
        if reference is not None:
            hint = reference.resolved or reference.cached_message
        entries: list[HistoryEntry] = []
        used = 0
        seen: set[int] = {message.id}
        here = message.channel.id
        while parent_id is not None and channel_id == here and len(entries) < self.max_messages:
            if parent_id in seen:
                break  # a loop cannot happen on Discord, but a cache must never spin
            seen.add(parent_id)
            link = await self._load(parent_id, channel_id, hint, describe, fetch, bot_id)
            if link is None:
                break
            cost = len(link.entry.text) + len(link.entry.author_name) + 2
            if used + cost > self.max_chars:
                break
            if link.entry.text:
                entries.append(link.entry)
                used += cost
            parent_id, channel_id, hint = link.parent_id, link.parent_channel_id, None
        entries.reverse()
        return entries
