"""The admins' memory switches in PostgreSQL, so an admin's `/memory-admin` on one process applies on all.

Same rules as the file (`bot.switches`): only switches that are off are stored (`guild_switches`,
`channel_switches`), reads come from RAM. The RAM copy is a mirror of the tables (`bot.storage.pg.mirror`): loaded at
`open()`, written through on every change (the database first), and refreshed by notification when another process
changes a switch, with a periodic full reload as a safety net.
"""

from __future__ import annotations

from collections.abc import Mapping

import asyncpg

from bot.storage.pg.database import Database
from bot.storage.pg.mirror import Mirror
from bot.switches import MemorySwitch, SwitchBoard

SWITCHES_CHANNEL = "memory_switches"

_Value = MemorySwitch | bool  # a server's switch, or a channel's learning switch


class _SwitchMirror(Mirror[str, _Value]):
    """Rows keyed `guild:<id>` and `channel:<id>`, reflected into the board's dictionaries."""

    channel = SWITCHES_CHANNEL

    def __init__(self, database: Database, board: PostgresMemorySwitches) -> None:
        super().__init__(database)
        self._board = board

    async def _fetch(self, conn: asyncpg.Connection, keys: list[str] | None) -> Mapping[str, _Value]:
        guild_ids = None if keys is None else [int(k[6:]) for k in keys if k.startswith("guild:")]
        channel_ids = None if keys is None else [int(k[8:]) for k in keys if k.startswith("channel:")]
        found: dict[str, _Value] = {}
        if guild_ids is None or guild_ids:
            rows = await conn.fetch(
                "SELECT guild_id, learning, recall FROM guild_switches"
                " WHERE $1::bigint[] IS NULL OR guild_id = ANY($1::bigint[])",
                guild_ids,
            )
            for row in rows:
                found[f"guild:{row['guild_id']}"] = MemorySwitch(learning=row["learning"], recall=row["recall"])
        if channel_ids is None or channel_ids:
            rows = await conn.fetch(
                "SELECT channel_id, learning FROM channel_switches"
                " WHERE $1::bigint[] IS NULL OR channel_id = ANY($1::bigint[])",
                channel_ids,
            )
            for row in rows:
                found[f"channel:{row['channel_id']}"] = bool(row["learning"])
        return found

    def _key_of(self, payload: str) -> str | None:
        kind, _, number = payload.partition(":")
        return payload if kind in ("guild", "channel") and number.isdigit() else None

    def _payload_of(self, key: str) -> str:
        return key

    def _put(self, key: str, value: _Value | None) -> None:
        super()._put(key, value)
        kind, _, number = key.partition(":")
        if kind == "guild":
            self._board._put_guild(int(number), value if isinstance(value, MemorySwitch) else None)
        else:
            self._board._put_channel(int(number), value if isinstance(value, bool) else None)


class PostgresMemorySwitches(SwitchBoard):
    """The admins' switches shared by every process using `database` (plus this process's operator lists)."""

    def __init__(
        self,
        database: Database,
        *,
        disabled_guilds: frozenset[int] = frozenset(),
        disabled_channels: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__(disabled_guilds=disabled_guilds, disabled_channels=disabled_channels)
        self.database = database
        self._mirror = _SwitchMirror(database, self)

    async def open(self) -> None:
        """Listen for other processes' changes, then load every switch."""
        await self._mirror.open()

    async def close(self) -> None:
        await self._mirror.close()

    async def reload(self) -> None:
        """Re-read every switch now (the periodic refresh does this on its own)."""
        await self._mirror.reload()

    async def _store_guild(self, guild_id: int, switch: MemorySwitch | None, guilds: dict[int, MemorySwitch]) -> None:
        async def work(conn: asyncpg.Connection) -> _Value | None:
            if switch is None:
                await conn.execute("DELETE FROM guild_switches WHERE guild_id = $1", guild_id)
            else:
                await conn.execute(
                    "INSERT INTO guild_switches (guild_id, learning, recall) VALUES ($1, $2, $3)"
                    " ON CONFLICT (guild_id) DO UPDATE SET learning = EXCLUDED.learning, recall = EXCLUDED.recall",
                    guild_id,
                    switch.learning,
                    switch.recall,
                )
            return switch

        await self._mirror._change(f"guild:{guild_id}", work)

    async def _store_channel(self, channel_id: int, learning: bool | None, channels: dict[int, bool]) -> None:
        async def work(conn: asyncpg.Connection) -> _Value | None:
            if learning is None:
                await conn.execute("DELETE FROM channel_switches WHERE channel_id = $1", channel_id)
            else:
                await conn.execute(
                    "INSERT INTO channel_switches (channel_id, learning) VALUES ($1, $2)"
                    " ON CONFLICT (channel_id) DO UPDATE SET learning = EXCLUDED.learning",
                    channel_id,
                    learning,
                )
            return learning

        await self._mirror._change(f"channel:{channel_id}", work)
