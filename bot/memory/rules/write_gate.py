"""The write gate: the one step every change to a user's memory passes through before it is saved.

It compares the memory before and after a change and makes the result obey the rules, whatever the code or the
model behind the change did. So the rules hold in the data even when a model restates, merges or repeats what it
was shown, and a new path that changes memory cannot forget one of them. Who made the change decides which rules
apply:

- **A model's extraction in place P** (`ModelAuthor`):
  - facts P may not use are untouched (not removed, not changed), and so is history (closed facts): the model may
    not reopen, rewrite or delete it, whatever place it was learned in;
  - a fact is closed (replaced by a later statement: `validTo`, `supersededBy`) only when P may use it, never when
    the user wrote or corrected it, and only while its replacement is stored and open (a replacement the other
    rules held back leaves it open); new facts are never born closed;
  - a fact of another place, or a shared one, is never rewritten or extended by a wording from P: its text stays,
    it is at most confirmed, and the new wording is stored as P's own fact (`derivedFrom` names the original, so
    forgetting the original forgets it too). DESIGN's place rule, held in the data;
  - facts the user wrote or corrected are never removed or changed by the model (at most confirmed);
  - new facts belong to P, unshared, and are never marked as the user's;
  - only P's own summaries change;
  - facts come only from the user's own words: a new or changed fact or summary may not carry an identifier-like
    token (letters and digits mixed: a code, a handle, an order number) that neither the user's turns of the batch
    nor the memory the model was shown contain, so words of other people quoted in the bot's replies are not
    learned as this user's;
  - credentials are never stored, and sensitive data (health, sex life, religion, politics, finances: the model's
    mark or the code backstop) only when the user asked in this batch to remember it (`requests`); a summary keeps
    only the sentences that hold neither (`bot.memory.rules.withhold`).
- **The user** (`UserAuthor`, the `/memory` commands): a fact they write that holds a credential is refused with one
  line (`InvalidRequest`) naming the kind of secret, never the secret; their own sensitive words are theirs to keep.
- **The system** (`SystemAuthor`: retention, retracting what deleted messages taught): no extra rule.
- **The vector keeper** (`VectorAuthor`): it may attach vectors to facts whose words it embedded, and change
  nothing else.
- **Everyone else**: a vector stays only on the fact, with the words, it was computed from (`bot.memory.rules.vectors`).

The gate changes `after` in place and reports what it held back (counts only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from bot.memory.errors import InvalidRequest
from bot.memory.models import Fact, MemoryFile, Place, iso, new_fact_id
from bot.memory.rules import vectors
from bot.memory.rules.forgotten import Fingerprints, Said, guard_fact, guard_summary, lift
from bot.memory.rules.places import Scope, may_use, reader, summary_place
from bot.memory.rules.sources import set_sources, sources_of
from bot.memory.rules.withhold import (
    NO_REQUESTS,
    Requests,
    credential_refusal,
    credentials_together,
    fact_withheld,
    summary_kept,
)


@dataclass(frozen=True, slots=True)
class ModelAuthor:
    """An extraction of a batch said in `place`. `grounding` is the text the model may take identifiers from: the
    user's own turns of the batch and the memory it was shown."""

    place: Place
    scope: Scope
    now: datetime
    grounding: str = ""
    requests: Requests = NO_REQUESTS  # what the user asked in this batch to remember (`withhold.requests_in`)
    said: tuple[tuple[str, str], ...] = ()  # the user's own messages of the batch: (when received, text)


@dataclass(frozen=True, slots=True)
class UserAuthor:
    """One of the user's own commands."""


@dataclass(frozen=True, slots=True)
class SystemAuthor:
    """The bot's own upkeep (retention, retraction)."""


@dataclass(frozen=True, slots=True)
class VectorAuthor:
    """The vector keeper, attaching the vectors of facts' words (`bot.memory.parts.vector_keeper`)."""


Author = ModelAuthor | UserAuthor | SystemAuthor | VectorAuthor


@dataclass(slots=True)
class GateReport:
    restored: int = 0  # facts or summaries put back as they were
    split: int = 0  # rewordings of another place's (or a shared) fact stored as the place's own fact
    ungrounded: int = 0  # new text holding identifiers the user never wrote
    withheld: int = 0  # credentials, and sensitive data the user did not ask to keep
    forgotten: int = 0  # facts and summary sentences that would bring back what the user took back

    def held_back(self) -> int:
        return self.restored + self.split + self.ungrounded + self.withheld + self.forgotten


