"""Tokens spent per user and per server per UTC day, in RAM: what both usage stores answer from.

Counting happens on every reply and every extraction, so `add` only touches dictionaries; the store writes the
additions at its next `save` (every few seconds, and at close). What a budget check reads is what the store last
read back (`_saved`: the file, or every process's rows) plus what this process added since (`_unsaved`), so a
process's own spending counts at once and another process's spending after its next save.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

Scope = Literal["user", "guild"]
Subject = tuple[Scope, int]
Kind = Literal["chat", "extraction"]
CHARS_PER_TOKEN = 4  # a common rule of thumb for English; generous for code, short for CJK text
TOKENS_PER_MESSAGE = 4  # the role and framing around each chat message


def estimate_tokens(texts: Iterable[str], *, messages: int = 0) -> int:
    """A rough token count for texts sent to or received from a model that reported no `usage`."""
    chars = sum(len(text) for text in texts)
    return math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages


@dataclass(slots=True)
class Spent:
    """Tokens counted for one subject on one day; `estimated` of them were estimated (no `usage` reported)."""

    tokens: int = 0
    estimated: int = 0

    def plus(self, other: Spent) -> Spent:
        return Spent(self.tokens + other.tokens, self.estimated + other.estimated)


def utc_day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def subject_key(subject: Subject) -> str:
    """`user:<id>` / `guild:<id>`: how a subject is written in the file."""
    return f"{subject[0]}:{subject[1]}"


def parse_subject(key: str) -> Subject | None:
    scope, _, number = key.partition(":")
    if scope not in ("user", "guild") or not number.isdigit():
        return None
    return ("user" if scope == "user" else "guild", int(number))


class TokenTally:
    """Today's (and yesterday's) spending in RAM; the store subclasses say how it is saved and read back."""

    def __init__(self) -> None:
        self._saved: dict[date, dict[Subject, Spent]] = {}
        self._unsaved: dict[tuple[date, Subject], Spent] = {}
        self.totals: Counter[str] = Counter()  # tokens counted by this process since it started, by kind

    def add(
        self, kind: Kind, *, user_id: int, guild_id: int | None, tokens: int, estimated: bool, now: datetime
    ) -> None:
        """Count `tokens` for the user (and their server, outside DMs) on `now`'s UTC day."""
        if tokens <= 0:
            return
        self.totals[kind] += tokens
        day = utc_day(now)
        spent = Spent(tokens, tokens if estimated else 0)
        subjects: list[Subject] = [("user", user_id)]
        if guild_id is not None:
            subjects.append(("guild", guild_id))
        for subject in subjects:
            key = (day, subject)
            self._unsaved[key] = self._unsaved.get(key, Spent()).plus(spent)
        self._noted()

    def _noted(self) -> None:
        """Something was added (the file store marks itself dirty)."""

    def spent(self, subject: Subject, day: date) -> Spent:
        saved = self._saved.get(day, {}).get(subject, Spent())
        return saved.plus(self._unsaved.get((day, subject), Spent()))

    def _take_unsaved(self) -> dict[tuple[date, Subject], Spent]:
        taken, self._unsaved = self._unsaved, {}
        return taken

    def _give_back(self, taken: dict[tuple[date, Subject], Spent]) -> None:
        """A save failed: what it took is added again (to anything counted meanwhile), for the next save."""
        for key, spent in taken.items():
            self._unsaved[key] = self._unsaved.get(key, Spent()).plus(spent)

    def _prune(self, today: date) -> None:
        """Only today and yesterday are kept: a budget is per day, and yesterday covers a save across midnight."""
        for day in [day for day in self._saved if (today - day).days > 1]:
            del self._saved[day]

    def _drop_user(self, user_id: int) -> None:
        subject: Subject = ("user", user_id)
        for rows in self._saved.values():
            rows.pop(subject, None)
        for key in [key for key in self._unsaved if key[1] == subject]:
            del self._unsaved[key]
