"""Train the trained readers of the sensitive backstop and the credential gate and write the weights the bot ships.

    .venv/bin/python -m bench.reader_training [--check]

The sensitive reader (`bot.memory.rules.sensitive_reader`) learns from the sensitive development sets of
`bench/corpora/gates/` and the sets written for it in `bench/corpora/reader/`; the credential reader
(`bot.memory.rules.credential_reader`) from the credential development sets, the sets written for it in
`bench/corpora/credential_reader/` and, as everyday text that holds no credential, the sets of
`bench/corpora/reader/` (each folder's README says what they are). The held-out sets (`*_sealed`, `*_blind`) are
never among them, nor the final sets (held out when the readers were last trained; adding them since moved neither
reader's frontier the right way, `python -m bench.gate_classifier` and `python -m bench.credential_classifier`). Training is deterministic: this command writes `bot/memory/rules/sensitive_reader.tsv.gz` and
`bot/memory/rules/credential_reader.tsv.gz`, and with `--check` it writes nothing and fails (one line, exit 1) when
the shipped weights are not what these sets give, as after a set changed without retraining.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import PROJECT_ROOT, parser
from bot.memory.rules import credential_reader
from bot.memory.rules.sensitive_reader import WEIGHTS, SensitiveReader, Weights, train

GATES = PROJECT_ROOT / "bench" / "corpora" / "gates"
WRITTEN = PROJECT_ROOT / "bench" / "corpora" / "reader"
DEVELOPMENT = tuple(GATES / f"sensitive_{name}.jsonl" for name in ("heldout", "fresh", "unseen"))
UNSEEN = GATES / "sensitive_unseen.jsonl"
CREDENTIAL_WRITTEN = PROJECT_ROOT / "bench" / "corpora" / "credential_reader"
CREDENTIAL_DEVELOPMENT = tuple(GATES / f"credentials_{name}.jsonl" for name in ("heldout", "fresh", "unseen"))
CREDENTIAL_UNSEEN = GATES / "credentials_unseen.jsonl"
# The same sets give the same n-grams and document counts exactly; the weights come from an iterative solver whose
# last digits move with scikit-learn's and SciPy's versions, so probabilities are compared to this tolerance (a
# changed set moves far more than this, and changes the counts).
PROBABILITY_TOLERANCE = 1e-3


def training_paths() -> list[Path]:
    return [*DEVELOPMENT, *sorted(WRITTEN.glob("*.jsonl"))]


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plain(text: str) -> str:
    """A text as the same words whatever their case and spacing: how a written item is found again verbatim."""
    return " ".join(text.lower().split())


def items_in(paths: Sequence[Path]) -> list[dict[str, Any]]:
    return [item for path in paths for item in load(path)]


def training_items(paths: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    """Every labelled item the reader learns from, in a stable order (the development sets, then the written ones)."""
    return items_in(training_paths() if paths is None else paths)


def trained(items: Sequence[dict[str, Any]]) -> Weights:
    return train([item["text"] for item in items], [item["label"] == "sensitive" for item in items])


def credential_paths() -> list[Path]:
    return [*CREDENTIAL_DEVELOPMENT, *sorted(CREDENTIAL_WRITTEN.glob("*.jsonl")), *sorted(WRITTEN.glob("*.jsonl"))]


def credential_text(item: dict[str, Any]) -> str:
    """What the gate reads of an item: its text, or its messages joined as a batch is read whole."""
    return " ".join(item["messages"]) if "messages" in item else str(item["text"])


def credential_items(paths: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    """Every item the credential reader learns from, in a stable order; the sensitive reader's sets are everyday
    text without a credential (`secret` empty)."""
    return items_in(credential_paths() if paths is None else paths)


def credential_trained(items: Sequence[dict[str, Any]]) -> credential_reader.Weights:
    return credential_reader.train([credential_text(item) for item in items],
                                   [str(item.get("secret") or "") for item in items])


def _check_credential_reader(items: Sequence[dict[str, Any]], weights: credential_reader.Weights) -> str | None:
    """Why the shipped credential weights are not these (None when they are). The solver's last digits move with
    the library versions and a weight near `PRUNED_BELOW` may then be kept or left out, so the features may differ
    by a few and the probabilities by what pruning allows; a changed set moves far more."""
    shipped = credential_reader.Weights.loads(credential_reader.WEIGHTS.read_bytes())
    if len(set(shipped.weights) ^ set(weights.weights)) > len(weights.weights) // 100:
        return "other texts or features"
    old, new = credential_reader.CredentialReader.of(shipped), credential_reader.CredentialReader.of(weights)
    worst = max((abs(a - b) for item in items
                 for (_, a), (_, b) in zip(old.probabilities(credential_text(item)),
                                           new.probabilities(credential_text(item)), strict=True)), default=0.0)
    return f"a probability differs by {worst:.2g}" if worst > credential_reader.PRUNED_BELOW else None


def _frequencies(weights: Weights) -> list[dict[str, int]]:
    return [{gram: df for gram, (df, _) in part.items()} for part in weights.grams]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--check", action="store_true", help="fail when the shipped weights are not these sets'")
    args = p.parse_args(argv)
    items, credential = training_items(), credential_items()
    weights, credential_weights = trained(items), credential_trained(credential)
    if not args.check:
        WEIGHTS.write_bytes(weights.dumps())
        print(f"wrote {WEIGHTS.relative_to(PROJECT_ROOT)}: {len(items)} texts, "
              f"{sum(len(part) for part in weights.grams)} n-grams")
        credential_reader.WEIGHTS.write_bytes(credential_weights.dumps())
        print(f"wrote {credential_reader.WEIGHTS.relative_to(PROJECT_ROOT)}: {len(credential)} texts, "
              f"{len(credential_weights.weights)} features")
        return 0
    shipped = Weights.loads(WEIGHTS.read_bytes())
    same = shipped.documents == weights.documents and _frequencies(shipped) == _frequencies(weights)
    texts = [item["text"] for item in items]
    old, new = SensitiveReader.of(shipped), SensitiveReader.of(weights)
    worst = max(abs(old.probability(text) - new.probability(text)) for text in texts) if same else 1.0
    failures = []
    if worst > PROBABILITY_TOLERANCE:
        reason = f"a probability differs by {worst:.2g}" if same else "other texts or n-grams"
        failures.append(f"{WEIGHTS.relative_to(PROJECT_ROOT)} ({reason})")
    if mismatch := _check_credential_reader(credential, credential_weights):
        failures.append(f"{credential_reader.WEIGHTS.relative_to(PROJECT_ROOT)} ({mismatch})")
    if failures:
        print(f"{' and '.join(failures)}: not what the training sets give; run python -m bench.reader_training")
        return 1
    print(f"{WEIGHTS.relative_to(PROJECT_ROOT)} matches its {len(items)} training texts, "
          f"{credential_reader.WEIGHTS.relative_to(PROJECT_ROOT)} its {len(credential)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
