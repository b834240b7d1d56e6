"""One worker process of `bench.storage_backends`: memory updates through a store, timed, on a signal.

    python -m bench.storage_worker   # started by bench.storage_backends; reads its spec as JSON on stdin

It opens its store (the files, or its own pool to PostgreSQL), prints `ready`, waits for `go` on stdin so that
several workers start together, runs the updates with `concurrency` updaters and prints its timings as one JSON
line, with the CPU time it used and the CPU time its pool's server processes used (read from /proc). It imports only the storage modules, so starting it costs a fraction of a second.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.drivers.interfaces import MemoryDocuments
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.models import Fact
from bot.storage.atomic import AtomicWriter
from bot.storage.pg.database import Database
from tests.memory.realistic import long_fact_texts

MAX_FACTS = 100  # MEMORY_MAX_FACTS' default: the memories are at the cap
DURABLE_SETTINGS = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
REPORTED_SETTINGS = (*DURABLE_SETTINGS, "wal_sync_method", "shared_buffers")
SERVER_FACTS = (*REPORTED_SETTINGS, "server_version")


def marker(tag: str, user: int, update: int) -> str:
    return f"<{tag}:{user}:{update}>"


def new_fact(tag: str, user: int, update: int, text: str) -> Fact:
    """A new fact of 150-300 characters whose content starts with the update's marker."""
    return Fact(id=f"fact_{tag}_{update:05x}", content=f"{marker(tag, user, update)} {text}", category="context",
                confidence=0.9, createdAt="2025-06-02T12:00:00+00:00", lastConfirmedAt="2025-06-02T12:00:00+00:00")


@dataclass(slots=True)
class Spec:
    """What one worker process does: `tasks` are (user, update number) pairs, run by `concurrency` updaters."""

    backend: str  # "file" or "pg"
    target: str  # the folder or the database URL
    tag: str
    tasks: list[tuple[int, int]]
    concurrency: int
    durable: bool


async def open_pool(url: str, size: int) -> tuple[Database, list[int]]:
    """This process's pool, with all `size` connections open before the clock starts, and their server pids."""
    database = Database(url, size=size, application_name="bench-storage")
    await database.open()

    async def hold_one() -> int:
        return int(await database.fetchval("SELECT pg_backend_pid() FROM pg_sleep(0.05)"))

    return database, sorted(set(await asyncio.gather(*(hold_one() for _ in range(size)))))


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes `pids` have used (from /proc; the server runs on this machine)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # a connection the pool replaced: its time is not counted
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def worker(spec: Spec) -> dict[str, Any]:
    """Open the store, say `ready`, wait for `go` on stdin, run the updates; returns timings and server settings."""
    texts = long_fact_texts(64, seed=2024, high=265)  # with the marker: 180-300 characters
    database: Database | None = None
    backends: list[int] = []
    store: MemoryDocuments
    settings: dict[str, str] = {}
    if spec.backend == "pg":
        database, backends = await open_pool(spec.target, spec.concurrency)
        store = PostgresMemoryStore(database)
        settings = {name: str(await database.fetchval(f"SHOW {name}")).split(" ")[0] for name in SERVER_FACTS}
    else:
        store = MemoryStore(Path(spec.target), writer=AtomicWriter(durable=spec.durable))
    for user in sorted({user for user, _ in spec.tasks}):
        await store.load(user)  # a running bot has its active users cached

    started: list[int] = []
    acquired: list[int] = []
    ended: list[int] = []
    users: list[int] = []
    queue = iter(spec.tasks)

    async def updater() -> None:
        for user, update in queue:
            start = time.monotonic_ns()
            async with store.edit(user) as draft:
                held = time.monotonic_ns()
                if len(draft.facts) >= MAX_FACTS:
                    del draft.facts[0]
                draft.facts.append(new_fact(spec.tag, user, update, texts[update % len(texts)]))
            ended.append(time.monotonic_ns())
            started.append(start)
            acquired.append(held)
            users.append(user)

    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("worker: expected 'go'")
    cpu_before, server_before = time.process_time(), cpu_seconds(backends)
    await asyncio.gather(*(updater() for _ in range(spec.concurrency)))
    cpu, server_cpu = time.process_time() - cpu_before, cpu_seconds(backends) - server_before
    if database is not None:
        await database.close()
    return {"started": started, "acquired": acquired, "ended": ended, "users": users, "settings": settings,
            "cpu": cpu, "server_cpu": server_cpu}


def main() -> int:
    spec = Spec(**json.loads(sys.stdin.readline()))
    spec.tasks = [(int(u), int(i)) for u, i in spec.tasks]
    result = asyncio.run(worker(spec))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
