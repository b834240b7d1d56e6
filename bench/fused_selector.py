"""A fused fact selector, the candidate measured by `bench.selection_fusion`: word terms + character n-grams.

Not the engine's: it did not earn its place (BENCHMARKS.md, "Fused selection"). Kept here so the comparison can be
re-run. The similarity averages two scores, each scaled to the best-matching fact's (so each is in [0, 1] for any
query length), and scales the result to its best again, keeping the engine's `0.6 * similarity + 0.4 * confidence`
meaning:
- words: the engine's BM25-weighted terms (`index_terms`), optionally with length normalisation (`TermIndex`);
- characters: TF-IDF over character n-grams within whitespace-separated words (sklearn's `char_wb`: sublinear tf,
  smoothed idf, each fact's vector of length 1), with n-grams held as 64-bit hashes to keep the cached index small.
The query is the last three turns joined, as the engine's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.feature_extraction.text import CountVectorizer

from bot.memory.models import Fact
from bot.memory.pipeline import selector as engine
from bot.memory.pipeline.selector import FactIndex, index_terms, rank


@dataclass(slots=True)
class TermIndex:
    """Word terms weighted the BM25 way, for one memory revision's facts.

    Weights are BM25's: idf times saturated term frequency, with length normalisation `b` (0: none, as the engine; textbook BM25: 0.75): a longer
    fact holds more details, mostly not more noise, so it is discounted a little, not as much as textbook BM25's
    0.75 or cosine would. Terms found in most facts get no weight. A fact's match is the weight of the query terms
    it holds."""

    vocabulary: dict[str, int]
    matrix_t: sp.csr_matrix | None  # terms x facts: idf * saturated tf

    @classmethod
    def build(cls, contents: Sequence[str], b: float = 0.25) -> TermIndex:
        counter = CountVectorizer(analyzer=index_terms, dtype=np.float64)
        try:
            counts = counter.fit_transform(contents).tocsc()
        except ValueError:  # no facts, or nothing but stop words
            return cls({}, None)
        total = counts.shape[0]
        document_frequency = np.diff(counts.indptr)
        idf = np.log1p((total - document_frequency + 0.5) / (document_frequency + 0.5))
        idf[document_frequency > max(engine.COMMON_SHARE * total, engine.COMMON_MIN_FACTS)] = 0.0
        counts = counts.tocoo()
        lengths = np.bincount(counts.row, weights=counts.data, minlength=total)
        norm = 1 - b + b * lengths[counts.row] / max(float(lengths.mean()), 1.0)
        counts.data = counts.data * (engine.BM25_K1 + 1) / (counts.data + engine.BM25_K1 * norm)
        matrix_t = (counts.tocsr() @ sp.diags(idf)).T.tocsr()
        return cls(dict(counter.vocabulary_), matrix_t)

    def matches(self, query: str, size: int) -> NDArray[np.float64]:
        """The weight of the query's terms each fact holds (unscaled). The query is looked up in the vocabulary
        directly: sklearn's `transform` would spend most of a selection validating input."""
        if self.matrix_t is None:
            return np.zeros(size)
        rows = list({self.vocabulary[term] for term in index_terms(query) if term in self.vocabulary})
        if not rows:
            return np.zeros(size)
        return np.asarray(self.matrix_t[rows].sum(axis=0)).ravel()


def char_ngrams(text: str, ngrams: tuple[int, int] = (4, 6), min_word: int = 1) -> list[str]:
    """Character n-grams (`ngrams`, lengths from-to) of each whitespace-separated word padded with a space, as sklearn's
    `char_wb` analyzer makes them, on NFKC-folded text: "photos" and "photography" share " phot", "Melanie's" and
    "Melanie" share " mela". A short word (padded, shorter than n) counts once, whole."""
    low, high = ngrams
    grams: list[str] = []
    for word in unicodedata.normalize("NFKC", text).casefold().split():
        if len(word) < min_word:
            continue
        padded = f" {word} "
        if len(padded) <= low:
            grams.append(padded)
            continue
        for n in range(low, min(high, len(padded)) + 1):
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


