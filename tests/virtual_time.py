"""An asyncio event loop whose clock is virtual: when nothing is ready, time jumps to the next timer.

Timer logic (debounce quiet times, max waits) then runs exactly as written, in no real time, and a loaded
machine cannot make a 25 ms `asyncio.sleep` last 300 ms and fire a timer "early". Real I/O still works (the
selector is polled without blocking first); the clock only jumps when there is nothing else to do.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector:
    def __init__(self, real: selectors.BaseSelector, loop: VirtualTimeLoop) -> None:
        self._real = real
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = self._real.select(0)
        if events or timeout == 0:
            return events
        if timeout is None:  # no timer at all: only I/O (another thread) can wake us, so really wait for it
            return self._real.select(None)
        self._loop.advance(timeout)
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._now = 0.0
        self._selector = _JumpingSelector(self._selector, self)  # type: ignore[has-type,assignment]

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


def run_in_virtual_time(coroutine: Coroutine[Any, Any, T]) -> T:
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.close()
