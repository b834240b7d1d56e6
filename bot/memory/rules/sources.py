"""Where each fact came from, so a message deleted or edited on Discord takes what it taught with it.

A fact records the ids of the user's messages it was learned from (`sourceMessageIds`, an extra field: files
written before it load without one, and such facts are never retracted by a delete, since nothing says where they
came from). A pending turn's id is its Discord message id, or `<message id>.<n>` for the text of an edit learned
again, so `message_of` maps any turn id back to its message.

- An extraction adds the ids of the batch's own user messages to every fact it adds, confirms or rewords (the
  model cannot say which message of a batch a fact came from, so the whole batch counts: a fact learned from
  several messages at once is retracted when all of them are gone). At most `MAX_SOURCES` ids are kept per fact,
  the newest: a fact confirmed more often than that is retracted once its newest sources are all deleted.
- A deleted message leaves every fact's sources; a fact left without any is retracted, unless the user wrote or
  corrected it (theirs to remove).
- An edited message is learned again: the facts that came only from it are retracted first.

Pure functions on a `MemoryFile`; the writer applies them under the user's lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.memory.models import Fact, MemoryFile, Turn

SOURCES_FIELD = "sourceMessageIds"
MAX_SOURCES = 32


def message_of(turn_id: str) -> str | None:
    """The Discord message id a turn id names (`123` and `123.4` both name message 123); None for turns that are
    no Discord message (an id made up for a turn without one)."""
    head = turn_id.partition(".")[0]
    return head if head.isdigit() else None


def user_message_ids(turns: Sequence[Turn], user_id: int) -> list[str]:
    """The message ids of the user's own turns: the words a batch's facts may come from."""
    found = [message_of(turn.turn_id) for turn in turns if turn.role == "user" and turn.author_id == user_id]
    return list(dict.fromkeys(message for message in found if message is not None))


def sources_of(fact: Fact) -> list[str]:
    value = (fact.model_extra or {}).get(SOURCES_FIELD)
    if not isinstance(value, list):
        return []
    return [str(item) for item in value if isinstance(item, str | int) and str(item).isdigit()]


def set_sources(fact: Fact, ids: Iterable[str]) -> None:
    """Record `ids` (oldest first, without repeats, the newest `MAX_SOURCES`); none removes the field."""
    kept = list(dict.fromkeys(ids))[-MAX_SOURCES:]
    extra = fact.model_extra
    if kept:
        setattr(fact, SOURCES_FIELD, kept)
    elif extra is not None:
        extra.pop(SOURCES_FIELD, None)


def cited(memory: MemoryFile) -> set[str]:
    """Every message id a fact of `memory` names as a source."""
    return {message for fact in memory.facts for message in sources_of(fact)}


Snapshot = dict[str, tuple[str, str]]


def snapshot(memory: MemoryFile) -> Snapshot:
    """What `stamp` compares against: each fact's wording and when it was last confirmed."""
    return {fact.id: (fact.content, fact.lastConfirmedAt) for fact in memory.facts}


def stamp(before: Snapshot, memory: MemoryFile, message_ids: Sequence[str]) -> int:
    """Add `message_ids` to the sources of every fact added, reworded or confirmed since `before`; returns how
    many facts were stamped."""
    if not message_ids:
        return 0
    stamped = 0
    for fact in memory.facts:
        if before.get(fact.id) != (fact.content, fact.lastConfirmedAt):
            set_sources(fact, [*sources_of(fact), *message_ids])
            stamped += 1
    return stamped


@dataclass(frozen=True, slots=True)
class Retraction:
    facts: list[str]  # ids of the facts removed
    unsourced: int  # facts that lost a source and kept others (or are the user's own)


def retract(memory: MemoryFile, deleted: set[str]) -> Retraction:
    """The messages in `deleted` are gone: they leave every fact's sources, and a fact left without a source is
    removed unless the user wrote or corrected it; what a removed fact had closed holds again."""
    removed: list[str] = []
    touched = 0
    kept: list[Fact] = []
    for fact in memory.facts:
        sources = sources_of(fact)
        remaining = [message for message in sources if message not in deleted]
        if len(remaining) == len(sources):
            kept.append(fact)
            continue
        if not remaining and not fact.user_owned:
            removed.append(fact.id)
            continue
        set_sources(fact, remaining)
        touched += 1
        kept.append(fact)
    memory.facts = kept
    memory.reopen_replaced(removed=set(removed))  # a statement taken back no longer closes what it replaced
    return Retraction(removed, touched)


def retract_only_from(memory: MemoryFile, message: str) -> Retraction:
    """`message` was edited and is learned again: the facts that came from it alone go (not the user's own);
    facts it shares with other messages keep it as a source, and its turns may be applied again."""
    removed = [
        fact.id for fact in memory.facts if sources_of(fact) == [message] and not fact.user_owned
    ]
    memory.facts = [fact for fact in memory.facts if fact.id not in removed]
    memory.reopen_replaced(removed=set(removed))
    memory.appliedTurnIds = [turn_id for turn_id in memory.appliedTurnIds if message_of(turn_id) != message]
    return Retraction(removed, 0)
