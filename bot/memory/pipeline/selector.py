"""TF-IDF fact selection, fused with meaning when an embedding model is on: which facts go in front of this reply.

`score = 0.6 * similarity(fact, last 3 turns) + 0.4 * confidence`, top `MEMORY_TOP_K`, where the similarity is
TF-IDF with BM25 weights, scaled so the best-matching fact scores 1 (see `FactIndex` for why). With a query vector
and fact vectors (EMBEDDING_MODEL), the similarity of a fact that has a vector is half that and half its cosine with
the query rescaled per query to 0-1 (`VectorMatrix.rescaled`): raw cosines of a small model all sit near 0.8, so
unscaled they would let confidence decide. Facts without a vector keep their lexical similarity alone.

- Speed: the index is fitted once per memory revision and cached; a reply only looks its query terms up and sums
  a few sparse rows, instead of fitting a vectorizer per message.
- Language: Chinese and Japanese do not put spaces between words, so a word tokenizer would see a whole sentence as
  one "word" and nothing would ever match. The analyzer emits character unigrams and bigrams for CJK runs and
  stemmed words (minus stop words) for space-separated scripts, in the same vector space, so mixed text works too.
  (The stop words are sklearn's minus the content words in it: "Go", "system" and "computer" matter to a chat bot.)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from bot.memory.models import Fact
from bot.memory.pipeline.staleness import factors_of, last_seen_days
from bot.memory.rules.vectors import VectorLike, as_int8
from bot.storage.lru import LruCache

SIMILARITY_WEIGHT = 0.6
CONFIDENCE_WEIGHT = 0.4
QUERY_TURNS = 3
LEXICAL_SHARE = 0.5  # of a fact's similarity when it has a vector; the rescaled cosine is the rest

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u31f0-\u31ff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:'[^\W_{_CJK}]+)?", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]")
_HIRAGANA_OR_MARK = re.compile(r"[\u3040-\u309f\u30fb\u30fc]")
# sklearn's list is aggressive: "go", "system", "computer", "fire", "back", "top" are words people ask about.
_CONTENT_WORDS = frozenset(
    {
        "go", "system", "computer", "fire", "bill", "call", "find", "show", "interest", "mill", "thick", "thin",
        "amount", "move", "back", "front", "full", "empty", "detail", "describe", "first", "last", "top", "bottom",
        "part", "side", "cry", "de", "found", "name", "serious", "well", "sincere", "fill", "third", "two", "three",
        "four", "five", "six", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "twenty", "forty", "fifty",
        "sixty", "hundred",
    }
)
_STOP = (frozenset(ENGLISH_STOP_WORDS) - _CONTENT_WORDS) | {
    "im", "ive", "dont", "didnt", "doesnt", "thats", "youre", "s", "t",
}
# Chinese function characters: alone they match everything; inside bigrams ("我的", "是否") they still count.
_CJK_STOP_CHARS = frozenset("的了是我你他她它在和也都就吗呢吧啊很这那个着么与及")
_SUFFIXES = (
    ("ingly", ""), ("edly", ""), ("ings", ""), ("ing", ""), ("ies", "y"), ("ied", "y"), ("ed", ""), ("es", ""),
    ("ly", ""), ("s", ""),
)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A deliberately light suffix stripper: 'hike', 'hiking', 'hikes', 'hiked' -> 'hik'; 'studies' -> 'study'.
    Cheap, and good enough for matching a question's words against a fact's; no dictionary to download."""
    if len(word) <= 3 or not word.isalpha():
        return word
    stem = word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not (suffix == "s" and word.endswith("ss")):
            stem = word[: -len(suffix)] + replacement
            break
    if stem.endswith("e") and len(stem) > 3:
        stem = stem[:-1]  # 'like' and 'likes' meet at 'lik'
    return stem


