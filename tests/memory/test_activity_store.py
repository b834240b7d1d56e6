"""Last-activity days on both backends; on PostgreSQL, processes never move a day back, each sees the others' users
after a save, none holds the table, only one process runs the retention sweep at a time, and a sweep deletes every
row of a silent user."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from bot.memory.drivers.files.activity import ACTIVITY_FILE, ActivityLog
from bot.memory.drivers.interfaces import ActivityStore, ReplyRecord
from bot.memory.drivers.pg.activity import PostgresActivityLog
from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.pg.database import Database
from tests.conftest_state import Databases
from tests.support.engine import parts, postgres_service, save_memory

ALICE, BOB, CAROL = 80351110224678912, 1001, 1002
DAY = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def end_of(day: datetime) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)


async def recorded(activity: ActivityStore) -> list[int]:
    """Every user the store lists, in its order (user id order, page after page)."""
    return [uid async for page in activity.seen() for uid, _ in page]


async def opened(tmp_path: Path, databases: Databases | None) -> ActivityStore:
    activity: ActivityStore
    if databases is None:
        activity = ActivityLog(tmp_path / ACTIVITY_FILE)
    else:
        activity = PostgresActivityLog(await databases.open())
    await activity.open()
    return activity


async def test_days_survive_restarts_and_removal_is_final(tmp_path: Path, databases: Databases | None) -> None:
    activity = await opened(tmp_path, databases)
    activity.note(ALICE, DAY)
    activity.note(BOB, DAY - timedelta(days=3))
    assert await activity.last_seen(ALICE) == end_of(DAY)  # counted to the end of the day: never shorter
    assert await recorded(await opened(tmp_path, databases)) == []  # in RAM until saved
    await activity.save()
    again = await opened(tmp_path, databases)
    assert await recorded(again) == [BOB, ALICE]  # in user id order
    assert await again.last_seen(BOB) == end_of(DAY - timedelta(days=3)) and await again.last_seen(CAROL) is None
    await again.forget_user(ALICE)
    await again.save()
    assert await again.last_seen(ALICE) is None
    third = await opened(tmp_path, databases)
    assert await recorded(third) == [BOB] and await third.last_seen(ALICE) is None


async def test_one_process_sweeps(tmp_path: Path, databases: Databases | None) -> None:
    activity = await opened(tmp_path, databases)
    async with activity.sweep_lock() as mine:
        assert mine


# --- PostgreSQL: several processes ------------------------------------------------------------------------------


async def test_processes_never_move_a_day_back_and_see_each_others_users(pg_databases: Databases) -> None:
    one = PostgresActivityLog(await pg_databases.open())
    other = PostgresActivityLog(await pg_databases.open())
    await one.open()
    await other.open()
    one.note(ALICE, DAY)
    other.note(ALICE, DAY - timedelta(days=2))  # a process that saw her earlier and saves later
    other.note(BOB, DAY)
    await one.save()
    await other.save()
    assert await other.last_seen(ALICE) == end_of(DAY)  # the later day won, and the other process now knows it
    await one.save()
    assert await recorded(one) == [BOB, ALICE] and await one.last_seen(BOB) == end_of(DAY)


async def test_a_process_holds_only_what_it_noted_since_its_save(
    pg_databases: Databases, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = await pg_databases.open()
    await database.execute(  # a large bot's table: no process reads it whole
        "INSERT INTO user_activity (user_id, last_day) SELECT g, $1 FROM generate_series(1, 20000) AS g",
        (DAY - timedelta(days=1)).date(),
    )
    queries: list[str] = []

    def recording(method: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
        async def recorded_call(query: str, *args: object) -> object:
            queries.append(query)
            return await method(query, *args)

        return recorded_call

    for name in ("fetch", "fetchval", "execute"):
        monkeypatch.setattr(database, name, recording(getattr(database, name)))
    activity = PostgresActivityLog(database)
    await activity.open()
    assert queries == []  # start-up reads nothing, however many users the table holds
    activity.note(ALICE, DAY)
    activity.note(7, DAY)  # later than the table's day
    activity.note(8, DAY - timedelta(days=5))  # earlier than the table's: never moves it back
    assert await activity.last_seen(ALICE) == end_of(DAY)  # unsaved, from this process
    assert await activity.last_seen(9) == end_of(DAY - timedelta(days=1))  # saved by another, from the table
    before = await database.fetchval("SELECT xmin::text FROM user_activity WHERE user_id = 9")
    queries.clear()
    await activity.save()
    assert len(queries) == 1 and queries[0].startswith("INSERT INTO user_activity")  # no read back
    days = dict(await database.fetch("SELECT user_id, last_day FROM user_activity WHERE user_id IN (7, 8, $1)", ALICE))
    assert days == {7: DAY.date(), 8: (DAY - timedelta(days=1)).date(), ALICE: DAY.date()}
    activity.note(9, DAY - timedelta(days=1))  # the day the table already has
    await activity.save()
    assert await database.fetchval("SELECT xmin::text FROM user_activity WHERE user_id = 9") == before  # unwritten
    assert await database.fetchval("SELECT count(*) FROM user_activity") == 20_001


async def test_only_one_process_holds_the_sweep_lock(pg_databases: Databases) -> None:
    one = PostgresActivityLog(await pg_databases.open())
    other = PostgresActivityLog(await pg_databases.open())
    async with one.sweep_lock() as first, other.sweep_lock() as second:
        assert first and not second
    async with other.sweep_lock() as after:
        assert after  # released when the first process finished


def make_service(database: Database, now: datetime) -> MemoryService:
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused", max_retries=0)  # never called
    return postgres_service(
        database,
        MemoryExtractor(client, model="unused", max_retries=0),
        MemoryPolicy(debounce_seconds=3600, max_wait_seconds=3600, retention_days=30),
        clock=lambda: now,
    )


async def test_one_process_sweeps_at_a_time_and_a_sweep_leaves_no_row_of_the_user(
    pg_databases: Databases, caplog: pytest.LogCaptureFixture
) -> None:
    now = DAY + timedelta(days=100)
    first, second = await pg_databases.open(), await pg_databases.open()
    one, other = make_service(first, now), make_service(second, now)
    await one.ops.open()
    await other.ops.open()
    memory = MemoryFile()
    memory.facts.append(Fact(id="fact_0000aaaa", content="secret-alice " + "x" * 150, category="context",
                             confidence=0.9, createdAt=DAY.isoformat()))
    await save_memory(parts(one).storage.memories, ALICE, memory)
    await first.execute("UPDATE memories SET updated_at = $1 WHERE user_id = $2", DAY, ALICE)
    await parts(one).storage.turns.add(ConversationKey(5, ALICE), [Turn(role="user", author_id=ALICE, author_name="A",
                                                            text="secret-alice pending", at=DAY, turn_id="t1")])
    record = ReplyRecord((777,), ALICE, ("workContext",), ("fact_0000aaaa",))
    await parts(one).storage.replies.record(record, generation=0)
    await parts(one).storage.privacy.update(ALICE, now, paused=True, fresh_until_resume=True)
    parts(one).storage.activity.note(ALICE, DAY)
    parts(one).storage.activity.note(BOB, now)
    await parts(one).storage.activity.save()

    caplog.set_level(logging.DEBUG, logger="bot.memory.parts.retention")
    async with parts(one).storage.activity.sweep_lock() as mine:  # the first process is sweeping
        assert mine
        assert await other.ops.sweep() == 0
    assert "another process is sweeping" in caplog.text
    assert await first.fetchval("SELECT count(*) FROM memories") == 1

    assert await other.ops.sweep() == 1
    leftovers = {
        table: await first.fetchval(f"SELECT count(*) FROM {table} WHERE user_id = $1", ALICE)
        for table in ("memories", "pending_turns", "reply_records", "user_activity")
    }
    leftovers["records"] = await first.fetchval("SELECT count(*) FROM records WHERE key = $1", str(ALICE))
    assert leftovers == dict.fromkeys(leftovers, 0)
    dump = json.dumps([dict(r) for r in await first.fetch("SELECT * FROM user_activity")], default=str)
    assert str(BOB) in dump  # the active user stays
    await asyncio.gather(one.ops.shutdown(5), other.ops.shutdown(5))