def admit(
    before: MemoryFile, after: MemoryFile, author: Author, *, prints: Fingerprints | None = None
) -> GateReport:
    """Make `after` (a changed copy of `before`) obey the rules for `author`; returns what was held back.
    `prints` (the installation's fingerprints) lets the fingerprints of what was taken back hold."""
    report = GateReport()
    if isinstance(author, VectorAuthor):
        vectors.only_vectors(before, after)
        return report
    if isinstance(author, ModelAuthor):
        _place_rule(before, after, author, report)
        _summary_rule(before, after, author, report)
        _grounding_rule(before, after, author, report)
        if prints is not None:
            _forgotten_rule(before, after, author, prints, report)
        withheld = _withheld_rule(before, after, author, report)
        _closure_rule(before, after, report, withheld=withheld)
    elif isinstance(author, UserAuthor):
        _no_credentials_from_the_user(before, after)
        if prints is not None and after.forgotten:  # the user's own words, typed now: said again
            lift(after, prints, Said(tuple((_LATEST, f.content) for f in _changed_facts(before, after))))
    vectors.keep_true(before, after)
    return report


# --- facts ---------------------------------------------------------------------------------------------------


def _place_rule(before: MemoryFile, after: MemoryFile, author: ModelAuthor, report: GateReport) -> None:
    """Settle each stored fact against the model's version of it, then take the model's new facts as the place's
    own; the stored facts keep their order, the new ones follow."""
    reading = reader(author.place, author.scope)
    stamp = iso(author.now)
    changed = {fact.id: fact for fact in after.facts}
    kept: list[Fact] = []
    for old in before.facts:
        kept += _settled(old, changed.get(old.id), reading, author, stamp, report)
    previous = {fact.id: fact for fact in before.facts}
    renamed = _take_new_facts(after.facts, previous, author.place.key, kept)
    _follow_renames(kept, previous, renamed)
    after.facts = kept


def _settled(
    old: Fact, new: Fact | None, reading: Place, author: ModelAuthor, stamp: str, report: GateReport
) -> list[Fact]:
    """What a stored fact becomes given the model's version of it (`new`, None when the model removed it)."""
    usable = may_use(reading, old.place, shared=old.shared)
    if old.closed or not usable:  # history, and what the place may not use, are the model's to read at most
        return [_untouched(old, new, report)]
    if new is None:  # removed by the model: only what the place may use, never what the user wrote
        return _removed(old, report)
    if old.user_owned or old.place != author.place.key or old.shared:
        return _wording_kept(old, new, author, stamp, report)
    # The place's own fact: the model may reword it, not move, share or claim it.
    return [new.model_copy(update={"place": old.place, "shared": old.shared, "origin": old.origin})]


def _untouched(old: Fact, new: Fact | None, report: GateReport) -> Fact:
    """A fact the model may only read, kept as it was (counted as restored when the model changed it)."""
    if new is None or new.model_dump() != old.model_dump():
        report.restored += 1
    return old


def _removed(old: Fact, report: GateReport) -> list[Fact]:
    """A fact the model removed: gone, unless the user wrote it."""
    if old.user_owned:
        report.restored += 1
        return [old]
    return []


def _wording_kept(old: Fact, new: Fact, author: ModelAuthor, stamp: str, report: GateReport) -> list[Fact]:
    """A fact the user wrote, of another place, or shared: at most confirmed (and closed, unless the user wrote
    it); a new wording is refused for the user's fact, and stored as the place's own fact for the others."""
    kept = [_confirmed(old, new, report)]
    if (new.content, new.category) != (old.content, old.category):
        if old.user_owned:
            report.restored += 1
        else:
            kept.append(_own_copy(new, author, stamp, original=old))
            report.split += 1
    return kept


def _confirmed(old: Fact, new: Fact, report: GateReport) -> Fact:
    """`old` with the confidence, confirmation time, closure and sources the model's version adds to it."""
    confirmed = old.model_copy(
        update={
            "confidence": max(old.confidence, new.confidence),
            "lastConfirmedAt": max(old.lastConfirmedAt, new.lastConfirmedAt),
        }
    )
    if new.closed and old.user_owned:  # only the user closes what the user wrote
        report.restored += 1
    elif new.closed:  # a later statement replaced a fact the place may use: it becomes history
        confirmed.close(valid_to=new.validTo, superseded_by=new.supersededBy)
    set_sources(confirmed, sources_of(new))  # confirmed by the batch: its messages count too
    return confirmed


def _take_new_facts(facts: list[Fact], previous: dict[str, Fact], own: str, kept: list[Fact]) -> dict[str, str]:
    """Append the facts the model added to `kept`, as open, unshared facts of place `own` under ids not taken yet;
    returns the ids changed on the way (the model's id -> the stored one)."""
    taken = {fact.id for fact in kept}
    renamed: dict[str, str] = {}
    for fact in facts:
        if fact.id in previous:
            continue
        fresh = fact.model_copy(update={"place": own, "shared": False, "origin": "", "validTo": "", "supersededBy": ""})
        while fresh.id in taken:
            fresh.id = new_fact_id()
        if fresh.id != fact.id:
            renamed[fact.id] = fresh.id
        taken.add(fresh.id)
        kept.append(fresh)
    return renamed


