"""How the bot names gateway shards, in logs, the heartbeat and the health check's one line.

A bot in more than 2,500 servers must shard: each shard is one gateway connection carrying the servers whose
`(guild_id >> 22) % shard_count` is its id (DMs always arrive on shard 0). A large bot runs its shards in several
processes, each given `SHARD_COUNT` and its own `SHARD_IDS`; this module only describes them.

Standard library only: `python -m bot healthcheck` imports it and must start without discord.py or pydantic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShardHealth:
    """One shard of this process as the heartbeat records it: connected right now, and its gateway latency."""

    id: int
    connected: bool
    latency_ms: float | None = None


def shard_list(ids: Iterable[int]) -> str:
    """`2,3` or, for runs of three or more, `0-3,8`: short even for a process running dozens of shards."""
    ordered = sorted(set(ids))
    parts: list[str] = []
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 2:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts.extend(str(shard) for shard in ordered[start : end + 1])
        start = end + 1
    return ",".join(parts)


def describe_shards(ids: Iterable[int], count: int | None) -> str:
    """`shard 0 of 1`, `shards 2,3 of 8`; without a known count just `shards 2,3`."""
    ordered = sorted(set(ids))
    noun = "shard" if len(ordered) == 1 else "shards"
    total = f" of {count}" if count is not None else ""
    return f"{noun} {shard_list(ordered)}{total}"
