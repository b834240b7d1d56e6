"""The timed privacy modes' contract on both backends, and on PostgreSQL a mode set in one process is seen by the
others."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.memory.backend import ModeStore
from bot.memory.modes import UNTIL_RESUME, ModeRegistry
from bot.memory.pg.modes import PostgresModeRegistry
from bot.storage.errors import InvalidUserId
from tests.conftest_state import Databases, seen_by

ALICE, BOB = 80351110224678912, 1001
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


async def opened(tmp_path: Path, databases: Databases | None, now: datetime = NOW) -> ModeStore:
    registry: ModeStore
    if databases is None:
        registry = ModeRegistry(tmp_path / "modes.json")
    else:
        registry = PostgresModeRegistry(await databases.open())
    await registry.open(now)
    return registry


async def test_timers_persist_and_end_on_time(tmp_path: Path, databases: Databases | None) -> None:
    modes = await opened(tmp_path, databases)
    await modes.set_incognito(ALICE, NOW + timedelta(minutes=30), NOW)
    await modes.set_fresh(BOB, UNTIL_RESUME, NOW)
    assert modes.incognito_until(ALICE, NOW) == NOW + timedelta(minutes=30)
    again = await opened(tmp_path, databases)
    assert again.incognito_until(ALICE, NOW) == NOW + timedelta(minutes=30)
    assert again.incognito_until(ALICE, NOW + timedelta(minutes=30)) is None  # ends exactly on time
    assert again.fresh_until(BOB, NOW + timedelta(days=300)) == UNTIL_RESUME
    assert again.fresh_until(ALICE, NOW) is None and again.incognito_until(BOB, NOW) is None
    assert again.users() == {ALICE, BOB}
    assert await again.clear(BOB, NOW) is True and await again.clear(BOB, NOW) is False
    third = await opened(tmp_path, databases)
    assert third.fresh_until(BOB, NOW) is None and third.users() == {ALICE}


async def test_both_modes_of_one_user_are_independent(tmp_path: Path, databases: Databases | None) -> None:
    modes = await opened(tmp_path, databases)
    await modes.set_incognito(ALICE, NOW + timedelta(minutes=10), NOW)
    await modes.set_fresh(ALICE, NOW + timedelta(minutes=20), NOW)
    await modes.set_incognito(ALICE, None, NOW)  # ends incognito only
    again = await opened(tmp_path, databases)
    assert again.incognito_until(ALICE, NOW) is None
    assert again.fresh_until(ALICE, NOW) == NOW + timedelta(minutes=20)
    await again.set_fresh(ALICE, None, NOW)
    assert again.users() == set() and (await opened(tmp_path, databases)).users() == set()


async def test_expired_entries_are_dropped(tmp_path: Path, databases: Databases | None) -> None:
    modes = await opened(tmp_path, databases)
    await modes.set_incognito(ALICE, NOW + timedelta(minutes=1), NOW)
    later = NOW + timedelta(minutes=5)
    await modes.set_fresh(BOB, later + timedelta(minutes=10), later)
    assert modes.users() == {BOB}
    assert (await opened(tmp_path, databases, later)).users() == {BOB}


async def test_clearing_an_expired_mode_reports_nothing_was_on(tmp_path: Path, databases: Databases | None) -> None:
    modes = await opened(tmp_path, databases)
    await modes.set_incognito(ALICE, NOW + timedelta(minutes=1), NOW)
    assert await modes.clear(ALICE, NOW + timedelta(minutes=2)) is False


@pytest.mark.parametrize("bad", ["abc", "0", "-1", 2**64])
async def test_invalid_ids_are_refused(tmp_path: Path, databases: Databases | None, bad: object) -> None:
    modes = await opened(tmp_path, databases)
    with pytest.raises(InvalidUserId):
        await modes.set_incognito(bad, NOW + timedelta(minutes=1), NOW)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserId):
        modes.fresh_until(bad, NOW)  # type: ignore[arg-type]


# --- PostgreSQL: several processes ------------------------------------------------------------------------------


async def test_a_mode_set_in_one_process_is_seen_by_the_others(pg_databases: Databases) -> None:
    one = PostgresModeRegistry(await pg_databases.open())
    other = PostgresModeRegistry(await pg_databases.open())
    await one.open()
    await other.open()
    until = NOW + timedelta(minutes=30)
    await one.set_incognito(ALICE, until, NOW)
    await one.set_fresh(BOB, UNTIL_RESUME, NOW)
    await seen_by(other, lambda: other.incognito_until(ALICE, NOW) == until)
    await seen_by(other, lambda: other.fresh_until(BOB, NOW) == UNTIL_RESUME)
    assert await other.clear(ALICE, NOW) is True  # the database decides: it was on
    await seen_by(one, lambda: one.incognito_until(ALICE, NOW) is None)
    assert await one.clear(ALICE, NOW) is False