@dataclass(slots=True)
class CharIndex:
    """Character n-grams (TF-IDF, sublinear tf, each fact's vector of length 1): what word terms miss, such as
    inflections the light stemmer does not know, compounds and names written differently.

    Compact, because every cached user holds one: n-grams are kept as their 64-bit `hash` (sorted, looked up with a
    binary search) rather than as strings in a dict, and weights as float32. The hash is this process's (salted per
    process); the index never leaves the process, and 64 bits leave collisions out of practical reach."""

    ngrams: tuple[int, int]
    keys: NDArray[np.int64]  # sorted n-gram hashes; row i of matrix_t is keys[i]
    matrix_t: sp.csr_matrix | None  # n-grams x facts
    idf: NDArray[np.float32]

    @classmethod
    def build(cls, contents: Sequence[str], ngrams: tuple[int, int] = (4, 6)) -> CharIndex:
        hashes: list[int] = []
        owners: list[int] = []
        for number, text in enumerate(contents):
            grams = char_ngrams(text, ngrams)
            hashes.extend(map(hash, grams))
            owners.extend([number] * len(grams))
        if not hashes:
            return cls(ngrams, np.zeros(0, dtype=np.int64), None, np.zeros(0, dtype=np.float32))
        keys, columns = np.unique(np.array(hashes, dtype=np.int64), return_inverse=True)
        counts = sp.csr_matrix(
            (np.ones(len(hashes)), (np.array(owners), columns)), shape=(len(contents), len(keys))
        )  # duplicates summed: term counts
        document_frequency = np.bincount(counts.indices, minlength=len(keys))
        idf = np.log((1 + len(contents)) / (1 + document_frequency)) + 1  # sklearn's smoothed idf
        counts.data = 1 + np.log(counts.data)
        weighted = counts @ sp.diags(idf)
        lengths = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        lengths[lengths == 0] = 1.0
        matrix_t = (sp.diags(1 / lengths) @ weighted).T.tocsr().astype(np.float32)
        return cls(ngrams, keys, matrix_t, idf.astype(np.float32))

    def matches(self, query: str, size: int) -> NDArray[np.float64]:
        """Each fact's cosine with the query's n-grams, up to the query's length (the caller scales it)."""
        grams = char_ngrams(query, self.ngrams)
        if self.matrix_t is None or not grams:
            return np.zeros(size)
        hashes, counts = np.unique(np.fromiter(map(hash, grams), dtype=np.int64, count=len(grams)),
                                   return_counts=True)
        rows = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        found = self.keys[rows] == hashes
        if not found.any():
            return np.zeros(size)
        rows = rows[found]
        weights = (1 + np.log(counts[found])) * self.idf[rows]
        return np.asarray(self.matrix_t[rows].T @ weights, dtype=np.float64).ravel()


def _scaled(matched: NDArray[np.float64]) -> NDArray[np.float64]:
    best = float(matched.max()) if matched.size else 0.0
    result: NDArray[np.float64] = matched / best if best > 0 else np.zeros(matched.size)
    return result


@dataclass(slots=True)
class FusedIndex:
    """`term_share * words + (1 - term_share) * characters`, each scaled to its best match, then scaled again.

    `length_norm` None: the words part is the engine's own `FactIndex` similarity; a number: `TermIndex` with
    that length normalisation."""

    facts: tuple[Fact, ...]
    words: FactIndex | TermIndex
    chars: CharIndex
    term_share: float
    confidence: NDArray[np.float64]

    @classmethod
    def build(
        cls,
        facts: Sequence[Fact],
        *,
        ngrams: tuple[int, int] = (4, 6),
        term_share: float = 0.5,
        length_norm: float | None = 0.25,
    ) -> FusedIndex:
        contents = [fact.content for fact in facts]
        confidence = np.fromiter((fact.confidence for fact in facts), dtype=np.float64, count=len(facts))
        words = FactIndex.build(facts) if length_norm is None else TermIndex.build(contents, length_norm)
        return cls(tuple(facts), words, CharIndex.build(contents, ngrams), term_share, confidence)

    def similarities(self, query: str) -> NDArray[np.float64]:
        size = len(self.facts)
        if not query.strip():
            return np.zeros(size)
        if isinstance(self.words, FactIndex):
            words = self.words.similarities(query)
        else:
            words = _scaled(self.words.matches(query, size))
        chars = _scaled(self.chars.matches(query, size))
        return _scaled(self.term_share * words + (1 - self.term_share) * chars)

    def top(self, query: str, top_k: int) -> list[Fact]:
        return rank(self.facts, self.similarities(query), self.confidence, top_k)


TURN_WEIGHTS = (0.5, 0.75, 1.0)  # oldest to newest of the last three turns


class NewestWeightedIndex(FactIndex):
    """The engine's `FactIndex` with the newest turn counting most: the query (turns joined by newlines, as
    `build_query` makes it) weighs each term by the newest turn it appears in (`TURN_WEIGHTS`) instead of 1."""

    def similarities(self, query: str) -> NDArray[np.float64]:
        if self.matrix_t is None or not query.strip():
            return np.zeros(len(self.facts))
        turns = query.split("\n")
        weights = TURN_WEIGHTS[-len(turns):] if len(turns) <= len(TURN_WEIGHTS) else (
            (TURN_WEIGHTS[0],) * (len(turns) - len(TURN_WEIGHTS)) + TURN_WEIGHTS)
        rows: dict[int, float] = {}
        for turn, weight in zip(turns, weights, strict=True):
            for term in index_terms(turn):
                row = self.vocabulary.get(term)
                if row is not None:
                    rows[row] = max(rows.get(row, 0.0), weight)
        if not rows:
            return np.zeros(len(self.facts))
        matched = np.asarray(self.matrix_t[list(rows)].T @ np.fromiter(rows.values(), dtype=np.float64)).ravel()
        return _scaled(matched)
