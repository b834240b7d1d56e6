"""The credential gate and the sensitive backstop on labelled JSON Lines corpora, beside the base commit's rules.

    .venv/bin/python -m bench.gate_corpora [--smoke] [--corpus DIR] [--base REV] [--list]

Always measured, from `bench/corpora/gates/` (see its README): the development sets
`{credentials,sensitive}_heldout.jsonl` (written before the rules were first tuned),
`{credentials,sensitive}_fresh.jsonl`, `{credentials,sensitive}_unseen.jsonl` and
`{credentials,sensitive}_final.jsonl` (each written before a later round of tuning), whose misses have been read
since, and two held-out sets, never tuned on: `{credentials,sensitive}_sealed.jsonl` (written by someone who had read
neither the rules nor any other set, before the rules were tuned on the unseen sets' misses) and
`{credentials,sensitive}_blind.jsonl` (written the same way before the rules were tuned on the final sets' misses). With `--corpus DIR` (or `GATES_CORPUS_DIR`), also the independent corpora
`DIR/credentials.jsonl` and `DIR/sensitive.jsonl` of the same format; without it that part is skipped with one
line. The base figures come from the rules as they were at `--base` (default: the commit before the gates read
batches), every rule module of that commit loaded from `git show` and run in the same process on the same items;
without git the base column stays empty.

Credentials: a single text is a fact (stored unless the gate finds a credential in it) and a pending turn
(journaled with each credential cut out); a miss is an item whose secret survives in either. An item of 2-3
messages arrives one message at a time: each is cut on arrival reading the messages still waiting before it and
journaled as the rules keep a turn on disk, then the batch is read as a whole before extraction (`redact_batch`); a
miss is a secret left in what the extractor is shown (a separate row counts those journaled as they arrived).
`--list` prints the errors on the development sets and the independent corpus, never on the held-out sets (only
their totals are printed). Sensitive data: a miss is a sensitive item with no category found, a false flag an
ordinary one with one.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import PROJECT_ROOT, Table, exit_code, header, parser, ratio
from bench.labelled import micros_per_text, share
from bench.reader_training import load, plain, training_items
from bot.memory.rules import credential_batch, credentials, sensitive

SETS = PROJECT_ROOT / "bench" / "corpora" / "gates"
BASE = "6f8cc39"
HELD_OUT = (("held-out", "sealed"), ("held-out (blind)", "blind"))
CREDENTIAL_MISSES, CREDENTIAL_REFUSALS = 0.02, 0.03
SENSITIVE_MISSES, SENSITIVE_FLAGS = 0.10, 0.03
Item = dict[str, Any]


@dataclass(slots=True)
class Gates:
    """One version of the rules: the credential gate of a fact, of a turn, of a batch, the backstop, and the
    backstop's patterns alone (the same function before the backstop had a trained reader)."""

    refuses: Callable[[str], bool]
    redact: Callable[[str], str]
    redact_batch: Callable[[list[str]], list[str]] | None
    categories: Callable[[str], frozenset[str]]
    journal: Callable[[str], str]
    patterns: Callable[[str], frozenset[str]]


def ours() -> Gates:
    return Gates(
        lambda text: credentials.credential_kind(text) is not None, credentials.redact, credential_batch.redact_batch,
        sensitive.categories_in, credential_batch.journaled, sensitive.pattern_categories,
    )


def base_gates(rev: str) -> Gates | None:
    """The rules of `rev`: every module of its `bot/memory/rules/`, written from `git show` into a package of its
    own (imports between them pointed at it) and imported from there; None without git or `rev`."""
    try:
        names = subprocess.run(
            ["git", "ls-tree", "--name-only", f"{rev}:bot/memory/rules/"], cwd=PROJECT_ROOT, capture_output=True,
            text=True, check=True,
        ).stdout.split()
        sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=PROJECT_ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        package = f"_rules_at_{re.sub(r'[^0-9a-zA-Z]', '_', sha)}"
        folder = Path(tempfile.mkdtemp(prefix="bench-rules-")) / package
        folder.mkdir()
        for name in names:
            if name.endswith(".py"):
                source = subprocess.run(["git", "show", f"{rev}:bot/memory/rules/{name}"], cwd=PROJECT_ROOT,
                                        capture_output=True, text=True, check=True).stdout
                (folder / name).write_text(source.replace("bot.memory.rules.", f"{package}."), encoding="utf-8")
            elif name.endswith((".tsv.gz", ".txt")):  # the trained readers' weights, the seed phrases' word list
                (folder / name).write_bytes(subprocess.run(["git", "show", f"{rev}:bot/memory/rules/{name}"],
                                                           cwd=PROJECT_ROOT, capture_output=True, check=True).stdout)
    except (OSError, subprocess.CalledProcessError):
        return None
    sys.path.insert(0, str(folder.parent))
    cred = importlib.import_module(f"{package}.credentials")
    sens = importlib.import_module(f"{package}.sensitive")
    batch = importlib.import_module(f"{package}.credential_batch") if "credential_batch.py" in names else None
    return Gates(
        lambda text: cred.credential_kind(text) is not None, cred.redact, getattr(batch or cred, "redact_batch", None),
        sens.categories_in, getattr(batch, "journaled", lambda text: text),
        getattr(sens, "pattern_categories", sens.categories_in),
    )


