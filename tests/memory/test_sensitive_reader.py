"""The sensitive backstop's trained reader (`bot.memory.rules.sensitive_reader`): what it adds to the patterns, what
it leaves alone, that its own scoring is the fitted model's, that the shipped weights are what its sets give, and
what it learns from."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline, make_union

from bench.reader_training import GATES, load, main, plain, trained, training_items, training_paths
from bot.memory.rules import sensitive_reader
from bot.memory.rules.sensitive import SENSITIVE_UNSPECIFIED, categories_in, pattern_categories
from bot.memory.rules.sensitive_reader import WEIGHTS, SensitiveReader, Weights, reads_as_sensitive
from bot.memory.rules.withhold import Requests, fact_withheld

# Sets the readers never learn from: two held out, and the final pair (its errors are read, its items not learnt).
HELD_OUT = ("sealed", "final", "blind")

# Written for these tests, none of them in the reader's sets (checked below).
ONLY_THE_READER_FINDS = [
    "Is on an instalment arrangement for an overdue credit card",
    "Got the results: carries one copy of the cystic fibrosis gene",
    "Is three months behind on the phone contract",
]
ORDINARY = [
    "Is saving for a new bike", "Loves hiking with their wife", "Waiting for the new Zelda",
    "Had a picnic with the kids on Sunday", "Is learning Portuguese for a trip to Lisbon", "Sells vintage lamps online",
    "Their mum is recovering from knee surgery and they visit her on Sundays",
    "Plays support in Overwatch with three friends from school and is trying to reach Diamond before the season ends",
    "lol the patch notes are wild, they nerfed the healer again",
]


def _learnt() -> set[str]:
    return {plain(item["text"]) for item in training_items()}


def test_the_examples_here_are_not_in_what_the_reader_learnt() -> None:
    learnt = _learnt()
    assert not [text for text in ONLY_THE_READER_FINDS + ORDINARY if plain(text) in learnt]


@pytest.mark.parametrize("text", ONLY_THE_READER_FINDS)
def test_the_reader_finds_what_no_pattern_names_and_the_fact_waits_for_a_request(text: str) -> None:
    assert pattern_categories(text) == frozenset()
    assert categories_in(text) == frozenset((SENSITIVE_UNSPECIFIED,))
    assert fact_withheld(text, None, Requests()) == SENSITIVE_UNSPECIFIED


@pytest.mark.parametrize("text", ORDINARY)
def test_everyday_facts_and_chat_stay_ordinary(text: str) -> None:
    assert not reads_as_sensitive(text)
    assert categories_in(text) == frozenset()


def test_a_request_only_the_reader_reads_keeps_what_shares_its_words_and_nothing_else() -> None:
    """"Remember I'm on an instalment arrangement ..." names no category the patterns know: like a request that names
    none, it keeps the facts that share its words, not every sensitive fact of the batch."""
    asked = Requests(("I'm on an instalment arrangement for an overdue credit card, please remember that",))
    assert fact_withheld("Is on an instalment arrangement for an overdue credit card", None, asked) is None
    assert fact_withheld("Has type 1 diabetes", None, asked) is not None
    assert fact_withheld("Is three months behind on the phone contract", None, asked) is not None


def test_its_own_scoring_is_the_fitted_models() -> None:
    """`probability` scores with dictionaries instead of sklearn's transform, from the weights as shipped (written
    and read back): it must give what the fitted pipeline's `predict_proba` gives, on texts it learnt from and not."""
    items = training_items()
    texts, labels = [item["text"] for item in items], [item["label"] == "sensitive" for item in items]
    pipeline = make_pipeline(
        make_union(
            TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), min_df=2, sublinear_tf=True, dtype=np.float32),
            TfidfVectorizer(analyzer="word", ngram_range=(1, 2), min_df=2, sublinear_tf=True, dtype=np.float32),
        ),
        LogisticRegression(C=sensitive_reader.REGULARISATION, max_iter=3000, class_weight="balanced"),
    ).fit(texts, labels)
    sample = texts[::97] + ONLY_THE_READER_FINDS + ORDINARY + ["", "!!!", "糖尿病を患っている", "zzzz qqqq"]
    reader = SensitiveReader.of(Weights.loads(trained(items).dumps()))
    ours = [reader.probability(text) for text in sample]
    assert ours == pytest.approx(list(pipeline.predict_proba(sample)[:, 1]), abs=1e-5)
    assert any(p >= sensitive_reader.THRESHOLD for p in ours) and any(p < 0.5 for p in ours)


def test_the_shipped_weights_are_what_the_sets_give(capsys: pytest.CaptureFixture[str]) -> None:
    """A set changed without `python -m bench.reader_training` fails here, and the check says what to run."""
    assert main(["--check"]) == 0
    assert "matches its" in capsys.readouterr().out
    weights = Weights.loads(WEIGHTS.read_bytes())
    assert weights.documents == len(training_items())
    assert weights.dumps() == Weights.loads(weights.dumps()).dumps()  # the file reads back to the same bytes


def test_threads_asking_at_once_share_one_reader() -> None:
    found: list[object] = []
    start = threading.Barrier(4)

    def ask() -> None:
        start.wait()
        found.append(sensitive_reader._READER.get())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 4 and all(reader is found[0] for reader in found)


def test_what_it_learns_from_is_labelled_and_never_a_held_out_set() -> None:
    """Every line has a text and one of the two labels; the held-out sets (`bench/corpora/gates/*_sealed.jsonl`,
    ids `ks...`, and `*_blind.jsonl`, ids `sa...`/`sb...`) measure the shipped backstop and the final pair (`fs...`)
    was one, so none of their items may be among what it learns from."""
    paths = training_paths()
    assert len(paths) >= 10 and not [path for path in paths if any(stem in path.name for stem in HELD_OUT)]
    assert all((GATES / f"sensitive_{stem}.jsonl").is_file() for stem in HELD_OUT)
    items = training_items()
    assert {item["label"] for item in items} == {"sensitive", "ordinary"}
    assert all(isinstance(item["text"], str) and item["text"].strip() for item in items)
    held_out = [item for stem in HELD_OUT for item in load(GATES / f"sensitive_{stem}.jsonl")]
    assert not {item["id"] for item in items} & {item["id"] for item in held_out}
    assert sum(item["label"] == "sensitive" for item in items) > 1000


def test_any_text_gets_a_probability_even_a_huge_one() -> None:
    """Facts, summary sentences and requests of any size: the logistic never overflows."""
    reader = sensitive_reader._READER.get()
    for text in ("", " ", "x" * 200_000, "diabetes " * 20_000, "zzzz " * 20_000):
        assert 0.0 <= reader.probability(text) <= 1.0
