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
    return float(factors_of(last_seen_days([fact]), now, stale_days)[0])


def stale_factors(facts: Sequence[Fact], now: datetime, stale_days: int) -> NDArray[np.float64]:
    """`stale_factor` of every fact, in order."""
    return factors_of(last_seen_days(facts), now, stale_days)


def last_seen_days(facts: Sequence[Fact]) -> NDArray[np.float64]:
    """When each fact was last said or confirmed, in days since the epoch; NaN for a fact that never ages (the
    user's own, or undated). Computed once per index: a reply then only does the arithmetic."""
    days = [None if fact.user_owned else last_seen(fact) for fact in facts]
    return np.array([np.nan if seen is None else seen / SECONDS_PER_DAY for seen in days], dtype=np.float64)


def factors_of(seen_days: NDArray[np.float64], now: datetime, stale_days: int) -> NDArray[np.float64]:
    """`stale_factor` for facts last seen on `seen_days` (NaN: never ages), at `now`."""
    if stale_days <= 0:
        return np.ones(len(seen_days))
    age = now.timestamp() / SECONDS_PER_DAY - seen_days
    over = np.clip((age - stale_days) / stale_days, 0.0, 1.0)
    result: NDArray[np.float64] = np.where(np.isnan(seen_days), 1.0, 1.0 - (1.0 - STALE_FLOOR) * over)
    return result