def arrived(gates: Gates, messages: list[str]) -> tuple[list[str], list[str]]:
    """What is journaled of messages that arrive one by one (each cut on arrival, reading the ones still waiting),
    and what the extractor is shown (the whole batch read together once more)."""
    if gates.redact_batch is None:
        cut = [gates.redact(text) for text in messages]
        return cut, cut
    waiting: list[str] = []
    for text in messages:
        waiting.append(gates.redact_batch([*waiting, text])[-1])
    return [gates.journal(text) for text in waiting], gates.redact_batch(waiting)


def journaled(gates: Gates, item: Item) -> bool:
    """Whether a split item's secret was written to the journal as it arrived (before the batch was read whole)."""
    return any(item["secret"] in text for text in arrived(gates, list(item["messages"]))[0])


def credential_errors(gates: Gates, item: Item) -> bool:
    """Whether the gate gets the item wrong: a secret kept, or a real fact refused."""
    if "messages" in item:
        kept = arrived(gates, list(item["messages"]))[1]
        if item["label"] == "secret":
            return any(item["secret"] in text for text in kept)
        return kept != list(item["messages"])
    text = item["text"]
    if item["label"] == "secret":
        return not gates.refuses(text) or item["secret"] in gates.redact(text)
    return gates.refuses(text)


def sensitive_errors(gates: Gates, item: Item) -> bool:
    found = bool(gates.categories(item["text"]))
    return not found if item["label"] == "sensitive" else found


@dataclass(slots=True)
class Tally:
    wrong: list[Item] = field(default_factory=list)
    total: int = 0

    def figure(self) -> str:
        return share(len(self.wrong), self.total) if self.total else "-"

    def rate(self) -> float:
        return len(self.wrong) / self.total if self.total else 0.0


def tally(check: Callable[[Item], bool], items: list[Item]) -> Tally:
    return Tally([item for item in items if check(item)], len(items))


def credential_rows(table: Table, name: str, items: list[Item], ours_: Gates, base: Gates | None) -> list[Item]:
    secrets = [item for item in items if item["label"] == "secret"]
    keeps = [item for item in items if item["label"] == "keep"]
    split = [item for item in secrets if "messages" in item]
    wrong: list[Item] = []
    for measure, subset, goal in (("secrets kept", secrets, CREDENTIAL_MISSES),
                                  ("  of them split over messages", split, None),
                                  ("technical facts refused", keeps, CREDENTIAL_REFUSALS)):
        mine = tally(lambda item: credential_errors(ours_, item), subset)
        theirs = tally(lambda item: credential_errors(base, item), subset) if base else None
        target = f"<= {goal:.0%}" if goal is not None else ""
        passed = mine.rate() <= goal if goal is not None else None
        table.add(f"{name}: {measure}", mine.figure(), theirs.figure() if theirs else "", "", target, passed)
        if goal is not None:
            wrong += mine.wrong
    early = tally(lambda item: journaled(ours_, item), split)
    table.add(f"{name}:   split, journaled on arrival", early.figure(),
              tally(lambda item: journaled(base, item), split).figure() if base else "")
    return wrong


def sensitive_rows(table: Table, name: str, items: list[Item], ours_: Gates, base: Gates | None) -> list[Item]:
    hits = [item for item in items if item["label"] == "sensitive"]
    compound = [item for item in hits if item["group"] == "compound"]
    lookalikes = [item for item in items if item["group"] == "lookalike"]
    ordinary = [item for item in items if item["label"] == "ordinary"]
    wrong: list[Item] = []
    for measure, subset, goal in (("sensitive items missed", hits, SENSITIVE_MISSES),
                                  ("  of them compound facts", compound, None),
                                  ("look-alikes flagged", lookalikes, SENSITIVE_FLAGS),
                                  ("all ordinary items flagged", ordinary, None)):
        mine = tally(lambda item: sensitive_errors(ours_, item), subset)
        theirs = tally(lambda item: sensitive_errors(base, item), subset) if base else None
        target = f"<= {goal:.0%}" if goal is not None else ""
        passed = mine.rate() <= goal if goal is not None else None
        table.add(f"{name}: {measure}", mine.figure(), theirs.figure() if theirs else "", "", target, passed)
        if goal is not None:
            wrong += mine.wrong
    alone = [item for item in hits + lookalikes
             if bool(ours_.patterns(item["text"])) != (item["label"] == "sensitive")]
    table.note(f"{name}, today's patterns without the trained reader: "
               f"{share(sum(item['label'] == 'sensitive' for item in alone), len(hits))} missed, "
               f"{share(sum(item['label'] != 'sensitive' for item in alone), len(lookalikes))} look-alikes flagged")
    missed = Counter(item["category"] for item in wrong if item["label"] == "sensitive")
    totals = Counter(item["category"] for item in hits)
    table.note(f"{name} misses by category: " + ", ".join(f"{c} {missed[c]}/{totals[c]}" for c in sorted(totals)))
    return wrong


