"""A trained reader beside the credential gate's patterns: which words of a text are a credential's value, for the
wordings and value shapes no pattern names ("Their router admin page still uses admin / Marzipan77", "User's Hulu
sign-in: jo.m@posteo.de with Pineapple#2024").

Each candidate word (a run of characters between spaces, quotes, brackets and CJK text) is read by a logistic
regression over features of the word's shape (length, the order of its kinds of characters, randomness) and of its
neighbourhood (the words and character 3-grams before and after it, the separator before it). Trained by
`python -m bench.reader_training` on labelled sets of the repository whose items name their secret, and shipped as
its weights (`credential_reader.tsv.gz`), so a process only loads them. A word is a credential when the reader's
probability reaches `THRESHOLD`, chosen on development data (docs/architecture.md); neighbouring words found
together (a passphrase) are one finding.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.memory.rules.common_words import WORDS as COMMON_WORDS
from bot.memory.rules.credential_names import AT_A_PLACE, NOT_A_CODE
from bot.memory.rules.credential_window import MARKER, named_otherwise, names_an_identifier
from bot.memory.rules.findings import API_KEY, PASSWORD, Finding
from bot.memory.rules.weights_file import Loaded, dumps_rows, read_rows

WEIGHTS = Path(__file__).with_name("credential_reader.tsv.gz")
THRESHOLD = 0.9
REGULARISATION = 2.0  # LogisticRegression's C: lower is smoother; chosen with THRESHOLD
MIN_COUNT = 2  # a feature seen on fewer candidate words is not learnt: mostly one writer's values and names
# Features whose weight is smaller than this are not shipped: most of them, and most of the memory they would take;
# a probability moves by less than this (a test holds it)
PRUNED_BELOW = 0.01
_LONG = 20  # a value this long is a key or a token rather than a password
_BEFORE, _AFTER = 28, 16  # characters of context read as 3-grams on each side
# Candidate words: quotes, brackets, commas and semicolons end a word; so does text in a script without spaces
# (Chinese, Japanese, Korean), so "密码是abc123" gives "abc123".
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff01-\uff60"
_WORD = re.compile(rf"[^\s\"'“”‘’«»„()\[\]{{}}<>,;:=、。，：；！？{_CJK}]+")
_EDGE = ".:!?*-–—=/\\|`~"  # stripped from a candidate's ends: "is: hunter2." -> "hunter2"
_CONTEXT_WORD = re.compile(r"\w+", re.UNICODE)
_NO_VALUE = re.compile(
    r"(?=[^-]*\d)(?=[^-]*[a-f])[0-9a-f]{7,}(?:-[0-9a-f]+)*|(?=[^-]*\d)(?=[^-]*[A-F])[0-9A-F]{7,}(?:-[0-9A-F]+)*"
    r"|\$?\{?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\}?"
)
_PHONE = re.compile(r"\+\d{1,3}(?:[ -]?\(?\d{1,5}\)?){2,5}")  # "+44 7700 900123": a phone number
_URI = re.compile(r"\b[a-z][a-z0-9+.-]*:[^\s:]+:\S+")  # "spotify:track:4cOd...", "urn:isbn:...": public names
_ADDRESS = re.compile(r"\b[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}\b")  # IPv6 and MAC addresses
_CODE_BEFORE = re.compile(r"\b(?:pin\s+)?(?:codes?|numbers?|no\.?|nr\.?|ids?|pin)\s*(?:is|was|:|=|-|#)?\s*$",
                          re.IGNORECASE)
_PUBLIC_ADDRESS = re.compile(r"\b(?:bc1|tb1|ltc1)[a-z0-9]{20,}\b")  # a Bitcoin-style address receives, opens nothing
_DIGITS_ONLY = re.compile(r"[\d -]+")
_CHECKSUMMED_DIGITS = 13  # a run this long is a card number (the checksums decide) or an id (IMEI, Discord)
_DIGIT_GROUPS = re.compile(r"(?<!\S)\d{1,4}(?: \d{1,4})+(?=[\s.,;:!?)\]\"'”’]|$)")


@dataclass(frozen=True, slots=True)
class Candidate:
    start: int
    end: int


def candidates(text: str) -> list[Candidate]:
    """The words of `text` a credential could be, as spans of `text`: at least three characters once the
    punctuation at their ends is set aside (a CVV has three, a PIN four); digits in small groups split by single
    spaces ("36 24 12", "8 1 5 5") are one word; a cut's marker ("[password removed]") is none, nor is a common
    English word in lower case (most words of any text: reading them all would triple the gate's cost on every
    message; a passphrase of such words is the patterns' to find after its name). Left to the
    patterns: hex strings (commit hashes, digests, UUIDs), which count only when a key-like name labels them; runs
    of 13 digits or more, card numbers when the checksums say so and ids otherwise; and what is named otherwise
    (`credential_window.named_otherwise`: a technology, handle, path, version, a number with its unit), names of
    settings ("OPENAI_API_KEY", "${DB_PASSWORD}"), phone numbers, IPv6, MAC and Bitcoin addresses, URIs
    ("spotify:track:..."), the values of codes that open nothing (`_opens_nothing`) and words after a word that
    makes them an identifier ("PR 4521", "room 214")."""
    skipped = [match.span() for pattern in (MARKER, _PHONE, _URI, _ADDRESS, _PUBLIC_ADDRESS)
               for match in pattern.finditer(text)]
    grouped = [match.span() for match in _DIGIT_GROUPS.finditer(text)
               if not any(first <= match.start() < last for first, last in skipped)]
    found = [Candidate(start, end) for start, end in grouped]
    taken = grouped + skipped
    for match in _WORD.finditer(text):
        start, end = match.span()
        if any(first <= start < last for first, last in taken):
            continue
        while start < end and text[start] in _EDGE:
            start += 1
        while end > start and text[end - 1] in _EDGE:
            end -= 1
        word = text[start:end]
        if (end - start >= 3 and not (word.islower() and word in COMMON_WORDS) and not _NO_VALUE.fullmatch(word)
                and not _named(word) and not _opens_nothing(text, start) and not _after_an_identifier(text, start)):
            found.append(Candidate(start, end))
    found = [c for c in found if not _DIGITS_ONLY.fullmatch(text, c.start, c.end)
             or sum(char.isdigit() for char in text[c.start:c.end]) < _CHECKSUMMED_DIGITS]
    return sorted(found, key=lambda candidate: candidate.start)


def _opens_nothing(text: str, start: int) -> bool:
    """The value of a code that opens nothing (`credential_names.NOT_A_CODE`: "sort code is 20-00-00", "train ticket
    code TK894426") or of a postal PIN ("lives in PIN code 560001")."""
    before = text[max(0, start - 48) : start]
    named = _CODE_BEFORE.search(before)
    if named is None:
        return False
    lead = before[: named.start()]
    return bool(NOT_A_CODE.search(lead) or AT_A_PLACE.search(lead))


def _after_an_identifier(text: str, start: int) -> bool:
    """The value after a word that makes it an identifier ("PR 4521", "room 214": `names_an_identifier`)."""
    previous = text[max(0, start - 24) : start].split()
    return bool(previous) and names_an_identifier(previous[-1].strip("\"'“”‘’,"))


def _named(word: str) -> bool:
    """Named otherwise as a whole, or made of such names ("ChaCha20-Poly1305")."""
    return named_otherwise(word) or all(named_otherwise(part) for part in word.split("-") if part)


def _kind(char: str) -> str:
    return "A" if char.isupper() else "a" if char.islower() else "9" if char.isdigit() else "#"


def _bucket(value: float, edges: Sequence[float]) -> int:
    return sum(value >= edge for edge in edges)


def _shape(word: str) -> list[str]:
    kinds = [_kind(char) for char in word]
    collapsed = "".join(kind for index, kind in enumerate(kinds) if index == 0 or kind != kinds[index - 1])
    counts = Counter(word)
    entropy = -sum(n / len(word) * math.log2(n / len(word)) for n in counts.values())
    changes = sum(a != b for a, b in itertools.pairwise(kinds)) / max(1, len(word) - 1)
    lower = word.lower()
    features = [
        f"len:{_bucket(len(word), (4, 5, 6, 7, 9, 12, 16, 24, 40))}",
        f"shape:{collapsed[:8]}",
        f"kinds:{''.join(sorted(set(kinds)))}",
        f"entropy:{_bucket(entropy, (2.0, 2.5, 3.0, 3.5, 4.0, 4.5))}",
        f"changes:{_bucket(changes, (0.1, 0.2, 0.35, 0.5))}",
    ]
    if word.isdigit():
        features.append(f"digits:{min(len(word), 13)}")
        if len(word) == 4 and word[:2] in ("19", "20"):
            features.append("year")
    elif word.isalpha():
        common = lower in COMMON_WORDS
        features.append("common" if common else "rare_word")
        if common:
            features.append(f"word:{lower}")
    if len(word) >= 8 and all(c in "0123456789abcdefABCDEF-" for c in word):
        features.append("hex")
    if "@" in word:
        features.append("at")
    if "/" in word or word.startswith(("http", "www.")):
        features.append("path")
    if "." in word.strip("."):
        features.append("dot")
    return features


def _context_word(word: str) -> str:
    """A neighbouring word as a feature: the word itself, or its shape when it is a value of its own."""
    if word.isalpha():
        return word.lower()
    return "#" + "".join(dict.fromkeys(_kind(char) for char in word))


def _grams(side: str, text: str) -> Iterator[str]:
    text = " ".join(text.lower().split())
    for index in range(len(text) - 2):
        yield f"{side}3:{text[index:index + 3]}"


def features(text: str, spans: Sequence[Candidate]) -> list[list[str]]:
    """Per candidate of `text`, the names of its features (each present once: the model reads them as 0/1)."""
    rows: list[list[str]] = []
    for span in spans:
        word = text[span.start:span.end]
        before = text[max(0, span.start - _BEFORE * 3):span.start]
        after = text[span.end:span.end + _AFTER * 3]
        words_before = _CONTEXT_WORD.findall(before)[-5:]
        words_after = _CONTEXT_WORD.findall(after)[:3]
        row = _shape(word)
        stripped = before.rstrip()
        row.append(f"gap:{'^' if not stripped else '_' if stripped[-1].isalnum() else stripped[-1]}")
        row.append(f"next:{after.lstrip()[:1] or '$'}")
        for distance, context in enumerate(reversed(words_before), start=1):
            row.append(f"b{min(distance, 3)}:{_context_word(context)}")
        for distance, context in enumerate(words_after, start=1):
            row.append(f"a{min(distance, 2)}:{_context_word(context)}")
        row.extend(_grams("L", before[-_BEFORE:]))
        row.extend(_grams("R", after[:_AFTER]))
        rows.append(list(dict.fromkeys(row)))
    return rows


def labelled(text: str, secret: str) -> tuple[list[list[str]], list[bool]]:
    """Training rows of one text: each candidate's features, and whether it overlaps an occurrence of `secret`
    (empty for a text that holds none)."""
    spans = candidates(text)
    places = [(m.start(), m.end()) for m in re.finditer(re.escape(secret), text)] if secret else []
    return features(text, spans), [any(s.start < end and s.end > start for start, end in places) for s in spans]


@dataclass(frozen=True, slots=True)
class Weights:
    """What training gives: the bias and each feature's weight. `dumps` is the shipped file (gzipped text, stable
    order, so the same weights always give the same bytes)."""

    bias: float
    weights: dict[str, float]

    def dumps(self) -> bytes:
        return dumps_rows(("credential reader", repr(self.bias)),
                          ((name, repr(self.weights[name])) for name in sorted(self.weights)))

    @classmethod
    def loads(cls, data: bytes) -> Weights:
        header, rows = read_rows(data)
        return cls(float(header[1]), {name: float(weight) for name, weight in rows})


def train(texts: Sequence[str], secrets: Sequence[str]) -> Weights:
    """Fit the recipe on labelled texts (`python -m bench.reader_training`; a running bot never trains)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    rows: list[list[str]] = []
    labels: list[bool] = []
    for text, secret in zip(texts, secrets, strict=True):
        text_rows, text_labels = labelled(text, secret)
        rows += text_rows
        labels += text_labels
    counts = Counter(name for row in rows for name in row)
    kept = [{name: 1 for name in row if counts[name] >= MIN_COUNT} for row in rows]
    vectorizer = DictVectorizer()
    matrix = vectorizer.fit_transform(kept)
    model = LogisticRegression(C=REGULARISATION, max_iter=5000).fit(matrix, labels)
    names: list[str] = list(vectorizer.get_feature_names_out())
    return Weights(float(model.intercept_[0]), {name: float(weight) for name, weight in
                                                zip(names, model.coef_[0], strict=True) if abs(weight) >= PRUNED_BELOW})


class CredentialReader:
    """`probabilities(text)`: per candidate word of `text`, the probability that it is a credential's value, as the
    fitted model computes it from the weights it is given (a test checks it against `predict_proba`)."""

    def __init__(self, bias: float, weights: Iterable[tuple[str, float]]) -> None:
        self._bias = bias
        self._weights = dict(weights)

    @classmethod
    def of(cls, weights: Weights) -> CredentialReader:
        return cls(weights.bias, weights.weights.items())

    def probabilities(self, text: str) -> list[tuple[Candidate, float]]:
        spans = candidates(text)
        weights = self._weights
        scored = []
        for span, row in zip(spans, features(text, spans), strict=True):
            score = self._bias + sum(weights.get(name, 0.0) for name in row)
            scored.append((span, _logistic(score)))
        return scored

    def findings(self, text: str, threshold: float = THRESHOLD) -> list[Finding]:
        """The credentials the reader finds in `text`; words found next to each other (only spaces between) are
        one finding, so a passphrase is cut whole."""
        found: list[Finding] = []
        for span, probability in self.probabilities(text):
            if probability < threshold:
                continue
            if found and not text[found[-1].end:span.start].strip():
                last = found[-1]
                found[-1] = Finding(last.kind, last.start, span.end)
            else:
                found.append(Finding(API_KEY if span.end - span.start >= _LONG else PASSWORD, span.start, span.end))
        return found


def _logistic(score: float) -> float:
    if score >= 0:  # the form that cannot overflow either way
        return 1.0 / (1.0 + math.exp(-score))
    return math.exp(score) / (1.0 + math.exp(score))


def warm() -> None:
    """Load the weights now, so that the first text the gate reads does not wait for them."""
    _READER.get()


def credentials_read(text: str) -> list[Finding]:
    """The credentials the trained reader finds in `text` (the patterns of `credentials` find the rest)."""
    return _READER.get().findings(text)


_READER = Loaded(WEIGHTS, lambda data: CredentialReader.of(Weights.loads(data)))
