"""The bot's periodic upkeep: the daily retention sweep and the hourly save of last-activity days.

One task, started by the privacy cog when it loads and stopped when it unloads. The first sweep runs a few minutes
after start (not during it, when the gateway and the journal replay compete for the one CPU), then every day, so a
bot restarted daily still sweeps. A failing round is logged and the next one comes as planned.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

FIRST_SWEEP_SECONDS = 300.0
SWEEP_EVERY_SECONDS = 24 * 3600.0
SAVE_ACTIVITY_EVERY_SECONDS = 3600.0


class Housekeeping:
    def __init__(
        self,
        memory: MemoryService,
        *,
        first_sweep_seconds: float = FIRST_SWEEP_SECONDS,
        sweep_every_seconds: float = SWEEP_EVERY_SECONDS,
        save_every_seconds: float = SAVE_ACTIVITY_EVERY_SECONDS,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.memory = memory
        self.first_sweep_seconds = first_sweep_seconds
        self.sweep_every_seconds = sweep_every_seconds
        self.save_every_seconds = save_every_seconds
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None
        self.sweeps = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="housekeeping")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        """Sleep in steps of at most `save_every_seconds`; save activity each step, sweep when one is due."""
        until_sweep = self.first_sweep_seconds
        while True:
            step = min(until_sweep, self.save_every_seconds)
            await self._sleep(step)
            until_sweep -= step
            await self.memory.ops.save_activity()
            if until_sweep <= 0:
                until_sweep = self.sweep_every_seconds
                try:
                    await self.memory.ops.sweep()
                except Exception:  # a bad round must not end the schedule
                    log.exception("retention sweep failed; the next one runs as planned")
                self.sweeps += 1
