"""Whole-table reads in pages (`Database.fetch_pages`): every row once, in key order, whatever the page size, with
the loop free between pages; the retention sweep's reads (memory write times, activity days) go through it, merged
a page at a time."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime

import pytest

from bot.memory.drivers.pg.activity import PostgresActivityLog
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.schema import migrate
from bot.memory.parts.retention import listed
from bot.storage.pg.database import Database

pytestmark = pytest.mark.postgres

QUERY = "SELECT n FROM numbers WHERE $1::bigint IS NULL OR n > $1 ORDER BY n LIMIT $2"


@pytest.mark.parametrize("page", [1, 3, 10, 11, 500])
async def test_every_row_once_in_order_whatever_the_page(postgres_url: str, page: int) -> None:
    database = Database(postgres_url, size=2)
    await database.open()
    try:
        await database.execute("CREATE TABLE numbers (n bigint PRIMARY KEY)")
        await database.execute("INSERT INTO numbers SELECT g * 7 FROM generate_series(1, 10) AS g")
        pages = [[row["n"] for row in rows] async for rows in database.fetch_pages(QUERY, page=page)]
    finally:
        await database.close()
    assert [n for rows in pages for n in rows] == [g * 7 for g in range(1, 11)]
    assert all(len(rows) <= page for rows in pages) and len(pages) == 10 // page + 1


async def test_the_loop_runs_between_pages(postgres_url: str) -> None:
    database = Database(postgres_url, size=2)
    await database.open()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    try:
        await database.execute("CREATE TABLE numbers (n bigint PRIMARY KEY)")
        await database.execute("INSERT INTO numbers SELECT g FROM generate_series(1, 50) AS g")
        task = asyncio.get_running_loop().create_task(ticker())
        seen = []
        async for _rows in database.fetch_pages(QUERY, page=5):
            seen.append(ticks)
        task.cancel()
    finally:
        await database.close()
    assert len(seen) == 11 and all(b > a for a, b in itertools.pairwise(seen))  # it ran between pages


async def test_the_sweeps_reads_are_whole_across_pages(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bot.storage.pg.database.PAGE_ROWS", 4)
    database = Database(postgres_url, size=2)
    await database.open()
    statements: list[str] = []
    fetch = database.fetch

    async def counted(query: str, *args: object) -> list[object]:
        statements.append(query)
        return await fetch(query, *args)

    monkeypatch.setattr(database, "fetch", counted)
    try:
        await database.run(migrate, transaction=False)
        await database.execute(  # users 1-9 have memory, 5-14 an activity day: some both, some one
            "INSERT INTO memories (user_id, doc, revision, updated_at)"
            " SELECT g, '{}'::jsonb, g, TIMESTAMPTZ '2026-11-01 00:00Z' + g * INTERVAL '1 second'"
            " FROM generate_series(1, 9) AS g"
        )
        await database.execute(
            "INSERT INTO user_activity (user_id, last_day) SELECT g, DATE '2026-12-01' FROM generate_series(5, 14) g"
        )
        memories, activity = PostgresMemoryStore(database), PostgresActivityLog(database)
        await activity.open()
        opened = len(statements)
        written = await memories.last_written()
        pages = [page async for page in listed(activity, memories)]
    finally:
        await database.close()
    assert opened == 0  # opening reads nothing: no process holds the table
    assert sorted(written) == list(range(1, 10))
    users = [user for page in pages for user in page]
    assert sorted(uid for uid, _, _ in users) == list(range(1, 15))  # each once
    day_end = datetime(2026, 12, 2, tzinfo=UTC)
    november = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
    assert {uid: (seen, written) for uid, seen, written in users} == {
        uid: (day_end if uid >= 5 else None, november + uid if uid <= 9 else None) for uid in range(1, 15)
    }
    assert all(len(page) <= 8 for page in pages)  # a page of each listing at most, never the whole table
    assert sum("FROM memories" in q for q in statements) == 3 * 2  # 4 + 4 + 1 rows: three pages, read twice
    assert sum("FROM user_activity" in q for q in statements) == 3  # 4 + 4 + 2 rows, the last page short
