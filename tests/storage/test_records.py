"""The contract of a table of small records, on both drivers (a file, PostgreSQL rows); on PostgreSQL what one
process changes is seen by the others: by notification, after a dropped listening connection, and by the periodic
full reload; on files, what an unreadable file means is the owner's choice (refuse to start, or keep it aside)."""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path

import pytest

from bot.storage.atomic import AtomicWriter
from bot.storage.errors import RecordsUnreadable, StorageUnavailable
from bot.storage.pg.mirror import notifications_of
from bot.storage.pg.records import PostgresRecords
from bot.storage.records import FileRecords, RecordTable
from tests.conftest_state import WAIT_SECONDS, Databases


async def opened(tmp_path: Path, databases: Databases | None, name: str = "things") -> RecordTable:
    """The table as a freshly started process has it."""
    table: RecordTable
    if databases is None:
        table = FileRecords(tmp_path / f"{name}.json", on_damaged="refuse")
    else:
        table = PostgresRecords(await databases.open(), name)
    await table.open()
    return table


async def test_records_persist_across_restarts(tmp_path: Path, databases: Databases | None) -> None:
    table = await opened(tmp_path, databases)
    assert table.get("a") is None and len(table) == 0
    await table.put("a", {"on": True, "n": 1})
    await table.put("b", {"text": "ünïcode"})
    before, after = await table.change("a", lambda old: {**(old or {}), "n": 2})
    assert before == {"on": True, "n": 1} and after == {"on": True, "n": 2}
    again = await opened(tmp_path, databases)
    assert again.items() == {"a": {"on": True, "n": 2}, "b": {"text": "ünïcode"}}
    assert await again.delete(["a", "missing"]) == 1
    await again.put("b", None)
    assert (await opened(tmp_path, databases)).items() == {}


async def test_tables_of_different_names_are_separate(tmp_path: Path, databases: Databases | None) -> None:
    one, other = await opened(tmp_path, databases, "one"), await opened(tmp_path, databases, "other")
    await one.put("k", {"v": 1})
    assert other.get("k") is None
    assert (await opened(tmp_path, databases, "other")).items() == {}


async def test_concurrent_changes_all_land(tmp_path: Path, databases: Databases | None) -> None:
    table = await opened(tmp_path, databases)
    await asyncio.gather(*(table.put(str(n), {"n": n}) for n in range(40)))
    await asyncio.gather(*(table.change("count", lambda old: {"n": (old or {"n": 0})["n"] + 1}) for _ in range(20)))
    again = await opened(tmp_path, databases)
    assert again.get("count") == {"n": 20} and len(again) == 41


async def test_dump_and_load_missing_never_overwrite(tmp_path: Path, databases: Databases | None) -> None:
    table = await opened(tmp_path, databases)
    await table.put("kept", {"v": "database"})
    added = await table.load_missing({"kept": {"v": "file"}, "new": {"v": "file"}})
    assert added == 1
    assert await table.dump() == {"kept": {"v": "database"}, "new": {"v": "file"}}
    assert await table.load_missing({"kept": {"v": "again"}}) == 0


# --- files ----------------------------------------------------------------------------------------------------


async def test_an_unreadable_file_refuses_to_start_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "things.json"
    path.write_bytes(b'{"records": {"a": ')
    with pytest.raises(RecordsUnreadable) as caught:
        await FileRecords(path, on_damaged="refuse").open()
    assert "things.json" in str(caught.value) and "\n" not in str(caught.value)
    assert path.read_bytes() == b'{"records": {"a": '  # kept as it was


