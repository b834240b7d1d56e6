"""What the reply path keeps per user: memory retained after 200,000 users each got a server reply.

    .venv/bin/python -m bench.recall_state [--users 200000] [--smoke]

Each variant runs in a fresh interpreter (`--variant NAME`, started by this benchmark), twice: once with
`tracemalloc` on, for the bytes still allocated after the replies (precise, and only what the run left behind), and
once without it, for the growth of the process's resident memory (VmRSS; what an operator sees). Every user gets
one `Recall.prompt` in a server channel (so every per-place key is made), over the real file storage bundle
for the privacy and switch records and a one-document stand-in for the memory store (the same small memory for
every user: what is measured is what the reply path keeps per user, not the store's cache), with a trivial
selection index (the selector's cache holds at most `MEMORY_CACHE_USERS` indexes whatever they contain; a real
index fit costs milliseconds, which would make 200,000 users a quarter of an hour).

- ours: `Recall` as it is: the selector's bounded cache is the only per-user state.
- LRU index (the engine before this change): an index of each user's selection keys in an LRU of
  `MEMORY_CACHE_USERS` users, beside the selector's cache.
- dict index (before the engine's rebuild): the same index in a plain dict, one entry per user ever answered.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.baselines import DictKeyIndexRecall, LruKeyIndexRecall
from bench.common import PROJECT_ROOT, Table, exit_code, header, parser
from bot.config import Settings
from bot.memory.drivers.bundle import build_file_storage
from bot.memory.models import Fact, Location, MemoryFile, Place
from bot.memory.parts.recall import Recall
from bot.memory.pipeline.selector import FactSelector
from bot.memory.policy import MemoryPolicy

FIRST_USER = 300000000000000000
GUILD, CHANNEL = 5050, 6060
VARIANTS = {"ours": "ours: no index beside the selector's cache", "lru": "LRU index (the engine before this change)",
            "dict": "dict index (before the engine's rebuild)"}
TARGET_BYTES_PER_USER = 1.0  # bounded: the state must not grow with the number of users


class OneDocument:
    """The memory store's read for every user: one small memory, one revision (what is measured is not the store)."""

    def __init__(self) -> None:
        self.memory = MemoryFile(facts=[
            Fact(id="fact_00000001", content="Plays chess at the club on Tuesdays", confidence=0.9,
                 place=f"guild:{GUILD}"),
        ])

    async def load_with_revision(self, user_id: int | str) -> tuple[MemoryFile, int]:
        return self.memory, 1


class TinyIndex:
    def __init__(self, facts: Sequence[Fact]) -> None:
        self.facts = list(facts)

    def top(self, query: str, top_k: int) -> list[Fact]:
        return self.facts[:top_k]


async def inline(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise KeyError("VmRSS")


async def one_variant(variant: str, users: int, trace: bool) -> dict[str, float]:
    """In this interpreter: `users` server replies through the variant; the memory left behind."""
    cache_users = Settings.model_fields["memory_cache_users"].default
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        storage = build_file_storage(Path(tmp), durable=False)
        await storage.open()
        storage.memories = OneDocument()  # type: ignore[assignment]
        parts: dict[str, Any] = {
            "storage": storage, "selector": FactSelector(cache_size=cache_users, build=TinyIndex),
            "policy": MemoryPolicy(), "clock": lambda: datetime.now(UTC), "off_loop": inline,
        }
        recall = {"ours": lambda: Recall(**parts), "lru": lambda: LruKeyIndexRecall(users=cache_users, **parts),
                  "dict": lambda: DictKeyIndexRecall(**parts)}[variant]()
        where = Location(Place.channel(CHANNEL, GUILD), CHANNEL, guild_id=GUILD, channel_id=CHANNEL)

        async def reply(user: int) -> None:
            prompt = await recall.prompt(user, ["chess on tuesday?"], user_label="Ana", where=where)
            assert prompt.fact_ids

        for n in range(2 * cache_users):  # warm-up: caches full, every code path run
            await reply(FIRST_USER - 1 - n)
        gc.collect()
        if trace:
            tracemalloc.start()
        before_rss, before_traced = rss_bytes(), tracemalloc.get_traced_memory()[0] if trace else 0
        started = time.perf_counter()
        half = 0
        for n in range(users):
            if n == users // 2 and trace:
                gc.collect()
                half = tracemalloc.get_traced_memory()[0]
            await reply(FIRST_USER + n)
        seconds = time.perf_counter() - started
        gc.collect()
        result = {"seconds": seconds, "rss": rss_bytes() - before_rss}
        if trace:
            end = tracemalloc.get_traced_memory()[0]
            result["traced"] = end - before_traced
            result["per_user"] = (end - half) / (users - users // 2)  # growth over the second half
            tracemalloc.stop()
        result["selector"] = float(recall.selector.cached)
        await storage.close()
        return result


def child(variant: str, users: int, trace: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "bench.recall_state", "--variant", variant, "--users", str(users),
         *(["--trace"] if trace else [])],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"variant {variant} failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def mb(value: float) -> str:
    return f"{value / 1e6:.1f} MB"


def run(users: int, smoke: bool) -> list[Table]:
    results = {
        name: {**({"rss": float("nan"), "seconds": float("nan")} if smoke else child(name, users, trace=False)),
               **child(name, users, trace=True)}
        for name in VARIANTS
    }
    table = Table(f"reply-path state after {users:,} users each got one server reply (MEMORY_CACHE_USERS default)")
    ours = results["ours"]
    for name in ("lru", "dict"):
        base = results[name]
        table.add(f"bytes left allocated (tracemalloc): ours vs {VARIANTS[name]}", mb(ours["traced"]),
                  mb(base["traced"]), f"{(base['traced'] - ours['traced']) / 1e6:+.1f} MB saved")
        table.add(f"resident memory growth (VmRSS): ours vs {VARIANTS[name]}", mb(ours["rss"]), mb(base["rss"]))
    per_user = ours["per_user"]
    table.add("growth per additional user (second half of the run), bytes: ours", f"{per_user:.2f}",
              f"LRU {results['lru']['per_user']:.2f}, dict {results['dict']['per_user']:.0f}",
              "", f"< {TARGET_BYTES_PER_USER:g}", per_user < TARGET_BYTES_PER_USER)
    table.add("selection indexes cached at the end (every variant)",
              " / ".join(f"{results[name]['selector']:.0f}" for name in VARIANTS), "", "", "")
    table.note("each variant in a fresh interpreter, after a warm-up of 2 x MEMORY_CACHE_USERS users; tracemalloc and "
               "VmRSS from separate runs (tracemalloc's own bookkeeping would inflate the RSS); what is left allocated "
               "includes the bounded caches' contents, replaced during the run (about 0.1 MB)")
    if smoke:
        table.note("smoke: the tracemalloc runs only")
    table.note("seconds for the replies (without tracemalloc): " + ", ".join(
        f"{name} {results[name]['seconds']:.1f}" for name in VARIANTS))
    table.note("VmRSS growth is coarse (the allocator returns memory in pages, or not at all): tracemalloc is the "
               "figure to compare")
    return [table]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=200_000)
    p.add_argument("--variant", choices=sorted(VARIANTS), help=argparse_hidden())
    p.add_argument("--trace", action="store_true", help=argparse_hidden())
    args = p.parse_args(argv)
    if args.variant:  # a child: one variant, one JSON line
        print(json.dumps(asyncio.run(one_variant(args.variant, args.users, args.trace))), flush=True)
        return 0
    users = 2_000 if args.smoke else args.users
    header("reply-path state per user (selection keys)", args.smoke)
    tables = run(users, args.smoke)
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
