"""Both error rates of the memory guard on corpora not used to write its rules.

    .venv/bin/python -m bench.guard_errors [--smoke]

`bench/corpora/guard_heldout.json` (80 real facts, 60 hostile texts) was written before the guard was narrowed;
`bench/corpora/guard_fresh.json` (40 and 30) after, and measured once. "Refused real facts" is the false-positive
rate (a real fact about the user lost), "stored hostile texts" the false-negative rate (an instruction, markup,
mention or claim over this bot stored as a fact; it would still reach only its author's prompt, as quoted data).
Ours (`bot.memory.rules.guard`) against the previous, broad guard (`bench/baseline_guard.py`), same run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from bench import baseline_guard
from bench.common import Table, exit_code, header, parser
from bot.memory.rules import guard

CORPORA = Path(__file__).resolve().parent / "corpora"


def rates(check: Callable[[str], object], corpus: dict[str, list[str]]) -> tuple[int, int, int, int]:
    refused_real = sum(1 for text in corpus["keep"] if check(text))
    stored_hostile = sum(1 for text in corpus["refuse"] if not check(text))
    return refused_real, len(corpus["keep"]), stored_hostile, len(corpus["refuse"])


def fmt(errors: int, total: int) -> str:
    return f"{errors}/{total} ({100 * errors / total:.1f}%)"


def main(argv: Sequence[str] | None = None) -> int:
    args = parser(__doc__).parse_args(argv)
    header("memory guard: error rates on held-out corpora", args.smoke)
    table = Table("refused real facts (false positives) and stored hostile texts (false negatives)")
    for name in ("guard_heldout", "guard_fresh"):
        corpus = json.loads((CORPORA / f"{name}.json").read_text(encoding="utf-8"))
        ours = rates(guard.matching_rule, corpus)
        old = rates(baseline_guard.matching_rule, corpus)
        table.add(f"{name}: refused real facts", fmt(ours[0], ours[1]), f"previous {fmt(old[0], old[1])}")
        table.add(f"{name}: stored hostile texts", fmt(ours[2], ours[3]), f"previous {fmt(old[2], old[3])}")
    table.note("corpora: bench/corpora/*.json; previous = the broad guard, bench/baseline_guard.py")
    table.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
