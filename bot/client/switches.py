"""Where a message's memory switches apply, from a discord.py channel: its server and the channel whose switch
counts (a thread's parent). Duck-typed, so this module (and the console that builds it) needs no discord import;
the switches themselves live in the engine (`bot.memory.records.switches`)."""

from __future__ import annotations

from bot.memory.models import SwitchTarget


def switch_target_of(channel: object) -> SwitchTarget:
    """The switch target of a message or command in `channel` (a discord.py channel or thread); a thread counts
    as its parent channel."""
    guild = getattr(channel, "guild", None)
    guild_id = guild.id if guild is not None else None
    parent_id = getattr(channel, "parent_id", None)  # only threads have one (discord.py's `Thread.parent_id`)
    return SwitchTarget(guild_id, int(parent_id if parent_id is not None else getattr(channel, "id", 0)))
