"""Time-boxed facts end on their own: past its `validUntil` a fact is history, as if a later statement closed it.

`lapse` closes them in a memory about to be saved (the writer runs it on every save, so the place a lapsed fact held
in the fact cap goes first when the cap is reached: history is evicted before anything that holds now); `current`
is the read side, for what is read between two saves (a reply's facts, the extractor's view, `/memory show`), so a
fact past its day is never used as current even before anything is written. Days are UTC days, as the date resolver
counts them. Pure: data in, data out.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from bot.memory.models import Fact, MemoryFile, iso


def today(now: datetime) -> str:
    """The UTC day of `now`, as `validUntil` is written."""
    return now.astimezone(UTC).date().isoformat()


def lapsed(fact: Fact, day: str) -> bool:
    """Open, and its last day is before `day` (`YYYY-MM-DD`): history from now on."""
    return not fact.closed and bool(fact.validUntil) and fact.validUntil < day


def ended_at(fact: Fact) -> str:
    """When a lapsed fact stopped holding: the start of the day after its last day."""
    last = date.fromisoformat(fact.validUntil[:10])
    return iso(datetime.combine(last + timedelta(days=1), time(), tzinfo=UTC))


def lapse(memory: MemoryFile, now: datetime) -> int:
    """Close every open fact whose last day is over (`validTo` the day after it, no replacement); returns how many."""
    day = today(now)
    closed = 0
    for fact in memory.facts:
        if lapsed(fact, day):
            try:
                fact.close(valid_to=ended_at(fact), superseded_by="")
            except ValueError:  # a hand-edited date that is no date: the fact holds until something replaces it
                fact.validUntil = ""
                continue
            closed += 1
    return closed


def current(facts: Iterable[Fact], now: datetime) -> list[Fact]:
    """The facts whose lifetime has not ended at `now` (open or closed ones alike: callers filter the closed)."""
    day = today(now)
    return [fact for fact in facts if not lapsed(fact, day)]
