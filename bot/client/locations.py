"""Where a message was said, as the memory engine's `Place`, and places in words for people.

- A DM (no server) is `dm`.
- A server channel, or a public thread of one, that the server's @everyone role can read is the server's public
  place, `guild:<server id>`: anyone who joins can read it.
- Anything else is restricted, `channel:<id>`: a channel @everyone cannot see (staff, members-only) or a public
  thread of one (the parent's id: the same audience), and every private thread (its own id: only those invited).
  When Discord does not tell us enough to decide (an uncached channel), the place is restricted: the safe answer.
- A channel the bot cannot view reaches it as a hidden placeholder (Discord's channel obfuscation: the name replaced
  by `___hidden___`, a `CHANNEL_OBFUSCATED` flag, the other fields redacted or synthetic, such as a rule denying
  @everyone). Its permissions say nothing about its audience, so it, and every thread in it, is restricted, and
  the chat never answers or learns there (`ChannelResolver.admit`). Its name is never shown.

`ChannelResolver` also gives a message in a channel discord.py has not cached (a `PartialMessageable`, typically a
thread) its real channel, fetched once and kept, so the thread's parent decides its place and its memory switches;
when it cannot be fetched the message is neither answered nor learned from: the safe answer.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Protocol

import discord

from bot.memory.models import DM_PLACE, Place

log = logging.getLogger(__name__)

HIDDEN_CHANNEL_NAME = "___hidden___"
OBFUSCATED_FLAG = 1 << 17  # Discord's CHANNEL_OBFUSCATED channel flag


def is_hidden_placeholder(channel: object) -> bool:
    """Whether `channel` is Discord's stand-in for a channel the bot cannot view (or a thread of one). Read from the
    flag where discord.py keeps it, else from the placeholder name, which no real channel can have set by mistake
    and which discord.py versions without the flag still carry."""
    if isinstance(channel, discord.Thread):
        return _hidden(channel) or (channel.parent is not None and _hidden(channel.parent))
    return _hidden(channel)


def _hidden(channel: object) -> bool:
    flags = getattr(channel, "flags", None)
    if getattr(flags, "obfuscated", False) is True:
        return True
    value = getattr(flags, "value", None)
    if isinstance(value, int) and value & OBFUSCATED_FLAG:
        return True
    return getattr(channel, "name", None) == HIDDEN_CHANNEL_NAME


def place_of(channel: object, guild: discord.Guild | None) -> Place:
    """The place of a message (or an interaction) in `channel` of `guild`."""
    if guild is None:
        return Place.dm()
    audience = channel
    if isinstance(channel, discord.Thread):
        if channel.type is discord.ChannelType.private_thread:
            return Place.channel(channel.id, guild.id)
        audience = channel.parent
    if (
        isinstance(audience, discord.abc.GuildChannel)
        and not is_hidden_placeholder(audience)
        and _everyone_can_read(audience, guild)
    ):
        return Place.guild(guild.id)
    restricted = audience if isinstance(audience, discord.abc.GuildChannel) else channel
    return Place.channel(int(getattr(restricted, "id", 0)), guild.id)


def message_place(message: discord.Message) -> Place:
    return place_of(message.channel, message.guild)


def _everyone_can_read(channel: discord.abc.GuildChannel, guild: discord.Guild) -> bool:
    return bool(channel.permissions_for(guild.default_role).read_messages)


class _Cache(Protocol):
    def get_guild(self, guild_id: int, /) -> discord.Guild | None: ...

    def get_channel(self, channel_id: int, /) -> object: ...


def place_name(key: str, cache: _Cache) -> str:
    """A stored place key in words: "DMs", the server's name, "#channel (server)"; ids when not in the cache."""
    if key == DM_PLACE:
        return "DMs"
    kind, _, number = key.partition(":")
    if not number.isdigit():
        return key
    if kind == "guild":
        guild = cache.get_guild(int(number))
        return guild.name if guild is not None else f"server {number}"
    if kind == "channel":
        channel = cache.get_channel(int(number))
        name = None if is_hidden_placeholder(channel) else getattr(channel, "name", None)
        server = getattr(getattr(channel, "guild", None), "name", None)
        if name is None:
            return f"private channel {number}"
        return f"#{name} ({server})" if server else f"#{name}"
    return key


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
        self._cache: OrderedDict[int, object] = OrderedDict()
        self._cache_size = cache_size

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
        self._cache[channel_id] = known
        self._cache.move_to_end(channel_id)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return known
