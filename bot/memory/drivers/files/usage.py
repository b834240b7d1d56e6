"""Tokens spent per user and per server per UTC day: `DATA_DIR/token-usage.json`, written atomically (one process).

`add` (every reply, every extraction) touches RAM only; `save` writes the file when something was added, and the
bot saves every few seconds and at shutdown, so a crash loses at most the counting since the last save. Only
today's and yesterday's days are kept. An unreadable file is logged and replaced at the next save: it holds only
counts, and starting from zero costs at most one day's budget.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import date, datetime
from pathlib import Path

from bot.memory.drivers.tally import Spent, Subject, TokenTally, parse_subject, subject_key, utc_day
from bot.memory.models import utc_now
from bot.storage.atomic import AtomicWriter, json_bytes

log = logging.getLogger(__name__)

USAGE_FILE = "token-usage.json"


class FileUsageLog(TokenTally):
    def __init__(self, path: Path, *, writer: AtomicWriter | None = None) -> None:
        super().__init__()
        self.path = path
        self._writer = writer or AtomicWriter()
        self._dirty = False
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        await asyncio.to_thread(self._load)

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_bytes())
            days: dict[date, dict[Subject, Spent]] = {}
            for day, rows in data["days"].items():
                parsed: dict[Subject, Spent] = {}
                for key, (tokens, estimated) in rows.items():
                    subject = parse_subject(key)
                    if subject is not None:
                        parsed[subject] = Spent(int(tokens), int(estimated))
                days[date.fromisoformat(day)] = parsed
        except FileNotFoundError:
            return
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            log.warning("token usage file %s is unreadable; counting starts again from zero", self.path.name)
            return
        self._saved = days

    def _noted(self) -> None:
        self._dirty = True

    async def close(self) -> None:
        await self.save()

    async def forget_user(self, user_id: int) -> None:
        """Drop the user's counts, from the file too (saved before returning)."""
        self._drop_user(user_id)
        self._dirty = True
        await self.save()

    async def save(self, now: datetime | None = None) -> None:
        """Add what was counted since the last save to the file's counts and write it (if anything changed)."""
        async with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            taken = self._take_unsaved()
            days = {day: dict(rows) for day, rows in self._saved.items()}
            for (day, subject), spent in taken.items():
                rows = days.setdefault(day, {})
                rows[subject] = rows.get(subject, Spent()).plus(spent)
            today = utc_day(now or utc_now())
            days = {day: rows for day, rows in days.items() if (today - day).days <= 1}
            document = {
                "days": {
                    day.isoformat(): {subject_key(s): [v.tokens, v.estimated] for s, v in sorted(rows.items())}
                    for day, rows in sorted(days.items())
                }
            }
            try:
                await self._writer.write(self.path, json_bytes(document, compact=True))
            except BaseException:
                self._give_back(taken)
                self._dirty = True
                raise
            self._saved = days
