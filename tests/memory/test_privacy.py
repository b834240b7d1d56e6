"""Each user's one privacy record (paused, incognito until, fresh until) on both backends; files written by earlier
versions (`paused.json`, `modes.json`) converted once; an unreadable record file fails closed."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.memory.drivers.bundle import PRIVACY_FILE, build_file_storage
from bot.memory.records.privacy_modes import PrivacyBook, PrivacyRecord
from bot.storage.errors import InvalidUserId
from bot.storage.pg.records import PostgresRecords
from tests.conftest_state import WAIT_SECONDS, Databases

ALICE, BOB = 80351110224678912, 1001
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


async def opened(tmp_path: Path, databases: Databases | None) -> PrivacyBook:
    """The privacy book as a freshly started process has it (files: through the file builder, as the bot)."""
    if databases is None:
        book = build_file_storage(tmp_path, durable=False).privacy
    else:
        book = PrivacyBook(PostgresRecords(await databases.open(), "privacy"))
    await book.open()
    return book


async def test_timers_persist_and_end_on_time(tmp_path: Path, databases: Databases | None) -> None:
    book = await opened(tmp_path, databases)
    await book.update(ALICE, NOW, incognito_until=NOW + timedelta(minutes=30))
    await book.update(BOB, NOW, fresh_until_resume=True)
    again = await opened(tmp_path, databases)
    assert again.of(ALICE, NOW).incognito_until == NOW + timedelta(minutes=30)
    assert again.of(ALICE, NOW).incognito and not again.of(ALICE, NOW).fresh
    assert not again.of(ALICE, NOW + timedelta(minutes=30)).incognito  # ends exactly on time
    assert again.of(BOB, NOW + timedelta(days=300)).fresh_until_resume
    assert again.users() == {ALICE, BOB}
    before, after = await again.update(BOB, NOW, fresh_until_resume=False)
    assert before.fresh and not after.fresh and after == PrivacyRecord()
    assert (await opened(tmp_path, databases)).users() == {ALICE}


async def test_a_pause_and_both_timers_of_one_user_are_independent(tmp_path: Path, databases: Databases | None) -> None:
    book = await opened(tmp_path, databases)
    await book.update(ALICE, NOW, paused=True)
    await book.update(ALICE, NOW, fresh_until=NOW + timedelta(minutes=20))
    await book.update(ALICE, NOW, incognito_until=NOW + timedelta(minutes=10))
    await book.update(ALICE, NOW, incognito_until=None)
    record = (await opened(tmp_path, databases)).of(ALICE, NOW)
    assert record.paused and record.incognito_until is None and record.fresh_until == NOW + timedelta(minutes=20)
    await book.update(ALICE, NOW, paused=False, fresh_until=None)
    assert (await opened(tmp_path, databases)).users() == set()  # only what is on is kept


async def test_expired_records_are_pruned(tmp_path: Path, databases: Databases | None) -> None:
    book = await opened(tmp_path, databases)
    await book.update(ALICE, NOW, incognito_until=NOW + timedelta(minutes=1))
    await book.update(BOB, NOW, fresh_until=NOW + timedelta(minutes=20))
    assert await book.prune(NOW + timedelta(minutes=5)) == 1
    assert (await opened(tmp_path, databases)).users() == {BOB}


@pytest.mark.parametrize("bad", ["abc", "0", "-1", 2**64, True])
async def test_invalid_ids_are_refused(tmp_path: Path, databases: Databases | None, bad: object) -> None:
    book = await opened(tmp_path, databases)
    with pytest.raises(InvalidUserId):
        await book.update(bad, NOW, paused=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserId):
        book.of(bad, NOW)  # type: ignore[arg-type]


async def test_a_pause_in_one_process_is_seen_by_the_others(pg_databases: Databases) -> None:
    one, other = await opened(Path(), pg_databases), await opened(Path(), pg_databases)
    await one.update(ALICE, NOW, paused=True)
    table = other.table
    assert isinstance(table, PostgresRecords)
    await asyncio.wait_for(table.wait_for(lambda: other.of(ALICE, NOW).paused), WAIT_SECONDS)


# --- files: earlier versions and damage ------------------------------------------------------------------------


async def test_pauses_and_modes_of_an_earlier_version_are_converted_once(tmp_path: Path) -> None:
    (tmp_path / "paused.json").write_text(json.dumps({"users": [str(ALICE)]}))
    later = (NOW + timedelta(minutes=30)).isoformat()
    (tmp_path / "modes.json").write_text(
        json.dumps({"users": {str(ALICE): {"freshUntil": "resume"}, str(BOB): {"incognitoUntil": later}}})
    )
    book = await opened(tmp_path, None)
    assert book.of(ALICE, NOW) == PrivacyRecord(paused=True, fresh_until_resume=True)
    assert book.of(BOB, NOW).incognito_until == NOW + timedelta(minutes=30)
    assert not (tmp_path / "paused.json").exists() and not (tmp_path / "modes.json").exists()
    assert set(json.loads((tmp_path / PRIVACY_FILE).read_bytes())["records"]) == {str(ALICE), str(BOB)}
    assert not book.held


@pytest.mark.parametrize("damaged", ["paused.json", "modes.json"])
async def test_a_damaged_file_of_an_earlier_version_fails_closed(tmp_path: Path, damaged: str) -> None:
    (tmp_path / damaged).write_bytes(b'{"users": [')
    book = await opened(tmp_path, None)
    assert book.held
    record = book.of(BOB, NOW)
    assert record.incognito and record.fresh and record.held
    [aside] = list(tmp_path.glob(f"{PRIVACY_FILE}.corrupt-*"))
    assert aside.read_bytes() == b'{"users": ['


async def test_an_unreadable_privacy_file_holds_learning_and_memory_for_everyone_until_removed(
    tmp_path: Path,
) -> None:
    (tmp_path / PRIVACY_FILE).write_bytes(b'{"records": {"1001": ')
    book = await opened(tmp_path, None)
    assert book.held and book.of(ALICE, NOW).incognito and book.of(ALICE, NOW).fresh
    await book.update(ALICE, NOW, paused=True)  # choices still save, and stay held
    again = await opened(tmp_path, None)
    assert again.held and again.of(ALICE, NOW).paused
    for copy in tmp_path.glob(f"{PRIVACY_FILE}.corrupt-*"):  # the operator looked
        copy.unlink()
    third = await opened(tmp_path, None)
    assert not third.held and not third.of(BOB, NOW).incognito and third.of(ALICE, NOW).paused
