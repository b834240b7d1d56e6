"""Counting tokens for the daily budgets: what a reply pays, our batched store against a store durable per count.

    .venv/bin/python -m bench.usage_counting [--counts 2000] [--users 500] [--batch 100] [--smoke]

Every reply and every extraction counts its tokens for the user and their server. Ours (`FileUsageLog`,
`PostgresUsageLog`): `add` touches RAM only and `save` runs every 10 s (here: every `--batch` counts, 100 = ten
replies and extractions a second), one atomic file write, or one additive upsert plus a read of the rows changed
since the last read. Baseline in the same run, on the same data: the same stores saved after every count (a design
durable per count: an fsynced file replace, or one upsert round trip, on the reply path). Files fsync as the bot
does; the PostgreSQL server is switched to durable commits (as `bench.storage_backends` does). Hard check: after
the last save, a fresh store reads back exactly the tokens counted, per user and per server, for both designs.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench.common import Table, exit_code, header, parser
from bench.storage_backends import prepare_server
from bot.memory.drivers.files.usage import USAGE_FILE, FileUsageLog
from bot.memory.drivers.interfaces import UsageStore
from bot.memory.drivers.pg.usage import PostgresUsageLog
from bot.storage.atomic import AtomicWriter
from bot.storage.pg.database import Database
from tests.support.postgres import PostgresServer, PostgresUnavailable

FIRST_USER = 300000000000000000
FIRST_GUILD = 700000000000000000


def workload(counts: int, users: int, seed: int = 5) -> list[tuple[int, int | None, int]]:
    """(user, server or None for a DM, tokens) per count: a few busy servers, a tail of DMs."""
    rng = random.Random(seed)
    work = []
    for _ in range(counts):
        user = FIRST_USER + rng.randrange(users)
        guild = None if rng.random() < 0.2 else FIRST_GUILD + rng.randrange(8)
        work.append((user, guild, rng.randrange(300, 3000)))
    return work


def expected(work: Sequence[tuple[int, int | None, int]]) -> Counter[tuple[str, int]]:
    totals: Counter[tuple[str, int]] = Counter()
    for user, guild, tokens in work:
        totals[("user", user)] += tokens
        if guild is not None:
            totals[("guild", guild)] += tokens
    return totals


async def count(store: UsageStore, work: Sequence[tuple[int, int | None, int]], batch: int) -> tuple[float, float]:
    """Count everything, saving after every `batch` counts; (seconds on the reply path, seconds saving)."""
    now = datetime.now(UTC)
    adding = saving = 0.0
    for n, (user, guild, tokens) in enumerate(work, 1):
        started = time.perf_counter()
        store.add("chat", user_id=user, guild_id=guild, tokens=tokens, estimated=False, now=now)
        adding += time.perf_counter() - started
        if n % batch == 0 or n == len(work):
            started = time.perf_counter()
            await store.save(now)
            spent = time.perf_counter() - started
            if batch == 1:
                adding += spent  # durable per count: the save is on the reply path
            else:
                saving += spent
    return adding, saving


async def check(fresh: Callable[[], Awaitable[UsageStore]], work: Sequence[tuple[int, int | None, int]]) -> bool:
    store = await fresh()
    day = datetime.now(UTC).date()
    return all(store.spent(subject, day).tokens == tokens for subject, tokens in expected(work).items())


async def run_backend(
    name: str, make: Callable[[], Awaitable[UsageStore]], work: Sequence[tuple[int, int | None, int]], batch: int,
    table: Table,
) -> None:
    ours = await make()
    add_ours, save_ours = await count(ours, work, batch)
    ours_ok = await check(make, work)
    await ours.close()
    baseline = await make()  # starts from what ours saved: the same work counted twice in the end
    add_base, _ = await count(baseline, work, 1)
    base_ok = await check(make, [*work, *work])
    await baseline.close()
    per_count = 1e6 * add_ours / len(work)
    per_count_base = 1e6 * add_base / len(work)
    table.add(f"{name}: reply path per count", f"{per_count:,.1f} µs", f"{per_count_base:,.1f} µs",
              f"{per_count_base / per_count:,.0f}x less" if per_count > 0 else "")
    saves = -(-len(work) // batch)
    table.add(f"{name}: one save of {batch} counts (every 10 s)", f"{1000 * save_ours / saves:,.2f} ms",
              f"{1000 * add_base / len(work) * batch:,.1f} ms for {batch} saves")
    table.add(f"{name}: tokens read back exactly", "yes" if ours_ok else "NO", "yes" if base_ok else "NO",
              passed=ours_ok and base_ok, hard=True)


async def run(counts: int, users: int, batch: int) -> Table:
    work = workload(counts, users)
    table = Table(f"Token counting: {counts:,} counts from {users:,} users in 8 servers and DMs, saved every {batch}")
    with tempfile.TemporaryDirectory(prefix="bench-usage-") as tmp:
        path = Path(tmp) / USAGE_FILE
        writer = AtomicWriter(durable=True)

        async def file_store() -> UsageStore:
            store = FileUsageLog(path, writer=writer)
            await store.open()
            return store

        await run_backend("files", file_store, work, batch, table)
    try:
        server = PostgresServer()
    except PostgresUnavailable as error:
        table.note(f"PostgreSQL skipped: {error}")
        return table
    with server:
        url = await prepare_server(server, durable=True)
        databases: list[Database] = []

        async def pg_store() -> UsageStore:
            database = Database(url, size=1)
            await database.open()
            databases.append(database)
            store = PostgresUsageLog(database)
            await store.open()
            return store

        try:
            await run_backend("PostgreSQL", pg_store, work, batch, table)
        finally:
            for database in databases:
                await database.close()
    table.note("Reply path: what a reply or extraction waits for to be counted. Ours is a dictionary update; the "
               "baseline saves durably each time. A crash loses at most one save interval (10 s) of our counting.")
    return table


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--counts", type=int, default=2000)
    p.add_argument("--users", type=int, default=500)
    p.add_argument("--batch", type=int, default=100)
    args = p.parse_args(argv)
    counts, users = (200, 50) if args.smoke else (args.counts, args.users)
    header("usage_counting", args.smoke)
    table = asyncio.run(run(counts, users, args.batch))
    table.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
