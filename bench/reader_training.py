"""Train the sensitive backstop's reader and write the weights the bot ships.

    .venv/bin/python -m bench.reader_training [--check]

The reader (`bot.memory.rules.sensitive_reader`) learns from the sensitive development sets of
`bench/corpora/gates/` and the sets written for it in `bench/corpora/reader/` (its README says what they are); the
sealed sets are never among them. Training is deterministic: this command writes
`bot/memory/rules/sensitive_reader.tsv.gz`, and with `--check` it writes nothing and fails (one line, exit 1) when
the shipped weights are not what these sets give, as after a set changed without retraining.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import PROJECT_ROOT, parser
from bot.memory.rules.sensitive_reader import WEIGHTS, SensitiveReader, Weights, train

GATES = PROJECT_ROOT / "bench" / "corpora" / "gates"
WRITTEN = PROJECT_ROOT / "bench" / "corpora" / "reader"
DEVELOPMENT = tuple(GATES / f"sensitive_{name}.jsonl" for name in ("heldout", "fresh", "unseen"))
UNSEEN = GATES / "sensitive_unseen.jsonl"
# The same sets give the same n-grams and document counts exactly; the weights come from an iterative solver whose
# last digits move with scikit-learn's and SciPy's versions, so probabilities are compared to this tolerance (a
# changed set moves far more than this, and changes the counts).
PROBABILITY_TOLERANCE = 1e-3


def training_paths() -> list[Path]:
    return [*DEVELOPMENT, *sorted(WRITTEN.glob("*.jsonl"))]


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def training_items(paths: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    """Every labelled item the reader learns from, in a stable order (the development sets, then the written ones)."""
    return [item for path in (training_paths() if paths is None else paths) for item in load(path)]


def trained(items: Sequence[dict[str, Any]]) -> Weights:
    return train([item["text"] for item in items], [item["label"] == "sensitive" for item in items])


def _frequencies(weights: Weights) -> list[dict[str, int]]:
    return [{gram: df for gram, (df, _) in part.items()} for part in weights.grams]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--check", action="store_true", help="fail when the shipped weights are not these sets'")
    args = p.parse_args(argv)
    items = training_items()
    weights = trained(items)
    if not args.check:
        WEIGHTS.write_bytes(weights.dumps())
        print(f"wrote {WEIGHTS.relative_to(PROJECT_ROOT)}: {len(items)} texts, "
              f"{sum(len(part) for part in weights.grams)} n-grams")
        return 0
    shipped = Weights.loads(WEIGHTS.read_bytes())
    same = shipped.documents == weights.documents and _frequencies(shipped) == _frequencies(weights)
    texts = [item["text"] for item in items]
    old, new = SensitiveReader.of(shipped), SensitiveReader.of(weights)
    worst = max(abs(old.probability(text) - new.probability(text)) for text in texts) if same else 1.0
    if worst > PROBABILITY_TOLERANCE:
        reason = f"a probability differs by {worst:.2g}" if same else "other texts or n-grams"
        print(f"{WEIGHTS.relative_to(PROJECT_ROOT)} is not what the training sets give ({reason}): "
              "run python -m bench.reader_training")
        return 1
    print(f"{WEIGHTS.relative_to(PROJECT_ROOT)} matches its {len(items)} training texts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
