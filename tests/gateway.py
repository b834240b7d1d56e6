"""A shard's gateway events as discord.py's `AutoShardedClient` produces them, without a socket.

READY and RESUMED go through discord.py's own parsers (`AutoShardedConnectionState.parse_ready`/`parse_resumed`),
a dropped connection through its own `Shard._handle_disconnect`: so the events, their order and their arguments
are the library's (`shard_ready` after the shard's guilds arrived, then `ready` once every shard is; `disconnect`
with `shard_disconnect`; `resumed` with `shard_resumed`), not a guess of them. Each helper returns once every
handler it scheduled (the bot's own `on_<event>` and the cogs' listeners) has finished.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from discord.gateway import DiscordWebSocket
from discord.shard import EventItem, Shard

from bot.client.memory_bot import MemoryBot
from tests.helpers import BOT_ID, spec

CONNECTION_RESET = 54  # ECONNRESET as discord.py checks it (BSD's number; Windows' is 10054)


def guild_ids_on_shard(shard_id: int, shard_count: int, how_many: int) -> list[int]:
    """Server ids Discord routes to that shard: `(guild_id >> 22) % shard_count == shard_id`."""
    return [((1000 + index) * shard_count + shard_id) << 22 for index in range(how_many)]


def bind_shards(bot: MemoryBot) -> None:
    """What `launch_shards` tells the connection state before it connects (minus the sockets)."""
    state: Any = bot._connection
    state.shard_count = bot.shard_count
    state.shard_ids = bot.own_shard_ids()
    state.guild_ready_timeout = 0  # no GUILD_CREATE will follow: the shard is ready at once


async def _settle(before: set[asyncio.Task[Any]], *timers: asyncio.Task[Any] | None) -> None:
    """Wait for discord.py's own timers (a shard's READY waits for its guilds), then for every event handler
    started since `before`."""
    await asyncio.gather(*(timer for timer in timers if timer is not None))
    await asyncio.gather(*(t for t in asyncio.all_tasks() - before if t.get_name().startswith("discord.py:")))


async def shard_ready(bot: MemoryBot, shard_id: int, *, guilds: int = 0) -> None:
    """Discord's READY for one shard, with `guilds` (still unavailable) servers on it."""
    state: Any = bot._connection
    before = asyncio.all_tasks()
    state.parse_ready({
        "v": 10,
        "user": {"id": str(BOT_ID), "username": "MemoryBot", "discriminator": "0", "avatar": None, "bot": True},
        "guilds": [
            {"id": str(guild_id), "unavailable": True}
            for guild_id in guild_ids_on_shard(shard_id, bot.shard_count or 1, guilds)
        ],
        "session_id": f"session-{shard_id}",
        "resume_gateway_url": "wss://gateway.discord.invalid",
        "shard": [shard_id, bot.shard_count or 1],
        "application": {"id": str(BOT_ID), "flags": 0},
    })
    await _settle(before, state._ready_tasks.get(shard_id), state._ready_task)


async def shard_resumed(bot: MemoryBot, shard_id: int) -> None:
    """Discord's RESUMED on one shard (the gateway tags the payload with the shard, as discord.py does)."""
    state: Any = bot._connection
    before = asyncio.all_tasks()
    state.parse_resumed({"__shard_id__": shard_id})
    await _settle(before)


async def shard_connection_lost(bot: MemoryBot, shard_id: int) -> list[EventItem]:
    """The shard's socket is reset by the peer: discord.py dispatches the disconnect and queues a RESUME, which
    is returned (nothing reconnects here). Errno 54 is the reset discord.py resumes after without a backoff."""
    queued: list[EventItem] = []
    bot._reconnect = True  # type: ignore[attr-defined]  # set by AutoShardedClient.connect
    socket = DiscordWebSocket(spec(aiohttp.ClientWebSocketResponse), loop=asyncio.get_running_loop())
    socket.shard_id = shard_id  # as DiscordWebSocket.from_client sets it
    shard = Shard(socket, bot, queued.append)
    before = asyncio.all_tasks()
    await shard._handle_disconnect(OSError(CONNECTION_RESET, "Connection reset by peer"))
    await _settle(before)
    return queued
