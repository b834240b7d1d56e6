"""Taking back, in the data: what a forgotten or corrected fact takes with it, and what keeps it from coming back.

Pure functions over memory documents, used by the forgets, the corrections and the write gate:
- `words_of(text)`: a text's distinctive words (case folded, lightly stemmed, common words left out; a token of
  letters and digits joined by hyphens stays whole). Every comparison below is made on these words, so the scrub,
  its check and the fingerprints agree on what "carries the fact" means.
- `scrub(memory, words)`: every summary of every place, its current value and each earlier one kept, loses each
  sentence that carries one of the words; then code checks that no value still carries one (one that does is
  emptied: the safe side), so what was taken back reaches no later prompt through a summary.
- `Fingerprints`: a forgotten fact's words as keyed hashes (HMAC-SHA256 with the installation's key, cut to 64
  bits) plus the moment it was forgotten: no text, stored in the user's memory document so it lives exactly as long
  as that memory (forgetting everything and retention take it along; encryption seals it with the rest).
- `guard_fact`, `guard_summary`: the write gate's check. A new or changed fact, or a new summary sentence, that
  carries two of a fingerprint's words (half of a shorter one, or one code or name) is refused unless the user said each
  of those words in a message received after the forget: so the bot restating it, a replayed history or a
  paraphrasing model cannot bring it back, while the user saying it again can (a fingerprint whose every word the
  user said again is lifted).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.memory.models import Fact, ForgottenPrint, MemoryFile, PreviousSummary, Section

# A word: letters and digits, hyphens or apostrophes inside (`wi-fi`, `tok-a-12-q`, `o'brien`).
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|$)")
_SUFFIXES = ("ings", "ing", "ers", "er", "ed", "s")
_COMMON_WORDS = (
    """a an the and or but nor so yet of in on at to for from by with without into onto about over under after
    before since until while during as than then there here this that these those it its it's they them their
    theirs he him his she her hers we us our you your yours i me my mine who whom whose which what when where why
    how is are was were be been being am do does did done has have had having can could will would shall should
    may might must not no yes very really just also too still now currently recently lately again always often
    usually sometimes never ever some any every each all most more much many few lot lots one ones thing things
    user users person people someone somebody named called name like likes liked love loves loved enjoy enjoys
    enjoyed prefer prefers preferred want wants wanted get gets got go goes going went make makes made use uses
    used work works worked working live lives lived living has own new old good great nice big small day days week
    weeks month months year years time times today tomorrow yesterday mentioned says said told tells thinks think
    feels feel know knows near nearby by beside next around across through via off out up down back away per
    among between within i'm i've i'd i'll you're they're"""
)
_COMMON = frozenset(_COMMON_WORDS.split())
MATCH_WORDS = 2
COMMON_IN_OTHERS = 3
PRINT_HEX = 16  # 64 bits of HMAC: a collision between two words of one user is not a practical worry


def _stem(word: str) -> str:
    """A light stem, the same for a word's usual forms (`drive`, `drives`, `driving`; `welder`, `welding`; `fly`,
    `flies`; `referee`, `referees`)."""
    if any(ch.isdigit() for ch in word) or "-" in word:
        return word
    if word.endswith(("ies", "ied")) and len(word) >= 5:
        word = word[:-3] + "y"
    elif word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")) and len(word) >= 6:
        word = word[:-2]
    else:
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("eed"):
                word = word[: -len(suffix)]
                break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def words_of(text: str) -> set[str]:
    """The distinctive words of `text`, normalised (see the module)."""
    found = set()
    for raw in _WORD.findall(text.casefold().replace("’", "'")):
        word = raw.removesuffix("'s")
        if word in _COMMON or len(word) < 3 or word.isdigit():  # plain numbers (a year the engine adds) say little
            continue
        stem = _stem(word)
        if stem not in _COMMON:
            found.add(stem)
    return found


def is_code(word: str) -> bool:
    """Letters and digits mixed (`tok-a-12-q`, `sunflower42`): distinctive enough alone."""
    return any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][\w'’-]+", re.UNICODE)


def names_of(texts: Iterable[str]) -> set[str]:
    """The distinctive words written capitalised inside a sentence (`Dublin`, `Globex`, `Maisie`): names."""
    return {word for text in texts for match in _NAME.finditer(text.strip()) for word in words_of(match.group(0))}


def sentences(text: str) -> list[str]:
    return [match.group(0).strip() for match in _SENTENCE.finditer(text) if match.group(0).strip()]


def without_words(text: str, words: set[str]) -> str:
    """`text` without the sentences that carry one of `words`."""
    return " ".join(sentence for sentence in sentences(text) if not words_of(sentence) & words)


def scrub(memory: MemoryFile, words: set[str]) -> int:
    """Take `words` out of every summary value of every place (see the module); returns how many values changed."""
    if not words:
        return 0
    changed = 0
    for place in memory.summary_places():
        summaries = memory.place_memory(place)
        for _, section in summaries.sections():
            values: list[Section | PreviousSummary] = [section, *section.previous]
            for value in values:
                kept = without_words(value.summary, words)
                if words_of(kept) & words:  # the check: nothing that carries the words survives
                    kept = ""
                if kept != value.summary:
                    value.summary = kept
                    changed += 1
        memory.set_place_memory(place, summaries)
    return changed


def stamp(moment: datetime) -> str:
    """When a fingerprint was taken, to the microsecond (a message a moment later is "after")."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class Fingerprints:
    """The keyed hashes of words, for one installation's key."""

    key: bytes

    def of(self, word: str) -> str:
        return hmac.new(self.key, word.encode(), hashlib.sha256).hexdigest()[:PRINT_HEX]

    def hashes(self, text: str) -> set[str]:
        return {self.of(word) for word in words_of(text)}

    def leave(self, memory: MemoryFile, words: set[str], now: datetime, *, texts: Iterable[str] = ()) -> None:
        """Record that `words` were taken back now (nothing for no words); those that are codes, or names in
        `texts` (the words taken back, as written), are marked strong."""
        if words:
            strong = {word for word in words if is_code(word)} | (names_of(texts) & words)
            memory.forgotten.append(
                ForgottenPrint(
                    words=sorted({self.of(word) for word in words}),
                    strong=sorted({self.of(word) for word in strong}),
                    at=stamp(now),
                )
            )


