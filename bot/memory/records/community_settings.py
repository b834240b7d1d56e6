"""What each server's admins chose for the bot (`/bot-settings`): the persona prompt and chat model per server,
category, channel or thread, who may talk to the bot there, and whether its members may DM the bot.

The choices are records of a `RecordTable` (a file, or rows every process shares), keyed `guild:<id>` for a server
and `channel:<id>` for a channel, category or thread (Discord ids never repeat across kinds). A channel's record
names its server, so everything a server set can be forgotten when the bot leaves it. Only what is set is stored.
The file refuses to start when unreadable rather than silently dropping a server's restrictions (allowed roles,
DMs switched off). A reply's settings are looked up from the most specific place: thread, its channel, the
channel's category, the server; the caller falls back to the operator's environment for what none sets.

The engine stores and looks up; what is allowed (the operator's model list) and who may change it (Manage Server)
are decided by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.memory.models import Location
from bot.storage.records import Record, RecordTable

Level = Literal["thread", "channel", "category", "server"]
MAX_PROMPT_CHARS = 4000
MAX_ALLOWED_ROLES = 25


def levels(where: Location) -> list[tuple[Level, int]]:
    """The places whose settings apply where a message was written, most specific first: its thread, its channel,
    the channel's category, its server (nothing in DMs)."""
    if where.guild_id is None:
        return []
    found: list[tuple[Level, int]] = []
    for level, place in (("thread", where.thread_id), ("channel", where.channel_id), ("category", where.category_id)):
        if place is not None:
            found.append((level, place))  # type: ignore[arg-type]
    found.append(("server", where.guild_id))
    return found


@dataclass(frozen=True, slots=True)
class Chosen:
    """One value an admin set, and where: the level and the id of the server, category, channel or thread."""

    value: str
    level: Level
    place_id: int


@dataclass(frozen=True, slots=True)
class CommunityChoice:
    """Every prompt and model set on the way from a reply's thread to its server, most specific first."""

    prompts: tuple[Chosen, ...] = ()
    models: tuple[Chosen, ...] = ()

    @property
    def prompt(self) -> Chosen | None:
        return self.prompts[0] if self.prompts else None

    def model(self, allowed: tuple[str, ...] | frozenset[str]) -> Chosen | None:
        """The most specific model that is still allowed (an operator may have removed one from the list since)."""
        return next((chosen for chosen in self.models if chosen.value in allowed), None)


def _key(guild_id: int, place_id: int | None) -> str:
    return f"guild:{guild_id}" if place_id is None or place_id == guild_id else f"channel:{place_id}"


def _tidy(record: Record) -> Record | None:
    """A record without any setting is not stored (a channel's `guild` alone is not a setting)."""
    return record if set(record) - {"guild"} else None


class CommunityBook:
    """The live settings, read from RAM; changes are saved (for every process) before they take effect."""

    def __init__(self, table: RecordTable) -> None:
        self.table = table

    async def open(self) -> None:
        await self.table.open()

    async def close(self) -> None:
        await self.table.close()

    async def forget_user(self, user_id: int) -> None:
        """Settings belong to servers and channels, not to users: nothing to forget."""

    # --- reading -------------------------------------------------------------------------------------------

    def at(self, where: Location) -> CommunityChoice:
        """Every prompt and model set on the way from where a message was written up to its server."""
        prompts: list[Chosen] = []
        models: list[Chosen] = []
        for level, place_id in levels(where):
            record = self.table.get(_key(where.guild_id or 0, None if level == "server" else place_id)) or {}
            if isinstance(prompt := record.get("prompt"), str) and prompt:
                prompts.append(Chosen(prompt, level, place_id))
            if isinstance(model := record.get("model"), str) and model:
                models.append(Chosen(model, level, place_id))
        return CommunityChoice(tuple(prompts), tuple(models))

    def set_here(self, guild_id: int, place_id: int | None) -> Record:
        """What is set exactly at this place (the server when `place_id` is None), for `/bot-settings show`."""
        return dict(self.table.get(_key(guild_id, place_id)) or {})

    def allowed_roles(self, guild_id: int) -> frozenset[int]:
        """The roles whose members may talk to the bot in this server; empty: everyone may."""
        record = self.table.get(_key(guild_id, None)) or {}
        return frozenset(int(role) for role in record.get("roles", []) if str(role).isdigit())

    def dms_allowed(self, guild_id: int) -> bool:
        """Whether this server's members count as members for DM_POLICY=members."""
        record = self.table.get(_key(guild_id, None)) or {}
        return record.get("dms", True) is not False

    def guilds_with_dms_off(self) -> frozenset[int]:
        return frozenset(
            int(key.partition(":")[2]) for key, record in self.table.items().items()
            if key.startswith("guild:") and record.get("dms") is False
        )

    # --- the admins' changes -------------------------------------------------------------------------------

    async def _change(self, guild_id: int, place_id: int | None, **fields: object) -> None:
        """Set (or, with None, clear) fields of one place's record."""

        def update(old: Record | None) -> Record | None:
            record = dict(old or {})
            if place_id is not None and place_id != guild_id:
                record["guild"] = str(guild_id)
            for name, value in fields.items():
                if value is None:
                    record.pop(name, None)
                else:
                    record[name] = value
            return _tidy(record)

        await self.table.change(_key(guild_id, place_id), update)

    async def set_prompt(self, guild_id: int, place_id: int | None, text: str) -> None:
        await self._change(guild_id, place_id, prompt=text[:MAX_PROMPT_CHARS])

    async def set_model(self, guild_id: int, place_id: int | None, name: str) -> None:
        await self._change(guild_id, place_id, model=name)

    async def reset(self, guild_id: int, place_id: int | None) -> bool:
        """Clear the prompt and model set at this place (the server's roles and DM choice stay); True if any was."""
        before = self.set_here(guild_id, place_id)
        await self._change(guild_id, place_id, prompt=None, model=None)
        return "prompt" in before or "model" in before

    async def set_allowed_roles(self, guild_id: int, roles: frozenset[int]) -> None:
        listed = sorted(roles)[:MAX_ALLOWED_ROLES]
        await self._change(guild_id, None, roles=[str(role) for role in listed] or None)

    async def set_dms_allowed(self, guild_id: int, allowed: bool) -> None:
        await self._change(guild_id, None, dms=None if allowed else False)

    async def forget_guild(self, guild_id: int) -> int:
        """Delete everything the server set, its channels' settings included; returns how many records."""
        keys = [
            key for key, record in self.table.items().items()
            if key == _key(guild_id, None) or (key.startswith("channel:") and record.get("guild") == str(guild_id))
        ]
        return await self.table.delete(keys)
