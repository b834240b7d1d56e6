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
        self._unreadable: set[int] = set()  # users whose memory was kept aside, not yet told (this process)

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

    def mark_unreadable(self, user_id: int | str) -> None:
        """The user's memory could not be read and was kept aside: they are told once (`take_unreadable`)."""
        self._unreadable.add(int(user_id))

    def take_unreadable(self, user_id: int) -> bool:
        """True once after `mark_unreadable` (the notice is given once), then False; a forget clears it."""
        if user_id in self._unreadable:
            self._unreadable.discard(user_id)
            return True
        return False

    async def load(self, user_id: int | str) -> MemoryFile:
        """The user's memory (empty when none). The returned object is shared: treat it as read-only."""
        memory, _ = await self.load_with_revision(user_id)
        return memory

    async def forget_user(self, user_id: int) -> bool:
        self._unreadable.discard(user_id)  # the copies kept aside go with the rest: nothing left to tell of
        return await self.delete(user_id)

    async def export_bytes(self, user_id: int | str) -> bytes:
        """The user's memory as pretty JSON, for `/memory export`."""
        memory = await self.load(user_id)
        return json_bytes(memory.model_dump(mode="json"), indent=2)
