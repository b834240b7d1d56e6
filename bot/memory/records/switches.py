"""Where memory is switched off: by server admins (`/memory-admin`) and by the operator (environment lists).

Two switches per server (learning: turns from there are journaled and extracted; recall: memory goes into replies
there) and one per channel (learning). A thread follows its parent channel (a `Location`'s `channel_id` is the
parent's). The operator's lists (`MEMORY_DISABLED_GUILD_IDS`, `MEMORY_DISABLED_CHANNEL_IDS`) switch learning and
recall off and cannot be switched back on from Discord. DMs are never affected: a user's own conversation with the
bot is theirs to control (`/memory pause`).

The admins' choices are records of a `RecordTable` (a file, or rows every process shares), keyed `guild:<id>` and
`channel:<id>`; only switches that are off are stored. The file refuses to start when unreadable rather than
silently switching memory back on in servers that had turned it off. The engine asks `at(target)` itself before it
learns or recalls anything: no caller decides it.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.memory.models import Location
from bot.storage.records import Record, RecordTable


@dataclass(frozen=True, slots=True)
class MemorySwitch:
    """What memory may do in one channel or server."""

    learning: bool = True
    recall: bool = True


def _guild_key(guild_id: int) -> str:
    return f"guild:{guild_id}"


def _channel_key(channel_id: int) -> str:
    return f"channel:{channel_id}"


class SwitchBoard:
    """The live switches: the operator's lists plus the admins' choices, read from RAM."""

    def __init__(
        self,
        table: RecordTable,
        *,
        disabled_guilds: frozenset[int] = frozenset(),
        disabled_channels: frozenset[int] = frozenset(),
    ) -> None:
        self.table = table
        self.disabled_guilds = disabled_guilds
        self.disabled_channels = disabled_channels

    async def open(self) -> None:
        await self.table.open()

    async def close(self) -> None:
        await self.table.close()

    async def forget_user(self, user_id: int) -> None:
        """Switches belong to servers and channels, not to users: nothing to forget."""

    # --- reading -------------------------------------------------------------------------------------------

    def guild_switch(self, guild_id: int) -> MemorySwitch:
        """What the server's admins chose (the operator's list is reported separately by `operator_disabled`)."""
        record = self.table.get(_guild_key(guild_id))
        if record is None:
            return MemorySwitch()
        return MemorySwitch(learning=bool(record.get("learning", True)), recall=bool(record.get("recall", True)))

    def channel_learning(self, channel_id: int) -> bool:
        record = self.table.get(_channel_key(channel_id))
        return True if record is None else bool(record.get("learning", True))

    def admin_choices(self) -> tuple[dict[int, MemorySwitch], dict[int, bool]]:
        """The admins' stored choices (server switches, channel learning switches)."""
        guilds: dict[int, MemorySwitch] = {}
        channels: dict[int, bool] = {}
        for key in self.table.items():
            kind, _, number = key.partition(":")
            if kind == "guild" and number.isdigit():
                guilds[int(number)] = self.guild_switch(int(number))
            elif kind == "channel" and number.isdigit():
                channels[int(number)] = self.channel_learning(int(number))
        return guilds, channels

    def operator_disabled(self, where: Location) -> bool:
        """The operator's lists switch memory off here (its server, or its channel)."""
        return where.guild_id in self.disabled_guilds or where.channel_id in self.disabled_channels

    def at(self, where: Location) -> MemorySwitch:
        """The effective switch where a message was said: every switch that applies there must be on."""
        if where.guild_id is None:
            return MemorySwitch()
        if self.operator_disabled(where):
            return MemorySwitch(learning=False, recall=False)
        guild = self.guild_switch(where.guild_id)
        channel = True if where.channel_id is None else self.channel_learning(where.channel_id)
        return MemorySwitch(learning=guild.learning and channel, recall=guild.recall)

    # --- the admins' changes -------------------------------------------------------------------------------

    async def set_guild(self, guild_id: int, *, learning: bool, recall: bool) -> None:
        """Saved (for every process) before it takes effect and before returning."""
        value: Record | None = None if learning and recall else {"learning": learning, "recall": recall}
        await self.table.put(_guild_key(guild_id), value)

    async def set_channel(self, channel_id: int, *, learning: bool) -> None:
        """Saved (for every process) before it takes effect and before returning."""
        await self.table.put(_channel_key(channel_id), None if learning else {"learning": False})
