"""Test-only entry point: `python -m tests.standin [args]` is `python -m bot [args]` without Discord.

Everything but the Discord connection runs for real: settings, logging, cogs, journal replay, debouncer,
extractor, store, signal handling, shutdown. Instead of logging in, the bot loads its cogs, writes a "connected"
heartbeat (what the process tests and the footprint benchmark wait for) and idles until it is stopped.

`--unreachable-discord` instead runs the real login against a local port where nothing listens, as on a machine
without network: the start-up must fail with one line.
"""

from __future__ import annotations

import asyncio
import logging
import sys

import discord

from bot.cli import main
from bot.client.memory_bot import MemoryBot
from bot.ops.health import write_heartbeat

UNREACHABLE = "--unreachable-discord"
REFUSED_URL = "http://127.0.0.1:9/api/v10"  # the discard port: nothing listens there


async def standin_connect(bot: MemoryBot) -> None:
    logging.getLogger("bot").info("Discord stand-in mode: not connecting")
    await bot.prepare()  # the translator, then the cogs, as `setup_hook` does
    await write_heartbeat(bot.resources.settings.data_dir, connected=True, latency_ms=None, guilds=0)
    await asyncio.Event().wait()  # until the process is stopped


async def unreachable_connect(bot: MemoryBot) -> None:
    discord.http.Route.BASE = REFUSED_URL
    await bot.start(bot.resources.settings.discord_token.get_secret_value())


if __name__ == "__main__":
    args = sys.argv[1:]
    connect = unreachable_connect if UNREACHABLE in args else standin_connect
    sys.exit(main([arg for arg in args if arg != UNREACHABLE], connect=connect))
