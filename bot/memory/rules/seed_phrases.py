"""Wallet seed phrases: twelve or more words in a row, every one of them from the BIP-39 English word list.

A recovery phrase is the wallet's private key in words, and users paste it bare ("seed phrase for my ledger: drift
blue trouble ..."), split from its name, or in another language's sentence. The list (2,048 words, from the BIP-39
specification, MIT licence; `bip39_english.txt`) leaves out the words ordinary sentences are made of ("the", "is",
"my", "to", "for", "I"), so twelve of its words in a row do not happen by chance in prose. The checksum is not
required: a phrase typed from memory or paper may be wrong and is still a secret.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.memory.rules.findings import PRIVATE_KEY, Finding
from bot.memory.rules.weights_file import Loaded

_LIST = Loaded(Path(__file__).with_name("bip39_english.txt"), lambda data: frozenset(data.decode("ascii").split()))
_SHORTEST = 12  # BIP-39 phrases have 12, 15, 18, 21 or 24 words
_TOKEN = re.compile(r"[^\s,;]+")
_AROUND = "\"'`“”‘’()[]<>.!?"  # quotes and punctuation around a word ("safe:" is a label, not a word)
_NUMBERING = re.compile(r"(?:#?\d{1,2}[.):]?|\(\d{1,2}\))")  # "1.", "2)", "(3)", "#4" between the words


def warm() -> None:
    """Read the word list now, so that the first text the gate reads does not wait for it."""
    _LIST.get()


def seed_phrases(text: str) -> list[Finding]:
    """Each run of at least twelve BIP-39 words in `text` (case, quotes, numbering and commas between them aside),
    as the span from its first word to its last."""
    words = _LIST.get()
    found: list[Finding] = []
    run: list[tuple[int, int]] = []
    for token in [*_TOKEN.finditer(text), None]:
        if token is not None and _NUMBERING.fullmatch(token.group(0)):
            continue
        core = token.group(0).strip(_AROUND) if token is not None else ""
        if token is not None and core.lower() in words:
            start = token.start() + token.group(0).index(core)
            run.append((start, start + len(core)))
            continue
        if len(run) >= _SHORTEST:
            found.append(Finding(PRIVATE_KEY, run[0][0], run[-1][1]))
        run = []
    return found
