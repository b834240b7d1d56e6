"""One bot process of the scale model: the composition root's engine on the shared database, fed its share of the
traffic, measured from inside. Started by `bench.scale_model`; prints `READY <seconds>` once open, then, on the
line `GO <unix time>`, sends its messages from that moment and ends with `RESULT <json>`.

    python -m bench.scale_worker URL LLM_BASE_URL DATA_DIR INDEX PROCESSES USERS RATE SECONDS [--sweep]
        [--extractions N]

It serves the users whose rank is INDEX modulo PROCESSES (a user's messages reach one process, as a shard's do),
Zipf-distributed like `bench.scale_data`, at RATE / PROCESSES messages a second, arriving on schedule whether or
not earlier ones are done (open loop). Per message: the reply's memory (`recall.prompt`, the reply path's share
of the work) is timed, and within it the memory read (`load_with_revision`: the revision check, and the document
when it changed), then the user's words and the bot's reply are handed to learning (`remember`, durable before it
returns). Probes measure the event loop's lag throughout and a `SELECT 1` through the engine's pool every
`ROUND_TRIP_EVERY` s during the traffic (what a database round trip costs on the machine at that moment); the
debouncer's backlog is sampled every 5 s. After the traffic it flushes, times the reply's memory for the last
users it served, one call at a time, twice (their memories changed by the extractions, then cached: the same calls
with nothing else running in this process), runs the daily sweep (retention, then history) with `--sweep`, and shuts down.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import contextvars
import gc
import json
import os
import random
import signal
import sys
import time
from array import array
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from bench.common import p50, p95, percentile
from bench.scale_data import RETENTION_DAYS, user_id, zipf_weight
from bot.app import build_resources, start_memory
from bot.config import Settings
from bot.memory.models import Location, Turn
from tests.support.engine import learn, parts

LAG_TICK = 0.05
BACKLOG_EVERY = 5.0
ROUND_TRIP_EVERY = 0.1
ALONE_CALLS = 200  # reply-path calls timed one at a time after the traffic
SAID = (
    "I finally moved the billing service to the new cluster and the on-call rota is calmer since; next I want to "
    "review the quarterly budget with my manager before the trip to Lisbon in the spring."
)


def rss() -> dict[str, int]:
    found: dict[str, int] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


class LagProbe:
    """How late the loop wakes a `LAG_TICK` timer: every sample, and the phase it fell in."""

    def __init__(self) -> None:
        self.phase = "start"
        self.samples: dict[str, list[float]] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(LAG_TICK)
            self.samples.setdefault(self.phase, []).append(max(0.0, time.perf_counter() - before - LAG_TICK))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def summary(self) -> dict[str, dict[str, float]]:
        return {
            phase: {"p95_ms": percentile(values, 95) * 1000, "p99_ms": percentile(values, 99) * 1000,
                    "max_ms": max(values) * 1000}
            for phase, values in self.samples.items() if values
        }


class TimedLoads:
    """The memory reads of the timed reply calls (those made inside `timing()`), in milliseconds: the reply path's
    share that is the database (a revision check, and the document when it changed)."""

    def __init__(self, memories: Any) -> None:
        self.ms: list[float] = []
        self._timing: contextvars.ContextVar[bool] = contextvars.ContextVar("timing", default=False)
        self._load = memories.load_with_revision
        memories.load_with_revision = self._timed

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        token = self._timing.set(True)
        try:
            yield
        finally:
            self._timing.reset(token)

    async def _timed(self, user_id: int) -> Any:
        if not self._timing.get():
            return await self._load(user_id)
        before = time.perf_counter()
        try:
            return await self._load(user_id)
        finally:
            self.ms.append((time.perf_counter() - before) * 1000)


async def round_trips(database: Any, out: list[float]) -> None:
    """`SELECT 1` through the engine's pool every `ROUND_TRIP_EVERY` s, each timed (milliseconds)."""
    while True:
        before = time.perf_counter()
        await database.fetchval("SELECT 1")
        out.append((time.perf_counter() - before) * 1000)
        await asyncio.sleep(ROUND_TRIP_EVERY)


async def alone(service: Any, users: list[int]) -> list[float]:
    """The reply's memory for `users`, one call at a time (milliseconds each)."""
    timings = []
    for uid in users:
        before = time.perf_counter()
        await service.recall.prompt(uid, [SAID], user_label="user", where=Location.dm(uid))
        timings.append((time.perf_counter() - before) * 1000)
    return timings


def dump_tasks() -> None:
    """SIGUSR1: every task's stack on stderr (where a long run stands)."""
    for task in asyncio.all_tasks():
        task.print_stack(limit=8, file=sys.stderr)
    sys.stderr.flush()


def phase(name: str) -> None:
    print(f"scale worker: {name} at {time.strftime('%H:%M:%S')}", file=sys.stderr, flush=True)


def settings_for(url: str, base_url: str, data_dir: Path, extractions: int) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        discord_token="scale-model",
        openai_base_url=base_url,
        openai_api_key="scale-model",
        chat_model="scale-chat",
        memory_model="scale-memory",
        database_url=url,
        data_dir=data_dir,
        memory_retention_days=RETENTION_DAYS,
        llm_timeout_seconds=60,
        memory_max_concurrent_extractions=extractions,
    )


