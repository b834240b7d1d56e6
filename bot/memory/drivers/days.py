"""Activity days, as both activity stores count them: a user is seen on a UTC day, and retention counts that day to
its end, so rounding always keeps a user longer, never shorter."""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, timedelta

Seen = tuple[int, datetime]  # a user id and the end of the last day they were seen


def day_of(now: datetime) -> date:
    """The UTC day of a moment."""
    return now.astimezone(UTC).date()


@functools.lru_cache(maxsize=1024)
def end_of(day: date) -> datetime:
    """The end of `day` (UTC): what `last_seen` answers. Cached: a listing of a million users holds a few hundred
    distinct days, so each row costs a lookup, not a new datetime."""
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
