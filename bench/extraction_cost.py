"""Extraction cost growth: prompt tokens sent to the extractor over a 200-turn conversation in 20 bursts.

    .venv/bin/python -m bench.extraction_cost [--bursts 20] [--turns-per-burst 10] [--smoke]

Real code path against a real HTTP server: `MemoryService` (store in a temporary folder) with the real
`MemoryExtractor` and the real `AsyncOpenAI` client, talking to `tests.support.llm_server.ChatServer` on 127.0.0.1, which
counts prompt tokens per request (len(content) // 4 + 4 per message). Each burst (5 user + 5 assistant turns of
realistic lengths) goes through `remember`, then `debouncer.flush()` runs its one extraction; the server answers
with one new fact and a summary update per call, which the service applies and saves, so memory grows as it would.

Baseline (the DeerFlow design): re-send the whole conversation each time. Simulated through the real
`MemoryExtractor.extract` with all turns so far and the same memory the service had before that burst.
Targets: our total <= 25% of the baseline; our per-call size flat (the new-turns part of call 20 within 1.2x of
call 1; the whole prompt may grow only with the memory itself, which the fact cap bounds).
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from bench.common import Table, exit_code, fact_texts, header, parser
from bot.memory.models import ConversationKey, MemoryFile, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy
from tests.support.engine import file_service, learn, parts
from tests.support.llm_server import ChatServer, Response, extraction, prompt_tokens

USER_ID = 512345678901234567
BOT_ID = 612345678901234567
TARGET_SHARE = 0.25
FLAT_TURNS = 1.2

_USER_LINES = (
    "I'm still fighting the flaky integration test in our Go billing service, it only fails in CI.",
    "Quick one: what's the cleanest way to retry a Kafka consumer without double-processing messages?",
    "We moved the team to GitHub Actions last month and the caching is confusing me.",
    "My sister is visiting from Porto next week, any ideas for a rainy day in Lisbon?",
    "I prefer short answers with a code example, long essays lose me.",
    "Thinking about giving a talk on Kubernetes operators at a meetup in the autumn.",
    "I started learning Rust in the evenings, the borrow checker is humbling.",
    "Can you review this error handling? It feels too clever.",
    "The on-call week was rough, three pages at night for the same alert.",
    "I bake sourdough on weekends, my starter is called Gerald.",
)
_BOT_LINES = (
    "Good question. The usual cause is shared state between tests: give each test its own database schema and "
    "run them with -p 1 once to confirm. If it passes serially, look for global variables and time-dependent code.",
    "Make the handler idempotent first: store the message key with the side effect in one transaction, and skip "
    "keys you have seen. Then retries are safe, and you can use the consumer's built-in backoff.",
    "Cache the module download folder keyed on go.sum, and the build cache keyed on the commit with a restore key "
    "on the branch. Keep the cache small; restoring gigabytes costs more than it saves.",
    "Try the tile museum, a long lunch in a tasca, and the covered market. If it clears up, the river walk at "
    "sunset is lovely and close to public transport.",
    "Noted. Here is the short version with code, and I will keep answers compact from now on.",
)


def make_conversation(bursts: int, per_burst: int, seed: int = 11) -> list[list[Turn]]:
    """`bursts` bursts of `per_burst` alternating user / assistant turns, with realistic lengths."""
    rng = random.Random(seed)
    at = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
    out: list[list[Turn]] = []
    n = 0
    for _ in range(bursts):
        burst = []
        for j in range(per_burst):
            at += timedelta(seconds=rng.randint(5, 40))
            n += 1
            if j % 2 == 0:
                text = " ".join(rng.sample(_USER_LINES, rng.randint(1, 2)))
                burst.append(Turn("user", USER_ID, "Ana", text, at, f"t{n}"))
            else:
                text = " ".join(rng.sample(_BOT_LINES, rng.randint(1, 2)))
                burst.append(Turn("assistant", BOT_ID, "memory-bot", text, at, f"t{n}"))
        at += timedelta(minutes=rng.randint(5, 90))
        out.append(burst)
    return out


def new_turns_tokens(body: dict[str, Any]) -> int:
    """Tokens (same estimate as the server) of the request's newTurns part."""
    content = body["messages"][-1]["content"]
    payload = json.loads(content[content.index("{") :])
    return len(json.dumps(payload["newTurns"], ensure_ascii=False, indent=1)) // 4


