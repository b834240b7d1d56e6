"""Applying a validated extraction to a user's memory: the only code that changes memory content.

- Summaries are overwritten where `shouldUpdate` is true and the new text is non-empty.
- `factsToRemove` (and a new fact's `replaces`) touches only open facts that exist (a hallucinated id is ignored,
  never an error), never a fact the user wrote or corrected. A fact a stored new fact replaces (named in its
  `replaces`, else the new fact about the same thing) is closed, not deleted: it stays as history (`validTo`,
  `supersededBy`). One whose replacement was not stored stays as it was ("loves X" stays when "hates X" is refused
  or below the threshold: a correction without its replacement would just lose memory). One nothing replaces is a
  retraction, deleted: the user said it was wrong, or asked to forget it, and history would keep what they took back.
- Time: a new fact records when the user said it (`observedAt`: the time of their turn it came from, not of the
  extraction), and its relative time words, in facts and in summaries, are replaced by the date they stand for,
  counted from that turn's day; the fact keeps the date as its `eventDate` (`bot.memory.pipeline.dates`). A new fact
  whose words bound it in time keeps its last day as `validUntil` (`bot.memory.pipeline.lifetimes`).
- The model's sensitive-data mark travels with a new fact (`sensitive`), for the write gate, which withholds what
  the user did not ask to keep (`bot.memory.rules.write_gate`, `bot.memory.rules.withhold`).
- New facts need the confidence threshold, must pass the poisoning guard, and are de-duplicated: an exact
  (case-, width- and space-insensitive) or near duplicate confirms the existing fact instead of adding a copy.
- Past the cap, history goes first (closed longest ago first), then the least valuable facts (lowest confidence,
  then least recently confirmed); facts the user wrote or corrected are never evicted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache

from rapidfuzz.distance import Indel

from bot.memory.models import Fact, MemoryFile, Turn, iso, new_fact_id
from bot.memory.pipeline.answer import ExtractionResult, NewFact
from bot.memory.pipeline.dates import dated, resolved
from bot.memory.pipeline.filter import normalise
from bot.memory.pipeline.lifetimes import last_day
from bot.memory.pipeline.selector import analyze
from bot.memory.rules.guard import rejection_reason

MAX_SUMMARY_CHARS = 1200
MAX_FACT_CHARS = 400
_IGNORED_TOKENS = frozenset({"user", "users", "他", "她", "用户"})


@dataclass(slots=True)
class ApplyReport:
    """Counts of what an extraction changed, for the log line (ids and counts, never contents)."""

    sections_updated: int = 0
    facts_added: int = 0
    facts_confirmed: int = 0
    facts_removed: int = 0
    facts_below_threshold: int = 0
    facts_refused: int = 0
    facts_evicted: int = 0
    facts_closed: int = 0  # replaced by a new fact: kept as history

    def changed(self) -> bool:
        return bool(
            self.sections_updated or self.facts_added or self.facts_confirmed or self.facts_removed
            or self.facts_closed
        )


# Words that flip or date a statement: "does not drink coffee" is no duplicate of "drinks coffee", although the
# stop-word list would drop "not" and leave the same tokens. Same for "used to live in Berlin".
_POLARITY = re.compile(
    r"\b(?:not|no|never|none|nothing|without|cannot|no longer|stopped|quit|used to|formerly|former|ex|anymore)\b"
    r"|n't\b|\b(?:dont|doesnt|didnt|isnt|arent|wasnt|werent|wont|cant|hasnt|havent|hadnt)\b"
    r"|[不没沒未别別]|ない|ません|なかった",
)
_TYPO_SIMILARITY = 0.85


@dataclass(frozen=True, slots=True)
class _Profile:
    """What the duplicate check needs of one text, computed once per text (stored facts are compared again and
    again, with every new fact of every extraction)."""

    folded: str
    tokens: frozenset[str]  # TF-IDF tokens, plus "¬" when the text negates or dates itself
    units: tuple[str, ...]  # one per word or CJK character, for `_conflicting`
    polar: bool


@lru_cache(maxsize=16384)
def _profile(text: str) -> _Profile:
    folded = normalise(text)
    polar = bool(_POLARITY.search(folded))
    tokens = frozenset(analyze(folded)) - _IGNORED_TOKENS
    units = tuple(unit for unit in analyze(folded, cjk_bigrams=False) if unit not in _IGNORED_TOKENS)
    return _Profile(folded, tokens | {"¬"} if polar else tokens, units, polar)


def _conflicting(a: _Profile, b: _Profile) -> bool:
    """True when two statements differ in substance, not just wording.

    That is: they differ in negation or tense markers, or each has words the other lacks ("cat" / "dog",
    "Berlin" / "Dublin", "30" / "31") that are not just a spelling variant of each other ("colour" / "color",
    "microservices" / "micro-services"). One text merely adding words to the other is not a conflict.
    """
    if a.polar != b.polar:
        return True
    in_a, in_b = set(a.units), set(b.units)
    only_a = "".join(unit for unit in a.units if unit not in in_b)
    only_b = "".join(unit for unit in b.units if unit not in in_a)
    if not only_a or not only_b:
        return False
    if any(char.isdigit() for char in only_a + only_b) or min(len(only_a), len(only_b)) < 4:
        return True
    return Indel.normalized_similarity(only_a, only_b) < _TYPO_SIMILARITY


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _similarity(a: _Profile, b: _Profile, cutoff: float = 0.0) -> float:
    """`similarity` of two profiles; any value below `cutoff` may be reported as 0 (the matcher skips work)."""
    if a.folded == b.folded:
        return 1.0
    jaccard = _jaccard(a.tokens, b.tokens)
    ratio = Indel.normalized_similarity(a.folded, b.folded)
    if max(jaccard, ratio) < cutoff:
        return 0.0  # below the cutoff whether or not the two conflict
    if _conflicting(a, b):
        return min(jaccard, ratio)
    return max(jaccard, ratio)


def similarity(a: str, b: str) -> float:
    """Near-duplicate score in [0, 1].

    1.0 for texts equal up to case, width and whitespace. Otherwise the better of token-set overlap and character
    similarity (normalised longest common subsequence, computed by rapidfuzz in C), except for texts in conflict
    (see `_conflicting`), which get the worse of the two: a one-word change ("has a cat" / "has a dog") leaves the
    characters very similar but is new information.
    """
    return _similarity(_profile(a), _profile(b))


def _adds_detail(old: str, new: str) -> bool:
    """True when `new` says everything `old` says and more ("Writes Go" -> "Writes Go at work")."""
    old_units = set(analyze(old, cjk_bigrams=False))
    new_units = set(analyze(new, cjk_bigrams=False))
    return bool(old_units) and old_units < new_units


def _fact_value(fact: Fact) -> tuple[bool, float, str]:
    """Ordering key for eviction: history first (closed longest ago first), then lower confidence, then the one
    confirmed or created longest ago. So a long history never costs a fact that holds now."""
    if fact.closed:
        return False, 0.0, fact.validTo or fact.said_at
    return True, fact.confidence, fact.lastConfirmedAt or fact.createdAt


def apply_extraction(
    memory: MemoryFile,
    result: ExtractionResult,
    *,
    now: datetime,
    min_confidence: float,
    max_facts: int,
    duplicate_similarity: float,
    source: str = "",
    turns: Sequence[Turn] = (),
) -> ApplyReport:
    """Apply `result` to `memory` in place and report what changed. `turns` are the user's own turns of the batch:
    their times date the new facts (`observedAt`, and the day relative time words count from)."""
    report = ApplyReport()
    latest = max((turn.at for turn in turns), default=now)
    report.sections_updated = _update_summaries(memory, result, now, _day(latest))
    before = list(memory.facts)
    removed = _removable(before, result)
    memory.facts = [fact for fact in before if not any(fact is gone for gone in removed)]
    intake = _Intake(
        memory,
        report,
        stamp=iso(now),
        source=source,
        min_confidence=min_confidence,
        duplicate_similarity=duplicate_similarity,
        latest=latest,
        said_words=[(turn.at, frozenset(analyze(normalise(turn.text)))) for turn in turns],
        taken={fact.id for fact in before},
    )
    for candidate in result.newFacts:
        intake.take(candidate)
    deleted = _settle_removals(removed, intake.stored, intake.dropped, report)
    fresh = memory.facts[len(before) - len(removed):]
    memory.facts = [fact for fact in before if not any(fact is gone for gone in deleted)] + fresh
    report.facts_removed = len(deleted)
    report.facts_evicted = evict_overflow(memory, max_facts)
    return report


@dataclass(frozen=True, slots=True)
class _Stored:
    """A new fact of the extraction as stored (added, or the existing fact it confirmed), and when it was said."""

    candidate: NewFact
    fact: Fact
    said: str
    added: bool = True


def _update_summaries(memory: MemoryFile, result: ExtractionResult, now: datetime, said_on: date) -> int:
    """Overwrite each section the model asked to update with its new text (capped, refused by the poisoning guard
    when it must be, its relative time words resolved against `said_on`); returns how many changed."""
    updated = 0
    for name, update in result.section_updates():
        text = update.summary.strip()[:MAX_SUMMARY_CHARS]
        if not update.shouldUpdate or not text or rejection_reason(text):
            continue
        text = resolved(text, said_on)[0][:MAX_SUMMARY_CHARS]
        section = memory.section(name)
        if section.summary != text:
            section.replace(text, now)
            updated += 1
    return updated


def _removable(facts: list[Fact], result: ExtractionResult) -> list[Fact]:
    """The facts the model removes or replaces that it may: open ones the user did not write."""
    to_remove = set(result.factsToRemove) | {fact_id for new in result.newFacts for fact_id in new.replaces}
    return [fact for fact in facts if fact.id in to_remove and not fact.user_owned and not fact.closed]


def _settle_removals(
    removed: list[Fact], stored: list[_Stored], dropped: list[tuple[NewFact, str]], report: ApplyReport
) -> list[Fact]:
    """Close each removed fact its stored replacement stands for; returns those nothing replaces (retracted, to be
    deleted). The rest stay as they were."""
    deleted = []
    for old in removed:
        outcome = _replacement(old, stored, dropped)
        if isinstance(outcome, _Stored):
            old.close(valid_to=outcome.said, superseded_by=outcome.fact.id)
            report.facts_closed += 1
        elif outcome == "retracted":
            deleted.append(old)
    return deleted


@dataclass(slots=True)
class _Intake:
    """Takes the extraction's new facts into `memory` one by one: each is dated, checked against the threshold and
    the poisoning guard, then confirms its near duplicate or is added. Keeps what was stored, and what was not
    (with its dated text), for the removals they would replace."""

    memory: MemoryFile
    report: ApplyReport
    stamp: str
    source: str
    min_confidence: float
    duplicate_similarity: float
    latest: datetime  # the batch's latest turn: when a fact was said if no turn says it
    said_words: list[tuple[datetime, frozenset[str]]]  # each of the user's turns: its time and words
    taken: set[str]  # fact ids in use
    stored: list[_Stored] = field(default_factory=list)
    dropped: list[tuple[NewFact, str]] = field(default_factory=list)

    def take(self, candidate: NewFact) -> None:
        content = candidate.content[:MAX_FACT_CHARS].strip()
        if not content:
            return
        said = _said_at(content, self.said_words, self.latest)
        until = last_day(
            content, _day(said), when=candidate.when, valid_until=candidate.validUntil, event_date=candidate.eventDate
        )
        content, event = dated(content, _day(said), when=candidate.when, model_date=candidate.eventDate)
        content = content[:MAX_FACT_CHARS]
        if not self._admissible(candidate, content):
            self.dropped.append((candidate, content))
            return
        existing = _closest(self.memory.live_facts(), content, self.duplicate_similarity)
        if existing is not None:
            self._confirm(existing, candidate, content, event, said)
        else:
            self._add(candidate, content, event, said, until)

    def _admissible(self, candidate: NewFact, content: str) -> bool:
        """Confident enough and not refused by the poisoning guard; counts the reason when not."""
        if candidate.confidence < self.min_confidence:
            self.report.facts_below_threshold += 1
            return False
        if rejection_reason(content):
            self.report.facts_refused += 1
            return False
        return True

    def _confirm(self, existing: Fact, candidate: NewFact, content: str, event: str, said: datetime) -> None:
        """A near duplicate confirms the stored fact instead of adding a copy."""
        existing.confidence = max(existing.confidence, candidate.confidence)
        existing.lastConfirmedAt = self.stamp
        if _adds_detail(existing.content, content):
            existing.content = content  # merge: keep the id, take the more detailed wording
        existing.eventDate = existing.eventDate or event
        self.stored.append(_Stored(candidate, existing, iso(said), added=False))
        self.report.facts_confirmed += 1

    def _add(self, candidate: NewFact, content: str, event: str, said: datetime, until: str = "") -> None:
        fact = Fact(
            id=_unused_id(self.taken),
            content=content,
            category=candidate.category,
            confidence=candidate.confidence,
            createdAt=self.stamp,
            source=self.source,
            lastConfirmedAt=self.stamp,
            observedAt=iso(said),
            eventDate=event,
            validUntil=until,
        )
        if candidate.sensitive is not None:
            setattr(fact, "sensitive", candidate.sensitive)  # noqa: B010 (an extra field, kept with the fact)
        self.memory.facts.append(fact)
        self.stored.append(_Stored(candidate, fact, iso(said)))
        self.report.facts_added += 1


def _replacement(old: Fact, stored: list[_Stored], dropped: list[tuple[NewFact, str]]) -> _Stored | str:
    """What the model's removal of `old` comes to: the stored fact that replaces it (it is closed as history),
    "kept" when its replacement was not stored (a correction without its replacement would just lose memory), or
    "retracted" when nothing replaces it (a mistake or a request to forget: it is deleted).

    The replacement is the new fact that names `old` in `replaces`, else the new fact added about the same thing
    (sharing the most content words with it; a fact merely confirmed replaces only what it names)."""
    named = [item for item in stored if old.id in item.candidate.replaces]
    if named:
        return named[0]
    if any(old.id in candidate.replaces for candidate, _ in dropped):
        return "kept"
    related = [item for item in stored if item.added and _same_subject(old.content, item.fact.content)]
    if related:
        words = _profile(old.content).tokens
        return max(related, key=lambda item: len(words & _profile(item.fact.content).tokens))
    if any(_same_subject(old.content, text) for _, text in dropped):
        return "kept"
    return "retracted"


def _day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def _said_at(content: str, said: Sequence[tuple[datetime, frozenset[str]]], fallback: datetime) -> datetime:
    """When the user said what `content` states: the time of their turn sharing the most words with it (the latest
    of equals), or `fallback` (the batch's latest turn) when there are no turns. `said`: each turn's time and
    words."""
    if not said:
        return fallback
    wanted = _profile(content).tokens
    return max((len(wanted & words), index, at) for index, (at, words) in enumerate(said))[2]


def evict_overflow(memory: MemoryFile, max_facts: int) -> int:
    """Drop the least valuable facts past `max_facts`, never one the user wrote or corrected; returns how many."""
    overflow = len(memory.facts) - max(max_facts, 0)
    if overflow <= 0:
        return 0
    evictable = [i for i, fact in enumerate(memory.facts) if not fact.user_owned]
    ranked = sorted(evictable, key=lambda i: _fact_value(memory.facts[i]))
    evicted = set(ranked[:overflow])  # by position, so even a file with repeated ids loses exactly `overflow`
    memory.facts = [fact for i, fact in enumerate(memory.facts) if i not in evicted]
    return len(evicted)


def _same_subject(old: str, new: str) -> bool:
    """True when a new statement is about what an old one says (they share a content word), as a contradicting
    correction is: "Loves sushi" / "Hates sushi"."""
    return bool((_profile(old).tokens & _profile(new).tokens) - {"¬"})


def _closest(facts: list[Fact], content: str, threshold: float) -> Fact | None:
    """The existing fact most similar to `content` if that similarity reaches `threshold`, else None."""
    wanted = _profile(content)
    best: Fact | None = None
    best_score = threshold
    for fact in facts:
        score = _similarity(_profile(fact.content), wanted, cutoff=best_score)
        if score >= best_score and (best is None or score > best_score):
            best, best_score = fact, score
    return best


def _unused_id(taken: set[str]) -> str:
    while (candidate := new_fact_id()) in taken:
        pass
    taken.add(candidate)
    return candidate


def near_duplicate(facts: list[Fact], content: str, threshold: float) -> Fact | None:
    """The fact of `facts` that `content` repeats (the same test new facts pass: exact or near), else None."""
    return _closest(facts, content, threshold)
