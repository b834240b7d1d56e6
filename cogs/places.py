"""Where a message was said, as the memory engine's `Place`, and places in words for people.

- A DM (no server) is `dm`.
- A server channel, or a public thread of one, that the server's @everyone role can read is the server's public
  place, `guild:<server id>`: anyone who joins can read it.
- Anything else is restricted, `channel:<id>`: a channel @everyone cannot see (staff, members-only) or a public
  thread of one (the parent's id: the same audience), and every private thread (its own id: only those invited).
  When Discord does not tell us enough to decide (an uncached channel), the place is restricted: the safe answer.
"""

from __future__ import annotations

from typing import Protocol

import discord

from bot.memory.models import DM_PLACE, Place


def place_of(channel: object, guild: discord.Guild | None) -> Place:
    """The place of a message (or an interaction) in `channel` of `guild`."""
    if guild is None:
        return Place.dm()
    audience = channel
    if isinstance(channel, discord.Thread):
        if channel.type is discord.ChannelType.private_thread:
            return Place.channel(channel.id, guild.id)
        audience = channel.parent
    if isinstance(audience, discord.abc.GuildChannel) and _everyone_can_read(audience, guild):
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
        name = getattr(channel, "name", None)
        server = getattr(getattr(channel, "guild", None), "name", None)
        if name is None:
            return f"private channel {number}"
        return f"#{name} ({server})" if server else f"#{name}"
    return key
