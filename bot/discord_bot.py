"""The `commands.Bot` subclass: receives the shared resources, loads the cogs, keeps the heartbeat honest.

A `commands.Bot` for its cogs and extensions, but the bot has no prefix commands: people talk to it, and every
command is a slash command. So messages are not parsed for commands at all (the chat cog's listener handles
them); otherwise `@bot hello` would be looked up as a command named "hello" and logged as an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord
from discord.ext import commands

from bot.app import Resources
from bot.command_sync import sync_if_changed
from bot.health import write_heartbeat
from bot.interactions import MemoryCommandTree

log = logging.getLogger(__name__)

EXTENSIONS = ("cogs.chat", "cogs.memory", "cogs.privacy", "cogs.admin", "cogs.metrics")
HEARTBEAT_SECONDS = 30.0


def build_intents() -> discord.Intents:
    """The minimum: guilds, guild and DM messages, and message content (a privileged intent to switch on)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True
    return intents


def quiet_voice_warnings() -> None:
    """A text bot: discord.py's start-up warnings about missing voice support are noise. Called when the bot
    starts (`bot.cli.run_bot`), so importing this module changes nothing in discord.py."""
    discord.VoiceClient.warn_nacl = False
    discord.VoiceClient.warn_dave = False


class MemoryBot(commands.Bot):
    def __init__(self, resources: Resources, *, force_sync: bool = False) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=build_intents(),
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            max_messages=500,
            tree_cls=MemoryCommandTree,
        )
        self.resources = resources
        self.force_sync = force_sync
        self.accepting = True
        self.failed_extensions: list[str] = []
        # True between READY (or RESUMED) and the next disconnect. `is_ready()` is no use for health: it stays
        # true while discord.py is stuck reconnecting.
        self.gateway_connected = False
        self._heartbeat: asyncio.Task[None] | None = None

    async def on_message(self, message: discord.Message, /) -> None:
        """No prefix commands (see the module docstring): the chat cog's listener answers messages."""

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
        await self._set_connected(True)

    async def on_resumed(self) -> None:
        log.info("gateway session resumed")
        await self._set_connected(True)

    async def on_disconnect(self) -> None:
        if self.gateway_connected:
            log.warning("disconnected from the Discord gateway; discord.py is reconnecting")
        await self._set_connected(False)

    async def _set_connected(self, connected: bool) -> None:
        """Record the gateway state and write the heartbeat at once, so health follows it without waiting."""
        self.gateway_connected = connected
        await self._write_heartbeat()

    async def _write_heartbeat(self) -> None:
        connected = self.gateway_connected and not self.is_closed()
        latency = self.latency * 1000 if connected and self.latency == self.latency else None  # NaN before a beat
        try:
            await write_heartbeat(
                self.resources.settings.data_dir, connected=connected, latency_ms=latency, guilds=len(self.guilds)
            )
        except OSError:
            log.warning("could not write the heartbeat file", exc_info=True)

    async def _beat(self) -> None:
        """Refresh `DATA_DIR/heartbeat.json` on a timer; the container's HEALTHCHECK reads it."""
        while True:
            await self._write_heartbeat()
            await asyncio.sleep(HEARTBEAT_SECONDS)

    async def close(self) -> None:
        """Stop the heartbeat and mark it disconnected, so the health check never reports a stopped bot healthy."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        self.gateway_connected = False
        try:
            await write_heartbeat(self.resources.settings.data_dir, connected=False, latency_ms=None, guilds=0)
        except OSError:
            log.warning("could not mark the heartbeat disconnected", exc_info=True)
        await super().close()
