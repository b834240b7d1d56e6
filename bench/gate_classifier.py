"""How the sensitive backstop's trained reader was chosen: its recipe on a set it did not learn from.

    .venv/bin/python -m bench.gate_classifier [--smoke] [--corpus DIR] [--rules REV] [--locomo DIR]

The shipped reader (`bot.memory.rules.sensitive_reader`) learns from the sets `bench.reader_training` names. Here
the same recipe learns from all of them but `sensitive_unseen.jsonl`, which it is then tested on, beside the
patterns of `--rules` (default `17fe05f`, the patterns before they were tuned on the unseen set): sensitive items
missed and look-alikes flagged for the patterns alone, the reader alone and the two together (flagged when either
flags), at several thresholds. With `--corpus DIR` the independent corpus is a second test set (the reader never
learns from it; today's patterns were tuned on it). The sealed sets are not read (`bench.gate_corpora` measures the
shipped backstop on them).

With the LoCoMo-10 conversations (`--locomo DIR`, default where `scripts/fetch_locomo.py` puts them) a third test
set is their 2,541 observations: facts a model wrote about each speaker after each session, the kind of text the
backstop reads in real use, unlike the labelled sets' lists. `bench/corpora/locomo_observation_labels.jsonl` labels
each by its key (file, session, speaker, index; no text), sensitive or ordinary by the backstop's categories, as
judged by three labellers who saw neither the patterns nor the reader. Ordinary text counts too: how many of the
bench's synthetic everyday facts (150-300 characters) and of LoCoMo's 5,882 chat turns each flags.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from bench.common import DEFAULT_LOCOMO, PROJECT_ROOT, Table, exit_code, header, make_long_facts, parser
from bench.gate_corpora import Gates, base_gates, corpus_dir, ours
from bench.reader_training import UNSEEN, load, trained, training_items, training_paths
from bench.selection_quality import load_locomo
from bot.memory.rules.sensitive_reader import THRESHOLD, SensitiveReader

THRESHOLDS = (0.6, 0.7, 0.8, 0.85, 0.9)
SENSITIVE_MISSES, SENSITIVE_FLAGS = 0.10, 0.03
T, U = TypeVar("T"), TypeVar("U")
OBSERVATION_LABELS = PROJECT_ROOT / "bench" / "corpora" / "locomo_observation_labels.jsonl"


def observations(folder: Path) -> dict[str, str]:
    """Every LoCoMo observation by its key (`file|session_N_observation|speaker|index`, as in `OBSERVATION_LABELS`):
    `session_N_observation` maps a speaker to [text, evidence id] pairs."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.json")):
        for session, speakers in json.loads(path.read_text(encoding="utf-8")).items():
            if session.endswith("_observation"):
                for speaker, pairs in speakers.items():
                    found.update((f"{path.name}|{session}|{speaker}|{index}", pair[0])
                                 for index, pair in enumerate(pairs) if pair and isinstance(pair[0], str))
    return found


def ordinary_texts(locomo: Path, *, smoke: bool) -> dict[str, list[str]]:
    """Ordinary text a reader should leave alone: the bench's synthetic everyday facts and, when the LoCoMo-10
    folder is there, its chat turns."""
    ordinary = {"everyday facts": [str(fact.content) for fact in make_long_facts(60 if smoke else 1000)]}
    if locomo.is_dir() and any(locomo.glob("*.json")):
        ordinary["LoCoMo chat turns"] = [str(fact.content) for conversation in load_locomo(locomo, captions=False)[0]
                                         for fact in conversation.facts]
    return ordinary


def smoke_sized(learnt: list[T], tests: dict[str, list[U]], ordinary: dict[str, list[str]]
                ) -> tuple[list[T], dict[str, list[U]], dict[str, list[str]]]:
    """A third of what is learnt and tested and a twentieth of the ordinary text: the bench runs, nothing more."""
    return learnt[::3], {name: items[::3] for name, items in tests.items()}, \
        {name: texts[::20] for name, texts in ordinary.items()}