def analyze(text: str, *, cjk_bigrams: bool = True) -> list[str]:
    """Tokens for TF-IDF: stemmed words for spaced scripts, character 1- and 2-grams for CJK runs.

    Single hiragana (Japanese particles and endings: は, を, て, ます) and Chinese function characters (的, 了, 是)
    are left out as unigrams, where they would make every sentence look alike; they still count inside bigrams.

    With `cjk_bigrams=False` the result is one unit per word or per CJK character, all characters kept: what
    near-duplicate detection compares.
    """
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    tokens: list[str] = []
    for match in _TOKEN.finditer(folded):
        piece = match.group()
        if _CJK_RUN.match(piece):
            if not cjk_bigrams:
                tokens.extend(piece)
                continue
            tokens.extend(char for char in piece if char not in _CJK_STOP_CHARS and not _HIRAGANA_OR_MARK.match(char))
            tokens.extend(piece[i : i + 2] for i in range(len(piece) - 1))
            continue
        word = piece.replace("'", "")
        if word in _STOP or (len(word) < 2 and not word.isdigit()):
            continue
        tokens.append(_stem(word))
    return tokens


BM25_K1 = 1.2
COMMON_SHARE = 0.15  # terms in more than this share of the facts...
COMMON_MIN_FACTS = 10  # ...and in more than this many facts carry no weight: they match everything
TERM_PREFIX = 5

# Words that fill chat turns but name no topic; the last three turns of a conversation are full of them.
_CHAT_STOP = frozenset(
    {
        "hey", "hi", "hello", "thanks", "thank", "thx", "yeah", "yep", "yes", "yup", "nope", "ok", "okay", "oh",
        "wow", "cool", "awesome", "great", "nice", "good", "really", "just", "totally", "definitely", "sure", "lol",
        "haha", "gonna", "wanna", "gotta", "kinda", "sorta", "stuff", "thing", "things", "lot", "lots", "bit",
        "pretty", "super", "also", "still", "even", "did", "does", "doing", "done", "got", "get", "gets", "getting",
        "make", "made", "makes", "making", "know", "think", "thought", "mean", "means", "want", "wanted", "let",
        "lets", "right", "way", "sounds", "sound", "glad", "amazing", "like", "likes", "liked",
    }
)
_INDEX_STOP = _STOP | _CHAT_STOP


@lru_cache(maxsize=65536)
def _term(word: str) -> str:
    """The light stem cut to its first five letters ('photograph', 'photography', 'photos' -> 'photo')."""
    stem = _stem(word)
    return stem[:TERM_PREFIX] if stem.isalpha() else stem


def index_terms(text: str) -> list[str]:
    """Terms for fact selection: truncated stems minus English and chat stop words; CJK runs as `analyze` does.

    Stop words are dropped before stemming: the stems of "really", "done" or "made" are real words ("real",
    "don", "mad") that must stay. A trailing possessive goes ("Melanie's" -> "melanie").
    """
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    terms: list[str] = []
    cjk = _CJK_RUN.search(folded) is not None  # once per text: most facts have none, and fits run per revision
    for piece in _TOKEN.findall(folded):
        if cjk and _CJK_RUN.match(piece):
            terms.extend(analyze(piece))
            continue
        if piece.endswith("'s"):
            piece = piece[:-2]
        word = piece.replace("'", "")
        if word in _INDEX_STOP or (len(word) < 2 and not word.isdigit()):
            continue
        terms.append(_term(word))
    return terms