@pytest.mark.parametrize("raw", [b"[", b'{"records": [1]}', b'{"records": {"a": 3}}', b"\x00\x00"])
async def test_an_unreadable_file_kept_aside_marks_the_table_damaged_until_removed(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "things.json"
    path.write_bytes(raw)
    table = FileRecords(path, on_damaged="aside")
    await table.open()
    assert table.damaged and table.items() == {}
    [aside] = list(tmp_path.glob("things.json.corrupt-*"))
    assert aside.read_bytes() == raw and (aside.stat().st_mode & 0o777) == 0o600
    await table.put("a", {"v": 1})  # it still works, and stays damaged until an operator removes the copy
    again = FileRecords(path, on_damaged="aside")
    await again.open()
    assert again.damaged and again.get("a") == {"v": 1}
    aside.unlink()
    third = FileRecords(path, on_damaged="aside")
    await third.open()
    assert not third.damaged


class FailingFsync:
    def __init__(self) -> None:
        self.fail = False

    def __call__(self, fd: int) -> None:
        if self.fail:
            raise OSError(errno.ENOSPC, "No space left on device")


async def test_a_failed_write_changes_nothing(tmp_path: Path) -> None:
    fsync = FailingFsync()
    path = tmp_path / "things.json"
    table = FileRecords(path, on_damaged="refuse", writer=AtomicWriter(fsync=fsync))
    await table.open()
    await table.put("a", {"v": 1})
    fsync.fail = True
    with pytest.raises(OSError):
        await table.put("a", {"v": 2})
    with pytest.raises(OSError):
        await table.put("b", {"v": 3})
    assert table.items() == {"a": {"v": 1}}
    assert json.loads(path.read_bytes()) == {"records": {"a": {"v": 1}}}
    assert not list(tmp_path.glob(".things.json.*.tmp"))


async def test_open_sweeps_temp_files_of_an_interrupted_save_and_makes_the_file_private(tmp_path: Path) -> None:
    path = tmp_path / "things.json"
    path.write_bytes(b'{"records": {}}')
    path.chmod(0o644)
    stray = AtomicWriter.temp_path_for(path)
    stray.write_bytes(b"half")
    await FileRecords(path, on_damaged="refuse").open()
    assert not stray.exists() and (path.stat().st_mode & 0o777) == 0o600


# --- PostgreSQL: several processes -----------------------------------------------------------------------------


async def process(pg_databases: Databases, *, refresh_seconds: float | None = None) -> PostgresRecords:
    table = PostgresRecords(await pg_databases.open(refresh_seconds=refresh_seconds), "things")
    await table.open()
    return table


async def seen_by(table: PostgresRecords, predicate: object) -> None:
    assert callable(predicate)
    await asyncio.wait_for(table.wait_for(predicate), timeout=WAIT_SECONDS)


async def test_a_change_in_one_process_is_seen_by_the_others(pg_databases: Databases) -> None:
    one, other = await process(pg_databases), await process(pg_databases)
    await one.put("a", {"v": 1})
    await seen_by(other, lambda: other.get("a") == {"v": 1})
    await other.put("a", None)
    await seen_by(one, lambda: one.get("a") is None)


async def test_two_processes_changing_one_record_lose_neither_change(pg_databases: Databases) -> None:
    one, other = await process(pg_databases), await process(pg_databases)

    def bump(old: dict[str, int] | None) -> dict[str, int]:
        return {"n": (old or {"n": 0})["n"] + 1}

    await asyncio.gather(*(table.change("n", bump) for table in [one, other] * 10))  # type: ignore[arg-type]
    assert (await process(pg_databases)).get("n") == {"n": 20}


async def test_a_dropped_listening_connection_is_reconnected_and_catches_up(pg_databases: Databases) -> None:
    one, other = await process(pg_databases), await process(pg_databases)
    listener = notifications_of(other.database)
    listening = listener._conn
    assert listening is not None
    reconnected = listener.reconnects
    # as a server restart or a network cut would
    await one.database.execute("SELECT pg_terminate_backend($1)", listening.get_server_pid())
    await one.put("a", {"v": 1})  # possibly sent while nobody listened in the other process
    await seen_by(other, lambda: other.get("a") is not None)
    await seen_by(other, lambda: listener.reconnects > reconnected)
    await one.put("b", {"v": 2})  # and notifications flow again on the new connection
    await seen_by(other, lambda: other.get("b") is not None)


async def test_a_change_without_notification_is_found_by_the_periodic_reload(pg_databases: Databases) -> None:
    other = await process(pg_databases, refresh_seconds=0.2)
    writer = await pg_databases.open()
    await writer.execute("INSERT INTO records (kind, key, value) VALUES ('things', 'a', '{}')")  # no NOTIFY
    await seen_by(other, lambda: other.get("a") == {})


async def test_a_change_that_cannot_be_saved_is_not_believed(pg_databases: Databases) -> None:
    table = await process(pg_databases)
    await table.put("a", {"v": 1})
    await table.database.close()
    with pytest.raises(StorageUnavailable):
        await table.put("a", None)
    with pytest.raises(StorageUnavailable):
        await table.put("b", {"v": 2})
    assert table.items() == {"a": {"v": 1}}
