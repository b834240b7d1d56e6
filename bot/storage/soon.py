"""Housekeeping that must happen soon, once for a burst of reasons: `Soon(work, delay).ask()`.

The first `ask` starts a timer; `work` runs when it fires, once, however many asks came meanwhile. An ask while
`work` runs makes it run once more afterwards (what it was asked for may have come too late for the run under way).
`close` cancels a run not started yet and waits for one under way. A failing run is logged, not raised: the next
ask tries again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Soon:
    def __init__(self, work: Callable[[], Awaitable[object]], delay: float, *, name: str) -> None:
        self._work = work
        self.delay = delay
        self._name = name
        self._timer: asyncio.TimerHandle | None = None
        self._running: asyncio.Task[None] | None = None
        self._again = False

    @property
    def pending(self) -> bool:
        """A run is planned or under way."""
        return self._timer is not None or self._running is not None

    def ask(self) -> None:
        if self._running is not None:
            self._again = True
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay, self._start)

    def _start(self) -> None:
        self._timer = None
        self._running = asyncio.get_running_loop().create_task(self._run(), name=self._name)

    async def _run(self) -> None:
        try:
            await self._work()
        except Exception:  # housekeeping must not end in an unretrieved task error
            log.exception("%s failed; the next request tries again", self._name)
        finally:
            self._running = None
        if self._again:
            self._again = False
            self.ask()

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._again = False
        if self._running is not None:
            await asyncio.wait({self._running})
