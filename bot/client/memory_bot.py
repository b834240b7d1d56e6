"""The bot (`commands.AutoShardedBot`): receives the shared resources, loads the cogs, keeps the heartbeat honest.

A bot for its cogs and extensions, but the bot has no prefix commands: people talk to it, and every
command is a slash command. So messages are not parsed for commands at all (the chat cog's listener handles
them); otherwise `@bot hello` would be looked up as a command named "hello" and logged as an error.

Its command tree speaks its users' languages: the tree's translator (`bot.i18n.translator`) gives Discord the
commands' names and descriptions in each of them, and the tree notes each user's language (`locales`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from typing import Any

import discord
from discord.ext import commands

from bot.app import Resources
from bot.chat.copies import MessageCopies
from bot.client.command_sync import sync_if_changed
from bot.client.interactions import MemoryCommandTree
from bot.i18n.readers import LocaleBook
from bot.i18n.translator import CatalogTranslator
from bot.ops.health import write_heartbeat
from bot.ops.shards import ShardHealth, describe_shards

log = logging.getLogger(__name__)

EXTENSIONS = (
    "cogs.chat", "cogs.memory", "cogs.privacy", "cogs.admin", "cogs.metrics", "cogs.settings", "cogs.usage",
    "cogs.reply_actions", "cogs.deletes",
)
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


def _all_connected(shards: list[ShardHealth]) -> bool:
    return bool(shards) and all(shard.connected for shard in shards)


class MemoryBot(commands.AutoShardedBot):
    """The bot, sharded: it runs the gateway shards SHARD_COUNT and SHARD_IDS give it, or all of them.

    With SHARD_COUNT set it runs exactly those shards: SHARD_IDS, or every shard from 0 to SHARD_COUNT-1. Unset,
    discord.py asks Discord for its recommended count and runs them all here: one connection below 2,500 servers,
    as an unsharded bot would, and a bot that grows past that keeps working after a restart instead of being
    refused by Discord (which closes an unsharded session of such a bot).

    Health is tracked per shard, from the shard events (`on_shard_ready`, `on_shard_resumed`,
    `on_shard_disconnect`; discord.py dispatches them next to the unsharded events): the process is connected only
    while every one of its shards is. Slash commands belong to the application, not to a shard, so only the
    process running shard 0 syncs them.
    """

    def __init__(self, resources: Resources, *, force_sync: bool = False) -> None:
        settings = resources.settings
        sharding: dict[str, Any] = {"shard_count": settings.shard_count}
        if settings.shard_ids is not None:
            sharding["shard_ids"] = sorted(settings.shard_ids)
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=build_intents(),
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            max_messages=500,
            tree_cls=MemoryCommandTree,
            **sharding,
        )
        self.resources = resources
        self.message_copies = MessageCopies()  # every copy of message text outside the engine (bot.chat.copies)
        self.force_sync = force_sync
        self.accepting = True
        self.failed_extensions: list[str] = []
        # Per shard: True between its READY (or RESUMED) and its next disconnect. `is_ready()` is no use for
        # health: it stays true while discord.py is stuck reconnecting.
        self._shard_connected: dict[int, bool] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._heartbeat_lock = asyncio.Lock()

    # --- which shards ----------------------------------------------------------------------------------------

    def own_shard_ids(self) -> list[int]:
        """The shards this process runs: SHARD_IDS, or all of SHARD_COUNT (discord.py sets the count from
        Discord's recommendation at connect when unset), or before that the shards heard from so far."""
        if self.shard_ids is not None:
            return sorted(self.shard_ids)
        if (count := self.known_shard_count) is not None:
            return list(range(count))
        return sorted(self._shard_connected)

    @property
    def known_shard_count(self) -> int | None:
        """SHARD_COUNT, or Discord's recommendation once discord.py has asked for it (None before)."""
        count: int | None = self.shard_count  # discord.py annotates it `int`, but it is None until then
        return count

    def shard_plan(self) -> str:
        """For the start-up line: `running shards 2,3 of 8`, or that Discord's recommendation decides."""
        if self.known_shard_count is None:
            return "running as many shards as Discord recommends"
        return f"running {describe_shards(self.own_shard_ids(), self.known_shard_count)}"

    @property
    def runs_shard_zero(self) -> bool:
        """Shard 0 carries every DM; its process is also the one that syncs slash commands."""
        return self.shard_ids is None or 0 in self.shard_ids

    @property
    def gateway_connected(self) -> bool:
        """Every shard of this process has a live gateway session (and the bot is not closing)."""
        return _all_connected(self._shard_health())

    # --- events ----------------------------------------------------------------------------------------------

    async def on_message(self, message: discord.Message, /) -> None:
        """No prefix commands (see the module docstring): the chat cog's listener answers messages."""

    @property
    def locales(self) -> LocaleBook:
        """The language each user's Discord last reported (for what the bot sends them in DMs)."""
        tree = self.tree
        assert isinstance(tree, MemoryCommandTree)
        return tree.locales

    async def prepare(self) -> None:
        """What comes before the gateway: the commands' translator, then the cogs (their commands with it)."""
        await self.tree.set_translator(CatalogTranslator())
        await self.load_extensions()

    async def load_extensions(self) -> None:
        """Load every cog; a broken one is logged and skipped, so the rest of the bot still works."""
        for name in EXTENSIONS:
            try:
                await self.load_extension(name)
            except commands.ExtensionError:
                self.failed_extensions.append(name)
                log.exception("could not load extension %s; continuing without it", name)

    async def setup_hook(self) -> None:
        await self.prepare()
        await self.sync_commands()
        self._heartbeat = asyncio.create_task(self._beat(), name="heartbeat")

    async def sync_commands(self) -> None:
        """Sync the slash commands when they changed, from the process running shard 0 only: the commands are
        the application's, so one process suffices, and processes of one bot starting together (or mid-way
        through a rolling upgrade, with different commands) must not overwrite each other's sync."""
        settings = self.resources.settings
        if not self.runs_shard_zero:
            log.info("slash commands are synced by the process running shard 0; not syncing here")
            return
        try:
            await sync_if_changed(
                self.tree, settings.data_dir, force=self.force_sync or settings.sync_commands,
                guild_id=settings.command_sync_guild_id,
            )
        except discord.HTTPException:
            log.exception("slash command sync failed; the commands may be out of date until the next start")

    async def on_ready(self) -> None:
        """Every shard of this process has connected once (discord.py dispatches it once, not per reconnect)."""
        user = self.user
        log.info(
            "connected as %s (id %s) to %d guilds, %s", user, user.id if user else "?", len(self.guilds),
            describe_shards(self.own_shard_ids(), self.known_shard_count),
        )

    async def on_shard_ready(self, shard_id: int) -> None:
        guilds = sum(1 for guild in self.guilds if guild.shard_id == shard_id)
        log.info("shard %d ready with %d guilds", shard_id, guilds)
        await self._set_shard_connected(shard_id, True)

    async def on_shard_resumed(self, shard_id: int) -> None:
        log.info("shard %d resumed its gateway session", shard_id)
        await self._set_shard_connected(shard_id, True)

    async def on_shard_disconnect(self, shard_id: int) -> None:
        if self._shard_connected.get(shard_id, False):  # discord.py repeats it for every failed reconnect
            log.warning("shard %d disconnected from the Discord gateway; discord.py is reconnecting", shard_id)
        await self._set_shard_connected(shard_id, False)

    async def _set_shard_connected(self, shard_id: int, connected: bool) -> None:
        """Record a shard's state and write the heartbeat at once, so health follows it without waiting. The
        metrics gauge is set here too, before the first await, so it is never behind the heartbeat."""
        self._shard_connected[shard_id] = connected
        self.resources.metrics.gateway_connected = self.gateway_connected
        await self._write_heartbeat()

    # --- heartbeat -------------------------------------------------------------------------------------------

    def _shard_health(self) -> list[ShardHealth]:
        latencies = dict(self.latencies)
        shards = []
        for shard in self.own_shard_ids():
            connected = self._shard_connected.get(shard, False) and not self.is_closed()
            latency = latencies.get(shard, math.nan) * 1000
            shards.append(ShardHealth(shard, connected, latency if connected and math.isfinite(latency) else None))
        return shards

    async def _write_heartbeat(self) -> None:
        """Write `DATA_DIR/heartbeat.json` from the state at the moment of writing. One write at a time, so a
        burst of shard events (a network blip drops them all) cannot leave an older state on disk last."""
        async with self._heartbeat_lock:
            shards = self._shard_health()
            connected = _all_connected(shards)
            latency = self.latency * 1000
            try:
                await write_heartbeat(
                    self.resources.settings.data_dir, connected=connected,
                    latency_ms=latency if connected and math.isfinite(latency) else None,  # NaN/inf before a beat
                    guilds=len(self.guilds), shards=shards, shard_count=self.known_shard_count,
                )
            except OSError:
                log.warning("could not write the heartbeat file", exc_info=True)

    async def _beat(self) -> None:
        """Refresh `DATA_DIR/heartbeat.json` on a timer; the container's HEALTHCHECK reads it."""
        while True:
            await self._write_heartbeat()
            await asyncio.sleep(HEARTBEAT_SECONDS)

    async def close(self) -> None:
        """Stop the heartbeat and mark every shard disconnected, so the health check never reports a stopped bot
        healthy."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        for shard in self.own_shard_ids():
            self._shard_connected[shard] = False
        self.resources.metrics.gateway_connected = False
        await self._write_heartbeat()
        if self._ready is discord.utils.MISSING:
            # Never logged in (a stand-in run): discord.py's sharded close needs what login sets up first.
            await self._async_setup_hook()
        await super().close()