def rules_beside(rev: str) -> tuple[Gates, str]:
    """The patterns of `rev` and their name; without git history, today's (which were tuned on the unseen sets)."""
    rules = base_gates(rev)
    if rules is None:
        return ours(), "today's patterns (tuned on these sets)"
    return rules, f"patterns at {rev}"


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--corpus", help="folder holding the independent sensitive.jsonl (or GATES_CORPUS_DIR)")
    p.add_argument("--rules", default="17fe05f", help="the commit whose patterns stand beside the reader")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder")
    args = p.parse_args(argv)
    header("the sensitive backstop's trained reader on a set it did not learn from", args.smoke)
    learnt = training_items([path for path in training_paths() if path != UNSEEN])
    tests = {"unseen set": [item for item in load(UNSEEN) if item["category"] != "ethnicity"]}
    folder = corpus_dir(args.corpus)
    if folder is not None and (folder / "sensitive.jsonl").is_file():
        tests["independent corpus"] = load(folder / "sensitive.jsonl")
    ordinary = ordinary_texts(args.locomo, smoke=args.smoke)
    if args.locomo.is_dir() and any(args.locomo.glob("*.json")):
        labels = {item["key"]: item["label"] == "sensitive" for item in load(OBSERVATION_LABELS)}
        written = observations(args.locomo)
        tests["LoCoMo observations"] = [
            {"text": written[key], "label": "sensitive" if sensitive else "ordinary",
             "group": "plain" if sensitive else "everyday"}
            for key, sensitive in labels.items() if key in written
        ]
    if args.smoke:
        learnt, tests, ordinary = smoke_sized(learnt, tests, ordinary)
    reader = SensitiveReader.of(trained(learnt))
    rules, rules_name = rules_beside(args.rules)

    for name, items in tests.items():
        sensitive = np.array([item["label"] == "sensitive" for item in items])
        lookalike = np.array([item["group"] == "lookalike" for item in items])
        negatives = "look-alikes"
        if not lookalike.any():  # LoCoMo's observations have none: every ordinary one counts
            lookalike, negatives = ~sensitive, "ordinary items"
        by_rules = np.array([bool(rules.patterns(item["text"])) for item in items])
        score = np.array([reader.probability(item["text"]) for item in items])
        table = Table(f"{name}: sensitive items missed (of {sensitive.sum()}) and {negatives} flagged (of "
                      f"{lookalike.sum()}); the reader learnt from {len(learnt)} items of the other sets")

        def add(label: str, flagged: np.ndarray, *, table: Table = table, sensitive: np.ndarray = sensitive,
                lookalike: np.ndarray = lookalike) -> None:
            missed, flags = int((~flagged & sensitive).sum()), int((flagged & lookalike).sum())
            ok = missed <= SENSITIVE_MISSES * sensitive.sum() and flags <= SENSITIVE_FLAGS * lookalike.sum()
            table.add(label, f"{missed} missed, {flags} flagged", "", "", "<= 10% / <= 3%", ok)

        add(rules_name, by_rules)
        for threshold in THRESHOLDS:
            add(f"reader alone, p >= {threshold}", score >= threshold)
        for threshold in THRESHOLDS:
            shipped = " (shipped)" if threshold == THRESHOLD else ""
            add(f"{rules_name} or reader, p >= {threshold}{shipped}", by_rules | (score >= threshold))
        table.note("an experiment: the targets are shown for reading, the verdict is not a check")
        table.print()

    flagged = Table("ordinary text flagged: by the patterns, and by the patterns or the reader")
    for name, texts in ordinary.items():
        by_rules = np.array([bool(rules.patterns(text)) for text in texts])
        score = np.array([reader.probability(text) for text in texts])
        flagged.add(f"{name} ({len(texts)}): {rules_name}", str(int(by_rules.sum())))
        for threshold in THRESHOLDS:
            flagged.add(f"{name}: or reader, p >= {threshold}", str(int((by_rules | (score >= threshold)).sum())))
    flagged.print()
    return exit_code([], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
