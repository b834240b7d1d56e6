"""Counting the requests a test Chat Completions server is working on at once: wrap any scripted `Response` in
`Metered(response, meter)`; `meter.peak` is the most answered at the same time. Thread-safe (the server runs in its
own thread)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.llm_server import Response, _Exchange


@dataclass(eq=False)
class Meter:
    now: int = 0
    peak: int = 0
    total: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.total += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


@dataclass(frozen=True)
class Metered(Response):
    """`inner`, counted in `meter` from the request's arrival until its last byte is sent."""

    inner: Response
    meter: Meter

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        self.meter.enter()
        try:
            return await self.inner.render(ex)
        finally:
            self.meter.leave()

    def to_dict(self) -> dict[str, Any]:
        return self.inner.to_dict()
