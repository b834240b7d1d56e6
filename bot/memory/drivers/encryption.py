"""Encrypting a plain store in place (`python -m bot encrypt-existing`) and re-wrapping its data keys under a new
master key (`python -m bot rotate-key`), for both backends. Bot processes must be stopped first (the commands
check): a bot started without the key would read sealed memory as unreadable.

- Resumable: the store is marked "converting" before the first record is sealed, each record is sealed on its own
  (a file replaced atomically, a row updated in a transaction under its user's lock), records already sealed are
  counted and left alone, and the mark says "on" only when everything is sealed. A bot refuses to start on a store
  whose conversion did not finish, so an interrupted run is simply run again.
- Nothing is learned or lost: a memory file keeps its modification time and a row its `updated_at` (the retention
  sweep's evidence of activity); the journal is replayed and compacted as at a start.
- Files: memory files and the copies kept aside for their users are sealed with their user's key; the journal's
  torn lines kept aside (`pending.jsonl.corrupt-*`, no user to seal them for) are deleted if they hold plain text,
  and temp files a crash left are removed.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.drivers.pg.generations import lock_user
from bot.storage.atomic import json_bytes, replace_file_sync, sweep_temp_files
from bot.storage.file_codec import FileCodec, is_sealed_json, read_mark, write_mark
from bot.storage.ids import is_snowflake_text
from bot.storage.pg import codec as pg_codec
from bot.storage.pg.codec import PostgresCodec
from bot.storage.pg.database import Database
from bot.storage.quarantine import CORRUPT_MARK, copies_of, move_aside
from bot.storage.sealing import MasterKey, StoreMark, conversion_mark

MEMORY_FOLDER = "memory"
PG_DATA_TABLES = ("memories", "pending_turns")
PG_BATCH = 100


@dataclass(slots=True)
class EncryptReport:
    """What one run of `encrypt-existing` did."""

    where: str
    memories_sealed: int = 0
    memories_already: int = 0
    copies_sealed: int = 0  # files: copies kept aside for a user
    turns_sealed: int = 0
    turns_already: int = 0
    fragments_deleted: int = 0  # files: torn journal lines kept aside, with no user to seal them for

    @property
    def changed(self) -> bool:
        return bool(self.memories_sealed or self.copies_sealed or self.turns_sealed or self.fragments_deleted)

    def lines(self) -> list[str]:
        if not self.changed:
            return [
                f"nothing to encrypt in {self.where}: {self.memories_already:,} memories and "
                f"{self.turns_already:,} pending turns are encrypted already"
            ]
        lines = [
            f"memories: {self.memories_sealed:,} encrypted now, {self.memories_already:,} already encrypted",
            f"pending turns: {self.turns_sealed:,} encrypted now, {self.turns_already:,} already encrypted",
        ]
        if self.copies_sealed:
            lines.append(f"{self.copies_sealed:,} copies of unreadable memory files kept aside: encrypted")
        if self.fragments_deleted:
            lines.append(f"{self.fragments_deleted:,} files of unreadable journal lines kept aside: deleted")
        lines.append(f"memory in {self.where} is encrypted; start the bot with the same MEMORY_ENCRYPTION_KEY")
        return lines


# --- files ---------------------------------------------------------------------------------------------------


def file_codec(data_dir: Path, key: MasterKey | None, *, durable: bool = True) -> FileCodec:
    return FileCodec(data_dir, key, durable=durable, data=(data_dir / MEMORY_FOLDER, data_dir / JOURNAL_NAME))


def encrypt_files(data_dir: Path, key: MasterKey, *, durable: bool = True) -> EncryptReport:
    """Seal every memory file and pending turn of the data folder in place (blocking; see the module)."""
    codec = file_codec(data_dir, key, durable=durable)
    mark = read_mark(codec.mark_path)
    store = codec.keys.store_id()
    working = conversion_mark(
        where=codec.where, keys_where=str(codec.keys.folder), key=key, mark=mark, key_store=store,
        key_store_used=codec.keys.used(),
    )
    if store is None:
        codec.keys.create(working.store)
    if mark != working:
        write_mark(codec.mark_path, working, durable=durable)
    report = EncryptReport(codec.where)
    _seal_memory_files(codec, data_dir / MEMORY_FOLDER, report, durable)
    _seal_journal(codec, data_dir / JOURNAL_NAME, report, durable)
    if working.state != "on":
        write_mark(codec.mark_path, StoreMark(working.store, key.fingerprint), durable=durable)
    return report


def _replace_keeping_time(path: Path, data: bytes, durable: bool) -> None:
    stat = path.stat()
    replace_file_sync(path, data, fsync=os.fsync if durable else None)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _seal_memory_files(codec: FileCodec, folder: Path, report: EncryptReport, durable: bool) -> None:
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        uid = path.stem
        if not is_snowflake_text(uid) or not path.is_file():
            continue
        try:
            value = json.loads(path.read_bytes())
        except ValueError:
            move_aside(path)  # what the store does with it at its next read; sealed below with the other copies
            continue
        if is_sealed_json(value):
            report.memories_already += 1
            continue
        _replace_keeping_time(path, json_bytes(codec.seal_json(uid, "memory", value), indent=2), durable)
        report.memories_sealed += 1
    for path in sorted(folder.glob(f"*.json{CORRUPT_MARK}*")):
        uid = path.name.partition(".")[0]
        if not is_snowflake_text(uid):
            continue
        raw = path.read_bytes()
        try:
            if is_sealed_json(json.loads(raw)):
                continue
        except ValueError:
            pass
        _replace_keeping_time(path, codec.seal_bytes(uid, "memory copy", raw), durable)
        report.copies_sealed += 1
    sweep_temp_files(folder)


def _seal_journal(codec: FileCodec, path: Path, report: EncryptReport, durable: bool) -> None:
    plain = sealed = 0
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    for raw in lines:
        try:
            record = json.loads(raw)
            turn = record["turn"] if record.get("op") == "turn" else None
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if turn is not None:
            sealed += is_sealed_json(turn)
            plain += not is_sealed_json(turn)
    if plain:
        # A replay reads plain and sealed records alike and rewrites the journal compacted, every turn sealed.
        journal = Journal(path, FileGenerations(), durable=durable, codec=codec)
        pending = journal.replay()
        report.turns_sealed = len(pending) + journal.parked
        report.turns_already = 0
    else:
        report.turns_already = sealed
    for copy in copies_of(path):
        text = copy.read_bytes()
        if all(b'{"sealed":' in line for line in text.splitlines() if line.strip()):
            continue
        copy.unlink()
        report.fragments_deleted += 1
    sweep_temp_files(path.parent, target=path.name)


def rotate_files(data_dir: Path, old: MasterKey, new: MasterKey, *, durable: bool = True) -> tuple[int, int]:
    """Re-wrap the data folder's keys from `old` to `new`; (re-wrapped now, already re-wrapped)."""
    return file_codec(data_dir, old, durable=durable).rotate(old, new)


