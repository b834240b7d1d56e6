"""Per-user sliding-window rate limit, so one user cannot drain the LLM budget."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech


class RateLimiter:
    """At most `max_events` per `window` seconds per user. `max_events` 0 disables the limit."""

    def __init__(self, max_events: int, window: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_events = max_events
        self.window = window
        self._clock = clock
        self._events: dict[int, deque[float]] = {}
        self._noticed: dict[int, float] = {}

    def _prune(self, user_id: int, now: float) -> deque[float]:
        events = self._events.setdefault(user_id, deque())
        while events and now - events[0] >= self.window:
            events.popleft()
        return events

    def allow(self, user_id: int) -> bool:
        """Count one event for the user; False when it is over the limit (and then it is not counted)."""
        if self.max_events <= 0:
            return True
        now = self._clock()
        events = self._prune(user_id, now)
        if len(events) >= self.max_events:
            return False
        events.append(now)
        if len(self._events) > 10_000:  # drop idle users so the table stays small
            for uid in [uid for uid, q in self._events.items() if not q or now - q[-1] >= self.window]:
                self._events.pop(uid, None)
                self._noticed.pop(uid, None)
        return True

    def retry_after(self, user_id: int) -> float:
        events = self._events.get(user_id)
        if not events:
            return 0.0
        return max(0.0, self.window - (self._clock() - events[0]))

    def should_notice(self, user_id: int) -> bool:
        """True once per window for a limited user, so the notice itself cannot become spam."""
        now = self._clock()
        last = self._noticed.get(user_id)
        if last is not None and now - last < self.window:
            return False
        self._noticed[user_id] = now
        return True


def when_again(seconds: float, *, now: float | None = None, speech: Speech = ENGLISH_SPEECH) -> str:
    """When something refused by the limit can be done again, for a user: a Discord timestamp (shown in their own
    time zone, counting down) and the wait in words, in their language, so the line reads right where timestamps
    are not rendered."""
    wait = max(1, math.ceil(seconds))
    at = int((time.time() if now is None else now) + wait)
    if wait < 60:
        words = speech.duration(wait, "second")
    elif wait < 3600:
        words = speech.duration(math.ceil(wait / 60), "minute")
    else:
        hours, minutes = divmod(math.ceil(wait / 60), 60)
        words = speech.duration(hours, "hour")
        if minutes:
            words += " " + speech.duration(minutes, "minute")
    return f"<t:{at}:R> (" + speech.tr("in {duration}", duration=words) + ")"


SECOND = N_("second")
UNITS = {"hour": N_("hour"), "minute": N_("minute"), "second": SECOND}


def describe_window(seconds: float, speech: Speech = ENGLISH_SPEECH) -> str:
    """The limit's window in words: "minute", "5 minutes", "hour", "2 hours", "30 seconds"."""
    whole = round(seconds)
    for size, unit in ((3600, "hour"), (60, "minute")):
        if whole >= size and whole % size == 0:
            count = whole // size
            return speech.tr(UNITS[unit]) if count == 1 else speech.duration(count, unit, long=True)
    return speech.duration(whole, "second", long=True) if whole != 1 else speech.tr(SECOND)