@dataclass(slots=True)
class FactIndex:
    """A fitted TF-IDF (BM25-weighted) model of one memory revision's facts.

    Weights are BM25's: idf times saturated term frequency, without length normalisation, because a longer fact
    holds more details, not more noise (cosine would punish it for that). Terms found in most facts get no weight.
    A fact's match is the weight of the query terms it holds. The similarity is that match divided by the best
    match any fact achieves for this query, in [0, 1]: dividing by the query's whole weight instead would shrink
    every similarity as the query grows (three chat turns hold many terms, and no single fact matches most of
    them), until `0.4 * confidence` alone decided the ranking. Scaled to the best match, the fact the user is
    talking about scores 1 whatever the query's length, and the contract's `0.6 * similarity + 0.4 * confidence`
    keeps its meaning: relevance first, confidence among equals.
    """

    facts: tuple[Fact, ...]
    vocabulary: dict[str, int]
    matrix_t: sp.csr_matrix | None  # terms x facts: idf * saturated tf
    idf: NDArray[np.float64]
    confidence: NDArray[np.float64]
    meaning: VectorMatrix | None = None
    terms: tuple[str, ...] = ()  # each fact's index terms, space-joined (aligned with `facts`): reused by the next

    @classmethod
    def build(
        cls,
        facts: Sequence[Fact],
        fact_vectors: Sequence[VectorLike | None] | None = None,
        *,
        previous: FactIndex | None = None,
    ) -> FactIndex:
        """The index of `facts`; `fact_vectors` (aligned with them, None for a fact without one) adds meaning.
        `previous` (the index of an earlier revision of the same memory) lends the terms of the facts whose words
        did not change: splitting words is most of a fit, and a new revision changes a few facts of many."""
        confidence = np.fromiter((fact.confidence for fact in facts), dtype=np.float64, count=len(facts))
        meaning = VectorMatrix.of(fact_vectors) if fact_vectors is not None else None
        known = dict(zip((fact.content for fact in previous.facts), previous.terms, strict=False)) if previous else {}
        terms = [known.get(fact.content) or " ".join(index_terms(fact.content)) for fact in facts]
        counter = CountVectorizer(analyzer=str.split, dtype=np.float64)
        try:
            counts = counter.fit_transform(terms).tocsc()
        except ValueError:  # no facts, or nothing but stop words: rank by confidence alone
            return cls(tuple(facts), {}, None, np.zeros(0), confidence, meaning, tuple(terms))
        total = counts.shape[0]
        document_frequency = np.diff(counts.indptr)
        idf = np.log1p((total - document_frequency + 0.5) / (document_frequency + 0.5))
        idf[document_frequency > max(COMMON_SHARE * total, COMMON_MIN_FACTS)] = 0.0
        counts.data = counts.data * (BM25_K1 + 1) / (counts.data + BM25_K1)
        matrix_t = (counts @ sp.diags(idf)).T.tocsr()
        return cls(tuple(facts), dict(counter.vocabulary_), matrix_t, idf, confidence, meaning, tuple(terms))

    @property
    def vectors_held(self) -> int:
        """How many of the facts have a vector."""
        return 0 if self.meaning is None else int(self.meaning.present.sum())

    def similarities(self, query: str) -> NDArray[np.float64]:
        """For every fact, its match with the query relative to the best-matching fact's, in [0, 1].

        The query is looked up in the fitted vocabulary directly: sklearn's `transform` would spend most of the
        time of a selection validating input and building a one-row sparse matrix.
        """
        if self.matrix_t is None or not query.strip():
            return np.zeros(len(self.facts))
        rows = list({self.vocabulary[term] for term in index_terms(query) if term in self.vocabulary})
        if not rows:
            return np.zeros(len(self.facts))
        matched = np.asarray(self.matrix_t[rows].sum(axis=0)).ravel()
        best = float(matched.max())
        if best <= 0:
            return np.zeros(len(self.facts))
        result: NDArray[np.float64] = matched / best
        return result

    def fused(self, query: str, query_vector: VectorLike | None) -> NDArray[np.float64]:
        """The lexical similarities, fused with meaning for the facts that have a vector when `query_vector` is
        given (see the module): still in [0, 1], so the confidence mix keeps its meaning."""
        lexical = self.similarities(query)
        if query_vector is None or self.meaning is None:
            return lexical
        meanings = self.meaning.rescaled(query_vector)
        if meanings is None:
            return lexical
        result: NDArray[np.float64] = np.where(
            self.meaning.present, LEXICAL_SHARE * lexical + (1 - LEXICAL_SHARE) * meanings, lexical
        )
        return result

    def top(
        self,
        query: str,
        top_k: int,
        *,
        factor: NDArray[np.float64] | None = None,
        query_vector: VectorLike | None = None,
    ) -> list[Fact]:
        """The `top_k` facts by `0.6 * similarity + 0.4 * confidence`, best first (ties: newer facts first); each
        score times its `factor` when given (staleness, `bot.memory.pipeline.staleness`); the similarity fused
        with meaning when `query_vector` is given and facts have vectors."""
        return rank(self.facts, self.fused(query, query_vector), self.confidence, top_k, factor=factor)


