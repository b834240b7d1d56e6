"""Applying a validated extraction to a user's memory (DESIGN.md §2.3): the only code that changes memory content.

- Summaries are overwritten where `shouldUpdate` is true and the new text is non-empty.
- `factsToRemove` removes only ids that exist (a hallucinated id is ignored, never an error).
- New facts need the confidence threshold, must pass the poisoning guard, and are de-duplicated: an exact
  (case-, width- and space-insensitive) or near duplicate confirms the existing fact instead of adding a copy.
- Past the cap, the least valuable facts (lowest confidence, then least recently confirmed) are evicted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from difflib import SequenceMatcher

from bot.memory.filter import normalise
from bot.memory.guard import rejection_reason
from bot.memory.models import ExtractionResult, Fact, MemoryFile, Section, iso, new_fact_id
from bot.memory.selector import analyze

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

    def changed(self) -> bool:
        return bool(self.sections_updated or self.facts_added or self.facts_confirmed or self.facts_removed)


def similarity(a: str, b: str) -> float:
    """Near-duplicate score in [0, 1]: the better of token-set overlap and character sequence similarity."""
    left, right = normalise(a), normalise(b)
    if left == right:
        return 1.0
    tokens_a = set(analyze(left)) - _IGNORED_TOKENS
    tokens_b = set(analyze(right)) - _IGNORED_TOKENS
    jaccard = len(tokens_a & tokens_b) / len(tokens_a | tokens_b) if tokens_a and tokens_b else 0.0
    return max(jaccard, SequenceMatcher(None, left, right, autojunk=False).ratio())


def _fact_value(fact: Fact) -> tuple[float, str]:
    """Ordering key for eviction: lower confidence first, then the one confirmed or created longest ago."""
    return fact.confidence, fact.lastConfirmedAt or fact.createdAt


def apply_extraction(
    memory: MemoryFile,
    result: ExtractionResult,
    *,
    now: datetime,
    min_confidence: float,
    max_facts: int,
    duplicate_similarity: float,
    source: str = "",
) -> ApplyReport:
    """Apply `result` to `memory` in place and report what changed."""
    report = ApplyReport()
    stamp = iso(now)

    for name, update in result.section_updates():
        text = update.summary.strip()[:MAX_SUMMARY_CHARS]
        if not update.shouldUpdate or not text or rejection_reason(text):
            continue
        section: Section = getattr(memory.user, name, None) or getattr(memory.history, name)
        if section.summary != text:
            section.summary = text
            section.updatedAt = stamp
            report.sections_updated += 1

    to_remove = set(result.factsToRemove)
    if to_remove:
        kept = [fact for fact in memory.facts if fact.id not in to_remove]
        report.facts_removed = len(memory.facts) - len(kept)
        memory.facts = kept

    for candidate in result.newFacts:
        content = candidate.content[:MAX_FACT_CHARS].strip()
        if not content:
            continue
        if candidate.confidence < min_confidence:
            report.facts_below_threshold += 1
            continue
        if rejection_reason(content):
            report.facts_refused += 1
            continue
        twin = _closest(memory.facts, content)
        if twin is not None and twin[1] >= duplicate_similarity:
            existing = twin[0]
            existing.confidence = max(existing.confidence, candidate.confidence)
            existing.lastConfirmedAt = stamp
            report.facts_confirmed += 1
            continue
        memory.facts.append(
            Fact(
                id=_unused_id(memory),
                content=content,
                category=candidate.category,
                confidence=candidate.confidence,
                createdAt=stamp,
                source=source,
                lastConfirmedAt=stamp,
            )
        )
        report.facts_added += 1

    overflow = len(memory.facts) - max_facts
    if overflow > 0:
        evicted = {fact.id for fact in sorted(memory.facts, key=_fact_value)[:overflow]}
        memory.facts = [fact for fact in memory.facts if fact.id not in evicted]
        report.facts_evicted = overflow
    return report


def _closest(facts: list[Fact], content: str) -> tuple[Fact, float] | None:
    """The existing fact most similar to `content`, with its score."""
    scored = ((fact, similarity(fact.content, content)) for fact in facts)
    return max(scored, key=lambda pair: pair[1], default=None)


def _unused_id(memory: MemoryFile) -> str:
    taken = {fact.id for fact in memory.facts}
    while (candidate := new_fact_id()) in taken:
        pass
    return candidate
