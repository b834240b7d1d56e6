"""Encryption at rest as an operator meets it, through real processes: `python -m bot` refuses to start with a
missing or wrong MEMORY_ENCRYPTION_KEY (one line, exit 2, never the key); `python -m bot encrypt-existing`
converts a plain data folder or database in place and says what it did, and a second run does nothing; the bot then
starts with the key and learns into sealed files; `python -m bot rotate-key` (the new key on stdin) makes the new key
the only one that starts the store; `import-files` reads an encrypted folder with its key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.turns import PostgresTurnQueue
from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn
from bot.storage.file_codec import FileCodec
from bot.storage.folder_lock import LOCK_FILE, lock_folder
from bot.storage.sealing import MasterKey, new_master_key_text
from tests.support.engine import save_memory
from tests.support.llm_server import extraction
from tests.test_database_commands import query, with_database, with_password
from tests.test_process import (  # noqa: F401 (fixtures)
    ALICE,
    CHANNEL,
    FACT,
    Spawn,
    assert_one_clean_line,
    clean_env,
    journal_turns,
    llm_server,
    run_bot_command,
    spawn,
    standin_env,
    workdir,
)

KEY = new_master_key_text()
NEW_KEY = new_master_key_text()
SAID = "I write Go microservices at work."  # journal_turns' text
REMEMBERED = "Plays the bassoon in a brass band in Ghent"
WORDS = ("microservices", "bassoon", "Ghent")


def storage_command(args: list[str], cwd: Path, stdin: str | None = None, **settings: str) -> Any:
    """`python -m bot ARGS` with the storage settings alone; no output ever shows a key."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=cwd, env=clean_env(**settings), input=stdin,
        capture_output=True, text=True, timeout=300,
    )
    for key in (KEY, NEW_KEY):
        assert key not in done.stdout + done.stderr
    return done


def encrypt(cwd: Path, data_dir: Path) -> Any:
    return storage_command(["encrypt-existing"], cwd, DATA_DIR=str(data_dir), MEMORY_ENCRYPTION_KEY=KEY)


def rotate(cwd: Path, data_dir: Path, new_key: str) -> Any:
    return storage_command(["rotate-key"], cwd, new_key, DATA_DIR=str(data_dir), MEMORY_ENCRYPTION_KEY=KEY)


def every_byte(root: Path) -> bytes:
    """Every stored byte, but the DATA_DIR lock's label (the pid of whoever held it last)."""
    paths = [path for path in sorted(root.rglob("*")) if path.is_file() and path.name != LOCK_FILE]
    return b"\n".join(path.read_bytes() for path in paths)


def plain_folder(data_dir: Path) -> None:
    """A plain data folder: one memory file and one pending turn of Alice."""
    journal_turns(data_dir, [ALICE])
    memory = MemoryFile(facts=[Fact(id="fact_00000001", content=REMEMBERED, category="hobby", confidence=0.9,
                                    createdAt="2024-05-01T00:00:00+00:00")])
    (data_dir / "memory").mkdir(exist_ok=True)
    (data_dir / "memory" / f"{ALICE}.json").write_text(json.dumps(memory.model_dump(mode="json")))


def opened_memory(data_dir: Path, key: str) -> list[str]:
    codec = FileCodec(data_dir, MasterKey.parse(key))
    raw = json.loads((data_dir / "memory" / f"{ALICE}.json").read_bytes())
    return [fact["content"] for fact in codec.open_json(ALICE, "memory", raw)["facts"]]


def start_line(cwd: Path, data_dir: Path, **settings: str) -> str:
    result = run_bot_command([], cwd, standin_env(data_dir, "http://127.0.0.1:9/v1", **settings))
    assert result.returncode == 2, result.stderr
    assert KEY not in result.stderr + result.stdout and NEW_KEY not in result.stderr + result.stdout
    return assert_one_clean_line(result.stderr)