def _follow_renames(kept: list[Fact], previous: dict[str, Fact], renamed: dict[str, str]) -> None:
    """A fact this change closed names its replacement by the replacement's final id."""
    for fact in kept:
        earlier = previous.get(fact.id)
        if fact.supersededBy in renamed and earlier is not None and not earlier.closed:
            fact.supersededBy = renamed[fact.supersededBy]


def _own_copy(wording: Fact, author: ModelAuthor, stamp: str, *, original: Fact) -> Fact:
    """A rewording of another place's fact, as a new fact of the batch's place (open: the wording holds now)."""
    copy = wording.model_copy(
        update={
            "id": new_fact_id(),
            "place": author.place.key,
            "shared": False,
            "origin": "",
            "createdAt": stamp,
            "lastConfirmedAt": stamp,
            "validTo": "",
            "supersededBy": "",
        }
    )
    setattr(copy, "derivedFrom", original.id)  # noqa: B010 (an extra field of the open model)
    # The new wording came from the batch's messages, not from the original's.
    fresh = [message for message in sources_of(wording) if message not in set(sources_of(original))]
    set_sources(copy, fresh or sources_of(wording))
    return copy


def derived_from(fact: Fact) -> str | None:
    """The id of the fact this one restated from another place, if any."""
    extra = fact.model_extra or {}
    value = extra.get("derivedFrom")
    return value if isinstance(value, str) else None


def _closure_rule(before: MemoryFile, after: MemoryFile, report: GateReport, *, withheld: set[str]) -> None:
    """A fact the change closed stays closed only when the fact that replaces it is stored and holds now: a
    replacement the grounding rule held back cannot stand for it, so it is reopened, and a closure without one is
    no closure (a retraction deletes instead). A replacement withheld as sensitive takes the fact it replaces with
    it, as a retraction: the new state may not be kept, and the old one no longer holds. Runs after every rule
    that may drop a new fact."""
    was_closed = {fact.id for fact in before.facts if fact.closed}
    live = {fact.id for fact in after.facts if not fact.closed}
    kept = []
    for fact in after.facts:
        if fact.closed and fact.id not in was_closed and fact.supersededBy not in live:
            if fact.supersededBy in withheld:
                continue
            fact.reopen()
            report.restored += 1
        kept.append(fact)
    after.facts = kept


# --- summaries -----------------------------------------------------------------------------------------------


def _summary_rule(before: MemoryFile, after: MemoryFile, author: ModelAuthor, report: GateReport) -> None:
    allowed = summary_place(author.place, author.scope)
    for key in dict.fromkeys([*before.summary_places(), *after.summary_places()]):
        if key == allowed:
            continue
        was, now = before.place_memory(key), after.place_memory(key)
        if was.model_dump() != now.model_dump():
            after.set_place_memory(key, was.model_copy(deep=True))
            report.restored += 1


# --- grounding -----------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\s,;:!?()\[\]{}\"'`<>«»“”]+")
_DATE_OR_TIME = re.compile(r"\d{4}-\d{2}(?:-\d{2})?(?:T[\d:+.-]+)?|\d{1,2}[:h.]\d{2}(?:[ap]m)?|\d{1,2}(?:st|nd|rd|th)")


# Dates as the engine writes them when it resolves relative time words (`bot.memory.pipeline.dates`): an ISO week,
# and the Chinese and Japanese forms, which run into the words around them.
_WRITTEN_DATE = re.compile(r"\d{4}-W\d{2}|\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{4}年")


def identifiers(text: str) -> set[str]:
    """Identifier-like tokens of `text`, lower-cased: letters and digits mixed (`secret-12-3`, `A1B2C3`,
    `order#4411x`), at least four characters; plain numbers, dates and times are not identifiers."""
    found = set()
    for raw in _TOKEN.findall(_WRITTEN_DATE.sub(" ", text)):
        token = raw.strip(".-_#@").casefold()
        if len(token) < 4 or not any(c.isdigit() for c in token) or not any(c.isalpha() for c in token):
            continue
        if _DATE_OR_TIME.fullmatch(token):
            continue
        found.add(token)
    return found


def _grounded(text: str, grounding: str) -> bool:
    return all(token in grounding for token in identifiers(text))