async def run(argv: list[str]) -> dict[str, Any]:
    url, base_url, data_dir = argv[0], argv[1], Path(argv[2])
    index, processes, users, rate, seconds = int(argv[3]), int(argv[4]), int(argv[5]), float(argv[6]), float(argv[7])
    started = time.perf_counter()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump_tasks)
    extractions = int(argv[argv.index("--extractions") + 1]) if "--extractions" in argv else 4
    resources = build_resources(settings_for(url, base_url, data_dir, extractions))
    opened = time.perf_counter()
    await start_memory(resources)
    gc.collect()  # what `python -m bot` does once started (bot/cli.py): full collections skip start-up objects
    gc.freeze()
    service = resources.memory
    ready = time.perf_counter()
    print(f"READY {ready - started:.3f}", flush=True)
    learning = parts(service).learning
    saved: set[str] = set()
    note_saved = learning._note_saved

    def counting(batch: Any, report: Any, held: Any) -> None:
        saved.update(batch.ids)
        note_saved(batch, report, held)

    learning._note_saved = counting  # type: ignore[method-assign]
    storage = parts(service).storage
    loads = TimedLoads(storage.memories)
    trips: list[float] = []
    go = float((await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)).split()[1])
    # The load generator's own state stays small (a range and an array of doubles, no list of a million floats), so
    # the RSS measured is the engine's.
    ranks = range(index, users, processes)
    cumulative = array("d", accumulate(zipf_weight(rank) for rank in ranks))
    rng = random.Random(index)
    probe = LagProbe()
    probe.start()
    probe.phase = "traffic"
    recall_ms: list[float] = []
    warm_ms: list[float] = []
    acked: list[str] = []
    served: list[int] = []
    backlog: list[tuple[float, int, int]] = []
    behind: list[float] = []
    in_flight: set[asyncio.Task[None]] = set()

    async def message(n: int, rank: int) -> None:
        uid = user_id(rank)
        served.append(uid)
        where = Location.dm(uid)
        before = time.perf_counter()
        with loads.timing():
            await service.recall.prompt(uid, [SAID], user_label="user", where=where)
        recall_ms.append((time.perf_counter() - before) * 1000)
        before = time.perf_counter()  # the same call again: the user's memory and index now cached (baseline)
        await service.recall.prompt(uid, [SAID], user_label="user", where=where)
        warm_ms.append((time.perf_counter() - before) * 1000)
        turn_id = str((index + 1) * 10**15 + n)
        now = resources.memory.clock()
        turns = [Turn("user", uid, "user", f"{SAID} ({n})", now, turn_id),
                 Turn("assistant", 0, "bot", "Noted, good luck with the review.", now, f"{turn_id}9")]
        if await learn(service, where.key(uid), turns):
            acked.extend([turn_id])

    async def sample_backlog() -> None:
        while True:
            backlog.append((time.time() - go, learning.debouncer.pending_turns, learning.debouncer.running))
            await asyncio.sleep(BACKLOG_EVERY)

    await asyncio.sleep(max(0.0, go - time.time()))
    sampler = asyncio.get_running_loop().create_task(sample_backlog())
    prober = asyncio.get_running_loop().create_task(round_trips(storage.database, trips))
    per_second = rate / processes
    t0 = time.perf_counter()
    for n in range(int(per_second * seconds)):
        due = t0 + n / per_second
        wait = due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        else:
            behind.append(-wait)
        rank = ranks[bisect.bisect(cumulative, rng.random() * cumulative[-1])]
        task = asyncio.get_running_loop().create_task(message(n, rank))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    phase("traffic sent")
    if in_flight:
        await asyncio.gather(*in_flight)
    sampler.cancel()
    prober.cancel()
    phase("traffic answered")
    memory_after_traffic = rss()
    probe.phase = "flush"
    flush_started = time.perf_counter()
    await service.ops.flush(600)
    flushed = time.perf_counter() - flush_started
    phase("flushed")
    recent = list(dict.fromkeys(reversed(served)))[:ALONE_CALLS]
    alone_ms = await alone(service, recent)  # most memories changed since their last reply: read and fitted again
    alone_cached_ms = await alone(service, recent)
    sweep: dict[str, float] = {}
    probe.phase = "idle"  # the baseline of the sweep's lag: the same process with nothing to do
    await asyncio.sleep(3.0)
    if "--sweep" in argv:
        probe.phase = "sweep"
        sweep_started = time.perf_counter()
        deleted = await service.ops.sweep()
        sweep = {"seconds": time.perf_counter() - sweep_started, "deleted": deleted}
    probe.stop()
    phase("swept")
    await service.ops.shutdown(60)
    await resources.aclose()
    return {
        "index": index, "build_s": opened - started, "open_s": ready - opened, "sent": len(recall_ms),
        "acked": acked, "saved": sorted(saved), "recall_p50_ms": p50(recall_ms), "recall_p95_ms": p95(recall_ms),
        "warm_p50_ms": p50(warm_ms), "warm_p95_ms": p95(warm_ms),
        "load_p50_ms": p50(loads.ms), "load_p95_ms": p95(loads.ms),
        "trip_p50_ms": p50(trips), "trip_p95_ms": p95(trips),
        "alone_p50_ms": p50(alone_ms), "alone_p95_ms": p95(alone_ms),
        "alone_cached_p50_ms": p50(alone_cached_ms), "alone_cached_p95_ms": p95(alone_cached_ms),
        "recall_max_ms": max(recall_ms, default=0.0), "behind_max_s": max(behind, default=0.0),
        "backlog": backlog, "rss": memory_after_traffic, "rss_end": rss(), "lag": probe.summary(),
        "flush_s": flushed, "sweep": sweep, "pid": os.getpid(),
    }


def main() -> None:
    result = asyncio.run(run(sys.argv[1:]))
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
