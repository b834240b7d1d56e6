"""Messages in channels discord.py has not cached get their real channel; the chat stays silent where it must.

A message in a channel discord.py has not cached (a `PartialMessageable`, typically a thread) is given its real
channel, fetched once and kept, so the thread's parent decides its place and its memory switches; when it cannot be
fetched the message is neither answered nor learned from: the safe answer. A channel the bot cannot view (Discord's
hidden placeholder, `bot.client.locations.is_hidden_placeholder`) gets no answer either.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import discord

from bot.client.locations import is_hidden_placeholder
from bot.storage.lru import LruCache

log = logging.getLogger(__name__)

FetchChannel = Callable[[int], Awaitable[object]]


class _Channels(Protocol):
    def get_channel(self, channel_id: int, /) -> object: ...


class ChannelResolver:
    """Gives messages in channels discord.py has not cached their real channel, and says where the chat must stay
    silent. `fetch` is the client's `fetch_channel`; what it returns is kept (a bounded cache), so a busy uncached
    thread costs one request, not one per message."""

    def __init__(self, client: _Channels, fetch: FetchChannel, *, cache_size: int = 1024) -> None:
        self._client = client
        self._fetch = fetch
        self._cache: LruCache[int, object] = LruCache(cache_size)

    async def admit(self, message: discord.Message) -> bool:
        """Make `message.channel` the real channel when it is a `PartialMessageable`; False when the chat must
        neither answer nor learn: a server channel that cannot be resolved, or a hidden placeholder."""
        channel: object = message.channel
        if isinstance(channel, discord.PartialMessageable):
            if channel.guild_id is None:
                return True  # a DM discord.py has not cached: no server, no switches, the place is `dm`
            resolved = await self._resolve(channel.id)
            if resolved is None or message.guild is None:
                log.info("ignoring a message in channel %s: its channel could not be resolved", channel.id)
                return False
            message.channel = resolved  # type: ignore[assignment]
            channel = resolved
        if message.guild is not None and is_hidden_placeholder(channel):
            log.info("ignoring a message in channel %s: the bot cannot view that channel", message.channel.id)
            return False
        return True

    async def _resolve(self, channel_id: int) -> object | None:
        known = self._client.get_channel(channel_id) or self._cache.get(channel_id)
        if known is None:
            try:
                known = await self._fetch(channel_id)
            except discord.HTTPException as error:
                log.info("could not fetch channel %s (HTTP %s)", channel_id, error.status)
                return None
        if not isinstance(known, discord.abc.GuildChannel | discord.Thread):
            return None
        return self._cache.put(channel_id, known)
