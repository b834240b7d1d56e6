"""Serves Prometheus metrics while loaded (METRICS_PORT; off by default).

The gateway gauge is kept by the bot itself (`MemoryBot`), which tracks every shard's session for the heartbeat
too: it reads 1 only while all of this process's shards are connected, 0 during a reconnect loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord.ext import commands

from bot.ops.metrics import MetricsServer

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot


class MetricsCog(commands.Cog):
    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.metrics = bot.resources.metrics
        settings = bot.resources.settings
        self.server: MetricsServer | None = None
        if settings.metrics_port is not None:
            self.server = MetricsServer(self.metrics, host=settings.metrics_host, port=settings.metrics_port)

    async def cog_load(self) -> None:
        if self.server is not None and not await self.server.start():
            self.server = None

    async def cog_unload(self) -> None:
        if self.server is not None:
            await self.server.stop()


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(MetricsCog(bot))