def test_files_encrypted_in_place_then_learned_sealed_and_only_the_key_starts_the_bot(
    workdir: Path, spawn: Spawn  # noqa: F811
) -> None:
    data_dir = workdir / "data"
    plain_folder(data_dir)
    assert "not encrypted yet" in start_line(workdir, data_dir, MEMORY_ENCRYPTION_KEY=KEY)

    first = storage_command(["encrypt-existing"], workdir, DATA_DIR=str(data_dir), MEMORY_ENCRYPTION_KEY=KEY)
    assert first.returncode == 0, first.stderr
    assert "memories: 1 encrypted now" in first.stdout and "pending turns: 1 encrypted now" in first.stdout
    assert [word for word in WORDS if word.encode() in every_byte(data_dir)] == []
    before = every_byte(data_dir)
    second = storage_command(["encrypt-existing"], workdir, DATA_DIR=str(data_dir), MEMORY_ENCRYPTION_KEY=KEY)
    assert second.returncode == 0 and second.stdout.startswith("nothing to encrypt"), second.stdout
    assert every_byte(data_dir) == before

    assert "is encrypted: set MEMORY_ENCRYPTION_KEY" in start_line(workdir, data_dir)
    assert "is not the key" in start_line(workdir, data_dir, MEMORY_ENCRYPTION_KEY=NEW_KEY)

    # The bot starts with the key, learns the pending turn on SIGTERM, and writes it sealed.
    with llm_server(workdir, [extraction(facts=[(FACT, "knowledge")])]) as server:
        bot = spawn(data_dir, standin_env(data_dir, server.base_url, MEMORY_ENCRYPTION_KEY=KEY, LOG_LEVEL="DEBUG"))
        bot.wait_ready()
        bot.stop(signal.SIGTERM)
    assert bot.returncode == 0, bot.output()
    assert KEY not in bot.output() and "DEBUG" in bot.output()  # never logged, not even at DEBUG
    assert sorted(opened_memory(data_dir, KEY)) == sorted([REMEMBERED, FACT])
    assert [word for word in (*WORDS, "Go microservices") if word.encode() in every_byte(data_dir)] == []


def test_rotate_key_reads_the_new_key_from_stdin_and_only_the_new_key_starts(workdir: Path) -> None:  # noqa: F811
    data_dir = workdir / "data"
    plain_folder(data_dir)
    assert encrypt(workdir, data_dir).returncode == 0

    rotated = rotate(workdir, data_dir, NEW_KEY + "\n")
    assert rotated.returncode == 0, rotated.stderr
    assert "1 re-wrapped with the new key now" in rotated.stdout and "set MEMORY_ENCRYPTION_KEY" in rotated.stdout
    assert "is not the key" in start_line(workdir, data_dir, MEMORY_ENCRYPTION_KEY=KEY)
    assert opened_memory(data_dir, NEW_KEY) == [REMEMBERED]

    again = rotate(workdir, data_dir, NEW_KEY + "\n")
    assert again.returncode == 0 and "0 re-wrapped with the new key now, 1 already were" in again.stdout
    bad = rotate(workdir, data_dir, "not a key\n")
    assert bad.returncode == 1
    assert_one_clean_line(bad.stderr, "the new key must be 32 random bytes in base64")


def test_the_encryption_commands_refuse_without_a_key_or_while_a_bot_runs(workdir: Path) -> None:  # noqa: F811
    data_dir = workdir / "data"
    plain_folder(data_dir)
    no_key = storage_command(["encrypt-existing"], workdir, DATA_DIR=str(data_dir))
    assert no_key.returncode == 1
    assert_one_clean_line(no_key.stderr, "MEMORY_ENCRYPTION_KEY is not set", "openssl rand -base64 32")

    held = lock_folder(data_dir)  # as a running bot holds it
    try:
        running = storage_command(["encrypt-existing"], workdir, DATA_DIR=str(data_dir), MEMORY_ENCRYPTION_KEY=KEY)
    finally:
        held.release()
    assert running.returncode == 1
    assert_one_clean_line(running.stderr, f"DATA_DIR {data_dir} is in use by another memory-bot process")
    assert b"microservices" in every_byte(data_dir)  # nothing was touched


# --- PostgreSQL --------------------------------------------------------------------------------------------------


