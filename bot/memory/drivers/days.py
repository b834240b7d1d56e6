"""The day each user was last seen, in RAM: what both activity stores answer from (retention counts from it)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta


class DayBook:
    """The day each user was last seen, in RAM: what both activity stores answer from. `note` runs for every
    message, so it only touches a dict; `_noted` tells the store what to write at its next save."""

    def __init__(self) -> None:
        self._days: dict[int, date] = {}

    def note(self, user_id: int, now: datetime) -> None:
        day = now.astimezone(UTC).date()
        if self._days.get(user_id) != day:
            self._days[user_id] = day
            self._noted(user_id, day)

    def _noted(self, user_id: int, day: date) -> None:
        """A user's day changed in RAM (the store saves it later)."""

    def last_seen(self, user_id: int) -> datetime | None:
        """The end of the last day the user was seen (UTC), or None when never recorded."""
        day = self._days.get(user_id)
        if day is None:
            return None
        return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)

    def users(self) -> list[int]:
        return list(self._days)
