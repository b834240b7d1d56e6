"""Reply-path overhead: what memory adds to one reply at 500 facts (cached load + selection + rendering).

    .venv/bin/python -m bench.reply_path [--facts 500] [--smoke]

Real code path: `memory.recall.prompt` over a `MemoryStore` in a temporary folder with a real memory file
(500 facts and six summaries), on a warm cache: one `stat` revalidates the cached file, the selector reuses the
index fitted for this revision, and `render_memory` builds the prompt block. The recent conversation rotates over
50 seeded 3-turn windows. Stated as a share of a typical LLM call (500 ms). Baseline in the same run: the DeerFlow
design per reply (read and parse the memory file, a new TF-IDF fit for the selection, same rendering).
Target: p50 <= 2 ms.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from openai import AsyncOpenAI

from bench.baselines import select_relevant_facts
from bench.common import (
    Table,
    dialogues,
    exit_code,
    fmt_ms,
    header,
    make_facts,
    p50,
    p95,
    parser,
    time_async_ns,
    time_ns,
)
from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.models import Fact, MemoryFile, Place, Section
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.render import render_memory
from bot.memory.pipeline.selector import FactSelector
from bot.memory.service import MemoryPolicy
from tests.support.engine import file_service, parts, save_memory, where_in

USER_ID = 412345678901234567
LLM_CALL_MS = 500.0
TARGET_MS = 2.0
SUMMARIES = {
    "workContext": "Backend engineer at a logistics start-up; writes Go microservices and owns the billing service.",
    "personalContext": "Lives in Lisbon, speaks Portuguese and English, prefers short answers with code examples.",
    "topOfMind": "Preparing a conference talk about Kubernetes operators; worried about a flaky CI pipeline.",
    "recentMonths": "Moved the team's CI to GitHub Actions and started learning Rust in the evenings.",
    "earlierContext": "Studied physics, then worked three years at an agency building Django shops.",
    "longTermBackground": "Grew up bilingual; has been programming since school; plays in a jazz band.",
}


def with_summaries(memory: MemoryFile) -> MemoryFile:
    """`memory` with the six summary sections filled in (a long-time user's memory has them all)."""
    for name, text in SUMMARIES.items():
        group = memory.user if hasattr(memory.user, name) else memory.history
        setattr(group, name, Section(summary=text, updatedAt="2025-06-01T12:00:00+00:00"))
    return memory


def build_memory(n_facts: int) -> MemoryFile:
    memory = with_summaries(MemoryFile())
    memory.facts = [f for f in make_facts(n_facts, seed=n_facts) if isinstance(f, Fact)]
    return memory


async def run(n_facts: int, reps: int) -> list[Table]:
    windows = dialogues(50, seed=3)
    with tempfile.TemporaryDirectory(prefix="bench-reply-") as tmp:
        root = Path(tmp)
        client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="bench", max_retries=0)  # never called
        policy = MemoryPolicy(top_k=15)
        service = file_service(
            root, MemoryExtractor(client, model="bench"), policy, selector=FactSelector(top_k=policy.top_k)
        )
        await service.ops.open()
        store = parts(service).storage.memories
        assert isinstance(store, MemoryStore)
        await save_memory(store, USER_ID, build_memory(n_facts))
        path = store.path_for(USER_ID)
        size_kb = path.stat().st_size / 1024

        cycle = itertools.cycle(windows)

        async def ours() -> str:
            return (await service.recall.prompt(USER_ID, next(cycle), user_label="Ana", where=where_in(Place.dm()))).text

        sample = await ours()  # fits the index for this revision
        total = await time_async_ns(ours, reps=reps, warmup=20)

        # Breakdown of the same path, step by step.
        memory, revision = await store.load_with_revision(USER_ID)
        load = await time_async_ns(lambda: store.load_with_revision(USER_ID), reps=reps, warmup=20)
        select = time_ns(lambda: parts(service).recall.selector.select(str(USER_ID), revision, memory.facts, next(cycle), 15),
                         reps=reps, warmup=20)
        chosen = parts(service).recall.selector.select(str(USER_ID), revision, memory.facts, windows[0], 15)
        render = time_ns(lambda: render_memory(memory, chosen, user_label="Ana", token_budget=policy.token_budget),
                         reps=reps, warmup=20)

        # Baseline: the DeerFlow design, every reply reads and parses the file and fits a new TF-IDF.
        def seed_way() -> str:
            data = json.loads(path.read_bytes())
            parsed = MemoryFile.model_validate(data)
            picked = select_relevant_facts(data["facts"], next(cycle))
            facts = [Fact.model_validate(f) for f in picked]
            return render_memory(parsed, facts, user_label="Ana", token_budget=policy.token_budget)

        seed = time_ns(seed_way, reps=max(20, reps // 10), warmup=3)
        await client.close()

    share = p50(total) / 1e6 / LLM_CALL_MS
    table = Table(f"memory for one reply at {n_facts} facts (file {size_kb:.0f} KB, warm cache)")
    table.add("recall.prompt p50 / p95", f"{fmt_ms(p50(total))} / {fmt_ms(p95(total))}",
              f"LLM call {LLM_CALL_MS:.0f} ms", f"{100 * share:.2f}% of it", f"p50 <= {TARGET_MS:g} ms",
              p50(total) / 1e6 <= TARGET_MS)
    table.add("  of which: cached load (stat + cache hit) p50", fmt_ms(p50(load)))
    table.add("  of which: selection (cached index) p50", fmt_ms(p50(select)))
    table.add("  of which: render_memory p50", fmt_ms(p50(render)))
    seed_p50 = p50(seed)
    table.add("vs the DeerFlow design per reply (parse + fit + render) p50 / p95", fmt_ms(p50(total)),
              f"{fmt_ms(seed_p50, 2)} / {fmt_ms(p95(seed), 2)}", f"{seed_p50 / p50(total):.1f}x faster")
    table.note(f"prompt block: {len(sample)} characters; {reps} timed replies, 50 rotating 3-turn windows")
    return [table]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--facts", type=int, default=500)
    p.add_argument("--reps", type=int, default=2000)
    args = p.parse_args(argv)
    header("reply-path overhead (cached load + selection + render)", args.smoke)
    tables = asyncio.run(run(args.facts, 100 if args.smoke else args.reps))
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
