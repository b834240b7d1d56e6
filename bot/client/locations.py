"""Where a message was said, as the memory engine's `Location`: the one translator from Discord objects.

A `Location` carries everything a rule about "where" reads: the memory place, the conversation its turns are
batched by, the server and channel whose memory switches count, and the thread, channel and category the community
settings are looked up along. The chat, the commands and the event listeners all build it here, once per message.

The place (who can read it):
- A DM (no server) is `dm`.
- A server channel, or a public thread of one, that the server's @everyone role can read is the server's public
  place, `guild:<server id>`: anyone who joins can read it.
- Anything else is restricted, `channel:<id>`: a channel @everyone cannot see (staff, members-only) or a public
  thread of one (the parent's id: the same audience), and every private thread (its own id: only those invited).
  When Discord does not tell us enough to decide (an uncached channel), the place is restricted: the safe answer.
- An age-restricted (`nsfw`) channel, and its threads, is a place of its own: `nsfw:<server id>` where @everyone
  can read it, `nsfw:<channel id>` where not (`bot.memory.rules.places` keeps what is learned there in it).
- A channel the bot cannot view reaches it as a hidden placeholder (Discord's channel obfuscation: the name replaced
  by `___hidden___`, a `CHANNEL_OBFUSCATED` flag, the other fields redacted or synthetic, such as a rule denying
  @everyone). Its permissions say nothing about its audience, so it, and every thread in it, is restricted, and
  the chat never answers or learns there (`bot.client.channels.ChannelResolver.admit`). Its name is never shown.

Switches follow channels: a thread counts as its parent channel. Community settings follow the path thread →
channel → category → server; a category or a server passed itself is that level.
"""

from __future__ import annotations

from typing import Protocol

import discord

from bot.i18n.speech import ENGLISH_SPEECH, Speech
from bot.memory.models import DM_PLACE, Location, Place

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


def is_age_restricted(channel: object) -> bool:
    """Whether `channel` is age-restricted (Discord's `nsfw` flag; a thread follows its parent)."""
    if isinstance(channel, discord.Thread):
        channel = channel.parent
    return getattr(channel, "nsfw", False) is True


def _place_of(channel: object, guild: discord.Guild | None) -> Place:
    """The place of a message (or an interaction) in `channel` of `guild`: see the module; an age-restricted
    channel or thread is the same place made age-restricted (`nsfw:<server id>` or `nsfw:<channel id>`)."""
    if guild is None:
        return Place.dm()
    place = _audience_place(channel, guild)
    if is_age_restricted(channel):
        return Place.nsfw(place.id, guild.id)
    return place


def _audience_place(channel: object, guild: discord.Guild) -> Place:
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


def _id_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def location_of(channel: object, guild: discord.Guild | None = None) -> Location:
    """Where a message or command in `channel` (a discord.py channel, thread, category or DM channel; or a server
    itself) happened. `guild` is the interaction's server where the channel does not say (a partial channel)."""
    if isinstance(channel, discord.Guild):
        return Location(Place.guild(channel.id), guild_id=channel.id)
    guild = getattr(channel, "guild", None) or guild
    conversation = _id_or_none(getattr(channel, "id", None)) or 0
    if guild is None:
        return Location.dm(conversation)
    place = _place_of(channel, guild)
    if isinstance(channel, discord.Thread):
        parent_id = _id_or_none(channel.parent_id)
        return Location(
            place, conversation, guild_id=guild.id, channel_id=parent_id, thread_id=channel.id,
            category_id=_id_or_none(getattr(channel.parent, "category_id", None)),
        )
    if isinstance(channel, discord.CategoryChannel):
        return Location(place, conversation, guild_id=guild.id, category_id=channel.id)
    return Location(
        place, conversation, guild_id=guild.id, channel_id=conversation,
        category_id=_id_or_none(getattr(channel, "category_id", None)),
    )


def _everyone_can_read(channel: discord.abc.GuildChannel, guild: discord.Guild) -> bool:
    return bool(channel.permissions_for(guild.default_role).read_messages)


class _Cache(Protocol):
    def get_guild(self, guild_id: int, /) -> discord.Guild | None: ...

    def get_channel(self, channel_id: int, /) -> object: ...


def place_name(key: str, cache: _Cache, speech: Speech = ENGLISH_SPEECH) -> str:
    """A stored place key in words, in the reader's language: "DMs", the server's name, "#channel (server)"; ids
    when not in the cache."""
    if key == DM_PLACE:
        return speech.tr("DMs")
    kind, _, number = key.partition(":")
    if not number.isdigit():
        return key
    if kind == "guild":
        guild = cache.get_guild(int(number))
        return guild.name if guild is not None else speech.tr("server {id}", id=number)
    if kind == "nsfw":
        guild = cache.get_guild(int(number))
        if guild is not None:
            return speech.tr("age-restricted channels of {server}", server=guild.name)
        return speech.tr("{channel}, age-restricted", channel=place_name(f"channel:{number}", cache, speech))
    if kind == "channel":
        channel = cache.get_channel(int(number))
        name = None if is_hidden_placeholder(channel) else getattr(channel, "name", None)
        server = getattr(getattr(channel, "guild", None), "name", None)
        if name is None:
            return speech.tr("private channel {id}", id=number)
        return f"#{name} ({server})" if server else f"#{name}"
    return key
