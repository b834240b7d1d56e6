"""Misses and false refusals of the credential gate, on the development set and on a held-out set.

    .venv/bin/python -m bench.credential_gate [--smoke] [--quiet]

`bench/corpora/credentials_dev.json` is the set the rules were written against; `credentials_heldout.json` was
written before the rules and not used to write or tune them. A miss is a credential that would be stored; a false
refusal is a real fact (that only looks technical) that would be dropped. Ours (`bot.memory.credentials`) against
a baseline in the same run: the shapes the issue names (`sk-`, `ghp_`/`github_pat_`, `xox?-`, `AKIA`), "password"
followed by a word, and any 13-19 digit run passing Luhn or 15-34 characters passing the IBAN mod-97 check, with
no ranges, lengths, labels or random-looking strings. Every miss and false refusal of ours is printed (the values
are random fakes), with the time per text of both.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.common import Table, exit_code, header, parser
from bot.memory.checksums import luhn_valid
from bot.memory.credentials import credential_kind

CORPORA = Path(__file__).resolve().parent / "corpora"
PARTS = ("dev", "heldout")

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


def load(part: str) -> dict[str, list]:  # type: ignore[type-arg]
    return dict(json.loads((CORPORA / f"credentials_{part}.json").read_text(encoding="utf-8")))


def errors(check: Callable[[str], bool], corpus: dict[str, list]) -> tuple[list[dict[str, str]], list[str]]:  # type: ignore[type-arg]
    missed = [item for item in corpus["secret"] if not check(item["text"])]
    refused = [text for text in corpus["clean"] if check(text)]
    return missed, refused


def fmt(errors: int, total: int) -> str:
    return f"{errors}/{total} ({100 * errors / total:.1f}%)"


def micros_per_text(check: Callable[[str], bool], texts: list[str], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        for text in texts:
            check(text)
    return (time.perf_counter() - started) / (rounds * len(texts)) * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--quiet", action="store_true", help="counts only, without listing each error")
    args = p.parse_args(argv)
    header("credential gate: misses and false refusals", args.smoke)
    table = Table("credentials stored (misses) and real facts refused (false refusals)")
    listing: list[str] = []
    texts: list[str] = []
    for part in PARTS:
        corpus = load(part)
        texts += [item["text"] for item in corpus["secret"]] + corpus["clean"]
        missed, refused = errors(ours, corpus)
        base_missed, base_refused = errors(baseline, corpus)
        n_secret, n_clean = len(corpus["secret"]), len(corpus["clean"])
        table.add(f"{part}: misses", fmt(len(missed), n_secret), f"baseline {fmt(len(base_missed), n_secret)}")
        table.add(f"{part}: false refusals", fmt(len(refused), n_clean), f"baseline {fmt(len(base_refused), n_clean)}")
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
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
