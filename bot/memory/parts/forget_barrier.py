"""The wait between a forget's new generation and its change: no extraction is shown what is being forgotten.

A forget bumps the user's generation first (so nothing begun before it can write), then changes their memory. The
turns it keeps, and any that arrive meanwhile, carry the new generation; an extraction of them that loaded the
memory before the change landed would be shown the forgotten words, pass the generation check, and write them
back. So while a forget of a user is under way in this process, their batches wait here before loading memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ForgetBarrier:
    """Per user: `holding` while a forget changes the memory; `passed` returns once no forget of theirs is."""

    def __init__(self) -> None:
        self._open: dict[int, asyncio.Event] = {}
        self._holders: dict[int, int] = {}
        self._waiting: dict[int, int] = {}

    @asynccontextmanager
    async def holding(self, user_id: int) -> AsyncIterator[None]:
        """Hold the user's extractions back until the block (and any other forget of theirs) has ended."""
        self._holders[user_id] = self._holders.get(user_id, 0) + 1
        opened = self._open.setdefault(user_id, asyncio.Event())
        try:
            yield
        finally:
            self._holders[user_id] -= 1
            if not self._holders[user_id]:
                del self._holders[user_id]
                del self._open[user_id]
                opened.set()

    async def passed(self, user_id: int) -> None:
        """Return once no forget of the user is under way."""
        while (opened := self._open.get(user_id)) is not None:
            self._waiting[user_id] = self._waiting.get(user_id, 0) + 1
            try:
                await opened.wait()
            finally:
                self._waiting[user_id] -= 1
                if not self._waiting[user_id]:
                    del self._waiting[user_id]

    def waiting(self, user_id: int) -> int:
        """How many of the user's batches are waiting for a forget to end."""
        return self._waiting.get(user_id, 0)