@dataclass(frozen=True, slots=True)
class VectorMatrix:
    """The facts' vectors of one index as one int8 matrix (a row of zeros for a fact without one), compact as
    stored (`bot.memory.rules.vectors`): a cached index at the fact cap holds tens of kilobytes, not hundreds."""

    matrix: NDArray[np.int8]  # facts x dimensions
    norms: NDArray[np.float32]
    present: NDArray[np.bool_]

    @classmethod
    def of(cls, vectors: Sequence[VectorLike | None]) -> VectorMatrix | None:
        """The matrix of `vectors`, all of the first one's length (others count as missing); None without any."""
        arrays = [None if vector is None else np.asarray(vector).ravel() for vector in vectors]
        length = next((array.size for array in arrays if array is not None and array.size), 0)
        if not length:
            return None
        matrix = np.zeros((len(arrays), length), dtype=np.int8)
        present = np.zeros(len(arrays), dtype=np.bool_)
        for row, array in enumerate(arrays):
            if array is not None and array.size == length:
                matrix[row] = as_int8(array)
                present[row] = bool(matrix[row].any())
        if not present.any():
            return None
        norms = np.linalg.norm(matrix.astype(np.float32), axis=1)
        norms[norms == 0] = 1.0
        return cls(matrix, norms, present)

    def rescaled(self, query_vector: VectorLike) -> NDArray[np.float64] | None:
        """Each fact's cosine with the query, rescaled to 0-1 between the lowest and the highest of the facts that
        have a vector (0 for the others); None when the query does not fit (another length) or tells nothing
        (all equal)."""
        query = np.asarray(query_vector, dtype=np.float32).ravel()
        if query.size != self.matrix.shape[1]:
            return None
        norm = float(np.linalg.norm(query))
        if not norm > 0 or not np.isfinite(norm):
            return None
        cosines = (self.matrix.astype(np.float32) @ (query / norm)) / self.norms
        low, high = float(cosines[self.present].min()), float(cosines[self.present].max())
        if high - low <= 1e-9:
            return None
        result: NDArray[np.float64] = np.where(self.present, (cosines - low) / (high - low), 0.0).astype(np.float64)
        return result


def rank(
    facts: Sequence[Fact],
    similarity: NDArray[np.float64],
    confidence: NDArray[np.float64],
    top_k: int,
    *,
    factor: NDArray[np.float64] | None = None,
) -> list[Fact]:
    """The `top_k` facts by `0.6 * similarity + 0.4 * confidence`, best first, ties broken newest first.

    One full sort (a user has at most a few hundred facts): a partial selection (argpartition) would pick
    arbitrarily among facts tied at the cut-off.
    """
    if top_k <= 0 or not facts:
        return []
    scores = SIMILARITY_WEIGHT * similarity + CONFIDENCE_WEIGHT * confidence
    if factor is not None:
        scores = scores * factor
    order = np.lexsort((-np.arange(len(scores)), -scores))[:top_k]
    return [facts[i] for i in order.tolist()]


class RankedIndex(Protocol):
    """What the selector caches per user and revision: `FactIndex`, or a baseline in the benchmarks."""

    facts: tuple[Fact, ...]

    def top(self, query: str, top_k: int) -> list[Fact]: ...


def build_query(recent_texts: Sequence[str], turns: int = QUERY_TURNS) -> str:
    """The text the facts are scored against: the last few turns of the conversation."""
    return "\n".join(recent_texts[-turns:]) if turns > 0 else ""


def embedding_query(recent_texts: Sequence[str]) -> str:
    """The text the bot embeds for a reply's query: the last few turns, as the lexical query. (A conditional fold,
    the newest message alone when it is long enough, was measured beside it and lost on the tuning sets:
    `bench.selection_embeddings`.)"""
    return build_query(recent_texts)


