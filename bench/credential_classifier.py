"""How the credential gate's trained reader was chosen: its recipe on a set it did not learn from.

    .venv/bin/python -m bench.credential_classifier [--smoke] [--corpus DIR] [--rules REV] [--locomo DIR]

The shipped reader (`bot.memory.rules.credential_reader`) learns from the sets `bench.reader_training` names. Here
the same recipe learns from all of them but `credentials_unseen.jsonl`, which it is then tested on, beside the
patterns of `--rules` (default `6ea830e`, the patterns before they were tuned on the unseen set): secrets kept and
keeps refused for the patterns alone, the reader alone and the two together (what either finds is cut), at several
thresholds. A split item is read as the gate reads a batch: the patterns' batch rules, then the reader on each
message and on the messages joined. With `--corpus DIR` the independent corpus is a second test set (the reader
never learns from it; today's patterns were tuned on it). The sealed sets are not read (`bench.gate_corpora`
measures the shipped gate on them).

Ordinary text counts too: how many of the bench's synthetic everyday facts (150-300 characters) and, with the
LoCoMo-10 conversations (`--locomo DIR`), of their 5,882 chat turns and 2,541 observations (facts a model wrote
about each speaker) lose a word to each.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import DEFAULT_LOCOMO, Table, exit_code, header, p50, parser, ratio, time_interleaved
from bench.gate_classifier import observations, ordinary_texts, rules_beside, smoke_sized
from bench.gate_corpora import Gates, arrived, corpus_dir
from bench.reader_training import (
    CREDENTIAL_UNSEEN,
    credential_items,
    credential_paths,
    credential_text,
    credential_trained,
    load,
)
from bot.memory.rules import credentials
from bot.memory.rules.credential_reader import THRESHOLD, CredentialReader
from bot.memory.rules.credentials import cut

THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95)
CREDENTIAL_MISSES, CREDENTIAL_REFUSALS = 0.02, 0.03
Item = dict[str, Any]


def kept_secret(item: Item, rules: Gates | None, reader: CredentialReader | None, threshold: float) -> bool:
    """Whether the secret is still in what the gate keeps (the patterns of `rules`, then the reader's cuts)."""
    messages = list(item["messages"]) if "messages" in item else [item["text"]]
    if rules is None:
        shown = messages
    elif "messages" in item:
        shown = arrived(rules, messages)[1]
    else:
        shown = [rules.redact(text) for text in messages]
    if reader is None:
        return any(item["secret"] in text for text in shown)
    if len(messages) > 1:
        joined = credential_text(item)
        if item["secret"] not in cut(joined, reader.findings(joined, threshold)):
            return False  # the batch's joined text cuts it from the message that holds it
    return any(item["secret"] in cut(text, reader.findings(text, threshold)) for text in shown)


def refused(item: Item, rules: Gates | None, reader: CredentialReader | None, threshold: float) -> bool:
    """Whether a keep loses anything: the patterns refuse or cut it, or the reader finds a word in it."""
    messages = list(item["messages"]) if "messages" in item else [item["text"]]
    if rules is not None:
        if "messages" in item and arrived(rules, messages)[1] != messages:
            return True
        if "messages" not in item and rules.refuses(item["text"]):
            return True
    texts = [*messages, credential_text(item)] if len(messages) > 1 else messages
    return reader is not None and any(reader.findings(text, threshold) for text in texts)


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--corpus", help="folder holding the independent credentials.jsonl (or GATES_CORPUS_DIR)")
    p.add_argument("--rules", default="6ea830e", help="the commit whose patterns stand beside the reader")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder")
    args = p.parse_args(argv)
    header("the credential gate's trained reader on a set it did not learn from", args.smoke)
    learnt = credential_items([path for path in credential_paths() if path != CREDENTIAL_UNSEEN])
    tests = {"unseen set": load(CREDENTIAL_UNSEEN)}
    folder = corpus_dir(args.corpus)
    if folder is not None and (folder / "credentials.jsonl").is_file():
        tests["independent corpus"] = load(folder / "credentials.jsonl")
    ordinary = ordinary_texts(args.locomo, smoke=args.smoke)
    if "LoCoMo chat turns" in ordinary:
        ordinary["LoCoMo observations"] = list(observations(args.locomo).values())
    if args.smoke:
        learnt, tests, ordinary = smoke_sized(learnt, tests, ordinary)
    reader = CredentialReader.of(credential_trained(learnt))
    rules, rules_name = rules_beside(args.rules)

    for name, items in tests.items():
        secrets = [item for item in items if item["label"] == "secret"]
        keeps = [item for item in items if item["label"] == "keep"]
        technical = [item for item in keeps if item["group"] == "technical"]
        table = Table(f"{name}: secrets kept (of {len(secrets)}), keeps refused (of {len(keeps)}; technical of "
                      f"{len(technical)}); the reader learnt from {len(learnt)} items of the other sets")

        def add(label: str, given: Gates | None, with_reader: CredentialReader | None, threshold: float, *,
                table: Table = table, secrets: list[Item] = secrets, keeps: list[Item] = keeps,
                technical: list[Item] = technical) -> None:
            missed = sum(kept_secret(item, given, with_reader, threshold) for item in secrets)
            lost = sum(refused(item, given, with_reader, threshold) for item in keeps)
            lost_technical = sum(refused(item, given, with_reader, threshold) for item in technical)
            ok = missed <= CREDENTIAL_MISSES * len(secrets) and lost <= CREDENTIAL_REFUSALS * len(keeps)
            table.add(label, f"{missed} kept, {lost} refused ({lost_technical} technical)", "", "",
                      "<= 2% / <= 3%", ok)

        add(rules_name, rules, None, 1.0)
        for threshold in THRESHOLDS:
            add(f"reader alone, p >= {threshold}", None, reader, threshold)
        for threshold in THRESHOLDS:
            shipped = " (shipped)" if threshold == THRESHOLD else ""
            add(f"{rules_name} and reader, p >= {threshold}{shipped}", rules, reader, threshold)
        table.note("an experiment: the targets are shown for reading, the verdict is not a check")
        table.print()

    flagged = Table("ordinary text that loses a word: to the patterns, and to the patterns or the reader")
    for name, texts in ordinary.items():
        by_rules = [rules.refuses(text) for text in texts]
        flagged.add(f"{name} ({len(texts)}): {rules_name}", str(sum(by_rules)))
        for threshold in THRESHOLDS:
            either = sum(found or bool(reader.findings(text, threshold)) for found, text in zip(by_rules, texts,
                                                                                               strict=True))
            flagged.add(f"{name}: or reader, p >= {threshold}", str(either))
    flagged.print()
    print_cost(tests, rounds=3 if args.smoke else 15)
    return exit_code([], smoke=args.smoke)


def print_cost(tests: dict[str, list[Item]], *, rounds: int) -> None:
    """The shipped gate's `find_credentials` per text, with its reader and with the reader switched off (the
    patterns alone), in alternating rounds over every text of the test sets."""
    texts = [text for items in tests.values() for item in items
             for text in (item["messages"] if "messages" in item else [item["text"]])]
    reader = credentials.credentials_read

    def patterns_alone() -> None:
        credentials.credentials_read = lambda text: []
        try:
            for text in texts:
                credentials.find_credentials(text)
        finally:
            credentials.credentials_read = reader

    def with_reader() -> None:
        for text in texts:
            credentials.find_credentials(text)

    cpu: dict[str, list[int]] = {}
    time_interleaved({"reader": with_reader, "patterns": patterns_alone}, reps=rounds, warmup=1, cpu=cpu)
    per_text = {name: p50(samples) / 1000 / len(texts) for name, samples in cpu.items()}
    table = Table(f"cost: find_credentials per text ({len(texts)} texts), CPU time, p50 of {rounds} rounds")
    table.add("with the trained reader", f"{per_text['reader']:.0f} us", f"patterns alone {per_text['patterns']:.0f} us",
              ratio(per_text["reader"], per_text["patterns"]))
    table.print()


if __name__ == "__main__":
    raise SystemExit(main())
