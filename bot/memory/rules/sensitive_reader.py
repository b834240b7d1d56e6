"""A trained reader beside the sensitive backstop's patterns, for wordings no pattern names ("Is on an instalment
arrangement for an overdue credit card", "Is three months behind on the phone contract").

A logistic regression over character 3-5-grams and word 1-2-grams (scikit-learn), trained by
`python -m bench.reader_training` on labelled sets of the repository and shipped as its weights
(`sensitive_reader.tsv.gz`: per n-gram its document frequency and weight), so a process only loads them: no
training at start, no training sets in the package. A text reads as sensitive when the reader's probability
reaches `THRESHOLD`, chosen on development data (docs/architecture.md). The reader names no category: the patterns
name one when they can; what only the reader finds is unspecified.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from bot.memory.rules.weights_file import Loaded, dumps_rows, read_rows

WEIGHTS = Path(__file__).with_name("sensitive_reader.tsv.gz")
THRESHOLD = 0.85
REGULARISATION = 4.0  # LogisticRegression's C: lower is smoother; chosen with THRESHOLD
# (name, sklearn analyzer, n-gram range): the two feature sets, each tf-idf weighted and l2-normalised on its own
FEATURES = (("chars", "char_wb", (3, 5)), ("words", "word", (1, 2)))


def _vectorizer(kind: str, ngram_range: tuple[int, int]) -> TfidfVectorizer:
    """An unfitted vectorizer of one feature set: fitting it trains, its `build_analyzer()` reads a text. N-grams
    seen in at least two texts only: one-off n-grams are mostly names and typos, and half the vocabulary."""
    return TfidfVectorizer(analyzer=kind, ngram_range=ngram_range, min_df=2, sublinear_tf=True, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Weights:
    """What training gives: the bias, the number of texts learnt from, and per feature set, per n-gram, its document
    frequency and weight. `dumps` is the shipped file: gzipped text, a header line then one line per n-gram (feature
    set, n-gram, document frequency, weight) in a stable order, so the same weights always give the same bytes."""

    bias: float
    documents: int
    grams: tuple[dict[str, tuple[int, float]], ...]

    def dumps(self) -> bytes:
        rows = ((name, gram, str(part[gram][0]), repr(part[gram][1]))
                for (name, _, _), part in zip(FEATURES, self.grams, strict=True) for gram in sorted(part))
        return dumps_rows(("reader", repr(self.bias), str(self.documents)), rows)

    @classmethod
    def loads(cls, data: bytes) -> Weights:
        bias, documents, rows = read_weights(data)
        grams: tuple[dict[str, tuple[int, float]], ...] = tuple({} for _ in FEATURES)
        for part, gram, df, weight in rows:
            grams[part][gram] = (df, weight)
        return cls(bias, documents, grams)

    def rows(self) -> Iterator[tuple[int, str, int, float]]:
        for part, grams in enumerate(self.grams):
            for gram, (df, weight) in grams.items():
                yield part, gram, df, weight


def read_weights(data: bytes) -> tuple[float, int, Iterator[tuple[int, str, int, float]]]:
    """The bias, the number of texts learnt from, and the rows (feature set's index, n-gram, document frequency,
    weight) of a weights file, the rows read one line at a time (`weights_file`)."""
    header, lines = read_rows(data)
    position = {name: index for index, (name, _, _) in enumerate(FEATURES)}
    rows = ((position[name], gram, int(df), float(weight)) for name, gram, df, weight in lines)
    return float(header[1]), int(header[2]), rows


def train(texts: Sequence[str], sensitive: Sequence[bool]) -> Weights:
    """Fit the recipe on labelled texts (`python -m bench.reader_training`; a running bot never trains)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_union

    vectorizers = [_vectorizer(kind, ngram_range) for _, kind, ngram_range in FEATURES]
    matrix = make_union(*vectorizers).fit_transform(list(texts))
    model = LogisticRegression(C=REGULARISATION, max_iter=3000, class_weight="balanced").fit(matrix, list(sensitive))
    frequencies = (matrix > 0).sum(axis=0).A1  # per column: in how many texts the n-gram occurs
    grams, offset = [], 0
    for vectorizer in vectorizers:
        vocabulary: dict[str, int] = vectorizer.vocabulary_
        grams.append({gram: (int(frequencies[offset + index]), float(model.coef_[0][offset + index]))
                      for gram, index in vocabulary.items()})
        offset += len(vocabulary)
    return Weights(float(model.intercept_[0]), len(texts), tuple(grams))


class SensitiveReader:
    """`probability(text)` that `text` states sensitive data about the user: per feature set, sublinear tf times
    smooth idf, l2-normalised, then the logistic, as sklearn's fitted pipeline computes it (a test checks it against
    `predict_proba`); here a few dict lookups per text, where sklearn's transform spends most of its time checking
    its input."""

    def __init__(self, bias: float, documents: int, rows: Iterable[tuple[int, str, int, float]]) -> None:
        self._bias = bias
        self._analyzers: list[Callable[[str], list[str]]] = [
            _vectorizer(kind, ngram_range).build_analyzer() for _, kind, ngram_range in FEATURES
        ]
        # per feature set, n-gram -> its row in `_idf` and `_weight` (two flat arrays: a tuple per n-gram would
        # take twice the memory)
        self._rows: list[dict[str, int]] = [{} for _ in FEATURES]
        self._idf, self._weight = array("d"), array("d")
        for part, gram, df, weight in rows:
            self._rows[part][gram] = len(self._idf)
            self._idf.append(math.log((1 + documents) / (1 + df)) + 1.0)
            self._weight.append(weight)

    @classmethod
    def of(cls, weights: Weights) -> SensitiveReader:
        return cls(weights.bias, weights.documents, weights.rows())

    def probability(self, text: str) -> float:
        score = self._bias
        idf, weights = self._idf, self._weight
        for analyze, rows in zip(self._analyzers, self._rows, strict=True):
            dot = norm = 0.0
            for gram, count in Counter(analyze(text)).items():
                row = rows.get(gram)
                if row is not None:
                    value = (1.0 + math.log(count)) * idf[row]
                    dot += value * weights[row]
                    norm += value * value
            if norm:
                score += dot / math.sqrt(norm)
        if score >= 0:  # the logistic, in the form that cannot overflow either way
            return 1.0 / (1.0 + math.exp(-score))
        return math.exp(score) / (1.0 + math.exp(score))


def warm() -> None:
    """Load the weights now, so that the first fact the engine checks does not wait for them."""
    _READER.get()


def reads_as_sensitive(text: str) -> bool:
    """Whether the reader takes `text` for sensitive data about the user (no category: the patterns name those)."""
    return _READER.get().probability(text) >= THRESHOLD


_READER = Loaded(WEIGHTS, lambda data: SensitiveReader(*read_weights(data)))
