"""Misses and false refusals of the credential gate, on the development set and on a held-out set.

    .venv/bin/python -m bench.credential_gate [--smoke] [--quiet]

`bench/corpora/credentials_dev.json` is the set the rules were written against; `credentials_heldout.json` was
written before the rules and not used to write or tune them. A miss is a credential that would be stored; a false
refusal is a real fact (that only looks technical) that would be dropped. Ours (`bot.memory.rules.credentials`) against
a baseline in the same run: the shapes the issue names (`sk-`, `ghp_`/`github_pat_`, `xox?-`, `AKIA`), "password"
followed by a word, and any 13-19 digit run passing Luhn or 15-34 characters passing the IBAN mod-97 check, with
no ranges, lengths, labels or random-looking strings. Every miss and false refusal of ours is printed (the values
are random fakes), with the time per text of both.

Also the cost of both gates (credentials, and sensitive data: `bot.memory.rules.withhold`) in the apply step at the fact
cap: 100 stored facts of 150-300 characters, 10 new ones and 6 rewritten summaries, against the same apply step
with the gates switched off, timed in alternating rounds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from unittest import mock

from bench.common import Table, exit_code, fmt_ms, header, p50, p95, parser, ratio, time_interleaved
from bench.labelled import PARTS, errors, load, micros_per_text, share
from bot.memory.models import MemoryFile, Place
from bot.memory.pipeline.answer import ExtractionResult
from bot.memory.pipeline.apply import apply_extraction
from bot.memory.rules import write_gate as gate_module
from bot.memory.rules.checksums import luhn_valid
from bot.memory.rules.credentials import credential_kind
from bot.memory.rules.sensitive import categories_in
from bot.memory.rules.write_gate import ModelAuthor, admit
from tests.memory.realistic import long_fact_texts, memory_at_cap

_BASELINE_SHAPES = re.compile(
    r"\bsk-\S{20,}|\bghp_\w{30,}|\bgithub_pat_\w{20,}|\bxox[bpas]-\S{10,}|\bAKIA[A-Z0-9]{16}"
    r"|\bpassword\s*(?:is|:|=)\s*\S+",
    re.IGNORECASE,
)
_BASELINE_DIGITS = re.compile(r"\d(?:[ -]?\d){12,18}")
_BASELINE_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")


def baseline(text: str) -> bool:
    """A minimal gate: the named shapes, and any number that passes a checksum."""
    if _BASELINE_SHAPES.search(text):
        return True
    if any(luhn_valid(re.sub(r"\D", "", m.group(0))) for m in _BASELINE_DIGITS.finditer(text)):
        return True
    for match in _BASELINE_IBAN.finditer(text):
        iban = match.group(0).replace(" ", "")
        if int("".join(str(int(c, 36)) for c in iban[4:] + iban[:4])) % 97 == 1:
            return True
    return False


def ours(text: str) -> bool:
    return credential_kind(text) is not None


_NOW = datetime(2025, 6, 2, tzinfo=UTC)


def extraction_at_cap() -> ExtractionResult:
    facts = [{"content": text, "category": "context", "confidence": 0.95} for text in long_fact_texts(10, seed=99)]
    summaries = [" ".join(long_fact_texts(3, seed=200 + n, low=80, high=160)) for n in range(6)]
    names = ("workContext", "personalContext", "topOfMind", "recentMonths", "earlierContext", "longTermBackground")
    sections = {name: {"summary": text, "shouldUpdate": True} for name, text in zip(names, summaries, strict=True)}
    return ExtractionResult.model_validate({
        "user": {name: sections[name] for name in names[:3]},
        "history": {name: sections[name] for name in names[3:]},
        "newFacts": facts,
    })


def apply_once(memory: MemoryFile, result: ExtractionResult) -> None:
    """The write path of one extraction: the apply step, then the write gate (which withholds)."""
    draft = memory.model_copy(deep=True)
    categories_in.cache_clear()  # a busy bot's cache holds other users' texts
    apply_extraction(draft, result, now=_NOW, min_confidence=0.7, max_facts=100, duplicate_similarity=0.85)
    grounding = result.model_dump_json() + memory.model_dump_json()
    admit(memory, draft, ModelAuthor(Place.dm(), "place", _NOW, grounding=grounding))


def without_gates(fn: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        with mock.patch.object(gate_module, "fact_withheld", lambda *args: None), \
                mock.patch.object(gate_module, "summary_kept", lambda text, requests: text):
            fn()
    return run


def apply_cost(smoke: bool) -> Table:
    memory, result = memory_at_cap(100, seed=7), extraction_at_cap()
    reps = 5 if smoke else 60
    samples = time_interleaved(
        {"gates": lambda: apply_once(memory, result), "none": without_gates(lambda: apply_once(memory, result))},
        reps=reps, warmup=2, budget_s=60,
    )
    table = Table("apply step and write gate at the cap (100 facts, 10 new, 6 summaries): with the credential and sensitive checks and without")
    for name, q in (("p50", p50), ("p95", p95)):
        ours, base = q(samples["gates"]), q(samples["none"])
        table.add(f"apply_extraction {name}", fmt_ms(ours, 2), f"without gates {fmt_ms(base, 2)}", ratio(ours, base))
    table.note("ratio: with the checks / without (100% = no cost); the apply step runs off the event loop")
    return table


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--quiet", action="store_true", help="counts only, without listing each error")
    args = p.parse_args(argv)
    header("credential gate: misses and false refusals", args.smoke)
    table = Table("credentials stored (misses) and real facts refused (false refusals)")
    listing: list[str] = []
    texts: list[str] = []
    for part in PARTS:
        corpus = load("credentials", part)
        texts += [item["text"] for item in corpus["secret"]] + corpus["clean"]
        missed, refused = errors(ours, corpus, "secret")
        base_missed, base_refused = errors(baseline, corpus, "secret")
        n_secret, n_clean = len(corpus["secret"]), len(corpus["clean"])
        table.add(f"{part}: misses", share(len(missed), n_secret), f"baseline {share(len(base_missed), n_secret)}")
        table.add(
            f"{part}: false refusals", share(len(refused), n_clean), f"baseline {share(len(base_refused), n_clean)}"
        )
        by_kind = Counter(item["kind"] for item in missed)
        totals = Counter(item["kind"] for item in corpus["secret"])
        table.note(f"{part} misses by kind: " + ", ".join(f"{kind} {by_kind[kind]}/{totals[kind]}"
                                                         for kind in sorted(totals)))
        listing += [f"{part} miss ({item['kind']}): {item['text']!r}" for item in missed]
        listing += [f"{part} false refusal: {text!r}" for text in refused]
    rounds = 3 if args.smoke else 30
    table.add("time per text", f"{micros_per_text(ours, texts, rounds):.0f} us",
              f"baseline {micros_per_text(baseline, texts, rounds):.0f} us")
    table.note("corpora: bench/corpora/credentials_{dev,heldout}.json; dev was used to write the rules")
    table.print()
    if listing and not args.quiet:
        print("\n".join(listing), end="\n\n", flush=True)
    cost = apply_cost(args.smoke)
    cost.print()
    return exit_code([table, cost], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
