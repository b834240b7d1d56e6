"""A bounded least-recently-used map: the one implementation behind every cache that drops its least recently used
entry first (the memory stores' reads, the codecs' keys, the fact indexes, reply chains, the chat's history starts)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most `size` entries; reading or writing an entry makes it the newest; the oldest is dropped first."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("need size >= 1")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        """The keys, least recently used first, none made the newest (a scan, such as for the keys of one user).
        Collect them before discarding any: the cache must not change while it is being iterated."""
        return iter(self._entries)

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def peek(self, key: K) -> V | None:
        """The entry without making it the newest (a lookup that may turn out stale)."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> V:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def discard(self, key: K) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()