# --- PostgreSQL ----------------------------------------------------------------------------------------------


def postgres_codec(database: Database, key: MasterKey | None) -> PostgresCodec:
    return PostgresCodec(database, key, lock_user=lock_user, data_tables=PG_DATA_TABLES)


async def encrypt_postgres(database: Database, key: MasterKey) -> EncryptReport:
    """Seal every memory row and pending-turn row of the (migrated) database in place (see the module)."""
    codec = postgres_codec(database, key)

    async def start(conn: asyncpg.Connection) -> StoreMark:
        await conn.execute("LOCK TABLE memory_encryption IN SHARE ROW EXCLUSIVE MODE")
        mark = await pg_codec.read_mark(conn)
        store = await pg_codec.key_store_id(conn)
        working = conversion_mark(
            where=codec.where, keys_where="the tables memory_keys and memory_key_store", key=key, mark=mark,
            key_store=store, key_store_used=bool(await conn.fetchval("SELECT EXISTS (SELECT 1 FROM memory_keys)")),
        )
        if store is None:
            await pg_codec.create_key_store(conn, working.store)
        if mark != working:
            await pg_codec.write_mark(conn, working)
        return working

    working = await database.run(start)
    report = EncryptReport(codec.where)
    report.memories_already = int(await database.fetchval("SELECT count(*) FROM memories WHERE sealed IS NOT NULL"))
    report.turns_already = int(await database.fetchval("SELECT count(*) FROM pending_turns WHERE sealed IS NOT NULL"))
    while users := await database.fetch(
        "SELECT user_id FROM memories WHERE doc IS NOT NULL ORDER BY user_id LIMIT $1", PG_BATCH
    ):
        for row in users:
            report.memories_sealed += await database.run(functools.partial(_seal_memory, codec=codec, uid=row[0]))
    while users := await database.fetch(
        "SELECT DISTINCT user_id FROM pending_turns WHERE turn IS NOT NULL ORDER BY user_id LIMIT $1", PG_BATCH
    ):
        for row in users:
            report.turns_sealed += await database.run(functools.partial(_seal_turns, codec=codec, uid=row[0]))
    if working.state != "on":
        await database.run(lambda conn: pg_codec.write_mark(conn, StoreMark(working.store, key.fingerprint)))
    return report


async def _seal_memory(conn: asyncpg.Connection, *, codec: PostgresCodec, uid: int) -> int:
    await lock_user(conn, uid)
    text = await conn.fetchval("SELECT doc::text FROM memories WHERE user_id = $1 AND doc IS NOT NULL", uid)
    if text is None:
        return 0
    _, sealed = await codec.encode(conn, uid, "memory", text)
    await conn.execute("UPDATE memories SET doc = NULL, sealed = $2 WHERE user_id = $1", uid, sealed)
    return 1


async def _seal_turns(conn: asyncpg.Connection, *, codec: PostgresCodec, uid: int) -> int:
    await lock_user(conn, uid)
    rows = await conn.fetch(
        "SELECT turn_id, turn::text AS turn FROM pending_turns WHERE user_id = $1 AND turn IS NOT NULL FOR UPDATE", uid
    )
    sealed = [(uid, row["turn_id"], (await codec.encode(conn, uid, "turn", row["turn"]))[1]) for row in rows]
    await conn.executemany(
        "UPDATE pending_turns SET turn = NULL, sealed = $3 WHERE user_id = $1 AND turn_id = $2", sealed
    )
    return len(sealed)


async def rotate_postgres(database: Database, old: MasterKey, new: MasterKey) -> tuple[int, int]:
    """Re-wrap the database's keys from `old` to `new`; (re-wrapped now, already re-wrapped)."""
    return await postgres_codec(database, old).rotate(old, new)
