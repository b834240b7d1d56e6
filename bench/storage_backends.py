"""Storage backends: memory updates and the reply path's memory time, the files against PostgreSQL, in one run.

    .venv/bin/python -m bench.storage_backends [--users 40] [--updates 40] [--concurrency 4] [--rounds 2]
                                               [--reps 1000] [--no-fsync] [--smoke]

Starts its own PostgreSQL server (`tests.support.postgres.PostgresServer`, a temporary folder on the same disk as the
file store's temporary folder) and, by default, switches it to durable commits (`fsync`, `synchronous_commit`,
`full_page_writes` on; the test helper turns them off) because the file store fsyncs every save: like is compared
with like. `--no-fsync` keeps the helper's settings and turns the file store's fsync off instead.

1. Memory updates: every user holds a memory at the fact cap (100 facts of 150-300 characters and six summaries)
   and every update is one `store.edit` read-modify-write that adds a fact carrying a unique marker and drops the
   oldest one, as an extraction save does at the cap. Each process runs `--concurrency` updaters (the engine runs
   4 extractions at a time) over a shuffled list of `--users` x `--updates` updates, so updates of one user
   queue on that user's lock. Three set-ups, each in real worker processes (`bench/storage_worker.py`) started the same way: (a) the file
   store, one process (it is single-process by design); (b) PostgreSQL, one process; (c) PostgreSQL, two
   processes with a pool each, both updating the same users at once, so the advisory lock that spans processes
   is what keeps updates from being lost. The set-ups run in alternating order over `--rounds` rounds. After
   each, a fresh store reads every user back and counts the markers: zero lost updates is a hard check.
2. The reply path: `memory.recall.prompt` on a warm cache for the same memories over each store (files:
   a `stat` revalidates the cache; PostgreSQL: one query compares the revision), timed in alternating rounds,
   with the load alone, warm and uncached (what a reply pays after another process changed the memory).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
from openai import AsyncOpenAI

from bench.common import PROJECT_ROOT, Table, dialogues, exit_code, fmt_ms, header, p50, p95, parser
from bench.reply_path import with_summaries
from bench.storage_worker import DURABLE_SETTINGS, MAX_FACTS, REPORTED_SETTINGS, Spec, cpu_seconds, marker, open_pool
from bench.store_throughput import filesystem_of
from bot.memory.drivers.bundle import StorageBundle, build_file_storage, build_postgres_storage
from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.drivers.interfaces import MemoryDocuments
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.schema import migrate
from bot.memory.models import MemoryFile, Place
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.selector import FactSelector
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.atomic import AtomicWriter
from bot.storage.pg.database import Database
from tests.memory.realistic import memory_at_cap
from tests.support.engine import parts, save_memory, where_in
from tests.support.postgres import PostgresServer, PostgresUnavailable

FIRST_USER = 500000000000000000
WORKER_TIMEOUT_S = 900.0
PROMPT_WARMUP = 20


def user_memory(user: int) -> MemoryFile:
    """A memory at the cap: 100 facts of 150-300 characters and the six summaries."""
    return with_summaries(memory_at_cap(MAX_FACTS, seed=user % 100_000))


# --- the parent: running workers and checking what they wrote ------------------------------------------------


@dataclass(slots=True)
class Updates:
    """One set-up's run: per-update timings from every process (monotonic clock, shared by processes)."""

    processes: int
    started: list[int] = field(default_factory=list)
    acquired: list[int] = field(default_factory=list)
    ended: list[int] = field(default_factory=list)
    users: list[int] = field(default_factory=list)
    process_of: list[int] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    sessions: list[dict[str, str]] = field(default_factory=list)  # the server settings each worker saw
    cpu: float = 0.0  # seconds, the worker processes
    server_cpu: float = 0.0  # seconds, the server processes serving their pools
    lost: int = 0
    wrong_size: int = 0

    def add(self, process: int, result: dict[str, Any]) -> None:
        self.started += result["started"]
        self.acquired += result["acquired"]
        self.ended += result["ended"]
        self.users += result["users"]
        self.process_of += [process] * len(result["users"])
        if result["settings"]:
            self.settings = result["settings"]
            self.sessions.append(result["settings"])
        self.cpu += result["cpu"]
        self.server_cpu += result["server_cpu"]

    @property
    def count(self) -> int:
        return len(self.ended)

    @property
    def seconds(self) -> float:
        return (max(self.ended) - min(self.started)) / 1e9

    @property
    def per_second(self) -> float:
        return self.count / self.seconds

    @property
    def latency_ns(self) -> list[int]:
        """From asking for the edit to its commit returning: lock queue, read, change, write, fsync."""
        return [end - start for start, end in zip(self.started, self.ended, strict=True)]

    @property
    def held_ns(self) -> list[int]:
        """With the user's lock held, from the draft in hand to the commit returning."""
        return [end - held for held, end in zip(self.acquired, self.ended, strict=True)]

    def cross_process_overlaps(self) -> int:
        """Updates of a user that ran while another process was updating the same user (so one waited for the
        other on the advisory lock)."""
        spans: dict[int, list[tuple[int, int, int]]] = {}
        for user, process, start, end in zip(self.users, self.process_of, self.started, self.ended, strict=True):
            spans.setdefault(user, []).append((start, end, process))
        return sum(
            1
            for items in spans.values()
            for start, end, process in items
            if any(other != process and o_start < end and start < o_end for o_start, o_end, other in items)
        )


