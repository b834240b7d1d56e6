"""Daily token budgets: what a user, and a server, may spend on the model per UTC day (0: no limit).

Counted are the tokens the endpoint reports (`usage`: prompt plus completion) for replies and extractions; an
endpoint that reports none is counted by an estimate (`drivers.tally.estimate_tokens`), and the counts say how
much of them was estimated. A user or server at or past its budget gets no model reply until the day ends; learning
goes on (and its extractions keep counting), so memory stays current. The counts live in the storage bundle's usage
store (`drivers/tally.py`), shared by every process on PostgreSQL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Literal

from bot.memory.drivers.interfaces import UsageStore
from bot.memory.drivers.tally import Kind, Spent, utc_day

log = logging.getLogger(__name__)


def next_reset(now: datetime) -> datetime:
    """The next midnight UTC: when today's budgets start again."""
    tomorrow = utc_day(now) + timedelta(days=1)
    return datetime.combine(tomorrow, time(0), tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Exceeded:
    """A budget that is used up: whose (`user` or `guild`), its limit, what was spent, and when it resets."""

    scope: Literal["user", "guild"]
    limit: int
    spent: int
    resets_at: datetime


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Today's spending of a user (and of the server, when asked in one), with the limits and the reset time."""

    user: Spent
    user_limit: int
    guild: Spent | None
    guild_limit: int
    resets_at: datetime


class Budgets:
    def __init__(
        self, tally: UsageStore, *, user_daily: int, guild_daily: int, clock: Callable[[], datetime]
    ) -> None:
        self.tally = tally
        self.user_daily = user_daily
        self.guild_daily = guild_daily
        self.clock = clock

    def count(
        self, kind: Kind, *, user_id: int, guild_id: int | None, tokens: int, estimated: bool = False
    ) -> None:
        """Count tokens spent for the user (and their server outside DMs), now."""
        self.tally.add(kind, user_id=user_id, guild_id=guild_id, tokens=tokens, estimated=estimated, now=self.clock())

    def exceeded(self, user_id: int, guild_id: int | None) -> Exceeded | None:
        """The budget that stops a reply to this user here now (the user's first), or None."""
        now = self.clock()
        day = utc_day(now)
        if self.user_daily:
            spent = self.tally.spent(("user", user_id), day).tokens
            if spent >= self.user_daily:
                return Exceeded("user", self.user_daily, spent, next_reset(now))
        if self.guild_daily and guild_id is not None:
            spent = self.tally.spent(("guild", guild_id), day).tokens
            if spent >= self.guild_daily:
                return Exceeded("guild", self.guild_daily, spent, next_reset(now))
        return None

    def report(self, user_id: int, guild_id: int | None) -> UsageReport:
        now = self.clock()
        day = utc_day(now)
        guild = self.tally.spent(("guild", guild_id), day) if guild_id is not None else None
        return UsageReport(
            user=self.tally.spent(("user", user_id), day),
            user_limit=self.user_daily,
            guild=guild,
            guild_limit=self.guild_daily,
            resets_at=next_reset(now),
        )

    async def save(self) -> None:
        """Persist the token counts (every few seconds and at shutdown); a failure only delays it, so it is
        logged."""
        try:
            await self.tally.save()
        except OSError as error:
            log.warning("could not save the token counts (%s); will retry", error.strerror or type(error).__name__)

    def totals(self) -> dict[str, int]:
        """Tokens this process counted since it started, by kind (`chat`, `extraction`), for the metrics."""
        return {kind: self.tally.totals[kind] for kind in ("chat", "extraction")}