def plain_database(url: str) -> None:
    """Alice's memory and one pending turn, written by the plain drivers (a database used before the key)."""

    async def fill(database: Any) -> None:
        from bot.memory.drivers.pg.schema import migrate

        await database.run(migrate, transaction=False)
        memory = MemoryFile(facts=[Fact(id="fact_00000001", content=REMEMBERED, category="hobby", confidence=0.9,
                                        createdAt="2024-05-01T00:00:00+00:00")])
        await save_memory(PostgresMemoryStore(database), ALICE, memory)
        queue = PostgresTurnQueue(database, lease_seconds=60, orphan_seconds=60)
        await queue.add(ConversationKey(CHANNEL, ALICE), [Turn("user", ALICE, "alice", SAID, datetime.now(UTC), "t1")])

    with_database(url, fill)


def database_bytes(url: str) -> bytes:
    async def dump(conn: asyncpg.Connection) -> bytes:
        found = []
        for table in await conn.fetch("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"):
            name = table["table_name"]
            found += [row[0].encode() for row in await conn.fetch(f'SELECT t::text FROM "{name}" t')]
        return b"\n".join(found)

    return query(url, dump)


def test_a_database_encrypted_in_place_and_a_second_run_does_nothing(
    postgres_url: str, workdir: Path  # noqa: F811
) -> None:
    plain_database(postgres_url)
    url = with_password(postgres_url)
    assert b"bassoon" in database_bytes(postgres_url) and b"microservices" in database_bytes(postgres_url)
    first = storage_command(["encrypt-existing"], workdir, DATABASE_URL=url, MEMORY_ENCRYPTION_KEY=KEY)
    assert first.returncode == 0, first.stderr
    assert "memories: 1 encrypted now" in first.stdout and "pending turns: 1 encrypted now" in first.stdout
    assert [word for word in WORDS if word.encode() in database_bytes(postgres_url)] == []
    second = storage_command(["encrypt-existing"], workdir, DATABASE_URL=url, MEMORY_ENCRYPTION_KEY=KEY)
    assert second.returncode == 0 and second.stdout.startswith("nothing to encrypt"), second.stdout

    result = run_bot_command([], workdir, standin_env(workdir / "data", "http://127.0.0.1:9/v1", DATABASE_URL=url))
    assert result.returncode == 2
    assert_one_clean_line(result.stderr, "is encrypted: set MEMORY_ENCRYPTION_KEY")

    async def read(database: Any) -> list[str]:
        from bot.memory.drivers.encryption import postgres_codec

        codec = postgres_codec(database, MasterKey.parse(KEY))
        return [fact.content for fact in (await PostgresMemoryStore(database, codec=codec).load(ALICE)).facts]

    assert with_database(postgres_url, read) == [REMEMBERED]


def test_import_files_reads_an_encrypted_folder_with_its_key(postgres_url: str, workdir: Path) -> None:  # noqa: F811
    data_dir = workdir / "data"
    plain_folder(data_dir)
    assert encrypt(workdir, data_dir).returncode == 0
    url = with_password(postgres_url)
    without = storage_command(["import-files", str(data_dir)], workdir, DATABASE_URL=url)
    assert without.returncode == 1
    assert_one_clean_line(without.stderr, "is encrypted: set MEMORY_ENCRYPTION_KEY")

    done = storage_command(["import-files", str(data_dir)], workdir, DATABASE_URL=url, MEMORY_ENCRYPTION_KEY=KEY)
    assert done.returncode == 0, done.stderr
    assert "encrypt-existing" in done.stdout
    docs = query(postgres_url, lambda conn: conn.fetch("SELECT doc::text AS doc FROM memories"))
    assert REMEMBERED in docs[0]["doc"]
    assert storage_command(["encrypt-existing"], workdir, DATABASE_URL=url, MEMORY_ENCRYPTION_KEY=KEY).returncode == 0
    again = storage_command(["import-files", str(data_dir)], workdir, DATABASE_URL=url, MEMORY_ENCRYPTION_KEY=KEY)
    assert again.returncode == 1
    assert_one_clean_line(again.stderr, "memory in this database is encrypted")
    assert os.path.exists(data_dir / JOURNAL_NAME) and Journal  # the files are left as they were