def time_rows(creds: Table, sens: Table, texts: list[str], ours_: Gates, base: Gates | None, *, rounds: int) -> None:
    """Time per text of each gate, ours against the base rules, in alternating passes over the same texts (the
    backstop's verdict cache cleared before each pass)."""
    def clear() -> None:
        for gates in (ours_, base):
            if gates is not None:
                getattr(gates.categories, "cache_clear", lambda: None)()
    for table, name, pick in ((creds, "credential finder", lambda g: g.refuses),
                              (sens, "sensitive backstop", lambda g: g.categories)):
        mine = theirs = 0.0
        for _ in range(rounds):
            mine += micros_per_text(pick(ours_), texts, 1, each_round=clear)
            if base is not None:
                theirs += micros_per_text(pick(base), texts, 1, each_round=clear)
        table.add(f"{name}: time per text ({len(texts)} texts)", f"{mine / rounds:.0f} us",
                  f"{theirs / rounds:.0f} us" if base else "", ratio(mine, theirs) if base else "")


def corpus_dir(given: str | None) -> Path | None:
    value = given or os.environ.get("GATES_CORPUS_DIR", "")
    return Path(value) if value else None


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--corpus", help="folder holding credentials.jsonl and sensitive.jsonl (or GATES_CORPUS_DIR)")
    p.add_argument("--base", default=BASE, help="the commit whose rules form the base column")
    p.add_argument("--list", action="store_true", help="print our errors on the development sets and the "
                   "independent corpus (never on the held-out sets)")
    args = p.parse_args(argv)
    header("credential gate and sensitive backstop on labelled corpora", args.smoke)
    mine, base = ours(), base_gates(args.base)
    parts = [("development", SETS / "credentials_heldout.jsonl", SETS / "sensitive_heldout.jsonl", args.list),
             ("development (fresh)", SETS / "credentials_fresh.jsonl", SETS / "sensitive_fresh.jsonl", args.list),
             ("development (unseen)", SETS / "credentials_unseen.jsonl", SETS / "sensitive_unseen.jsonl", args.list),
             ("development (final)", SETS / "credentials_final.jsonl", SETS / "sensitive_final.jsonl", args.list),
             *((name, SETS / f"credentials_{stem}.jsonl", SETS / f"sensitive_{stem}.jsonl", False)
               for name, stem in HELD_OUT)]
    folder = corpus_dir(args.corpus)
    if folder is not None and (folder / "credentials.jsonl").is_file() and (folder / "sensitive.jsonl").is_file():
        parts.append(("independent", folder / "credentials.jsonl", folder / "sensitive.jsonl", args.list))
    else:
        print(f"independent corpora skipped: {'no --corpus given' if folder is None else f'none in {folder}'}\n")
    creds = Table("credential gate: secrets kept (in a stored fact or a journaled turn; split items: in what the "
                  "extractor is shown) and technical facts refused")
    sens = Table("sensitive backstop: sensitive items missed and ordinary items flagged")
    listing: list[str] = []
    for name, cred_path, sens_path, listed in parts:
        cred_items, sens_items = load(cred_path), load(sens_path)
        if args.smoke:
            cred_items, sens_items = cred_items[::5], sens_items[::5]
        wrong = credential_rows(creds, name, cred_items, mine, base)
        wrong += sensitive_rows(sens, name, sens_items, mine, base)
        if listed:
            listing += [f"{name} {item['id']} {item.get('group')}: {item.get('text', item.get('messages'))!r}"
                        for item in wrong]
    # independent writers arrive at the plainest facts word for word ("Has type 1 diabetes"): the held-out set once
    # more without the items the trained reader learnt from verbatim (counted, never printed)
    learnt = {plain(item["text"]) for item in training_items()}
    for name, stem in HELD_OUT:
        unlearnt = [item for item in load(SETS / f"sensitive_{stem}.jsonl") if plain(item["text"]) not in learnt]
        sensitive_rows(sens, f"{name}, none verbatim in the reader's sets", unlearnt[::5] if args.smoke else unlearnt,
                       mine, base)
    texts = [item["text"] for name, cred_path, sens_path, _ in parts for path in (cred_path, sens_path)
             for item in load(path) if "text" in item]
    time_rows(creds, sens, texts, mine, base, rounds=2 if args.smoke else 20)
    for table in (creds, sens):
        table.note(f"baseline: the rules at {args.base} (git show), same items, same run"
                   if base else "baseline: not available (no git checkout)")
        table.print()
    if listing:
        print("\n".join(listing), end="\n\n", flush=True)
    return exit_code([creds, sens], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
