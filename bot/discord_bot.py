"""The `commands.Bot` subclass: receives the shared resources, loads the cogs, keeps the heartbeat fresh."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord
from discord.ext import commands

from bot.app import Resources
from bot.command_sync import sync_if_changed
from bot.health import write_heartbeat

log = logging.getLogger(__name__)

EXTENSIONS = ("cogs.chat", "cogs.memory", "cogs.privacy", "cogs.admin")
HEARTBEAT_SECONDS = 30.0


def build_intents() -> discord.Intents:
    """The minimum: guilds, guild and DM messages, and message content (a privileged intent to switch on)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True
    return intents


discord.VoiceClient.warn_nacl = False  # a text bot: the voice-support warnings at start-up are noise
discord.VoiceClient.warn_dave = False


class MemoryBot(commands.Bot):
    def __init__(self, resources: Resources, *, force_sync: bool = False) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=build_intents(),
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            max_messages=500,
        )
        self.resources = resources
        self.force_sync = force_sync
        self.accepting = True
        self.failed_extensions: list[str] = []
        self._heartbeat: asyncio.Task[None] | None = None

    async def load_extensions(self) -> None:
        """Load every cog; a broken one is logged and skipped, so the rest of the bot still works."""
        for name in EXTENSIONS:
            try:
                await self.load_extension(name)
            except commands.ExtensionError:
                self.failed_extensions.append(name)
                log.exception("could not load extension %s; continuing without it", name)

    async def setup_hook(self) -> None:
        await self.load_extensions()
        settings = self.resources.settings
        try:
            await sync_if_changed(
                self.tree, settings.data_dir, force=self.force_sync or settings.sync_commands,
                guild_id=settings.command_sync_guild_id,
            )
        except discord.HTTPException:
            log.exception("slash command sync failed; the commands may be out of date until the next start")
        self._heartbeat = asyncio.create_task(self._beat(), name="heartbeat")

    async def on_ready(self) -> None:
        user = self.user
        log.info("connected as %s (id %s) to %d guilds", user, user.id if user else "?", len(self.guilds))
        latency = self.latency * 1000 if self.latency == self.latency else None  # NaN before the first beat
        await write_heartbeat(
            self.resources.settings.data_dir, connected=True, latency_ms=latency, guilds=len(self.guilds)
        )

    async def _beat(self) -> None:
        """Refresh `DATA_DIR/heartbeat.json` while connected; the container's HEALTHCHECK reads it."""
        data_dir = self.resources.settings.data_dir
        while True:
            connected = self.is_ready() and not self.is_closed()
            latency = self.latency * 1000 if connected and self.latency == self.latency else None
            try:
                await write_heartbeat(data_dir, connected=connected, latency_ms=latency, guilds=len(self.guilds))
            except OSError:
                log.warning("could not write the heartbeat file", exc_info=True)
            await asyncio.sleep(HEARTBEAT_SECONDS)

    async def close(self) -> None:
        """Stop the heartbeat and mark it disconnected, so the health check never reports a stopped bot healthy."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        try:
            await write_heartbeat(self.resources.settings.data_dir, connected=False, latency_ms=None, guilds=0)
        except OSError:
            log.warning("could not mark the heartbeat disconnected", exc_info=True)
        await super().close()