def _grounding_rule(before: MemoryFile, after: MemoryFile, author: ModelAuthor, report: GateReport) -> None:
    grounding = author.grounding.casefold()
    previous = {fact.id: fact.content for fact in before.facts}
    kept = []
    for fact in after.facts:
        if previous.get(fact.id) != fact.content and not _grounded(fact.content, grounding):
            report.ungrounded += 1
            continue
        kept.append(fact)
    after.facts = kept
    key = summary_place(author.place, author.scope)
    was, now = before.place_memory(key), after.place_memory(key)
    for (name, old), (_, new) in zip(was.sections(), now.sections(), strict=True):
        if new.summary != old.summary and not _grounded(new.summary, grounding):
            setattr(now.user if hasattr(now.user, name) else now.history, name, old.model_copy(deep=True))
            report.ungrounded += 1
    after.set_place_memory(key, now)


# --- taken back ----------------------------------------------------------------------------------------------

_LATEST = "9999"  # later than any fingerprint: what the user types in a command is said now


def _forgotten_rule(
    before: MemoryFile, after: MemoryFile, author: ModelAuthor, prints: Fingerprints, report: GateReport
) -> None:
    """Nothing the user took back returns unless they said it again after (`bot.memory.rules.forgotten`): a new or
    reworded fact carrying a fingerprinted word is refused (a stored one keeps its old wording), a summary loses
    the sentences that carry one; the fingerprints the user's later words cover entirely are lifted."""
    after.forgotten = [item.model_copy() for item in before.forgotten]  # the model never touches them
    if not after.forgotten:
        return
    said = Said(author.said)
    previous = {fact.id: fact for fact in before.facts}
    kept = []
    for fact in after.facts:
        old = previous.get(fact.id)
        if (old is None or old.content != fact.content) and not guard_fact(fact, after, prints, said):
            report.forgotten += 1
            if old is not None:
                kept.append(old)
            continue
        kept.append(fact)
    after.facts = kept
    key = summary_place(author.place, author.scope)
    was, now = before.place_memory(key), after.place_memory(key)
    for (_, old_section), (_, new_section) in zip(was.sections(), now.sections(), strict=True):
        if new_section.summary != old_section.summary:
            text = guard_summary(new_section.summary, after, prints, said)
            if text != new_section.summary:
                report.forgotten += 1
                new_section.summary = text
    after.set_place_memory(key, now)
    lift(after, prints, said)


# --- withheld data --------------------------------------------------------------------------------------------


def _changed_facts(before: MemoryFile, after: MemoryFile) -> list[Fact]:
    previous = {fact.id: fact.content for fact in before.facts}
    return [fact for fact in after.facts if previous.get(fact.id) != fact.content]


def sensitive_mark(fact: Fact) -> str | None:
    """The model's sensitive-data mark on a fact it wrote, if any (an extra field)."""
    value = (fact.model_extra or {}).get("sensitive")
    return value if isinstance(value, str) else None


def _withheld_rule(before: MemoryFile, after: MemoryFile, author: ModelAuthor, report: GateReport) -> set[str]:
    """Returns the ids of the new facts withheld."""
    new_facts = _changed_facts(before, after)
    changed = {fact.id for fact in new_facts}
    split = {fact.id for fact, held in zip(new_facts, credentials_together([f.content for f in new_facts]), strict=True)
             if held}  # a credential only the new facts read together hold
    previous = {fact.id: fact for fact in before.facts}
    kept = []
    withheld = set()
    for fact in after.facts:
        if fact.id in split or (
            fact.id in changed and fact_withheld(fact.content, sensitive_mark(fact), author.requests) is not None
        ):
            report.withheld += 1
            if fact.id in previous:  # a stored fact reworded with withheld words keeps its old wording
                kept.append(previous[fact.id])
            else:
                withheld.add(fact.id)
            continue
        kept.append(fact)
    after.facts = kept
    # A summary may restate sensitive facts memory already holds (they were kept with the user's leave).
    leave = author.requests.knowing(fact.content for fact in before.facts)
    key = summary_place(author.place, author.scope)
    was, now = before.place_memory(key), after.place_memory(key)
    for (name, old), (_, new) in zip(was.sections(), now.sections(), strict=True):
        if new.summary == old.summary:
            continue
        text = summary_kept(new.summary, leave)
        if text == new.summary:
            continue
        report.withheld += 1
        if text:
            new.summary = text
        else:
            setattr(now.user if hasattr(now.user, name) else now.history, name, old.model_copy(deep=True))
    after.set_place_memory(key, now)
    return withheld


def _no_credentials_from_the_user(before: MemoryFile, after: MemoryFile) -> None:
    for fact in _changed_facts(before, after):
        refusal = credential_refusal(fact.content)
        if refusal is not None:
            raise InvalidRequest(refusal)
