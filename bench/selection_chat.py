"""Selection quality on facts written the way the extractor writes them, with chat turns as queries.

    .venv/bin/python -m bench.selection_chat [DATA_DIR_OF_LOCOMO] [--smoke]

The evaluation set (`bench.chat_set`) is derived deterministically from LoCoMo-10: each speaker's observations
become short third-person facts with confidences over 0.70-1.00, and the three dialogue turns after the turn a fact
was learned from are the query. hit@15 (the metric the reply uses: 15 facts), hit@5 and the mean reciprocal rank
of the first relevant fact, for:
- ours: the engine (`FactSelector`, similarity scaled to the best match);
- previous scale: the same index with the similarity as the share of the query's weight
  (`bench.baselines.QueryShareIndex`), where confidence decides the ranking for long queries;
- TF-IDF cosine (the engine before BM25), the DeerFlow design, similarity alone, confidence alone, and random.
Then each tuned constant of the selector varied one at a time, for ours and the previous scale, as on LoCoMo's
question set (`bench.selection_quality`), to re-check them on this kind of data.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.baselines import QueryShareIndex, select_relevant_facts, tfidf_cosine_selector
from bench.chat_set import SpeakerMemory, load
from bench.common import DEFAULT_LOCOMO, Table, exit_code, grid, header, parser
from bench.selection_quality import VARIANTS, engine_constants
from bot.memory.models import Fact
from bot.memory.pipeline.selector import FactIndex, FactSelector, RankedIndex, build_query

TOP_K = 15
# A ranking method: (speaker key, facts, recent turns) -> every fact index, best first.
Ranker = Callable[[str, Sequence[Fact], list[str]], list[int]]


def _index(fact: Fact | dict[str, object]) -> int:
    fact_id = fact["id"] if isinstance(fact, dict) else fact.id
    return int(str(fact_id).removeprefix("fact_"), 16)


def selector_ranker(build: Callable[[Sequence[Fact]], RankedIndex]) -> Ranker:
    selector = FactSelector(top_k=TOP_K, build=build)

    def rank_all(key: str, facts: Sequence[Fact], turns: list[str]) -> list[int]:
        return [_index(f) for f in selector.select(key, 1, facts, turns, len(facts))]

    return rank_all


def weighted_ranker(similarity_weight: float, confidence_weight: float) -> Ranker:
    """The engine's similarity with other weights (similarity alone, confidence alone)."""
    cache: dict[str, FactIndex] = {}

    def rank_all(key: str, facts: Sequence[Fact], turns: list[str]) -> list[int]:
        index = cache.get(key) or cache.setdefault(key, FactIndex.build(facts))
        scores = similarity_weight * index.similarities(build_query(turns)) + confidence_weight * index.confidence
        return [_index(facts[i]) for i in np.lexsort((-np.arange(len(scores)), -scores)).tolist()]

    return rank_all


def seed_ranker() -> Ranker:
    def rank_all(key: str, facts: Sequence[Fact], turns: list[str]) -> list[int]:
        dicts = [fact.model_dump(mode="json") for fact in facts]
        return [_index(f) for f in select_relevant_facts(dicts, turns, top_k=len(facts))]

    return rank_all


def random_ranker(seed: int = 1) -> Ranker:
    rng = random.Random(seed)

    def rank_all(key: str, facts: Sequence[Fact], turns: list[str]) -> list[int]:
        order = list(range(len(facts)))
        rng.shuffle(order)
        return order

    return rank_all


def evaluate(memories: Sequence[SpeakerMemory], ranker: Ranker) -> tuple[float, float, float]:
    """(hit@15, hit@5, mean reciprocal rank of the first relevant fact) over every query."""
    hits15 = hits5 = reciprocal = 0.0
    count = 0
    for memory in memories:
        for query in memory.queries:
            order = ranker(memory.name, memory.facts, query.turns)
            first = next(rank for rank, index in enumerate(order) if index in query.relevant)
            hits15 += first < TOP_K
            hits5 += first < 5
            reciprocal += 1 / (first + 1)
            count += 1
    return hits15 / count, hits5 / count, reciprocal / count


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("data_dir", nargs="?", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder")
    args = p.parse_args(argv)
    header("selection quality: extractor-style facts, chat turns as queries", args.smoke)
    memories = load(args.data_dir)
    if args.smoke:
        memories = memories[:2]
    n_facts = sum(len(m.facts) for m in memories)
    n_queries = sum(len(m.queries) for m in memories)

    methods: dict[str, Ranker] = {
        "ours (similarity scaled to the best match)": selector_ranker(FactIndex.build),
        "previous scale (share of the query's weight)": selector_ranker(QueryShareIndex.build),
        "TF-IDF cosine (engine before BM25)": (lambda sel: lambda k, f, t: [_index(x) for x in sel.select(
            k, 1, f, t, len(f))])(tfidf_cosine_selector(top_k=TOP_K)),
        "DeerFlow design": seed_ranker(),
        "similarity alone (ours, no confidence)": weighted_ranker(1.0, 0.0),
        "confidence alone": weighted_ranker(0.0, 1.0),
        "random": random_ranker(),
    }
    results = {name: evaluate(memories, ranker) for name, ranker in methods.items()}
    ours, previous = results[next(iter(methods))], results["previous scale (share of the query's weight)"]
    table = Table(f"{len(memories)} speakers, {n_facts} facts ({n_facts // max(len(memories), 1)} per speaker), "
                  f"{n_queries} three-turn chat queries")
    for name, (h15, h5, mrr) in results.items():
        table.add(name, f"hit@15 {h15:.3f}  hit@5 {h5:.3f}  MRR {mrr:.3f}")
    table.add("ours vs previous scale, hit@15", f"{ours[0]:.3f}", f"{previous[0]:.3f}", f"{ours[0] - previous[0]:+.3f}",
              ">= previous", ours[0] >= previous[0])
    table.note("facts: LoCoMo-10 observations rewritten to the extractor's style; confidence 0.70-1.00 by a hash")
    table.note("query: the 3 turns after the turn a fact was learned from; hit when a fact of that turn is selected")
    table.print()

    variants = dict(list(VARIANTS.items())[:2]) if args.smoke else VARIANTS
    rows = []
    for label, overrides in variants.items():
        with engine_constants(**overrides):
            new = evaluate(memories, selector_ranker(FactIndex.build))[0]
            old = evaluate(memories, selector_ranker(QueryShareIndex.build))[0]
        rows.append([label, f"{new:.3f}", f"{old:.3f}"])
    print(grid("sensitivity on this set: constants varied one at a time (hit@15)",
               ["variant", "ours", "previous scale"], rows,
               ["constants patched in bot.memory.pipeline.selector for this process only"]), flush=True)
    print(flush=True)
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
