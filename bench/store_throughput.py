"""Store throughput and safety: 1,000 users x 10 concurrent updates each through `MemoryStore.edit`, fsync on.

    .venv/bin/python -m bench.store_throughput [--users 1000] [--updates 10] [--parallel-users 4] [--smoke]

Every update is a read-modify-write under the user's lock that appends one fact with a unique marker, and the store
saves it atomically (temp file, flush, fsync, rename, fsync of the folder) in a real temporary folder. Users are
processed `--parallel-users` at a time, each user's 10 updates launched concurrently (so they queue on the user's
lock, which is the point). Afterwards a fresh `MemoryStore` reads every file back from disk and counts the
markers: zero lost updates is a hard requirement.

Baselines in the same run, same updates, same folder type: the store with fsync off (`AtomicWriter(durable=False)`:
still atomic against a crash of the process, not of the machine), and a naive non-atomic write
(`open(path, "w").write(...)`, no fsync, no temp file), to show what safety costs.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import Table, exit_code, header, p50, p95, parser
from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.models import Fact, MemoryFile
from bot.storage.atomic import AtomicWriter, json_bytes

FIRST_USER = 300000000000000000


def _marker(user: int, update: int) -> str:
    return f"m{user}-{update}"


def _fact(user: int, update: int) -> Fact:
    return Fact(id=f"fact_{update:08x}", content=f"Update {_marker(user, update)}: enjoys trail running on Sundays",
                category="preference", confidence=0.9, createdAt="2025-06-01T12:00:00+00:00")


@dataclass(slots=True)
class Result:
    seconds: float
    updates: int
    latency_ns: list[int]  # end to end: from launching the update to its save returning (includes lock queueing)
    write_ns: list[int]  # with the lock held: modify + serialise + write (+ fsyncs)
    lost: int

    @property
    def per_second(self) -> float:
        return self.updates / self.seconds


Update = Callable[[int, int, list[int], list[int]], Awaitable[None]]


async def drive(update: Update, users: int, per_user: int, parallel: int) -> tuple[float, list[int], list[int]]:
    latency: list[int] = []
    writes: list[int] = []
    gate = asyncio.Semaphore(parallel)

    async def one_user(u: int) -> None:
        async with gate:
            user = FIRST_USER + u
            await asyncio.gather(*(update(user, i, latency, writes) for i in range(per_user)))

    start = time.perf_counter()
    await asyncio.gather(*(one_user(u) for u in range(users)))
    return time.perf_counter() - start, latency, writes


async def run_store(folder: Path, users: int, per_user: int, parallel: int, *, durable: bool) -> Result:
    store = MemoryStore(folder, writer=AtomicWriter(durable=durable))
    store.prepare()

    async def update(user: int, i: int, latency: list[int], writes: list[int]) -> None:
        start = time.perf_counter_ns()
        async with store.edit(user) as draft:
            held = time.perf_counter_ns()
            draft.facts.append(_fact(user, i))
        end = time.perf_counter_ns()
        latency.append(end - start)
        writes.append(end - held)

    seconds, latency, writes = await drive(update, users, per_user, parallel)
    return Result(seconds, users * per_user, latency, writes, await count_lost(folder, users, per_user))


async def run_naive(folder: Path, users: int, per_user: int, parallel: int, *, threaded: bool) -> Result:
    """Read, modify and rewrite the file in place with a plain `open(path, "w")`: no temp file, no fsync.

    `threaded=False` does the file calls on the event loop, as naive code does; `threaded=True` runs them in the
    default thread pool like the store's aiofiles calls, so both sides overlap I/O the same way.
    """
    folder.mkdir(parents=True, exist_ok=True)
    locks: dict[int, asyncio.Lock] = {}

    def read(path: Path) -> MemoryFile:
        try:
            return MemoryFile.model_validate(json.loads(path.read_bytes()))
        except FileNotFoundError:
            return MemoryFile()

    def write(path: Path, text: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)

    async def update(user: int, i: int, latency: list[int], writes: list[int]) -> None:
        start = time.perf_counter_ns()
        async with locks.setdefault(user, asyncio.Lock()):
            held = time.perf_counter_ns()
            path = folder / f"{user}.json"
            memory = await asyncio.to_thread(read, path) if threaded else read(path)
            memory.facts.append(_fact(user, i))
            text = json_bytes(memory.model_dump(mode="json"), indent=2).decode("utf-8")
            if threaded:
                await asyncio.to_thread(write, path, text)
            else:
                write(path, text)
        end = time.perf_counter_ns()
        latency.append(end - start)
        writes.append(end - held)

    seconds, latency, writes = await drive(update, users, per_user, parallel)
    return Result(seconds, users * per_user, latency, writes, await count_lost(folder, users, per_user))


async def count_lost(folder: Path, users: int, per_user: int) -> int:
    """Read every file back from disk with a fresh store and count the markers that are missing."""
    fresh = MemoryStore(folder)
    lost = 0
    for u in range(users):
        user = FIRST_USER + u
        memory = await fresh.load(user)
        present = {fact.content.split(":", 1)[0].removeprefix("Update ") for fact in memory.facts}
        lost += sum(1 for i in range(per_user) if _marker(user, i) not in present)
    return lost


def filesystem_of(path: Path) -> str:
    try:
        out = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--updates", type=int, default=10, help="concurrent updates per user")
    p.add_argument("--parallel-users", type=int, default=4,
                   help="users updated at a time (default 4: the engine runs at most 4 extractions at once)")
    p.add_argument("--dir", type=Path, default=None, help="where to make the temporary folders (default: the system's)")
    args = p.parse_args(argv)
    users = 50 if args.smoke else args.users
    header("store throughput and safety", args.smoke)

    with tempfile.TemporaryDirectory(prefix="bench-store-", dir=args.dir) as tmp:
        root = Path(tmp)
        fs = filesystem_of(root)
        ours = asyncio.run(run_store(root / "durable", users, args.updates, args.parallel_users, durable=True))
        fast = asyncio.run(run_store(root / "no-fsync", users, args.updates, args.parallel_users, durable=False))
        naive = asyncio.run(run_naive(root / "naive", users, args.updates, args.parallel_users, threaded=False))
        naive_t = asyncio.run(run_naive(root / "naive-t", users, args.updates, args.parallel_users, threaded=True))
        sizes = [f.stat().st_size for f in (root / "durable").glob("*.json")]

    table = Table(f"{users} users x {args.updates} concurrent updates ({users * args.updates:,} saves), "
                  f"{args.parallel_users} users at a time, folder on {fs}")
    table.add("writes per second (fsync on)", f"{ours.per_second:,.0f}/s", f"naive {naive.per_second:,.0f}/s",
              f"{100 * ours.per_second / naive.per_second:.0f}% of naive")
    table.add("update latency with the lock held p50 / p95", f"{p50(ours.write_ns) / 1e6:.2f} / {p95(ours.write_ns) / 1e6:.2f} ms",
              f"naive {p50(naive.write_ns) / 1e6:.2f} / {p95(naive.write_ns) / 1e6:.2f} ms",
              f"{p95(ours.write_ns) / p95(naive.write_ns):.1f}x (p95)")
    table.add("update latency end to end p50 / p95 (incl. lock queue)",
              f"{p50(ours.latency_ns) / 1e6:.1f} / {p95(ours.latency_ns) / 1e6:.1f} ms",
              f"naive {p50(naive.latency_ns) / 1e6:.1f} / {p95(naive.latency_ns) / 1e6:.1f} ms")
    table.add("lost updates (fresh store reads every file)", f"{ours.lost}", f"naive {naive.lost}", "", "0",
              ours.lost == 0, hard=True)
    table.add("same store, fsync off: writes per second", f"{fast.per_second:,.0f}/s", f"naive {naive.per_second:,.0f}/s",
              f"{100 * fast.per_second / naive.per_second:.0f}% of naive")
    table.add("same store, fsync off: lost updates", f"{fast.lost}", "", "", "0", fast.lost == 0, hard=True)
    table.add("naive with its file calls in threads: writes per second", f"{ours.per_second:,.0f}/s",
              f"naive-threaded {naive_t.per_second:,.0f}/s", f"{100 * ours.per_second / naive_t.per_second:.0f}%")
    table.add("naive with its file calls in threads: p95 with the lock held",
              f"{p95(ours.write_ns) / 1e6:.2f} ms", f"naive-threaded {p95(naive_t.write_ns) / 1e6:.2f} ms",
              f"{p95(ours.write_ns) / p95(naive_t.write_ns):.1f}x")
    table.note(f"memory files end at {p50(sizes) / 1024:.1f} KB ({args.updates} facts each); each save rewrites the "
               "whole file; fsync on = temp file + fsync + rename + folder fsync per save")
    table.note(f"{os.cpu_count()} cores; the default thread pool runs the blocking file calls of aiofiles and the fsyncs; "
               "naive = synchronous read + open(path, 'w').write on the event loop (what naive code does)")
    table.note("the disk is shared with other tenants: fsync latency varies a lot between runs")
    table.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
