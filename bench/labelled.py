"""The labelled corpora of the data-rights gates, `bench/corpora/<name>_{dev,heldout}.json`: each part holds texts
the gate must catch (under a key of its own) and `clean` texts it must let through. Loading a part, counting a
check's misses and false positives on it, and timing a check per text, for `credential_gate` and `sensitive_gate`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parent / "corpora"
PARTS = ("dev", "heldout")  # dev: the rules were written against it; heldout: written before them, never tuned on
Corpus = dict[str, list[Any]]
Check = Callable[[str], bool]


def load(name: str, part: str) -> Corpus:
    return dict(json.loads((CORPORA / f"{name}_{part}.json").read_text(encoding="utf-8")))


def errors(check: Check, corpus: Corpus, caught: str) -> tuple[list[dict[str, str]], list[str]]:
    """The items under `caught` that `check` lets through (misses), and the clean texts it catches."""
    missed = [item for item in corpus[caught] if not check(item["text"])]
    false_positives = [text for text in corpus["clean"] if check(text)]
    return missed, false_positives


def share(count: int, total: int) -> str:
    return f"{count}/{total} ({100 * count / total:.1f}%)"


def micros_per_text(
    check: Check, texts: list[str], rounds: int, *, each_round: Callable[[], None] = lambda: None
) -> float:
    """Mean time of one check in microseconds; `each_round` runs before every pass over the texts."""
    started = time.perf_counter()
    for _ in range(rounds):
        each_round()
        for text in texts:
            check(text)
    return (time.perf_counter() - started) / (rounds * len(texts)) * 1e6
