"""Where memory is switched off: by server admins (`/memory-admin`) and by the operator (environment lists).

Two switches per server (learning: turns from there are journaled and extracted; recall: memory goes into replies
there) and one per channel (learning). A thread follows its parent channel. The operator's lists
(`MEMORY_DISABLED_GUILD_IDS`, `MEMORY_DISABLED_CHANNEL_IDS`) switch learning and recall off and cannot be switched
back on from Discord. DMs are never affected: a user's own conversation with the bot is theirs to control
(`/memory pause`).

The admins' choices live in `DATA_DIR/memory-switches.json` (`MemorySwitches`), written with the project's atomic
writer, or in PostgreSQL (`bot.switches_pg.PostgresMemorySwitches`), where every process sees an admin's change.
Only switches that are off are stored. An unreadable file stops the start with one clear line instead of silently
switching memory back on in servers that had turned it off.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from bot.storage.atomic import AtomicWriter, json_bytes

SWITCHES_FILE = "memory-switches.json"


class SwitchesFileError(Exception):
    """The switches file exists but cannot be read; the message is one line for the operator."""


@dataclass(frozen=True, slots=True)
class MemorySwitch:
    """What memory may do in one channel or server."""

    learning: bool = True
    recall: bool = True


@dataclass(frozen=True, slots=True)
class SwitchTarget:
    """A server (None for DMs) and the channel whose switch applies (a thread's parent).

    Not a memory place (`bot.memory.models.Place`): switches follow channels, places follow who can read them."""

    guild_id: int | None
    channel_id: int


def switch_target_of(channel: object) -> SwitchTarget:
    """The switch target of a message or command in `channel` (a discord.py channel or thread); a thread counts
    as its parent channel. Duck-typed, so this module (and the console that builds it) needs no discord import."""
    guild = getattr(channel, "guild", None)
    guild_id = guild.id if guild is not None else None
    parent_id = getattr(channel, "parent_id", None)  # only threads have one (discord.py's `Thread.parent_id`)
    return SwitchTarget(guild_id, int(parent_id if parent_id is not None else getattr(channel, "id", 0)))


class SwitchBoard(ABC):
    """The live switches: the operator's lists plus the admins' choices, read from RAM. One instance per process;
    subclasses keep the admins' choices somewhere (`_store_guild`, `_store_channel`)."""

    def __init__(
        self,
        *,
        disabled_guilds: frozenset[int] = frozenset(),
        disabled_channels: frozenset[int] = frozenset(),
    ) -> None:
        self.disabled_guilds = disabled_guilds
        self.disabled_channels = disabled_channels
        self._guilds: dict[int, MemorySwitch] = {}
        self._channels: dict[int, bool] = {}  # channel id -> learning (only False is stored)
        self._lock = asyncio.Lock()

    @abstractmethod
    async def open(self) -> None:
        """Read the admins' choices."""

    @abstractmethod
    async def close(self) -> None:
        """Stop following changes made elsewhere."""

    # --- reading -------------------------------------------------------------------------------------------

    def guild_switch(self, guild_id: int) -> MemorySwitch:
        """What the server's admins chose (the operator's list is reported separately by `operator_disabled`)."""
        return self._guilds.get(guild_id, MemorySwitch())

    def admin_choices(self) -> tuple[dict[int, MemorySwitch], dict[int, bool]]:
        """The admins' stored choices (server switches, channel learning switches), e.g. to copy them elsewhere."""
        return dict(self._guilds), dict(self._channels)

    def channel_learning(self, channel_id: int) -> bool:
        return self._channels.get(channel_id, True)

    def operator_disabled(self, target: SwitchTarget) -> bool:
        return target.guild_id in self.disabled_guilds or target.channel_id in self.disabled_channels

    def at(self, target: SwitchTarget) -> MemorySwitch:
        """The effective switch for a channel: every switch that applies there must be on."""
        if target.guild_id is None:
            return MemorySwitch()
        if self.operator_disabled(target):
            return MemorySwitch(learning=False, recall=False)
        guild = self.guild_switch(target.guild_id)
        return MemorySwitch(learning=guild.learning and self.channel_learning(target.channel_id), recall=guild.recall)

    def in_channel(self, channel: object) -> MemorySwitch:
        return self.at(switch_target_of(channel))

    # --- the admins' changes -------------------------------------------------------------------------------

    async def set_guild(self, guild_id: int, *, learning: bool, recall: bool) -> None:
        """Saved before it takes effect (and before returning)."""
        async with self._lock:
            guilds = dict(self._guilds)
            if learning and recall:
                guilds.pop(guild_id, None)
            else:
                guilds[guild_id] = MemorySwitch(learning=learning, recall=recall)
            await self._store_guild(guild_id, guilds.get(guild_id), guilds)
            self._put_guild(guild_id, guilds.get(guild_id))

    async def set_channel(self, channel_id: int, *, learning: bool) -> None:
        """Saved before it takes effect (and before returning)."""
        async with self._lock:
            channels = dict(self._channels)
            if learning:
                channels.pop(channel_id, None)
            else:
                channels[channel_id] = False
            await self._store_channel(channel_id, channels.get(channel_id), channels)
            self._put_channel(channel_id, channels.get(channel_id))

    def _put_guild(self, guild_id: int, switch: MemorySwitch | None) -> None:
        if switch is None:
            self._guilds.pop(guild_id, None)
        else:
            self._guilds[guild_id] = switch

    def _put_channel(self, channel_id: int, learning: bool | None) -> None:
        if learning is None:
            self._channels.pop(channel_id, None)
        else:
            self._channels[channel_id] = learning

    @abstractmethod
    async def _store_guild(self, guild_id: int, switch: MemorySwitch | None, guilds: dict[int, MemorySwitch]) -> None:
        """Keep the server's switch (None: all on, nothing kept); `guilds` is every server's after the change."""

    @abstractmethod
    async def _store_channel(self, channel_id: int, learning: bool | None, channels: dict[int, bool]) -> None:
        """Keep the channel's learning switch (None: on, nothing kept); `channels` is every channel's after it."""


class MemorySwitches(SwitchBoard):
    """The admins' choices in `DATA_DIR/memory-switches.json` (one process)."""

    def __init__(
        self,
        path: Path,
        *,
        disabled_guilds: frozenset[int] = frozenset(),
        disabled_channels: frozenset[int] = frozenset(),
        writer: AtomicWriter | None = None,
    ) -> None:
        super().__init__(disabled_guilds=disabled_guilds, disabled_channels=disabled_channels)
        self.path = path
        self._writer = writer or AtomicWriter()

    async def open(self) -> None:
        await asyncio.to_thread(self.load)

    async def close(self) -> None:
        """Nothing to stop: one process owns the file."""

    def load(self) -> None:
        """Read the admins' switches; `SwitchesFileError` when the file exists but is unreadable."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            data = json.loads(raw)
            guilds = {
                int(gid): MemorySwitch(learning=bool(value["learning"]), recall=bool(value["recall"]))
                for gid, value in data.get("guilds", {}).items()
            }
            channels = {int(cid): bool(value["learning"]) for cid, value in data.get("channels", {}).items()}
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise SwitchesFileError(
                f"{self.path} is unreadable; fix it or remove it (every server then has memory switched on)"
            ) from None
        self._guilds = guilds
        self._channels = channels

    async def _store_guild(self, guild_id: int, switch: MemorySwitch | None, guilds: dict[int, MemorySwitch]) -> None:
        await self._save(guilds, self._channels)

    async def _store_channel(self, channel_id: int, learning: bool | None, channels: dict[int, bool]) -> None:
        await self._save(self._guilds, channels)

    async def _save(self, guilds: dict[int, MemorySwitch], channels: dict[int, bool]) -> None:
        data = {
            "guilds": {
                str(gid): {"learning": value.learning, "recall": value.recall} for gid, value in sorted(guilds.items())
            },
            "channels": {str(cid): {"learning": value} for cid, value in sorted(channels.items())},
        }
        await self._writer.write(self.path, json_bytes(data, indent=1))
