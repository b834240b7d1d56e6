"""Tokens spent per user and per server per UTC day, shared by every process (same contract as `FileUsageLog`).

`add` stays in RAM (it runs for every reply and extraction); `save` (every few seconds and at close) adds what was
counted since the last save to the rows with one additive upsert (`tokens = tokens + EXCLUDED.tokens`), so
processes never overwrite each other's counting, then reads back today's rows that changed since its last read
(every process's spending), with an overlap longer than any statement may run, so a write committed late is
still seen. A process therefore sees another's spending within one save interval of it being counted.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta

import asyncpg

from bot.memory.drivers.tally import Scope, Spent, Subject, TokenTally, utc_day
from bot.memory.models import utc_now
from bot.storage.ids import user_key
from bot.storage.pg.database import Database

log = logging.getLogger(__name__)

PRUNE_EVERY = timedelta(hours=1)

USAGE_TABLE_SQL = """
CREATE TABLE token_usage (
    scope       text NOT NULL CHECK (scope IN ('user', 'guild')),
    subject     bigint NOT NULL,
    day         date NOT NULL,
    tokens      bigint NOT NULL,
    estimated   bigint NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, subject, day)
);
CREATE INDEX token_usage_changed ON token_usage (day, updated_at);
"""


class PostgresUsageLog(TokenTally):
    def __init__(self, database: Database) -> None:
        super().__init__()
        self.database = database
        self._read_at: datetime | None = None  # the database's clock at the last read
        self._read_day: date | None = None
        self._pruned_at: datetime | None = None
        # A write stamped before our read may commit after it; no statement runs longer than the timeout.
        self._overlap = timedelta(seconds=2 * database.statement_timeout + 30)

    async def open(self) -> None:
        await self._read(utc_day(utc_now()))

    async def close(self) -> None:
        await self.save()

    async def forget_user(self, user_id: int) -> None:
        uid = user_key(user_id)
        await self.database.execute("DELETE FROM token_usage WHERE scope = 'user' AND subject = $1", uid)
        self._drop_user(uid)

    async def save(self, now: datetime | None = None) -> None:
        """Add what this process counted since its last save to the shared rows, then read back what changed."""
        now = now or utc_now()
        taken = self._take_unsaved()
        if taken:
            keys = list(taken)
            try:
                await self.database.execute(
                    "INSERT INTO token_usage (scope, subject, day, tokens, estimated)"
                    " SELECT * FROM unnest($1::text[], $2::bigint[], $3::date[], $4::bigint[], $5::bigint[])"
                    " ON CONFLICT (scope, subject, day) DO UPDATE SET"
                    " tokens = token_usage.tokens + EXCLUDED.tokens,"
                    " estimated = token_usage.estimated + EXCLUDED.estimated, updated_at = now()",
                    [subject[0] for _, subject in keys],
                    [subject[1] for _, subject in keys],
                    [day for day, _ in keys],
                    [taken[key].tokens for key in keys],
                    [taken[key].estimated for key in keys],
                )
            except BaseException:
                self._give_back(taken)
                raise
            # Until the read below, the rows hold these too: count them as saved so nothing counts twice.
            for (day, subject), spent in taken.items():
                rows = self._saved.setdefault(day, {})
                rows[subject] = rows.get(subject, Spent()).plus(spent)
        today = utc_day(now)
        await self._read(today)
        if self._pruned_at is None or now - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = now
            await self.database.execute("DELETE FROM token_usage WHERE day < $1", today - timedelta(days=1))

    async def _read(self, today: date) -> None:
        since = None
        if self._read_at is not None and self._read_day == today:
            since = self._read_at - self._overlap

        async def work(conn: asyncpg.Connection) -> tuple[datetime, list[asyncpg.Record]]:
            read_at = await conn.fetchval("SELECT now()")
            rows = await conn.fetch(
                "SELECT scope, subject, tokens, estimated FROM token_usage"
                " WHERE day = $1 AND ($2::timestamptz IS NULL OR updated_at >= $2)",
                today,
                since,
            )
            return read_at, list(rows)

        read_at, rows = await self.database.run(work, transaction=False)
        fresh = since is None
        saved = {} if fresh else dict(self._saved.get(today, {}))
        for row in rows:
            scope: Scope = "user" if row["scope"] == "user" else "guild"
            subject: Subject = (scope, int(row["subject"]))
            saved[subject] = Spent(int(row["tokens"]), int(row["estimated"]))
        self._saved[today] = saved
        self._prune(today)
        self._read_at, self._read_day = read_at, today