async def run(bursts: int, per_burst: int) -> list[Table]:
    conversation = make_conversation(bursts, per_burst)
    new_facts = fact_texts(bursts, seed=21)
    calls = {"n": 0}

    def responder(body: dict[str, Any]) -> Response:
        i = calls["n"]
        calls["n"] += 1
        top = f"Busy with item {i} of the billing migration; debugging a flaky CI test; preparing a meetup talk."
        work = "Backend engineer on a Go billing service; moved CI to GitHub Actions." if i % 5 == 0 else None
        return extraction(top=top, work=work, facts=[(new_facts[i % len(new_facts)], "context", 0.9)])

    with ChatServer() as srv, tempfile.TemporaryDirectory(prefix="bench-extract-") as tmp:
        srv.responder = responder
        root = Path(tmp)
        client = AsyncOpenAI(base_url=srv.base_url, api_key="bench", max_retries=0)
        service = file_service(
            root,
            MemoryExtractor(client, model="bench-model", max_retries=0),
            MemoryPolicy(debounce_seconds=3600, max_wait_seconds=3600),
            durable=False,
        )
        await service.ops.open()
        key = ConversationKey(700000000000000001, USER_ID)
        before: list[MemoryFile] = []
        for burst in conversation:
            before.append((await parts(service).storage.memories.load(USER_ID)).model_copy(deep=True))
            await learn(service, key, burst)
            if not await parts(service).learning.debouncer.flush(timeout=60):
                raise RuntimeError("extraction did not finish")
        ours_requests = srv.requests
        final = await parts(service).storage.memories.load(USER_ID)

        baseline_extractor = MemoryExtractor(client, model="bench-model", max_retries=0)
        so_far: list[Turn] = []
        for i, burst in enumerate(conversation):
            so_far.extend(burst)
            await baseline_extractor.extract(before[i], so_far, user_id=USER_ID, now=burst[-1].at, label="seed-way")
        base_requests = srv.requests[len(ours_requests) :]
        await client.close()

    if len(ours_requests) != bursts or len(base_requests) != bursts:
        raise RuntimeError(f"expected {bursts} calls each, got {len(ours_requests)} and {len(base_requests)}")
    ours = [r["prompt_tokens"] for r in ours_requests]
    base = [r["prompt_tokens"] for r in base_requests]
    assert ours == [prompt_tokens(r["body"]) for r in ours_requests]
    ours_turns = [new_turns_tokens(r["body"]) for r in ours_requests]
    base_turns = [new_turns_tokens(r["body"]) for r in base_requests]

    share = sum(ours) / sum(base)
    table = Table(f"{bursts * per_burst}-turn conversation in {bursts} bursts: prompt tokens counted at the server")
    table.add("total prompt tokens, all calls", f"{sum(ours):,}", f"{sum(base):,} (whole conversation each time)",
              f"{100 * share:.1f}%", f"<= {100 * TARGET_SHARE:.0f}%", share <= TARGET_SHARE)
    picks = sorted({0, min(9, bursts - 1), bursts - 1})
    for i in picks:
        table.add(f"call {i + 1}: whole prompt", f"{ours[i]:,}", f"{base[i]:,}", f"{100 * ours[i] / base[i]:.1f}%")
    for i in picks:
        table.add(f"call {i + 1}: of which new turns", f"{ours_turns[i]:,}", f"{base_turns[i]:,}",
                  f"{100 * ours_turns[i] / base_turns[i]:.1f}%")
    growth_turns = ours_turns[-1] / ours_turns[0]
    table.add(f"per-call growth, new turns (call {bursts} / call 1)", f"{growth_turns:.2f}x",
              f"{base_turns[-1] / base_turns[0]:.2f}x", "", f"<= {FLAT_TURNS:g}x (flat)", growth_turns <= FLAT_TURNS)
    table.add(f"per-call growth, whole prompt (call {bursts} / call 1)", f"{ours[-1] / ours[0]:.2f}x",
              f"{base[-1] / base[0]:.2f}x", "", "memory only")
    table.note(f"{bursts} extraction calls each; memory after the run: {len(final.facts)} facts and "
               f"{sum(1 for _, s in final.sections() if s.summary)} summaries (also sent, in both ways); the fixed "
               "system prompt is part of every call")
    table.note("the whole prompt of ours grows only with the memory (capped at max_facts); the DeerFlow design also re-sends "
               "every earlier turn, so its total grows quadratically with the conversation")
    return [table]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--bursts", type=int, default=20)
    p.add_argument("--turns-per-burst", type=int, default=10)
    args = p.parse_args(argv)
    header("extraction cost growth (only new turns vs the whole conversation each time)", args.smoke)
    bursts = 5 if args.smoke else args.bursts
    tables = asyncio.run(run(bursts, args.turns_per_burst))
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
