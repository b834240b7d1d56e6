"""Staleness: a fact neither restated nor confirmed for `MEMORY_STALE_DAYS` ranks a little lower.

A bounded factor on the selector's score, never a deletion: from 1 at `stale_days` since the fact was last said or
confirmed, down linearly to `STALE_FLOOR` at twice that age, and no lower. A fact the user wrote, corrected or
imported never ages (its owner vouches for it); a fact without any date does not either. So an old fact still wins
when the conversation is about it (a full similarity outweighs the factor), and loses only ties and near-ties to
what was confirmed recently. The factor is kept apart from how the selector fuses its scores, so either can change
alone. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from bot.memory.models import Fact

STALE_FLOOR = 0.95  # the lowest factor: chosen on half of the held-out selection set (bench/staleness_selection.py)
SECONDS_PER_DAY = 86_400.0


@lru_cache(maxsize=65_536)
def _epoch(stamp: str) -> float | None:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def last_seen(fact: Fact) -> float | None:
    """When the fact was last said or confirmed (epoch seconds), or None when it carries no date."""
    seen = [value for stamp in (fact.lastConfirmedAt, fact.observedAt, fact.createdAt) if stamp
            if (value := _epoch(stamp)) is not None]
    return max(seen) if seen else None


def stale_factor(fact: Fact, now: datetime, stale_days: int) -> float:
    """The factor on `fact`'s score at `now` (1.0: not stale, or it never ages)."""
    if stale_days <= 0 or fact.user_owned:
        return 1.0
    seen = last_seen(fact)
    if seen is None:
        return 1.0
    age = (now.timestamp() - seen) / SECONDS_PER_DAY
    if age <= stale_days:
        return 1.0
    over = min(1.0, (age - stale_days) / stale_days)
    return 1.0 - (1.0 - STALE_FLOOR) * over


def stale_factors(facts: Sequence[Fact], now: datetime, stale_days: int) -> NDArray[np.float64]:
    """`stale_factor` of every fact, in order."""
    return np.fromiter((stale_factor(fact, now, stale_days) for fact in facts), dtype=np.float64, count=len(facts))
