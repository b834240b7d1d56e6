"""What both memory-document stores share: a lock per user in this process, and the reads built on
`load_with_revision`."""

from __future__ import annotations

import asyncio
import weakref
from abc import ABC, abstractmethod
from collections.abc import Hashable

from bot.memory.models import MemoryFile
from bot.storage.atomic import json_bytes


class DocumentStore(ABC):
    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[Hashable, asyncio.Lock] = weakref.WeakValueDictionary()
        self.cache_hits = 0  # reads answered from the cache (for monitoring)
        self.cache_misses = 0

    def _lock_for(self, key: Hashable) -> asyncio.Lock:
        """This process's lock for one user (held only while someone waits on or holds it)."""
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    @abstractmethod
    async def load_with_revision(self, user_id: int | str) -> tuple[MemoryFile, int]:
        """Memory plus a number that changes whenever the memory does (the selector caches by it)."""

    @abstractmethod
    async def delete(self, user_id: int | str) -> bool:
        """Delete the user's memory; True when there was any."""

    async def load(self, user_id: int | str) -> MemoryFile:
        """The user's memory (empty when none). The returned object is shared: treat it as read-only."""
        memory, _ = await self.load_with_revision(user_id)
        return memory

    async def forget_user(self, user_id: int) -> bool:
        return await self.delete(user_id)

    async def export_bytes(self, user_id: int | str) -> bytes:
        """The user's memory as pretty JSON, for `/memory export`."""
        memory = await self.load(user_id)
        return json_bytes(memory.model_dump(mode="json"), indent=2)
