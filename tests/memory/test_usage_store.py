"""Tokens spent per user and per server per UTC day, on both backends: counting is RAM only until a save, a save
makes it survive a restart, only recent days are kept, forgetting a user drops their counts and not their server's;
on PostgreSQL several processes add to the same rows without losing each other's counting, and each sees the
others' after a save."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.memory.drivers.files.usage import USAGE_FILE, FileUsageLog
from bot.memory.drivers.interfaces import UsageStore
from bot.memory.drivers.pg.usage import PostgresUsageLog
from bot.memory.drivers.tally import Spent
from tests.conftest_state import Databases

ALICE, BOB = 80351110224678912, 1001
GUILD, OTHER_GUILD = 90000000000000001, 90000000000000002
NOW = datetime.now(UTC)
TODAY = NOW.date()


async def opened(tmp_path: Path, databases: Databases | None) -> UsageStore:
    """The store as a freshly started process has it."""
    store: UsageStore = (
        FileUsageLog(tmp_path / USAGE_FILE) if databases is None else PostgresUsageLog(await databases.open())
    )
    await store.open()
    return store


async def test_counts_survive_a_restart_once_saved(tmp_path: Path, databases: Databases | None) -> None:
    store = await opened(tmp_path, databases)
    store.add("chat", user_id=ALICE, guild_id=GUILD, tokens=120, estimated=False, now=NOW)
    store.add("extraction", user_id=ALICE, guild_id=GUILD, tokens=30, estimated=True, now=NOW)
    store.add("chat", user_id=BOB, guild_id=None, tokens=7, estimated=False, now=NOW)  # a DM: the user's only
    store.add("chat", user_id=BOB, guild_id=None, tokens=0, estimated=False, now=NOW)  # nothing to count
    assert store.spent(("user", ALICE), TODAY) == Spent(150, 30)  # counted at once, in RAM
    assert store.spent(("guild", GUILD), TODAY) == Spent(150, 30)
    assert store.totals == {"chat": 127, "extraction": 30}
    assert (await opened(tmp_path, databases)).spent(("user", ALICE), TODAY) == Spent()  # not saved yet
    await store.save()
    again = await opened(tmp_path, databases)
    assert again.spent(("user", ALICE), TODAY) == Spent(150, 30)
    assert again.spent(("user", BOB), TODAY) == Spent(7, 0)
    assert again.spent(("guild", GUILD), TODAY) == Spent(150, 30)
    assert again.spent(("guild", OTHER_GUILD), TODAY) == Spent()
    assert again.spent(("user", ALICE), TODAY - timedelta(days=1)) == Spent()  # days are separate
    again.add("chat", user_id=ALICE, guild_id=GUILD, tokens=50, estimated=False, now=NOW)
    await again.close()  # closing saves
    assert (await opened(tmp_path, databases)).spent(("user", ALICE), TODAY) == Spent(200, 30)


async def test_forgetting_a_user_drops_their_counts_and_keeps_the_servers(
    tmp_path: Path, databases: Databases | None
) -> None:
    store = await opened(tmp_path, databases)
    store.add("chat", user_id=ALICE, guild_id=GUILD, tokens=100, estimated=False, now=NOW)
    store.add("chat", user_id=BOB, guild_id=GUILD, tokens=10, estimated=False, now=NOW)
    await store.save()
    store.add("chat", user_id=ALICE, guild_id=GUILD, tokens=5, estimated=False, now=NOW)  # unsaved, dropped too
    await store.forget_user(ALICE)
    assert store.spent(("user", ALICE), TODAY) == Spent()
    await store.save()
    again = await opened(tmp_path, databases)
    assert again.spent(("user", ALICE), TODAY) == Spent()
    assert again.spent(("user", BOB), TODAY) == Spent(10, 0)
    assert again.spent(("guild", GUILD), TODAY) == Spent(115, 0)
    if databases is None:
        assert str(ALICE) not in (tmp_path / USAGE_FILE).read_text()


async def test_only_recent_days_are_kept(tmp_path: Path, databases: Databases | None) -> None:
    store = await opened(tmp_path, databases)
    long_ago = NOW - timedelta(days=5)
    store.add("chat", user_id=ALICE, guild_id=None, tokens=99, estimated=False, now=long_ago)
    store.add("chat", user_id=ALICE, guild_id=None, tokens=1, estimated=False, now=NOW)
    await store.save(NOW)
    again = await opened(tmp_path, databases)
    assert again.spent(("user", ALICE), TODAY) == Spent(1, 0)
    assert again.spent(("user", ALICE), long_ago.date()) == Spent()
    if databases is None:
        days = json.loads((tmp_path / USAGE_FILE).read_bytes())["days"]
        assert list(days) == [TODAY.isoformat()]


async def test_an_unreadable_file_starts_from_zero(tmp_path: Path) -> None:
    (tmp_path / USAGE_FILE).write_bytes(b'{"days": {"not a day": ')
    store = await opened(tmp_path, None)
    assert store.spent(("user", ALICE), TODAY) == Spent()
    store.add("chat", user_id=ALICE, guild_id=None, tokens=3, estimated=False, now=NOW)
    await store.save()
    assert (await opened(tmp_path, None)).spent(("user", ALICE), TODAY) == Spent(3, 0)
    assert (tmp_path / USAGE_FILE).stat().st_mode & 0o777 == 0o600


async def test_processes_add_up_and_see_each_others_spending(pg_databases: Databases) -> None:
    one = PostgresUsageLog(await pg_databases.open())
    other = PostgresUsageLog(await pg_databases.open())
    await one.open()
    await other.open()
    for _ in range(20):
        one.add("chat", user_id=ALICE, guild_id=GUILD, tokens=3, estimated=False, now=NOW)
        other.add("extraction", user_id=ALICE, guild_id=GUILD, tokens=2, estimated=True, now=NOW)
    await asyncio.gather(one.save(), other.save())  # one additive upsert each, at the same time: none lost
    await asyncio.gather(one.save(), other.save())
    for store in (one, other):
        assert store.spent(("user", ALICE), TODAY) == Spent(100, 40)
        assert store.spent(("guild", GUILD), TODAY) == Spent(100, 40)
    other.add("chat", user_id=BOB, guild_id=OTHER_GUILD, tokens=11, estimated=False, now=NOW)
    await other.save()
    assert one.spent(("user", BOB), TODAY) == Spent()  # not seen before this process's own next save
    await one.save()
    assert one.spent(("user", BOB), TODAY) == Spent(11, 0)
    await other.forget_user(ALICE)
    third = PostgresUsageLog(await pg_databases.open())
    await third.open()
    assert third.spent(("user", ALICE), TODAY) == Spent() and third.spent(("guild", GUILD), TODAY) == Spent(100, 40)