async def run_workers(specs: list[Spec]) -> list[dict[str, Any]]:
    """Start one worker process per spec, wait until all are ready, release them together, collect results."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))}
    procs = []
    try:
        for spec in specs:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.storage_worker",
                cwd=PROJECT_ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                limit=64 * 1024 * 1024,
            )  # fmt: skip
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(dataclasses.asdict(spec)) + "\n").encode())
            await proc.stdin.drain()
            procs.append(proc)
        for proc in procs:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), WORKER_TIMEOUT_S)
            if line.strip() != b"ready":
                raise RuntimeError(f"a worker did not start (exit status {await proc.wait()})")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        results = []
        for proc in procs:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), WORKER_TIMEOUT_S)
            status = await proc.wait()
            if status != 0 or not line:
                raise RuntimeError(f"a worker failed (exit status {status})")
            results.append(json.loads(line))
        return results
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def tasks_for(users: Sequence[int], updates: int, seed: int) -> list[tuple[int, int]]:
    tasks = [(user, i) for user in users for i in range(updates)]
    random.Random(seed).shuffle(tasks)
    return tasks


async def count_lost(store: MemoryDocuments, users: Sequence[int], updates: int, tag: str) -> tuple[int, int]:
    """Markers of this run missing from what a fresh store reads back, and memories not at the cap."""
    lost = wrong_size = 0
    for user in users:
        memory = await store.load(user)
        present = {fact.content.split(" ", 1)[0] for fact in memory.facts}
        lost += sum(1 for i in range(updates) if marker(tag, user, i) not in present)
        wrong_size += len(memory.facts) != MAX_FACTS
    return lost, wrong_size


@dataclass(slots=True)
class Setup:
    name: str
    backend: str
    processes: int
    target: str
    users: list[int]


async def run_setup(setup: Setup, updates: int, concurrency: int, tag: str, seed: int, durable: bool) -> Updates:
    if setup.processes == 1:
        splits = [tasks_for(setup.users, updates, seed)]
    else:  # every user's updates are split between the processes, each in its own shuffled order
        splits = [[(u, i) for u, i in tasks_for(setup.users, updates, seed + p) if i % setup.processes == p]
                  for p in range(setup.processes)]
    specs = [Spec(setup.backend, setup.target, tag, tasks, concurrency, durable) for tasks in splits]
    run = Updates(setup.processes)
    for process, result in enumerate(await run_workers(specs)):
        run.add(process, result)
    if setup.backend == "pg":
        database = Database(setup.target, size=2)
        await database.open()
        try:
            run.lost, run.wrong_size = await count_lost(PostgresMemoryStore(database), setup.users, updates, tag)
        finally:
            await database.close()
    else:
        run.lost, run.wrong_size = await count_lost(MemoryStore(Path(setup.target)), setup.users, updates, tag)
    return run


# --- the server ----------------------------------------------------------------------------------------------


async def prepare_server(server: PostgresServer, durable: bool) -> str:
    """Make the benchmark's database, migrated; with `durable`, switch the server to durable commits first."""
    if durable:
        conn = await asyncpg.connect(server.url("postgres"))
        try:
            for name, value in DURABLE_SETTINGS.items():
                await conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            await conn.execute("SELECT pg_reload_conf()")
        finally:
            await conn.close()
        await wait_for_settings(server.url("postgres"), DURABLE_SETTINGS)
    url = server.create_database("bench_storage")
    database = Database(url, size=1)
    await database.open()
    try:
        await database.run(migrate, transaction=False)
        if durable:
            await database.execute("CHECKPOINT")  # start from a clean WAL, with fsync on
    finally:
        await database.close()
    return url


