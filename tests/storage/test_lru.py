"""LruCache: at most `size` entries, the least recently used dropped first; peeking and scanning touch nothing."""

from __future__ import annotations

import pytest

from bot.storage.lru import LruCache


def filled(*keys: str, size: int = 3) -> LruCache[str, int]:
    cache: LruCache[str, int] = LruCache(size)
    for n, key in enumerate(keys):
        cache.put(key, n)
    return cache


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = filled("a", "b", "c")
    assert cache.get("a") == 0  # read: the newest now
    cache.put("d", 3)
    assert list(cache) == ["c", "a", "d"]
    assert cache.get("b") is None
    assert len(cache) == 3


def test_writing_an_entry_again_makes_it_the_newest() -> None:
    cache = filled("a", "b", "c")
    cache.put("a", 9)
    cache.put("d", 3)
    assert list(cache) == ["c", "a", "d"]
    assert cache.peek("a") == 9


def test_peeking_and_scanning_leave_the_order_alone() -> None:
    cache = filled("a", "b", "c")
    assert cache.peek("a") == 0
    assert [key for key in cache if key != "b"] == ["a", "c"]
    cache.put("d", 3)
    assert list(cache) == ["b", "c", "d"]  # "a" was peeked and scanned, never used: it went first


def test_discarding_the_scanned_keys() -> None:
    cache = filled("u1", "u1@g", "u2", size=5)
    for key in [key for key in cache if key.startswith("u1")]:
        cache.discard(key)
    cache.discard("absent")
    assert list(cache) == ["u2"]
    cache.clear()
    assert len(cache) == 0 and list(cache) == []


def test_a_cache_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError):
        LruCache[str, int](0)
