"""The reply records' contract on both backends (kept across restarts, bounded to the newest, ids only, gone with
the user), and on PostgreSQL a reply recorded by one process is found by another."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.replies import ReplyLog
from bot.memory.drivers.interfaces import REPLIES_KEPT, Generations, ReplyRecord, ReplyStore
from bot.memory.drivers.pg.generations import PostgresGenerations
from bot.memory.drivers.pg.replies import PostgresReplyLog
from bot.memory.errors import Stale
from tests.conftest_state import Databases

ALICE, BOB = 80351110224678912, 1001
KEEP = 40


class Log:
    """A reply store with the record call the tests use (generation 0: nobody forgot)."""

    def __init__(self, store: ReplyStore) -> None:
        self.store = store

    async def record(
        self, message_ids: Iterable[int], user_id: int, sections: Iterable[str], fact_ids: Iterable[str]
    ) -> None:
        record = ReplyRecord(tuple(message_ids), user_id, tuple(sections), tuple(fact_ids))
        await self.store.record(record, generation=0)

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


async def opened(tmp_path: Path, databases: Databases | None, keep: int = KEEP) -> Log:
    log: ReplyStore
    if databases is None:
        log = ReplyLog(tmp_path / "replies.json", FileGenerations(), keep=keep)
    else:
        log = PostgresReplyLog(await databases.open(), keep=keep)
    await log.open()
    return Log(log)


async def test_records_survive_restarts_stay_bounded_and_go_with_the_user(
    tmp_path: Path, databases: Databases | None
) -> None:
    log = await opened(tmp_path, databases)
    for n in range(1, KEEP + 11):
        await log.record([n * 10, n * 10 + 1], ALICE if n % 2 else BOB, ["workContext"], [f"fact_{n:08x}"])
    again = await opened(tmp_path, databases)
    assert await again.count() == KEEP
    assert await again.get(10) is None and await again.get(100) is None  # the oldest dropped off
    assert await again.get(110) is not None
    newest = (KEEP + 10) * 10
    record = await again.get(newest + 1)  # the second message of the newest reply
    assert record is not None
    assert record.user_id == BOB and record.message_ids == (newest, newest + 1)
    assert record.sections == ("workContext",) and record.fact_ids == (f"fact_{KEEP + 10:08x}",)
    assert await again.forget_user(ALICE) == KEEP // 2
    assert await again.forget_user(ALICE) == 0
    third = await opened(tmp_path, databases)
    assert await third.count() == KEEP // 2
    assert await third.get(newest) is not None and await third.get(newest - 10) is None  # Bob's kept, Alice's gone


async def test_summaries_of_other_places_and_unknown_names(tmp_path: Path, databases: Databases | None) -> None:
    log = await opened(tmp_path, databases)
    await log.record([5], ALICE, ["topOfMind@guild:7001", "workContext"], [])
    record = await (await opened(tmp_path, databases)).get(5)
    assert record is not None and record.sections == ("topOfMind@guild:7001", "workContext")
    assert record.fact_ids == ()


async def test_a_thousand_replies_are_kept_by_default(tmp_path: Path, databases: Databases | None) -> None:
    log = await opened(tmp_path, databases, keep=REPLIES_KEPT)
    assert getattr(log.store, "keep", None) == REPLIES_KEPT == 1000


async def test_a_record_from_before_the_users_latest_forget_is_refused(
    tmp_path: Path, databases: Databases | None
) -> None:
    generations: Generations
    store: ReplyStore
    if databases is None:
        generations = FileGenerations()
        store = ReplyLog(tmp_path / "replies.json", generations)
    else:
        database = await databases.open()
        generations, store = PostgresGenerations(database), PostgresReplyLog(database)
    await generations.open()
    await store.open()
    record = ReplyRecord((7,), ALICE, ("workContext",), ())
    generation = await generations.bump(ALICE)
    with pytest.raises(Stale) as refused:
        await store.record(record, generation=generation - 1)
    assert (refused.value.what, refused.value.user_id) == ("reply record", ALICE)
    assert await store.get(7) is None
    await store.record(record, generation=generation)
    assert await store.get(7) == record


# --- PostgreSQL: several processes ------------------------------------------------------------------------------


async def test_a_reply_recorded_by_one_process_is_found_by_another(pg_databases: Databases) -> None:
    one = Log(PostgresReplyLog(await pg_databases.open()))
    other = Log(PostgresReplyLog(await pg_databases.open()))
    assert await other.get(424242) is None
    await one.record([424242, 424243], ALICE, ["topOfMind"], ["fact_0000abcd"])
    found = await other.get(424243)
    assert found is not None and found.user_id == ALICE and found.fact_ids == ("fact_0000abcd",)
    assert await other.forget_user(ALICE) == 1
    assert await one.get(424242) is None


async def test_the_newest_are_kept_across_processes(pg_databases: Databases) -> None:
    one = Log(PostgresReplyLog(await pg_databases.open(), keep=10))
    other = Log(PostgresReplyLog(await pg_databases.open(), keep=10))
    for n in range(1, 21):
        await (one if n % 2 else other).record([n], BOB, [], [])
    assert await one.count() == 10
    assert [n for n in range(1, 21) if await one.get(n) is not None] == list(range(11, 21))