async def wait_for_settings(url: str, wanted: dict[str, str], timeout: float = 30.0) -> None:
    """The reload is asynchronous: poll new sessions until they see the settings."""
    deadline = time.monotonic() + timeout
    while True:
        conn = await asyncpg.connect(url)
        try:
            seen = {name: str(await conn.fetchval(f"SHOW {name}")) for name in wanted}
        finally:
            await conn.close()
        if seen == wanted:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not take the settings {wanted} (it reports {seen})")
        await asyncio.sleep(0.1)


async def seed_users(store: MemoryDocuments, users: Sequence[int]) -> None:
    for user in users:
        await save_memory(store, user, user_memory(user))


# --- the reply path ------------------------------------------------------------------------------------------


def make_service(storage: StorageBundle, client: AsyncOpenAI) -> MemoryService:
    """A service over `storage` for the reply path only (never opened: replies need no pending turns)."""
    policy = MemoryPolicy(top_k=15)
    return MemoryService(storage=storage, extractor=MemoryExtractor(client, model="bench"),
                         selector=FactSelector(top_k=policy.top_k), policy=policy)


async def time_async_interleaved(candidates: dict[str, Callable[[], Awaitable[object]]], *, reps: int,
                                 warmup: int = 20) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Wall and CPU time (this process) of each coroutine function, in alternating rounds so machine noise hits
    them alike."""
    for fn in candidates.values():
        for _ in range(warmup):
            await fn()
    wall: dict[str, list[int]] = {name: [] for name in candidates}
    cpu: dict[str, list[int]] = {name: [] for name in candidates}
    for _ in range(reps):
        for name, fn in candidates.items():
            cpu_start = time.process_time_ns()
            start = time.perf_counter_ns()
            await fn()
            wall[name].append(time.perf_counter_ns() - start)
            cpu[name].append(time.process_time_ns() - cpu_start)
    return wall, cpu


async def reply_path(url: str, root: Path, users: Sequence[int], reps: int) -> dict[str, list[int]]:
    """recall.prompt and the store's load, warm and uncached, for the same memories over both stores."""
    database, backends = await open_pool(url, 2)
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="bench", max_retries=0)  # never called
    try:
        file_storage = build_file_storage(root / "reply-files", durable=False)
        pg_storage = build_postgres_storage(database, lease_seconds=60, orphan_seconds=600)
        file_store, pg_store = file_storage.memories, pg_storage.memories
        await file_store.open()
        await seed_users(file_store, users)
        await seed_users(pg_store, users)
        services = {"file": make_service(file_storage, client), "pg": make_service(pg_storage, client)}
        # A one-entry cache and 8 users in turn: every read misses, as after another process changed the memory.
        uncached: dict[str, MemoryDocuments] = {"file": MemoryStore(root / "reply-files" / "memory", cache_size=1),
                                                "pg": PostgresMemoryStore(database, cache_size=1)}
        windows = dialogues(50, seed=3)
        turns = {name: (itertools.cycle(users), itertools.cycle(windows)) for name in services}

        def prompt(name: str) -> Callable[[], Awaitable[object]]:
            who, what = turns[name]
            service = services[name]
            return lambda: service.recall.prompt(next(who), next(what), user_label="Ana", where=where_in(Place.dm()))

        def load(name: str, store: MemoryDocuments) -> Callable[[], Awaitable[object]]:
            who = itertools.cycle(users)
            return lambda: store.load_with_revision(next(who))

        server_before = cpu_seconds(backends)
        samples, cpu = await time_async_interleaved({f"prompt {n}": prompt(n) for n in services}, reps=reps,
                                                    warmup=PROMPT_WARMUP)
        server_ns = int(1e9 * (cpu_seconds(backends) - server_before) / (reps + PROMPT_WARMUP))
        loads, _ = await time_async_interleaved(
            {**{f"load {n}": load(n, parts(services[n]).storage.memories) for n in services},
             **{f"uncached {n}": load(n, uncached[n]) for n in services}},
            reps=max(10, reps // 2))
        return samples | loads | {f"cpu {name}": values for name, values in cpu.items()} | {"server cpu": [server_ns]}
    finally:
        await client.close()
        await database.close()


# --- report --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Pooled:
    """One set-up over all rounds: updates per second (all updates / all time), latencies, lost, wrong sizes."""

    per_second: float
    latency_ns: list[int]
    held_ns: list[int]
    lost: int
    wrong_size: int
    cpu_ms: float  # per update, the bot's processes
    server_cpu_ms: float  # per update, the server's processes

    @classmethod
    def of(cls, runs: Sequence[Updates]) -> Pooled:
        count = sum(run.count for run in runs)
        return cls(count / sum(run.seconds for run in runs),
                   [x for run in runs for x in run.latency_ns], [x for run in runs for x in run.held_ns],
                   sum(run.lost for run in runs), sum(run.wrong_size for run in runs),
                   1000 * sum(run.cpu for run in runs) / count, 1000 * sum(run.server_cpu for run in runs) / count)


def times(value: float, base: float) -> str:
    return f"{value / base:.2f}x file" if base > 0 else "n/a"


async def run(args: Any, smoke: bool) -> list[Table]:
    users_n, updates, rounds, reps = (4, 6, 1, 30) if smoke else (args.users, args.updates, args.rounds, args.reps)
    if updates > MAX_FACTS:
        raise SystemExit(f"--updates must be at most {MAX_FACTS}: older markers would be dropped at the cap")
    durable = not args.no_fsync
    load_before = os.getloadavg()
    with PostgresServer() as server, tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        root = Path(tmp)
        url = await prepare_server(server, durable)
        database = Database(url, size=2)
        await database.open()
        pg_seed = PostgresMemoryStore(database)
        setups = []
        for n, (name, backend, processes) in enumerate(
            (("file store, 1 process", "file", 1), ("PostgreSQL, 1 process", "pg", 1),
             ("PostgreSQL, 2 processes", "pg", 2))
        ):
            users = [FIRST_USER + n * 10_000 + u for u in range(users_n)]
            if backend == "file":
                store = MemoryStore(root / "updates", writer=AtomicWriter(durable=durable))
                store.prepare()
                await seed_users(store, users)
                target = str(root / "updates")
            else:
                await seed_users(pg_seed, users)
                target = url
            setups.append(Setup(name, backend, processes, target, users))
        await database.close()

        results: dict[str, list[Updates]] = {setup.name: [] for setup in setups}
        for r in range(rounds):
            order = setups if r % 2 == 0 else setups[::-1]
            for s, setup in enumerate(order):
                tag = f"r{r}s{s}"
                results[setup.name].append(
                    await run_setup(setup, updates, args.concurrency, tag, seed=1000 * r + s, durable=durable))
        replies = await reply_path(url, root, [FIRST_USER + 90_000 + u for u in range(8)], reps)
        fs = filesystem_of(root)
        doc_kb = len(json.dumps(user_memory(FIRST_USER).model_dump(mode="json"))) / 1024
    load_after = os.getloadavg()

    file_runs, pg1_runs, pg2_runs = (results[s.name] for s in setups)
    settings = pg1_runs[0].settings
    file = Pooled.of(file_runs)
    pgs = [("PostgreSQL, 1 process", Pooled.of(pg1_runs)), ("PostgreSQL, 2 processes", Pooled.of(pg2_runs))]
    table = Table(f"memory updates at the cap: {users_n} users x {updates} updates per set-up and round, "
                  f"{rounds} round(s), {args.concurrency} updaters per process")
    for name, pg in pgs:
        table.add(f"updates/s: {name}", f"{pg.per_second:,.0f}/s", f"file {file.per_second:,.0f}/s",
                  times(pg.per_second, file.per_second))
    for name, pg in pgs:
        table.add(f"update p50 / p95 (incl. lock queue): {name}",
                  f"{fmt_ms(p50(pg.latency_ns), 1)} / {fmt_ms(p95(pg.latency_ns), 1)}",
                  f"file {fmt_ms(p50(file.latency_ns), 1)} / {fmt_ms(p95(file.latency_ns), 1)}",
                  times(p95(pg.latency_ns), p95(file.latency_ns)) + " (p95)")
    for name, pg in pgs:
        table.add(f"lock held p50 / p95 (change + write + commit): {name}",
                  f"{fmt_ms(p50(pg.held_ns), 1)} / {fmt_ms(p95(pg.held_ns), 1)}",
                  f"file {fmt_ms(p50(file.held_ns), 1)} / {fmt_ms(p95(file.held_ns), 1)}",
                  times(p95(pg.held_ns), p95(file.held_ns)) + " (p95)")
    for name, pg in pgs:
        table.add(f"CPU per update, bot + server processes: {name}",
                  f"{pg.cpu_ms + pg.server_cpu_ms:.1f} ms ({pg.cpu_ms:.1f} + {pg.server_cpu_ms:.1f})",
                  f"file {file.cpu_ms:.1f} ms", times(pg.cpu_ms + pg.server_cpu_ms, file.cpu_ms))
    expected = users_n * updates * rounds
    for name, pooled in [("file store, 1 process", file), *pgs]:
        table.add(f"lost updates of {expected:,}, fresh read-back: {name}", f"{pooled.lost}",
                  f"{pooled.wrong_size} memories not at {MAX_FACTS} facts", "", "0",
                  pooled.lost == 0 and pooled.wrong_size == 0, hard=True)
    wanted = {name: "on" if durable else "off" for name in DURABLE_SETTINGS}
    sessions = [session for run in (*pg1_runs, *pg2_runs) for session in run.sessions]
    as_set = sum(all(session.get(k) == v for k, v in wanted.items()) for session in sessions)
    table.add(f"workers whose sessions saw {', '.join(f'{k}={v}' for k, v in wanted.items())}", f"{as_set}",
              f"of {len(sessions)}", "", "all", as_set == len(sessions) > 0, hard=True)
    overlaps = sum(run.cross_process_overlaps() for run in pg2_runs)
    table.add("2 processes: updates that overlapped one of the other process on the same user", f"{overlaps:,}",
              f"of {sum(run.count for run in pg2_runs):,}", "", "> 0", overlaps > 0 or smoke)
    durability = ", ".join(f"{k}={settings.get(k, '?')}" for k in REPORTED_SETTINGS)
    table.note(f"PostgreSQL {settings.get('server_version', '?')} from tests/support/postgres.py, {durability}; file store: "
               f"{'fsync on (temp file + fsync + rename + folder fsync)' if durable else 'fsync off'}; "
               f"both on {fs} ({root.parent})")
    table.note(f"a memory is {doc_kb:.0f} KB of JSON; every update adds one fact and drops the oldest; the file "
               "store rewrites the whole file, PostgreSQL the whole JSONB row (in one transaction with "
               "pg_advisory_xact_lock on the user)")
    table.note(f"{args.concurrency} updaters per process: 2 processes run {2 * args.concurrency} at once against the same "
               f"users (the other set-ups {args.concurrency}); the file store serves one process only, by design")
    table.note("updates/s = all updates of a set-up / wall time from the first start to the last commit, summed over "
               "rounds; set-ups alternate order between rounds")
    table.note(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
               f"({os.cpu_count()} cores shared with other tenants)")

    reply = Table(f"memory for one reply: recall.prompt over each store, same memories ({MAX_FACTS} facts, "
                  f"warm cache), {reps} replies each")
    reply.add("recall.prompt p50 / p95", f"{fmt_ms(p50(replies['prompt pg']))} / {fmt_ms(p95(replies['prompt pg']))}",
              f"file {fmt_ms(p50(replies['prompt file']))} / {fmt_ms(p95(replies['prompt file']))}",
              times(p50(replies["prompt pg"]), p50(replies["prompt file"])) + " (p50)")
    pg_cpu = p50(replies["cpu prompt pg"]) + replies["server cpu"][0]
    reply.add("recall.prompt CPU time p50: bot's process + server (mean)",
              f"{fmt_ms(pg_cpu)} ({fmt_ms(p50(replies['cpu prompt pg']))} + {fmt_ms(replies['server cpu'][0])})",
              f"file {fmt_ms(p50(replies['cpu prompt file']))}", times(pg_cpu, p50(replies["cpu prompt file"])))
    reply.add("  of which: load, warm cache p50 / p95",
              f"{fmt_ms(p50(replies['load pg']))} / {fmt_ms(p95(replies['load pg']))}",
              f"file {fmt_ms(p50(replies['load file']))} / {fmt_ms(p95(replies['load file']))}",
              times(p50(replies["load pg"]), p50(replies["load file"])) + " (p50)")
    reply.add("load, uncached (changed elsewhere) p50 / p95",
              f"{fmt_ms(p50(replies['uncached pg']))} / {fmt_ms(p95(replies['uncached pg']))}",
              f"file {fmt_ms(p50(replies['uncached file']))} / {fmt_ms(p95(replies['uncached file']))}",
              times(p50(replies["uncached pg"]), p50(replies["uncached file"])) + " (p50)")
    reply.note("ours = PostgresMemoryStore over a local server (127.0.0.1, TCP); baseline = MemoryStore over files; "
               "warm: the files' cache is revalidated by one stat, the database's by one query on the revision")
    reply.note("wall time includes waiting for the server's process to be scheduled for every query, which a loaded "
               "machine stretches; CPU time does not count that wait (the bot's: process_time_ns per reply; "
               "the server's: its processes' CPU from /proc over all replies, per reply)")
    return [table, reply]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=40)
    p.add_argument("--updates", type=int, default=40, help=f"updates per user and round (at most {MAX_FACTS})")
    p.add_argument("--concurrency", type=int, default=4, help="updaters per process (the engine runs 4 extractions)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--reps", type=int, default=1000, help="timed replies per store")
    p.add_argument("--no-fsync", action="store_true",
                   help="keep the test server's settings (fsync off) and turn the file store's fsync off")
    args = p.parse_args(argv)
    header("storage backends: files vs PostgreSQL (updates, reply path)", args.smoke)
    try:
        tables = asyncio.run(run(args, args.smoke))
    except PostgresUnavailable as error:
        raise SystemExit(f"storage_backends needs a PostgreSQL server: {error}") from None
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