class FactSelector:
    """Caches one index per user and memory revision (fit once, look up per reply).

    `build` makes the index of one revision's facts: `FactIndex.build`, or a baseline's builder in benchmarks.
    """

    def __init__(
        self,
        *,
        top_k: int = 15,
        cache_size: int = 512,
        build: Callable[..., RankedIndex] = FactIndex.build,
        stale_days: int = 0,
    ) -> None:
        self.top_k = top_k
        self.stale_days = stale_days  # 0: no staleness (`bot.memory.pipeline.staleness`)
        self._build = build
        self._cache: LruCache[str, tuple[int, RankedIndex]] = LruCache(cache_size)
        self._seen: LruCache[str, tuple[tuple[Fact, ...], NDArray[np.float64]]] = LruCache(cache_size)

    def is_cached(self, user_key: str, revision: int) -> bool:
        """True when the index of this revision is built already (a selection is then a cheap lookup)."""
        cached = self._cache.peek(user_key)
        return cached is not None and cached[0] == revision

    def build(
        self,
        facts: Sequence[Fact],
        fact_vectors: Sequence[VectorLike | None] | None = None,
        *,
        previous: RankedIndex | None = None,
    ) -> RankedIndex:
        """A new index of `facts` (with their vectors, aligned, when given), reusing what it can of `previous`
        (`cached_index`: the same key's index of an earlier revision); touches no shared state, so it may run in a
        worker thread."""
        if isinstance(previous, FactIndex) and self._build == FactIndex.build:
            return FactIndex.build(facts, fact_vectors, previous=previous)
        return self._build(facts) if fact_vectors is None else self._build(facts, fact_vectors)

    def cached_index(self, user_key: str) -> RankedIndex | None:
        """The index cached for `user_key`, of whatever revision (what the next `build` may reuse)."""
        cached = self._cache.peek(user_key)
        return None if cached is None else cached[1]

    def put(self, user_key: str, revision: int, index: RankedIndex) -> None:
        """Cache `index` as the user's index of `revision` (the least recently used one goes past the cap)."""
        self._cache.put(user_key, (revision, index))

    def index_for(
        self,
        user_key: str,
        revision: int,
        facts: Sequence[Fact],
        fact_vectors: Sequence[VectorLike | None] | None = None,
    ) -> RankedIndex:
        cached = self._cache.peek(user_key)
        if cached is not None and cached[0] == revision:
            self._cache.get(user_key)  # the newest now
            return cached[1]
        index = self.build(facts, fact_vectors)
        self.put(user_key, revision, index)
        return index

    def select(
        self,
        user_key: str,
        revision: int,
        facts: Sequence[Fact],
        recent_texts: Sequence[str],
        top_k: int | None = None,
        *,
        now: datetime | None = None,
        query_vector: VectorLike | None = None,
        fact_vectors: Sequence[VectorLike | None] | None = None,
    ) -> list[Fact]:
        """The best facts for the conversation; with `now` (and `stale_days`), stale facts rank a little lower.
        With `query_vector` (the vector of `embedding_query(recent_texts)`) and fact vectors (`fact_vectors`,
        aligned with `facts`, or those of the cached index of this revision), meaning counts too; with both None
        it is the lexical selection."""
        if not facts:
            return []
        index = self.index_for(user_key, revision, facts, fact_vectors)
        wanted = self.top_k if top_k is None else top_k
        if not isinstance(index, FactIndex):
            return index.top(build_query(recent_texts), wanted)
        factor = None
        if now is not None and self.stale_days > 0:
            factor = factors_of(self._seen_days(user_key, index), now, self.stale_days)
        return index.top(build_query(recent_texts), wanted, factor=factor, query_vector=query_vector)

    def _seen_days(self, user_key: str, index: FactIndex) -> NDArray[np.float64]:
        """The facts' last-seen days of this index, computed once per index (kept beside it, as many as it)."""
        cached = self._seen.peek(user_key)
        if cached is not None and cached[0] is index.facts:
            return cached[1]
        seen = last_seen_days(index.facts)
        self._seen.put(user_key, (index.facts, seen))
        return seen

    def forget(self, user_key: str) -> None:
        self._cache.discard(user_key)
        self._seen.discard(user_key)

    def forget_prefixed(self, user_key: str, prefix: str) -> None:
        """Drop `user_key` and every key starting with `prefix` (a user's per-place indexes): a scan of the bounded
        cache, so nobody needs to keep an index of keys per user."""
        for key in [key for key in self._cache if key == user_key or key.startswith(prefix)]:
            self._cache.discard(key)
        for key in [key for key in self._seen if key == user_key or key.startswith(prefix)]:
            self._seen.discard(key)

    @property
    def cached(self) -> int:
        """How many indexes are cached (at most `cache_size`)."""
        return len(self._cache)
