"""Misses and false drops of the sensitive-data backstop, on the development set and on a held-out set.

    .venv/bin/python -m bench.sensitive_gate [--smoke] [--quiet]

The backstop (`bot.memory.rules.sensitive.categories_in`) catches health, sex life, religion, politics and finances in
facts the extraction model forgot to mark and in summary sentences; without a request to remember, what it catches
is not stored. `bench/corpora/sensitive_dev.json` is the set its rules were written against; `sensitive_heldout.json`
was written before the rules and not used to write or tune them. A miss is a sensitive fact it lets through (kept
unless the model marked it); a false drop is an ordinary fact it would drop, most of them near misses ("Works as a
nurse", "Follows politics podcasts", "Is a bank teller"). Baseline in the same run: a topic-word list (the words a
keyword filter would use for the five categories). Every miss and false drop of ours is printed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from bench.common import Table, exit_code, header, parser
from bench.labelled import PARTS, errors, load, micros_per_text, share
from bot.memory.rules.sensitive import categories_in

_TOPIC_WORDS = re.compile(
    r"\b(?:health|medical|diagnos\w*|disease|illness|disorder|diabet\w*|cancer|depress\w*|anxiety|adhd|autis\w*"
    r"|therap\w*|medication|pregnan\w*|surgery|hospital\w*|allerg\w*|sober|addict\w*|disab\w*|wheelchair"
    r"|sex\w*|gay|lesbian|bisexual|queer|trans\w*|polyamor\w*|religio\w*|church|mosque|synagogue|temple|pray\w*"
    r"|christian|catholic|muslim|jewish|buddhis\w*|hindu|atheist|faith|ramadan|kosher|politic\w*|vot\w*|party"
    r"|labour|conservative|liberal|democrat\w*|republican\w*|socialist|salary|income|earns?|debt|loans?|mortgage"
    r"|bankrupt\w*|savings|credit|finance\w*|financial\w*|money|rent|broke|bank)\b",
    re.IGNORECASE,
)


def baseline(text: str) -> bool:
    return bool(_TOPIC_WORDS.search(text))


def ours(text: str) -> bool:
    return bool(categories_in(text))


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--quiet", action="store_true", help="counts only, without listing each error")
    args = p.parse_args(argv)
    header("sensitive-data backstop: misses and false drops", args.smoke)
    table = Table("sensitive facts let through (misses) and ordinary facts dropped (false drops)")
    listing: list[str] = []
    texts: list[str] = []
    for part in PARTS:
        corpus = load("sensitive", part)
        texts += [item["text"] for item in corpus["sensitive"]] + corpus["clean"]
        missed, dropped = errors(ours, corpus, "sensitive")
        base_missed, base_dropped = errors(baseline, corpus, "sensitive")
        wrong = [item for item in corpus["sensitive"]
                 if categories_in(item["text"]) and item["category"] not in categories_in(item["text"])]
        n_sensitive, n_clean = len(corpus["sensitive"]), len(corpus["clean"])
        table.add(f"{part}: misses", share(len(missed), n_sensitive),
                  f"baseline {share(len(base_missed), n_sensitive)}")
        table.add(
            f"{part}: false drops", share(len(dropped), n_clean), f"baseline {share(len(base_dropped), n_clean)}"
        )
        table.add(f"{part}: caught under another category", share(len(wrong), n_sensitive))
        by_category = Counter(item["category"] for item in missed)
        totals = Counter(item["category"] for item in corpus["sensitive"])
        table.note(f"{part} misses by category: " + ", ".join(f"{name} {by_category[name]}/{totals[name]}"
                                                             for name in sorted(totals)))
        listing += [f"{part} miss ({item['category']}): {item['text']!r}" for item in missed]
        listing += [f"{part} false drop: {text!r}" for text in dropped]
    rounds = 3 if args.smoke else 30
    # every round classifies afresh (the backstop caches its verdicts)
    ours_us, base_us = (
        micros_per_text(check, texts, rounds, each_round=categories_in.cache_clear) for check in (ours, baseline)
    )
    table.add("time per text", f"{ours_us:.0f} us", f"baseline {base_us:.0f} us")
    table.note("corpora: bench/corpora/sensitive_{dev,heldout}.json; dev was used to write the rules")
    table.print()
    if listing and not args.quiet:
        print("\n".join(listing), end="\n\n", flush=True)
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
