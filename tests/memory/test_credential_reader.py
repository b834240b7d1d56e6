"""The credential gate's trained reader (`bot.memory.rules.credential_reader`): what it cuts that no pattern does,
what it leaves alone, that its own scoring is the fitted model's, and what it learns from."""

from __future__ import annotations

from collections import Counter

import pytest
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from bench.reader_training import GATES, credential_items, credential_paths, credential_text, load, plain
from bot.memory.rules import credential_reader, credentials
from bot.memory.rules.credential_reader import (
    CredentialReader,
    Weights,
    candidates,
    credentials_read,
    labelled,
    train,
)
from bot.memory.rules.credentials import find_credentials, redact

# Sets the readers never learn from: two held out, and the final pair (its errors are read, its items not learnt).
HELD_OUT = ("sealed", "final", "blind")

# Written for these tests, none of them in the reader's sets (checked below): (text, the secret in it).
ONLY_THE_READER_FINDS = [
    ("User's Hulu sign-in: jo.m@posteo.de with Pineapple#2024", "Pineapple#2024"),
    ("Their router admin page still uses admin / Marzipan77", "Marzipan77"),
]
KEPT = [
    "Their flight to Porto is TP1335 on the 14th, seat 22C",
    "Scored 4417 points in Tetris last night, a personal best",
    "Moved to 221B Baker Street; the postcode is NW1 6XE",
    "Forgot the gate code again and waited outside for twenty minutes",
    "Uses a password manager since 2019 and turned on 2FA everywhere",
    "The deploy is pinned to commit 9f86d08 and the image tag v2.14.3-arm64",
    "Their Discord handle is moonpie_77 and their gamertag NightOwl3000",
    "Reads OPENAI_API_KEY from the .env file; the port is 8443",
]


def _learnt() -> set[str]:
    return {plain(credential_text(item)) for item in credential_items()}


def test_the_examples_here_are_not_in_what_the_reader_learnt() -> None:
    learnt = _learnt()
    texts = [text for text, _ in ONLY_THE_READER_FINDS] + KEPT
    assert not [text for text in texts if plain(text) in learnt]


@pytest.mark.parametrize(("text", "secret"), ONLY_THE_READER_FINDS)
def test_the_reader_cuts_what_no_pattern_finds(text: str, secret: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert secret not in redact(text) and credentials.credential_kind(text) is not None
    assert any(text[f.start:f.end] == secret for f in credentials_read(text))
    monkeypatch.setattr(credentials, "credentials_read", lambda text: [])  # the patterns alone
    assert secret in redact(text)


@pytest.mark.parametrize("text", KEPT)
def test_everyday_numbers_technical_facts_and_talk_about_codes_are_kept(text: str) -> None:
    assert credentials_read(text) == []
    assert find_credentials(text) == []


def test_hex_strings_and_names_of_settings_are_never_read_as_values() -> None:
    """Commit hashes, digests and UUIDs are the patterns' to judge (only a key-like name makes one a secret), so are
    long digit runs (card numbers by their checksums); a setting's name, an address, a phone number, a URI, a
    technology and a number with its unit are no value. A mixed-case word of hex letters ("Cafe12345") and digits
    in small groups are words."""
    text = ("sha a91c0de, uuid 7d3e1c9a-42b1-4f6e-9c8d-1a2b3c4d5e6f, DIGEST 9F86D081884C, ${DB_PASSWORD} and "
            "OPENAI_API_KEY, then Cafe12345 and 36 24 12. ip fe80::1ff:fe23:4567:890a, +44 7700 900123, "
            "spotify:track:4cOdK2wGLETKBW3PvgPWqT, 4539 1488 0343 6467, ChaCha20-Poly1305, 20-character")
    words = ["sha", "uuid", "Cafe12345", "36 24 12"]  # "and", "then": common words in lower case are no values
    assert [text[c.start:c.end] for c in candidates(text)] == words


def test_its_own_scoring_is_the_fitted_models() -> None:
    """`probabilities` adds the weights of a word's features instead of sklearn's transform: with every weight of a
    model fitted on the same rows it gives what `predict_proba` gives; with the weights as trained and shipped
    (written and read back, the smallest left out) it stays within 0.01 of it."""
    items = credential_items()[::4]
    texts, secrets = [credential_text(item) for item in items], [str(item.get("secret") or "") for item in items]
    rows, labels = [], []
    for text, secret in zip(texts, secrets, strict=True):
        text_rows, text_labels = labelled(text, secret)
        rows += text_rows
        labels += text_labels
    counts = Counter(name for row in rows for name in row)
    vectorizer = DictVectorizer()
    matrix = vectorizer.fit_transform([{name: 1 for name in row if counts[name] >= 2} for row in rows])
    model = LogisticRegression(C=credential_reader.REGULARISATION, max_iter=5000).fit(matrix, labels)
    every_weight = CredentialReader(float(model.intercept_[0]),
                                    zip(vectorizer.get_feature_names_out(), map(float, model.coef_[0]), strict=True))
    shipped = CredentialReader.of(Weights.loads(train(texts, secrets).dumps()))
    sample = texts[::7] + [text for text, _ in ONLY_THE_READER_FINDS] + KEPT + ["", "!!!", "密码是abc123", "x" * 300]
    known = set(vectorizer.vocabulary_)
    scored = 0
    for text in sample:
        spans = candidates(text)
        exact = [p for _, p in every_weight.probabilities(text)]
        if not spans:
            assert exact == [] and shipped.probabilities(text) == []
            continue
        fitted = model.predict_proba(vectorizer.transform(
            [{name: 1 for name in row if name in known} for row in credential_reader.features(text, spans)]))[:, 1]
        assert exact == pytest.approx(list(fitted), abs=1e-6)
        assert [p for _, p in shipped.probabilities(text)] == pytest.approx(list(fitted), abs=0.01)
        scored += len(spans)
    assert scored > 1000


def test_what_it_learns_from_names_its_secrets_and_is_never_a_held_out_set() -> None:
    """Every secret item names a value its text holds; the held-out sets (`bench/corpora/gates/*_sealed.jsonl`, ids
    `kc...`, and `*_blind.jsonl`, ids `ca...`/`cb...`) measure the shipped gate and the final pair (`fc...`) was
    one, so none of their items may be among what the reader learns from."""
    paths = credential_paths()
    assert not [path for path in paths if any(stem in path.name for stem in HELD_OUT)]
    assert all((GATES / f"credentials_{stem}.jsonl").is_file() for stem in HELD_OUT)
    items = credential_items()
    held_out = [item for stem in HELD_OUT for item in load(GATES / f"credentials_{stem}.jsonl")]
    assert not {item["id"] for item in items} & {item["id"] for item in held_out}
    held_out_secrets = {plain(credential_text(item)) for item in held_out if item["label"] == "secret"}
    assert not [item for item in items
                if item["label"] == "secret" and plain(credential_text(item)) in held_out_secrets]
    secrets = [item for item in items if item.get("label") == "secret"]
    assert len(secrets) > 1000
    assert not [item for item in secrets if not item["secret"] or item["secret"] not in credential_text(item)]
    assert not [item for item in items if item.get("label") != "secret" and item.get("secret")]
