"""Encryption at rest: what MEMORY_ENCRYPTION_KEY adds to a reply's memory and to an extraction's storage work,
on files and on PostgreSQL, with the unencrypted store of the same backend as the baseline in the same run.

    .venv/bin/python -m bench.encryption_cost [--users 8] [--reps 2000] [--fsync] [--no-postgres] [--smoke]

Four stores, built by the bundle builders as the bot builds them: files and PostgreSQL (its own server,
`tests.support.postgres.PostgresServer`, one database per store), each without and with a key, holding the same memories
(users at the cap: 100 facts of 150-300 characters and six summaries). Sealed and plain run in alternating rounds
over the same users, so machine noise hits them alike; the CPU time of this process (`process_time_ns`), which
other tenants of a shared machine do not inflate, is given too:

1. The reply path. `memory.recall.prompt` on a warm cache is what nearly every reply pays (the cache answers: nothing is
   opened). `load` uncached is what a reply pays when the memory changed in another process or its user was
   evicted from the caches: a one-entry memory cache and a one-entry key cache, users in turn, so every read
   fetches and opens the user's key too (files: the key file; PostgreSQL: one more query).
2. An extraction's storage work: the exchange's two turns queued (`turns.add`: sealed, with the user's key looked
   up), the memory edited (`memories.edit` adds one fact and drops the oldest: read, open, seal, write, as an
   extraction's save at the cap), the turns settled (`turns.done`). The file stores skip fsync unless `--fsync`:
   an fsync costs the same with or without the key and would hide what sealing adds.
3. Once per user: making a new user's key (files: a key file written and fsynced; PostgreSQL: a row inserted).

A hard check: the sealed stores hold none of the facts' words (every file under the data folder and every row).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from openai import AsyncOpenAI

from bench.common import Table, dialogues, exit_code, fmt_ms, header, p50, p95, parser
from bench.reply_path import with_summaries
from bench.storage_backends import make_service, time_async_interleaved
from bot.memory.drivers.bundle import StorageBundle, build_file_storage, build_postgres_storage
from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.drivers.interfaces import MemoryDocuments
from bot.memory.drivers.pg.generations import lock_user
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.models import ConversationKey, Fact, MemoryFile, Place, Turn
from bot.memory.service import MemoryService
from bot.storage.atomic import AtomicWriter
from bot.storage.file_codec import FileCodec
from bot.storage.pg.codec import PostgresCodec
from bot.storage.pg.database import Database
from bot.storage.sealing import MasterKey, new_master_key_text
from tests.memory.realistic import memory_at_cap
from tests.support.engine import save_memory, where_in
from tests.support.postgres import PostgresServer, PostgresUnavailable

FIRST_USER = 600000000000000000
NEW_USERS = 700000000000000000
CHANNEL = 900000000000000077
LLM_REPLY_MS = 500.0  # a typical chat completion, for scale
LLM_EXTRACTION_MS = 2000.0  # a typical extraction call
KEY = MasterKey.parse(new_master_key_text())


def user_memory(user: int) -> MemoryFile:
    return with_summaries(memory_at_cap(100, seed=user % 100_000))


@dataclass(slots=True)
class Store:
    """One backend, plain and sealed: the bundles, the stores that always miss, and what the sealed one holds."""

    backend: str
    bundles: dict[str, StorageBundle]
    uncached: dict[str, MemoryDocuments]
    services: dict[str, MemoryService]
    new_key: Callable[[int], Awaitable[object]]
    stored: Callable[[], Awaitable[bytes]]


async def file_store(root: Path, users: Sequence[int], client: AsyncOpenAI, durable: bool) -> Store:
    bundles, uncached = {}, {}
    for mode, key in (("plain", None), ("sealed", KEY)):
        data = root / f"files-{mode}"
        bundle = build_file_storage(data, durable=durable, encryption_key=key)
        await bundle.open()
        for user in users:
            await save_memory(bundle.memories, user, user_memory(user))
        bundles[mode] = bundle
        codec = FileCodec(data, key, durable=durable, cache_size=1)
        uncached[mode] = MemoryStore(data / "memory", writer=AtomicWriter(durable=durable), cache_size=1, codec=codec)
    creator = FileCodec(root / "files-sealed", KEY, durable=True)  # a new key is always made durably
    counter = itertools.count(NEW_USERS)

    async def stored() -> bytes:
        return b"\n".join(p.read_bytes() for p in sorted((root / "files-sealed").rglob("*")) if p.is_file())

    return Store("files", bundles, uncached, {m: make_service(b, client) for m, b in bundles.items()},
                 lambda _: creator.ready(next(counter)), stored)


async def postgres_store(server: PostgresServer, users: Sequence[int], client: AsyncOpenAI,
                         stack: AsyncExitStack) -> Store:
    bundles, uncached, urls = {}, {}, {}
    for mode, key in (("plain", None), ("sealed", KEY)):
        urls[mode] = server.create_database(f"bench_encryption_{mode}")
        database = Database(urls[mode], size=4)
        bundle = build_postgres_storage(database, lease_seconds=60, orphan_seconds=600, encryption_key=key)
        await bundle.open()
        stack.push_async_callback(bundle.close)
        for user in users:
            await save_memory(bundle.memories, user, user_memory(user))
        bundles[mode] = bundle
        codec = PostgresCodec(database, key, lock_user=lock_user, data_tables=(), cache_size=1)
        uncached[mode] = PostgresMemoryStore(database, cache_size=1, codec=codec)
    sealed_db = bundles["sealed"].database
    assert sealed_db is not None
    creator = PostgresCodec(sealed_db, KEY, lock_user=lock_user, data_tables=())
    counter = itertools.count(NEW_USERS)

    async def new_key(_: int) -> object:
        uid = next(counter)

        async def work(conn: asyncpg.Connection) -> object:
            await lock_user(conn, uid)
            return await creator.encode(conn, uid, "memory", "{}")

        return await sealed_db.run(work)

    async def stored() -> bytes:
        conn = await asyncpg.connect(urls["sealed"])
        try:
            found = []
            for table in await conn.fetch(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            ):
                found += [row[0] for row in await conn.fetch(f'SELECT t::text FROM "{table["table_name"]}" t')]
            return "\n".join(found).encode()
        finally:
            await conn.close()

    return Store("PostgreSQL", bundles, uncached, {m: make_service(b, client) for m, b in bundles.items()},
                 new_key, stored)


def extraction(bundle: StorageBundle, users: Sequence[int]) -> Callable[[], Awaitable[object]]:
    """The storage work of one extraction, users in turn: two turns queued, the memory edited, the turns done."""
    who = itertools.cycle(users)
    numbers = itertools.count()
    rng = random.Random(7)

    async def run() -> None:
        user, n = next(who), next(numbers)
        now = datetime.now(UTC)
        turns = [Turn("user", user, "Ana", f"I moved the billing service to Go, round {n}", now, f"u{n}"),
                 Turn("assistant", user, "bot", "Nice: how did the migration go?", now, f"a{n}")]
        await bundle.turns.add(ConversationKey(CHANNEL, user), turns)
        async with bundle.memories.edit(user) as memory:
            memory.facts.append(Fact(id=f"fact_b{n:07x}", content=f"Moved the billing service to Go ({rng.random()})",
                                     category="context", confidence=0.9, createdAt=now.isoformat()))
            del memory.facts[0]
        await bundle.turns.done(user, [turn.turn_id for turn in turns])

    return run


async def measure(store: Store, users: Sequence[int], reps: int) -> dict[str, list[int]]:
    windows = dialogues(50, seed=3)

    def prompt(mode: str) -> Callable[[], Awaitable[object]]:
        who, what = itertools.cycle(users), itertools.cycle(windows)
        service = store.services[mode]
        return lambda: service.recall.prompt(next(who), next(what), user_label="Ana", where=where_in(Place.dm()))

    def load(mode: str) -> Callable[[], Awaitable[object]]:
        who = itertools.cycle(users)
        return lambda: store.uncached[mode].load_with_revision(next(who))

    modes = ("plain", "sealed")
    prompts, prompt_cpu = await time_async_interleaved({f"prompt {m}": prompt(m) for m in modes}, reps=reps)
    loads, load_cpu = await time_async_interleaved({f"load {m}": load(m) for m in modes}, reps=max(10, reps // 2))
    writes, write_cpu = await time_async_interleaved(
        {f"extraction {m}": extraction(store.bundles[m], users) for m in modes}, reps=max(10, reps // 4), warmup=5
    )
    cpu = prompt_cpu | load_cpu | write_cpu
    keys = []
    for n in range(max(5, reps // 20)):
        start = time.perf_counter_ns()
        await store.new_key(n)
        keys.append(time.perf_counter_ns() - start)
    return prompts | loads | writes | {f"cpu {k}": v for k, v in cpu.items()} | {"new key": keys}


def added(sealed: list[int], plain: list[int]) -> str:
    return f"{(p50(sealed) - p50(plain)) / 1e6:+.3f} ms ({100 * (p50(sealed) / p50(plain) - 1):+.0f}%)"


def report(store: Store, results: dict[str, list[int]], words_found: int, reps: int) -> Table:
    table = Table(f"{store.backend}: sealed (MEMORY_ENCRYPTION_KEY) against plain, same memories, alternating rounds")

    def row(measure: str, key: str, scale: float | None = None) -> None:
        sealed, plain = results[f"{key} sealed"], results[f"{key} plain"]
        added_ms = (p50(sealed) - p50(plain)) / 1e6
        share = f"; {100 * added_ms / scale:.3f}% of an LLM call" if scale else ""
        table.add(f"{measure} p50 / p95", f"{fmt_ms(p50(sealed))} / {fmt_ms(p95(sealed))}",
                  f"plain {fmt_ms(p50(plain))} / {fmt_ms(p95(plain))}", added(sealed, plain) + share)

    row("reply: recall.prompt, warm cache", "prompt", LLM_REPLY_MS)
    cpu_sealed, cpu_plain = results["cpu prompt sealed"], results["cpu prompt plain"]
    table.add("  the same in CPU time of this process p50", fmt_ms(p50(cpu_sealed)), f"plain {fmt_ms(p50(cpu_plain))}",
              added(cpu_sealed, cpu_plain))
    row("reply: load uncached (memory and key read)", "load", LLM_REPLY_MS)
    cpu_sealed, cpu_plain = results["cpu load sealed"], results["cpu load plain"]
    table.add("  the same in CPU time of this process p50", fmt_ms(p50(cpu_sealed)), f"plain {fmt_ms(p50(cpu_plain))}",
              added(cpu_sealed, cpu_plain))
    row("extraction: 2 turns queued + memory edited + turns done", "extraction", LLM_EXTRACTION_MS)
    cpu_sealed, cpu_plain = results["cpu extraction sealed"], results["cpu extraction plain"]
    table.add("  the same in CPU time of this process p50", fmt_ms(p50(cpu_sealed)), f"plain {fmt_ms(p50(cpu_plain))}",
              added(cpu_sealed, cpu_plain))
    table.add("a new user's key, once per user p50", fmt_ms(p50(results["new key"])), "", "")
    table.add("words of the memories found in the sealed store", f"{words_found}", "", "", "0", words_found == 0,
              hard=True)
    table.note(f"{reps} replies per mode; LLM call for scale: reply {LLM_REPLY_MS:.0f} ms, extraction "
               f"{LLM_EXTRACTION_MS:.0f} ms")
    return table


async def run(args: Any, smoke: bool) -> list[Table]:
    users_n, reps = (3, 20) if smoke else (args.users, args.reps)
    users = [FIRST_USER + u for u in range(users_n)]
    words = {w for user in users for fact in user_memory(user).facts for w in fact.content.split() if len(w) > 7}
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="bench", max_retries=0)  # never called
    tables = []
    load_before = os.getloadavg()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(client.close)
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-encryption-")))
        stores = [await file_store(tmp, users, client, args.fsync)]
        for bundle in stores[0].bundles.values():
            stack.push_async_callback(bundle.close)
        if not args.no_postgres:
            try:
                server = stack.enter_context(PostgresServer())
            except PostgresUnavailable as error:
                print(f"PostgreSQL skipped: {error}", flush=True)
            else:
                stores.append(await postgres_store(server, users, client, stack))
        for store in stores:
            results = await measure(store, users, reps)
            stored = await store.stored()
            found = sum(word.encode() in stored for word in words)
            tables.append(report(store, results, found, reps))
    doc_kb = len(json.dumps(user_memory(users[0]).model_dump(mode="json"))) / 1024
    tables[-1].note(f"{users_n} users, each memory {doc_kb:.0f} KB of JSON; file stores "
                    f"{'with' if args.fsync else 'without'} fsync; load average before {load_before[0]:.2f}, after "
                    f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} cores shared with other tenants)")
    return tables


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=8)
    p.add_argument("--reps", type=int, default=2000)
    p.add_argument("--fsync", action="store_true", help="file stores fsync every write, as the bot does")
    p.add_argument("--no-postgres", action="store_true", help="files only")
    args = p.parse_args(argv)
    header("encryption at rest: reply path and extraction, sealed against plain", args.smoke)
    tables = asyncio.run(run(args, args.smoke))
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
