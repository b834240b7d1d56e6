"""Selection latency: picking the top 15 facts for one reply, ours (cached index) versus the baselines.

    .venv/bin/python -m bench.selection_latency [--sizes 100,500,5000,20000] [--reps 1000] [--smoke]

Ours: `bot.memory.pipeline.selector.FactSelector.select` on a warm cache (the index of this memory revision is already
fitted), so a reply costs: analyse the last 3 turns, look the terms up in the index vocabulary, sum a few sparse
rows, 0.6 * sim + 0.4 * conf, top 15. The fit happens once per memory revision; its time is reported separately.
Baselines, measured in the same run and interleaved with ours:
- DeerFlow design: the DeerFlow design (bench/baselines.py), a new TfidfVectorizer fitted on facts + dialogue
  for every reply;
- TF-IDF cosine (previous engine): bench/baselines.py's re-implementation of the engine's index before the BM25
  change (fitted once per revision too; the query goes through sklearn's `transform`), as an ablation.
The queries rotate over 50 seeded 3-turn dialogues.
Targets: p50 <= 1 ms at 500 facts, <= 3 ms at 5,000; at least 10x faster than the seed at 500.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence

from bench.baselines import TfidfCosineIndex, fact_dicts, select_relevant_facts, tfidf_cosine_selector
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
    ratio,
    time_interleaved,
    time_ns,
)
from bot.memory.pipeline.selector import FactIndex, FactSelector

TARGET_P50_MS = {500: 1.0, 5000: 3.0}
TARGET_SPEEDUP_AT = 500
TARGET_SPEEDUP = 10.0


def _rotating(fn: Callable[[list[str]], object], windows: Sequence[list[str]]) -> Callable[[], object]:
    cycle = itertools.cycle(windows)
    return lambda: fn(next(cycle))


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--sizes", default="100,500,5000,20000", help="fact counts, comma-separated")
    p.add_argument("--reps", type=int, default=1000, help="timed replies per size for ours")
    args = p.parse_args(argv)
    sizes = [100, 500] if args.smoke else [int(s) for s in args.sizes.split(",")]
    reps = 50 if args.smoke else args.reps
    header("selection latency (one reply: cached index vs the DeerFlow design's per-reply fit)", args.smoke)

    windows = dialogues(50, seed=2)
    table = Table("select top 15 for one reply (query = last 3 turns)")
    fits = Table("fit once per memory revision (ours, previous engine) vs per reply (DeerFlow design)")
    counts = []
    for n in sizes:
        facts = make_facts(n, seed=n)
        dicts = fact_dicts(facts)
        ours_sel = FactSelector(top_k=15)
        prev_sel = tfidf_cosine_selector(top_k=15)
        for selector in (ours_sel, prev_sel):
            selector.select("u", 1, facts, windows[0])  # fit (warm cache)
        seed_reps = max(5, min(reps // 2, int(40_000 / n)))
        cpu: dict[str, list[int]] = {}
        samples = time_interleaved(
            {
                "ours": _rotating(lambda w, s=ours_sel, f=facts: s.select("u", 1, f, w), windows),
                "previous": _rotating(lambda w, s=prev_sel, f=facts: s.select("u", 1, f, w), windows),
                "seed": _rotating(lambda w, d=dicts: select_relevant_facts(d, w), windows),
            },
            reps={"ours": reps, "previous": reps, "seed": seed_reps},
            warmup=3,
            budget_s=60,
            cpu=cpu,
        )
        ours, prev, seed = samples["ours"], samples["previous"], samples["seed"]
        target = TARGET_P50_MS.get(n)
        table.add(f"{n:>6} facts: ours p50 / p95", f"{fmt_ms(p50(ours))} / {fmt_ms(p95(ours))}",
                  f"DeerFlow design {fmt_ms(p50(seed), 1)} / {fmt_ms(p95(seed), 1)}", ratio(p50(ours), p50(seed), speedup=True),
                  f"p50 <= {target:g} ms" if target else "", p50(ours) / 1e6 <= target if target else None)
        table.add(f"{n:>6} facts: ours vs TF-IDF cosine (previous engine) p50", fmt_ms(p50(ours)),
                  f"previous {fmt_ms(p50(prev))} / {fmt_ms(p95(prev))}", ratio(p50(ours), p50(prev), speedup=True))
        if n == TARGET_SPEEDUP_AT:
            speedup = p50(seed) / p50(ours)
            table.add(f"{n:>6} facts: speed-up vs the DeerFlow design (wall p50)", f"{speedup:,.1f}x", "1x",
                      f"previous engine {p50(seed) / p50(prev):,.1f}x", f">= {TARGET_SPEEDUP:g}x",
                      speedup >= TARGET_SPEEDUP)
            cpu_speedup = p50(cpu["seed"]) / p50(cpu["ours"])
            table.add(f"{n:>6} facts: speed-up vs the DeerFlow design (CPU p50)", f"{cpu_speedup:,.1f}x",
                      f"DeerFlow design {fmt_ms(p50(cpu['seed']), 2)} CPU",
                      f"ours {fmt_ms(p50(cpu['ours']))} CPU; previous engine "
                      f"{p50(cpu['seed']) / p50(cpu['previous']):,.1f}x",
                      f">= {TARGET_SPEEDUP:g}x", cpu_speedup >= TARGET_SPEEDUP)

        fit_reps = 3 if n >= 5000 else 10
        fit_ours = time_ns(lambda f=facts: FactIndex.build(f), reps=fit_reps, warmup=1)
        fit_prev = time_ns(lambda f=facts: TfidfCosineIndex.build(f), reps=fit_reps, warmup=1)
        fits.add(f"{n:>6} facts: fit p50 (ours / previous engine)",
                 f"{fmt_ms(p50(fit_ours), 1)} / {fmt_ms(p50(fit_prev), 1)}",
                 f"DeerFlow design {fmt_ms(p50(seed), 1)} every reply", f"fit = {p50(fit_ours) / max(p50(seed), 1):.1f} DeerFlow design replies")
        counts.append(f"{n} facts: ours {len(ours)}, previous engine {len(prev)}, DeerFlow design {len(seed)}")
        print(f"  measured {n} facts", flush=True)
    table.note("ours = bot.memory.pipeline.selector.FactSelector.select with the revision's index cached; DeerFlow design = a new "
               "TfidfVectorizer on facts + dialogue per reply; previous engine = bench/baselines.py TfidfCosineIndex "
               "(fitted once per revision, query via sklearn transform); all timed in alternating rounds, GC off")
    table.note("wall time (perf_counter_ns) is what a reply waits; CPU time (process_time_ns) of the same calls is "
               "shown for the speed-up because other tenants of this shared machine stretch long calls more")
    table.note("samples: " + "; ".join(counts))
    fits.note("the fit runs once per memory revision (after an extraction saves), not per reply")
    print()
    table.print()
    fits.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
