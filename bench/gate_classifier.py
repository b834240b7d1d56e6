"""Would a trained reader beside the sensitive backstop's rules reach the targets on wordings neither has seen?

    .venv/bin/python -m bench.gate_classifier [--smoke] [--corpus DIR] [--rules REV] [--locomo DIR]

An experiment for the next design step, not a shipped part. A logistic regression over character 3-5-grams and
word 1-2-grams (scikit-learn, already a dependency) is trained on the labelled development sets written before the
unseen sets (`bench/corpora/gates/sensitive_heldout.jsonl`, `sensitive_fresh.jsonl`, and with `--corpus DIR` the
independent corpus) and tested on `sensitive_unseen.jsonl`, a set written by someone else that neither it nor the
rules of `--rules` saw: the default is `17fe05f`, the rules before they were tuned on the unseen set. The sealed
sets are not read (they stay held out for whatever ships). Printed: sensitive items missed and look-alikes flagged,
for the rules alone, the reader alone and the two together (flagged when either flags), at several thresholds; and
how many of the bench's synthetic everyday facts (150-300 characters) each flags. The unseen set's `ethnicity`
items are left out: the backstop has no such category.

With the LoCoMo-10 conversations (`--locomo DIR`, default where `scripts/fetch_locomo.py` puts them) it also
counts the chat turns of the last five conversations each reader flags (real chat, which the labelled sets'
ordinary items do not resemble), and trains a second reader with the first five conversations' turns that the
rules leave alone as further ordinary items: the question is whether a reader needs real chat among its negatives.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline, make_union

from bench.common import DEFAULT_LOCOMO, PROJECT_ROOT, Table, exit_code, header, make_long_facts, parser
from bench.gate_corpora import base_gates, corpus_dir, ours
from bench.selection_quality import load_locomo

SETS = PROJECT_ROOT / "bench" / "corpora" / "gates"
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
SENSITIVE_MISSES, SENSITIVE_FLAGS = 0.10, 0.03


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _has_conversations(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("*.json"))


def reader(texts: Sequence[str], labels: Sequence[bool]) -> Any:
    """The trained reader: character and word n-grams, classes weighted by their size."""
    features = make_union(
        TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True),
        TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True),
    )
    model = make_pipeline(features, LogisticRegression(C=4, max_iter=2000, class_weight="balanced"))
    return model.fit(list(texts), list(labels))


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--corpus", help="folder holding the independent sensitive.jsonl (or GATES_CORPUS_DIR)")
    p.add_argument("--rules", default="17fe05f", help="the commit whose rules stand beside the reader")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder (chat turns)")
    args = p.parse_args(argv)
    header("a trained reader beside the sensitive backstop, on the unseen set", args.smoke)
    train = load(SETS / "sensitive_heldout.jsonl") + load(SETS / "sensitive_fresh.jsonl")
    folder = corpus_dir(args.corpus)
    if folder is not None and (folder / "sensitive.jsonl").is_file():
        train += load(folder / "sensitive.jsonl")
    test = [item for item in load(SETS / "sensitive_unseen.jsonl") if item["category"] != "ethnicity"]
    everyday = [str(getattr(fact, "content", fact)) for fact in make_long_facts(60 if args.smoke else 1000)]
    conversations: list[list[str]] = []
    if _has_conversations(args.locomo):  # each conversation's turns, as the selection benchmarks read them
        conversations = [[str(fact.content) for fact in conversation.facts]
                         for conversation in load_locomo(args.locomo, captions=False)[0]]
    if args.smoke:
        train, test, conversations = train[::3], test[::3], [turns[:40] for turns in conversations]
    half = len(conversations) // 2
    chat_negatives, chat_test = conversations[:half], [turn for turns in conversations[half:] for turn in turns]
    rules, rules_name = base_gates(args.rules), f"rules at {args.rules}"
    if rules is None:  # no git history here: today's rules, which were tuned on the unseen set
        rules, rules_name = ours(), "today's rules (tuned on this set)"
    texts, labels = [item["text"] for item in train], [item["label"] == "sensitive" for item in train]
    readers = {"reader": reader(texts, labels)}
    if chat_test:
        ordinary_chat = [turn for turns in chat_negatives for turn in turns if not rules.categories(turn)]
        readers["reader with chat"] = reader(texts + ordinary_chat, labels + [False] * len(ordinary_chat))
    by_rules = np.array([bool(rules.categories(item["text"])) for item in test])
    everyday_rules = np.array([bool(rules.categories(text)) for text in everyday])
    chat_rules = np.array([bool(rules.categories(turn)) for turn in chat_test], dtype=bool)
    sensitive = np.array([item["label"] == "sensitive" for item in test])
    lookalike = np.array([item["group"] == "lookalike" for item in test])

    table = Table(f"sensitive items missed and look-alikes flagged on the unseen set ({sensitive.sum()} sensitive, "
                  f"{lookalike.sum()} look-alikes); trained on {len(train)} items; flagged of {len(everyday)} "
                  f"everyday facts and of {len(chat_test)} LoCoMo chat turns")

    def add(name: str, flagged: np.ndarray, everyday_flagged: np.ndarray, chat_flagged: np.ndarray) -> None:
        missed, flags = int((~flagged & sensitive).sum()), int((flagged & lookalike).sum())
        ok = missed <= SENSITIVE_MISSES * sensitive.sum() and flags <= SENSITIVE_FLAGS * lookalike.sum()
        chat = f", {int(chat_flagged.sum())} chat turns" if chat_test else ""
        table.add(name, f"{missed} missed, {flags} look-alikes, {int(everyday_flagged.sum())} everyday{chat}", "",
                  "", "<= 10% / <= 3%", ok)

    add(rules_name, by_rules, everyday_rules, chat_rules)
    for name, model in readers.items():
        score = model.predict_proba([item["text"] for item in test])[:, 1]
        everyday_score = model.predict_proba(everyday)[:, 1]
        chat_score = model.predict_proba(chat_test)[:, 1] if chat_test else np.zeros(0)
        for threshold in THRESHOLDS:
            add(f"{name} alone, p >= {threshold}", score >= threshold, everyday_score >= threshold,
                chat_score >= threshold)
        for threshold in THRESHOLDS:
            add(f"rules or {name}, p >= {threshold}", by_rules | (score >= threshold),
                everyday_rules | (everyday_score >= threshold), chat_rules | (chat_score >= threshold))
    table.note("an experiment: the targets are shown for reading, the verdict is not a check of shipped code")
    if chat_test:
        table.note(f"reader with chat: also trained on {half} LoCoMo conversations' turns the rules leave alone; "
                   "chat turns counted in the other conversations")
    table.print()
    return exit_code([], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