@dataclass(slots=True)
class Said:
    """What the user said in messages of the batch, by when: `(iso time, text)` pairs."""

    messages: Sequence[tuple[str, str]] = ()
    _cache: dict[str, set[str]] = field(default_factory=dict)

    def hashes_after(self, prints: Fingerprints, at: str) -> set[str]:
        """The hashed words the user said in messages received after `at`."""
        if at not in self._cache:
            self._cache[at] = {h for when, text in self.messages if when > at for h in prints.hashes(text)}
        return self._cache[at]


def matches(text_hashes: set[str], print_: ForgottenPrint) -> set[str]:
    """The fingerprinted words `text_hashes` carries when they are enough to call it the same fact: two of them,
    or half of a shorter fingerprint (one of two), or one strong word alone (a code: letters and digits mixed; a
    name: written capitalised inside a sentence); else none. One common word shared with a longer fact (a hobby,
    a tool) is another fact."""
    overlap = text_hashes & set(print_.words)
    strong = set(print_.strong) & overlap
    return overlap if strong or len(overlap) >= min(MATCH_WORDS, math.ceil(len(print_.words) / 2)) else set()


def _blocking(text_hashes: set[str], memory: MemoryFile, prints: Fingerprints, said: Said) -> bool:
    for print_ in memory.forgotten:
        overlap = matches(text_hashes, print_)
        if overlap and not overlap <= said.hashes_after(prints, print_.at):
            return True
    return False


def lift(memory: MemoryFile, prints: Fingerprints, said: Said) -> int:
    """Drop the fingerprints whose every word the user said again after the forget; returns how many."""
    before = len(memory.forgotten)
    memory.forgotten = [p for p in memory.forgotten if not set(p.words) <= said.hashes_after(prints, p.at)]
    return before - len(memory.forgotten)


def guard_fact(fact: Fact, memory: MemoryFile, prints: Fingerprints, said: Said) -> bool:
    """True when `fact` may be stored against `memory`'s fingerprints."""
    return not memory.forgotten or not _blocking(prints.hashes(fact.content), memory, prints, said)


def guard_summary(text: str, memory: MemoryFile, prints: Fingerprints, said: Said) -> str:
    """`text` without the sentences a fingerprint refuses."""
    if not memory.forgotten:
        return text
    return " ".join(s for s in sentences(text) if not _blocking(prints.hashes(s), memory, prints, said))


def restates(original: str, text: str) -> bool:
    """`text` carries every distinctive word of `original` (a restatement of it, perhaps with more detail)."""
    words = words_of(original)
    return bool(words) and words <= words_of(text)


def taken_back(old: Iterable[str], new: str = "", *, others: Iterable[str] = ()) -> set[str]:
    """The words a forget (`old` texts) or a correction (`old` rewritten as `new`) takes back: the old words the
    new text does not keep, less those that three or more of the user's other facts (`others`) carry too, which
    are this user's way of speaking (or the model's), not this fact. A code is this fact's whatever else says it."""
    words = set().union(*(words_of(text) for text in old)) - words_of(new)
    seen: Counter[str] = Counter()
    for text in others:
        seen.update(words_of(text) & words)
    return {word for word in words if seen[word] < COMMON_IN_OTHERS or is_code(word)}
