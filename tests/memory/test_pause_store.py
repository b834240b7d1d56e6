"""The pause list's contract on both backends (files, PostgreSQL), and on PostgreSQL what one process changes is
seen by the others: by notification, after a dropped listening connection, and by the periodic full reload."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.memory.backend import PauseStore
from bot.memory.pauses import PauseRegistry
from bot.memory.pg.modes import PostgresPauseRegistry
from bot.storage.errors import InvalidUserId, StorageUnavailable
from bot.storage.pg.mirror import notifications_of
from tests.conftest_state import Databases, seen_by

ALICE, BOB = 80351110224678912, 1001


async def opened(tmp_path: Path, databases: Databases | None) -> PauseStore:
    """A registry as a freshly started process has it."""
    registry: PauseStore
    if databases is None:
        registry = PauseRegistry(tmp_path / "paused.json")
    else:
        registry = PostgresPauseRegistry(await databases.open())
    await registry.open()
    return registry


async def test_pauses_persist_across_restarts_and_report_changes(tmp_path: Path, databases: Databases | None) -> None:
    registry = await opened(tmp_path, databases)
    assert not registry.is_paused(ALICE) and not registry.held
    assert await registry.set_paused(ALICE, True) is True
    assert await registry.set_paused(str(BOB), True) is True
    assert await registry.set_paused(ALICE, True) is False  # already paused
    assert registry.is_paused(ALICE) and registry.is_paused(str(ALICE))
    assert registry.paused_users() == {ALICE, BOB}

    again = await opened(tmp_path, databases)
    assert again.is_paused(ALICE) and again.is_paused(BOB) and not again.held
    assert await again.set_paused(ALICE, False) is True
    assert await again.set_paused(ALICE, False) is False
    third = await opened(tmp_path, databases)
    assert not third.is_paused(ALICE) and third.is_paused(BOB)
    assert third.paused_users() == {BOB}


@pytest.mark.parametrize("bad", ["../x", "abc", "", "0", "-1", " 1", "１", True, 2**64])
async def test_invalid_ids_are_refused(tmp_path: Path, databases: Databases | None, bad: object) -> None:
    registry = await opened(tmp_path, databases)
    with pytest.raises(InvalidUserId):
        await registry.set_paused(bad, True)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserId):
        registry.is_paused(bad)  # type: ignore[arg-type]
    assert (await opened(tmp_path, databases)).paused_users() == set()


async def test_concurrent_pauses_all_land(tmp_path: Path, databases: Databases | None) -> None:
    registry = await opened(tmp_path, databases)
    users = list(range(1, 51))
    await asyncio.gather(*(registry.set_paused(uid, True) for uid in users))
    await asyncio.gather(*(registry.set_paused(uid, False) for uid in users[::2]))
    for view in (registry, await opened(tmp_path, databases)):
        assert [uid for uid in users if view.is_paused(uid)] == users[1::2]


# --- PostgreSQL: several processes ------------------------------------------------------------------------------


async def process(pg_databases: Databases, *, refresh_seconds: float | None = None) -> PostgresPauseRegistry:
    registry = PostgresPauseRegistry(await pg_databases.open(refresh_seconds=refresh_seconds))
    await registry.open()
    return registry


async def test_a_pause_in_one_process_is_seen_by_the_others(pg_databases: Databases) -> None:
    one, other = await process(pg_databases), await process(pg_databases)
    assert await one.set_paused(ALICE, True) is True
    await seen_by(other, lambda: other.is_paused(ALICE))
    assert await other.set_paused(ALICE, True) is False  # the database decides: already paused
    assert await other.set_paused(ALICE, False) is True
    await seen_by(one, lambda: not one.is_paused(ALICE))


async def test_two_processes_pausing_at_once_report_one_change(pg_databases: Databases) -> None:
    one, other = await process(pg_databases), await process(pg_databases)
    results = await asyncio.gather(one.set_paused(BOB, True), other.set_paused(BOB, True))
    assert sorted(results) == [False, True]


async def test_a_dropped_listening_connection_is_reconnected_and_catches_up(pg_databases: Databases) -> None:
    one, other = await process(pg_databases), await process(pg_databases)
    listener = notifications_of(other.database)
    listening = listener._conn
    assert listening is not None
    reconnected = listener.reconnects
    # as a server restart or a network cut would
    await one.database.execute("SELECT pg_terminate_backend($1)", listening.get_server_pid())
    await one.set_paused(ALICE, True)  # possibly sent while nobody listened in the other process
    await seen_by(other, lambda: other.is_paused(ALICE))
    await asyncio.wait_for(_until(lambda: listener.reconnects > reconnected), timeout=30)
    await one.set_paused(BOB, True)  # and notifications flow again on the new connection
    await seen_by(other, lambda: other.is_paused(BOB))


async def _until(condition: object) -> None:
    assert callable(condition)
    while not condition():
        await asyncio.sleep(0.05)


async def test_a_change_without_notification_is_found_by_the_periodic_reload(pg_databases: Databases) -> None:
    other = await process(pg_databases, refresh_seconds=0.2)
    writer = await pg_databases.open()
    await writer.execute("INSERT INTO paused_users (user_id) VALUES ($1)", ALICE)  # no NOTIFY
    await seen_by(other, lambda: other.is_paused(ALICE))


async def test_a_change_that_cannot_be_saved_is_not_believed(pg_databases: Databases) -> None:
    registry = await process(pg_databases)
    await registry.set_paused(ALICE, True)
    await registry.database.close()
    with pytest.raises(StorageUnavailable):
        await registry.set_paused(ALICE, False)
    with pytest.raises(StorageUnavailable):
        await registry.set_paused(BOB, True)
    assert registry.is_paused(ALICE) and not registry.is_paused(BOB)
