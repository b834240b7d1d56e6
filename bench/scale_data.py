"""The scale model's data: a bot's users as PostgreSQL holds them, generated and loaded with COPY.

`load_users(url, users)` writes, for `users` users, what the bot would have written after serving them: one
`memories` row each (the engine's own document format, built once through `MemoryFile` and then filled in as
text, so a million documents cost minutes, not hours), their `user_activity` day and their `memory_upkeep` row.
Activity is Zipf-distributed (`zipf_weight`): the most active 1 % hold the fact cap (`MEMORY_MAX_FACTS` facts of
150-300 characters), the others a handful of facts, fewer the quieter they are. A few users (`SILENT_SHARE`) were
last seen before the retention window, so the sweep has real work at any size.

Rows go in batches of `BATCH` through `copy_records_to_table` (binary COPY), one transaction per batch; then one
`VACUUM (ANALYZE)`, timed apart.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import asyncpg

from bench.common import make_long_facts

FIRST_USER = 700_000_000_000_000_000
BATCH = 5_000
ZIPF_S = 1.07
AT_CAP_SHARE = 0.01
SILENT_SHARE = 0.001
FACT_POOL = 4_000
RETENTION_DAYS = 365
TODAY = date(2026, 12, 2)


@dataclass(frozen=True, slots=True)
class Loaded:
    users: int
    facts: int
    seconds: float
    silent: int
    vacuum_seconds: float = 0.0


def zipf_weight(rank: int, s: float = ZIPF_S) -> float:
    """Activity of user rank r (0 = the most active) proportional to 1 / (r + 1) ** s."""
    return 1.0 / (rank + 1) ** s


def user_id(rank: int) -> int:
    return FIRST_USER + rank


def facts_for(rank: int, users: int, cap: int) -> int:
    """The most active 1 % at the cap; then fewer facts the quieter a user is (at least one)."""
    at_cap = max(1, int(users * AT_CAP_SHARE))
    if rank < at_cap:
        return cap
    return max(1, int(cap * 0.2 * (at_cap / rank) ** 0.5))


class _Documents:
    """Memory documents as the engine writes them, made from a pool of realistic facts without a model per row."""

    def __init__(self, seed: int) -> None:
        from bot.memory.models import Fact, MemoryFile

        self.rng = random.Random(seed)
        pool = make_long_facts(FACT_POOL, seed=seed)
        self.facts: list[str] = []
        for n, fact in enumerate(pool):
            assert isinstance(fact, Fact)
            fact.id = f"fact_{n:08x}"  # replaced per row
            self.facts.append(json.dumps(fact.model_dump(mode="json"), ensure_ascii=False))
        empty = MemoryFile().model_dump(mode="json")
        empty["facts"] = ["@FACTS@"]
        empty["user"]["personalContext"]["summary"] = "@SUMMARY@"
        self.template = json.dumps(empty, ensure_ascii=False)

    def document(self, uid: int, facts: int) -> str:
        chosen = self.rng.sample(range(len(self.facts)), min(facts, len(self.facts)))
        body = ",".join(
            self.facts[i].replace(f'"fact_{i:08x}"', f'"fact_{(uid * 131 + n) & 0xFFFFFFFF:08x}"', 1)
            for n, i in enumerate(chosen)
        )
        summary = "Works in logistics, cycles to work and is planning a long trip; prefers short answers."
        return self.template.replace('"@FACTS@"', body).replace("@SUMMARY@", summary)


def _rows(users: int, cap: int, seed: int) -> Iterator[tuple[int, str, int, date, int]]:
    docs = _Documents(seed)
    rng = random.Random(seed + 1)
    silent_every = max(1, int(1 / SILENT_SHARE))
    for rank in range(users):
        uid = user_id(rank)
        facts = facts_for(rank, users, cap)
        quiet = rank % silent_every == silent_every - 1
        days_ago = RETENTION_DAYS + 30 if quiet else int(rng.expovariate(1 / 20)) % RETENTION_DAYS
        yield uid, docs.document(uid, facts), rank + 1, TODAY - timedelta(days=days_ago), facts


def _at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)


async def load_users(url: str, users: int, *, cap: int = 100, seed: int = 33) -> Loaded:
    """COPY `users` generated users into the (migrated, empty) database at `url`."""
    started = time.perf_counter()
    conn = await asyncpg.connect(url)
    total_facts = silent = 0
    due = datetime(2027, 1, 1, tzinfo=UTC)
    try:
        batch: list[tuple[int, str, int, date, int]] = []

        async def flush() -> None:
            async with conn.transaction():
                await conn.copy_records_to_table(
                    "memories", records=[(r[0], r[1], r[2], _at(r[3])) for r in batch],
                    columns=["user_id", "doc", "revision", "updated_at"],
                )
                await conn.copy_records_to_table(
                    "user_activity", records=[(r[0], r[3]) for r in batch], columns=["user_id", "last_day"]
                )
                await conn.copy_records_to_table(
                    "memory_upkeep", records=[(r[0], due) for r in batch], columns=["user_id", "due_at"]
                )
            batch.clear()

        for row in _rows(users, cap, seed):
            batch.append(row)
            total_facts += row[4]
            silent += row[3] < TODAY - timedelta(days=RETENTION_DAYS)
            if len(batch) >= BATCH:
                await flush()
        if batch:
            await flush()
        await conn.execute("SELECT setval('memory_revisions', $1)", users + 1)
        loaded = time.perf_counter()
        # A database that has served for a while is vacuumed: without this, autovacuum's first pass over the
        # freshly copied tables (gigabytes at a million users) would run during the traffic and be measured.
        await conn.execute("VACUUM (ANALYZE)")
    finally:
        await conn.close()
    return Loaded(users, total_facts, loaded - started, silent, time.perf_counter() - loaded)


async def database_bytes(url: str) -> dict[str, int]:
    """The whole database's size and the memories table's (with its index and TOAST)."""
    conn = await asyncpg.connect(url)
    try:
        return {
            "database": int(await conn.fetchval("SELECT pg_database_size(current_database())")),
            "memories": int(await conn.fetchval("SELECT pg_total_relation_size('memories')")),
        }
    finally:
        await conn.close()
