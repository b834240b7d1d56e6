"""Taking back, in the data: what a forgotten or corrected fact takes with it, and what keeps it from coming back.

Pure functions over memory documents, used by the forgets, the corrections and the write gate:
- `words_of(text)`: a text's distinctive words (case folded, accents off Latin letters, lightly stemmed, the
  common words of English and five more languages left out; a token of letters and digits joined by hyphens stays
  whole; Chinese, Japanese and Korean cut into words by `bot.memory.rules.cjk_words`): what a fact taken back is.
- `carried(text)`: what a text carries of such words, so the scrub, its check and the fingerprints agree on what
  "carries the fact" means: each of its words with the words of its family (a place and its adjective, "Galicia"
  and "Galician", "Japan" and "Japanese"; a trade and its noun, "astronomy" and "astronomer"; "blown" and "blow"),
  two neighbouring words joined into the compound they may stand for ("blows glass" for "glassblower", "fights
  fires" for "firefighter"), and a compound split into two words that are both taken back.
- `scrub(memory, words)`: every summary of every place, its current value and each earlier one kept, loses each
  sentence that carries one of the words; then code checks that no value still carries one (one that does is
  emptied: the safe side), so what was taken back reaches no later prompt through a summary.
- `Fingerprints`: a forgotten fact's words as keyed hashes (HMAC-SHA256 with the installation's key, cut to 64
  bits) plus the moment it was forgotten: no text, stored in the user's memory document so it lives exactly as long
  as that memory (forgetting everything and retention take it along; encryption seals it with the rest).
- `guard_fact`, `guard_summary`: the write gate's check. A new or changed fact, or a new summary sentence, that
  carries two of a fingerprint's words (half of a shorter one, or one code, rare word or name, or one beside a word
  the correction kept) is refused unless the user said those words, or more than half of the fact, in a message
  received after the forget: so the bot restating it, a replayed history or a paraphrasing model cannot bring it
  back, while the user saying it again can (a fingerprint whose every word the user said again is lifted).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache

from bot.memory.models import Fact, ForgottenPrint, MemoryFile, PreviousSummary, Section
from bot.memory.rules.cjk_words import cjk_words, has_cjk, is_japanese
from bot.memory.rules.common_words import WORDS as FREQUENT_WORDS
from bot.memory.rules.function_words import OTHER_LANGUAGES
from bot.memory.rules.place_words import PLACE_FAMILY

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
_COMMON = frozenset(_COMMON_WORDS.split()) | OTHER_LANGUAGES
_MIN_RARE = 4  # shorter words are abbreviations and particles more often than the heart of a fact
_LONG = 9  # letters: as rare as a word outside the English list, in the other languages
# A derived word's ending and its base word's ending: "Galician"/"Galicia", "Sicilian"/"Sicily", "Brazilian"/
# "Brazil", "Chilean"/"Chile", "Japanese"/"Japan", "Chinese"/"China", "cardiologist"/"cardiology", "guitarist"/
# "guitar", "pianist"/"piano", "astronomer"/"astronomy", "pottery"/"potter", "renovation"/"renovate", "blown"/"blow".
_FAMILY = (
    ("an", "a"), ("ian", "y"), ("ian", ""), ("ean", "e"), ("ese", ""), ("ese", "a"), ("ist", "y"), ("ist", ""),
    ("ist", "o"), ("er", "y"), ("y", ""), ("ery", ""), ("ion", ""), ("ion", "e"), ("wn", "w"), ("ic", ""),
    ("eer", ""), ("try", "t"),  # "puppeteer"/"puppet", "puppetry"/"puppet"
)
# Latin letters that are no letter plus an accent, as a keyboard without them writes them ("Tromsø", "Tromso").
_PLAIN_LETTERS = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "ł": "l", "đ": "d", "ð": "d", "þ": "th",
                                "ı": "i"})
_MIN_ROOT = 4  # a family's base word is at least this long ("art" is no root of "artist")
_MIN_COMPOUND = 7  # a compound split into two words is at least this long ("glassblow")
_MIN_PART = 3
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


def _fold(text: str) -> str:
    """Case folded, accents off Latin letters ("Québec" -> "quebec"); other scripts as they are."""
    text = text.casefold().replace("’", "'")
    if text.isascii():
        return text
    text = text.translate(_PLAIN_LETTERS)
    kept: list[str] = []
    for char in unicodedata.normalize("NFD", text):
        if unicodedata.combining(char) and kept and kept[-1].isascii():
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def _tokens(text: str, *, parts: bool) -> list[str]:
    """Every word of `text` in order, folded, without a possessive "'s"; with `parts`, a hyphenated word of letters
    is followed by its parts ("dog-walking", "dog", "walking")."""
    found = []
    folded = _fold(text)
    japanese = is_japanese(folded)
    for raw in _WORD.findall(folded):
        word = raw.removesuffix("'s")
        if has_cjk(word):  # no spaces between words: `cjk_words` finds them
            found += cjk_words(word, japanese=japanese)
            continue
        found.append(word)
        if parts and "-" in word and not any(ch.isdigit() for ch in word):
            found += [part for part in word.split("-") if len(part) >= _MIN_PART]
    return found


def _distinctive(text: str, *, parts: bool = False) -> list[tuple[str, str]]:
    """Each distinctive word of `text` in order, as written (folded) and stemmed (with `parts`, a hyphenated
    word's parts too)."""
    found = []
    for word in _tokens(text, parts=parts):
        if word in _COMMON or len(word) < (2 if has_cjk(word) else 3) or word.isdigit():  # a number says little
            continue
        stem = _stem(word)
        if stem not in _COMMON:
            found.append((word, stem))
    return found


def words_of(text: str) -> set[str]:
    """The distinctive words of `text`, normalised (see the module)."""
    return {stem for _, stem in _distinctive(text)}


@lru_cache(maxsize=16384)
def _roots(word: str, stem: str) -> frozenset[str]:
    """The word (and without a plural's "s"), its stem, and the base words it may be derived from (`_FAMILY`)."""
    roots = {word, word.removesuffix("s") if len(word) > _MIN_ROOT else word, stem}
    if "-" in stem or any(ch.isdigit() for ch in stem):
        return frozenset(roots)
    for place in PLACE_FAMILY.get(word, ()):
        roots |= {place, _stem(place)}
    if word.endswith("ves") and len(word) > _MIN_ROOT:  # "lives" and "life", "wolves" and "wolf"
        roots |= {word[:-3] + "fe", word[:-3] + "f"}
    for base, (derived, ending) in itertools.product(tuple(roots), _FAMILY):
        if base.endswith(derived) and len(base) - len(derived) + len(ending) >= _MIN_ROOT:
            root = base[: len(base) - len(derived)] + ending
            roots |= {root, _stem(root)}
    return frozenset(roots | {root[:-1] for root in roots if len(root) > _MIN_ROOT and root[-1] == root[-2]})


@lru_cache(maxsize=16384)
def _family(word: str, stem: str) -> frozenset[str]:
    """`_roots`, and the words derived from the word by `_FAMILY` ("Galicia" -> "Galician")."""
    family = set(_roots(word, stem))
    if "-" in stem or any(ch.isdigit() for ch in stem):
        return frozenset(family)
    for base, (derived, ending) in itertools.product((word, stem), _FAMILY):
        if base.endswith(ending) and len(base) >= _MIN_ROOT:
            grown = base[: len(base) - len(ending)] + derived
            family |= {grown, _stem(grown)}
    return frozenset(family)


@dataclass(frozen=True, slots=True)
class Carried:
    """What a text carries of words taken back (see the module), and how to match it: any word of a family stands
    for the word; a compound's two halves count only together."""

    singles: frozenset[str] = frozenset()
    halves: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()

    def hits(self, words: set[str]) -> set[str]:
        """The words of `words` this text carries."""
        found = set(self.singles & words)
        for left, right in self.halves:
            if left & words and right & words:
                found |= (left | right) & words
        return found

    def mapped(self, to: Callable[[str], str]) -> Carried:
        """The same, every word passed through `to` (its keyed hash)."""
        return Carried(
            frozenset(map(to, self.singles)),
            tuple((frozenset(map(to, left)), frozenset(map(to, right))) for left, right in self.halves),
        )

    def __or__(self, other: Carried) -> Carried:
        return Carried(self.singles | other.singles, self.halves + other.halves)


def carried(text: str) -> Carried:
    """What `text` carries of words taken back (see the module)."""
    words = _distinctive(text, parts=True)
    singles: set[str] = set()
    for word, stem in words:
        singles |= _family(word, stem)
    # neighbours joined, common words included: "makes shoes" is "shoemaker", "keeps bees" is "beekeeper"
    joinable = [(word, _stem(word)) for word in _tokens(text, parts=True)
                if word.isalpha() and len(word) >= _MIN_PART and not has_cjk(word)]
    for (first, first_stem), (second, second_stem) in itertools.pairwise(joinable):
        for left, right in itertools.product(_roots(first, first_stem), _roots(second, second_stem)):
            singles |= {left + right, right + left, _stem(left + right), _stem(right + left)}
    halves = []
    for word, stem in words:
        for whole in {word, stem}:
            if len(whole) < _MIN_COMPOUND or not whole.isalpha():
                continue
            for cut in range(_MIN_PART, len(whole) - _MIN_PART + 1):
                left, right = whole[:cut], whole[cut:]
                halves.append((frozenset({left, _stem(left)}), frozenset({right, _stem(right)})))
    return Carried(frozenset(singles), tuple(halves))


def is_code(word: str) -> bool:
    """Letters and digits mixed (`tok-a-12-q`, `sunflower42`): distinctive enough alone."""
    return any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


def _frequent_stems() -> frozenset[str]:
    return frozenset(FREQUENT_WORDS | {_stem(word) for word in FREQUENT_WORDS})


_FREQUENT = _frequent_stems()


def is_rare(word: str) -> bool:
    """A normalised word of letters outside the most frequent English words and their stems (`saxophon`, `beekeep`,
    `lifeguard`): distinctive enough alone, as a name is. Words in other scripts are never rare here (no list says
    how common they are)."""
    return word.isascii() and word.isalpha() and len(word) >= _MIN_RARE and word not in _FREQUENT


def _long(word: str) -> bool:
    """Outside English no list says how common a word is; a long one is rare in any language ("calligraphie")."""
    return word.isalpha() and len(word) >= _LONG


def in_english(texts: Iterable[str]) -> bool:
    """At least half the words of `texts` are frequent English words: the only language whose rare words
    `is_rare` can tell ("Hace paella todos los domingos" is not, and its every word would look rare)."""
    words = [word for text in texts for word in _tokens(text, parts=False) if word.isalpha()]
    return bool(words) and 2 * sum(word in FREQUENT_WORDS for word in words) >= len(words)


_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][\w'’-]+", re.UNICODE)


def names_of(texts: Iterable[str]) -> set[str]:
    """The distinctive words written capitalised inside a sentence (`Dublin`, `Globex`, `Maisie`): names."""
    return {word for text in texts for match in _NAME.finditer(text.strip()) for word in words_of(match.group(0))}


def sentences(text: str) -> list[str]:
    return [match.group(0).strip() for match in _SENTENCE.finditer(text) if match.group(0).strip()]


def without_words(text: str, words: set[str]) -> str:
    """`text` without the sentences that carry one of `words`."""
    return " ".join(sentence for sentence in sentences(text) if not carried(sentence).hits(words))


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
                if carried(kept).hits(words):  # the check: nothing that carries the words survives
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

    def carried(self, text: str) -> Carried:
        """What `text` carries (`carried`), as keyed hashes."""
        return carried(text).mapped(self.of)

    def leave(
        self, memory: MemoryFile, words: set[str], now: datetime, *, texts: Iterable[str] = (),
        kept: Iterable[str] = (),
    ) -> None:
        """Record that `words` were taken back now (nothing for no words); those that are codes, rare words or
        names in `texts` (the words taken back, as written) are marked strong. `kept`: the words a correction keeps
        of the fact it rewrites (its context: "Somerset" when "Beekeeper in Somerset" becomes "Keeps chickens in
        Somerset")."""
        if words:
            texts = list(texts)
            english = in_english(texts or words)
            rare = {word for word in words if (is_rare(word) if english else _long(word))}
            strong = {word for word in words if is_code(word)} | rare | (names_of(texts) & words)
            memory.forgotten.append(
                ForgottenPrint(
                    words=sorted({self.of(word) for word in words}),
                    strong=sorted({self.of(word) for word in strong}),
                    context=sorted({self.of(word) for word in set(kept) - words}),
                    at=stamp(now),
                )
            )


@dataclass(slots=True)
class Said:
    """What the user said in messages of the batch, by when: `(iso time, text)` pairs."""

    messages: Sequence[tuple[str, str]] = ()
    _cache: dict[str, Carried] = field(default_factory=dict)

    def carried_after(self, prints: Fingerprints, at: str) -> Carried:
        """What the user's messages received after `at` carry, hashed."""
        if at not in self._cache:
            self._cache[at] = Carried()
            for when, text in self.messages:
                if when > at:
                    self._cache[at] |= prints.carried(text)
        return self._cache[at]

    def again(self, prints: Fingerprints, print_: ForgottenPrint) -> set[str]:
        """The fingerprint's words the user said again after it was taken (in any form of their family)."""
        return self.carried_after(prints, print_.at).hits(set(print_.words))


def _enough(overlap: set[str], text: Carried, print_: ForgottenPrint, *, part_said: bool = False) -> bool:
    """Whether these fingerprinted words of a text call it the fact taken back (see `matches`). `part_said`: the
    user said the print's other words again, so what is left must be enough on its own (two words or a strong one;
    one weak word of a short fact is the model's wording)."""
    if not overlap:
        return False
    needed = MATCH_WORDS if part_said else min(MATCH_WORDS, math.ceil(len(print_.words) / 2))
    if set(print_.strong) & overlap or len(overlap) >= needed:
        return True
    return bool(text.hits(set(print_.context)))


def matches(text: Carried, print_: ForgottenPrint) -> set[str]:
    """The fingerprinted words `text` (hashed) carries when they are enough to call it the same fact: two of them,
    or half of a shorter fingerprint (one of two), or one strong word alone (a code: letters and digits mixed; a
    rare word; a name: written capitalised inside a sentence), or one beside a word a correction kept of the fact
    ("Keeps bees in Somerset" after "Beekeeper in Somerset" became "Keeps chickens in Somerset"); else none. One
    common word shared with a longer fact (a hobby, a tool) is another fact."""
    overlap = text.hits(set(print_.words))
    return overlap if _enough(overlap, text, print_) else set()


def _blocking(text: Carried, memory: MemoryFile, prints: Fingerprints, said: Said) -> bool:
    """A fingerprint matches `text` by words the user has not said again since. The user telling the fact again
    (more than half of its words, in messages after the forget) lets it back with the details a model adds; short of
    that, only the words they said pass: the fact coming back by other means does not."""
    for print_ in memory.forgotten:
        overlap = matches(text, print_)
        if not overlap:
            continue
        again = said.again(prints, print_)
        if 2 * len(again) <= len(print_.words) and _enough(overlap - again, text, print_, part_said=bool(again)):
            return True
    return False


def lift(memory: MemoryFile, prints: Fingerprints, said: Said) -> int:
    """Drop the fingerprints whose every word the user said again after the forget; returns how many."""
    before = len(memory.forgotten)
    memory.forgotten = [p for p in memory.forgotten if not set(p.words) <= said.again(prints, p)]
    return before - len(memory.forgotten)


def guard_fact(fact: Fact, memory: MemoryFile, prints: Fingerprints, said: Said) -> bool:
    """True when `fact` may be stored against `memory`'s fingerprints."""
    return not memory.forgotten or not _blocking(prints.carried(fact.content), memory, prints, said)


def guard_summary(text: str, memory: MemoryFile, prints: Fingerprints, said: Said) -> str:
    """`text` without the sentences a fingerprint refuses."""
    if not memory.forgotten:
        return text
    return " ".join(s for s in sentences(text) if not _blocking(prints.carried(s), memory, prints, said))


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
