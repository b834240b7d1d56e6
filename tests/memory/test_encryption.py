"""Encryption at rest (MEMORY_ENCRYPTION_KEY), on files and on PostgreSQL, through the engine's front door:

- with the key, no byte under DATA_DIR and no row of the database holds a user's words (memory, pending turns,
  their display name), while the engine reads them back as before;
- memory and pending turns survive a restart with the same key (the pending turn is learned after it);
- forgetting destroys the user's key: a copy of the data taken before the forget, put back with the key store as
  it is after, cannot be read (the other users' can), and a later memory of the same user is sealed anew;
- a missing or wrong key, plain data under a key, and a missing key store refuse to start with one line;
- `encrypt-existing` converts a plain store in place (a second run does nothing) and `rotate-key` re-wraps the
  keys so that only the new key starts the store.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from openai import AsyncOpenAI

from bot.memory.doors import ForgetEverything
from bot.memory.drivers.encryption import encrypt_files, encrypt_postgres, rotate_files, rotate_postgres
from bot.memory.models import ConversationKey
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.errors import EncryptionRefused
from bot.storage.pg.database import Database
from bot.storage.sealing import MasterKey, new_master_key_text
from tests.memory.test_service import ALICE, BOB, CHANNEL, turn
from tests.support.engine import close_service, file_service, learn, parts, postgres_service, wait_idle
from tests.support.llm_server import ChatServer, extraction

SECRET = "zebra-violet-4711"
FACT = f"Keeps a pet axolotl called {SECRET}"
BOB_FACT = "Collects enamel pins of lighthouses"
LATER = "pelican-marmalade"
NAME = "quokka-nickname"
KEY = MasterKey.parse(new_master_key_text())
OTHER_KEY = MasterKey.parse(new_master_key_text())
WORDS = (SECRET, "axolotl", LATER, NAME, "lighthouses")


@dataclass
class Store:
    """One backend's store: services over it, and every byte it holds."""

    kind: str
    data: Path
    url: str | None
    base_url: str
    clients: list[AsyncOpenAI] = field(default_factory=list)
    opened: list[MemoryService] = field(default_factory=list)

    def service(self, key: MasterKey | None, *, debounce: float = 0.05, max_wait: float = 5.0) -> MemoryService:
        client = AsyncOpenAI(base_url=self.base_url, api_key="test", max_retries=0, timeout=10)
        self.clients.append(client)
        policy = MemoryPolicy(debounce_seconds=debounce, max_wait_seconds=max_wait)
        extractor = MemoryExtractor(client, model="memory-model", max_retries=1)
        if self.url is None:
            return file_service(self.data, extractor, policy, durable=False, encryption_key=key)
        return postgres_service(Database(self.url, size=3), extractor, policy, encryption_key=key)

    async def open(self, key: MasterKey | None, **options: Any) -> MemoryService:
        service = self.service(key, **options)
        await service.ops.open()
        self.opened.append(service)
        return service

    async def close(self, service: MemoryService) -> None:
        """Stop as a crash would (pending turns stay stored), then close the storage."""
        await close_service(service)
        self.opened.remove(service)

    async def every_byte(self) -> bytes:
        """Every file under DATA_DIR, and (PostgreSQL) every row of every table, as text and raw bytes."""
        found = [path.read_bytes() for path in sorted(self.data.rglob("*")) if path.is_file()]
        if self.url is not None:
            conn = await asyncpg.connect(self.url)
            try:
                tables = await conn.fetch(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                )
                for table in tables:
                    name = table["table_name"]
                    found += [row[0].encode() for row in await conn.fetch(f'SELECT t::text FROM "{name}" t')]
                    for row in await conn.fetch(f'SELECT * FROM "{name}"'):
                        found += [value for value in row.values() if isinstance(value, bytes)]
            finally:
                await conn.close()
        return b"\n".join(found)

    async def aclose(self) -> None:
        for service in list(self.opened):
            await self.close(service)
        for client in self.clients:
            await client.close()


@pytest.fixture(params=["files", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path, chat_server: ChatServer) -> AsyncIterator[Store]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    chat_server.default = extraction(facts=[(FACT, "context", 0.95)])
    built = Store(request.param, tmp_path / "data", url, chat_server.base_url)
    built.data.mkdir()
    yield built
    await built.aclose()


async def learned(service: MemoryService, user: int = ALICE, fact: str = FACT) -> None:
    key = ConversationKey(CHANNEL, user)
    await learn(service, key, [turn(user, f"my axolotl is called {SECRET}", name=NAME)])
    await asyncio.wait_for(wait_idle(service), 20)
    assert [item.content for item in (await service.user(user).show()).facts] == [fact]


async def pending_later(service: MemoryService, user: int = ALICE) -> None:
    """A turn that stays pending (the quiet time is long): its words are stored, not yet learned."""
    parts(service).learning.debouncer.quiet_seconds = parts(service).learning.debouncer.max_wait_seconds = 3600
    await learn(service, ConversationKey(CHANNEL, user), [turn(user, f"{LATER} for breakfast", name=NAME)])
    assert any(LATER in item.turn.text for item in await parts(service).storage.turns.pending_turns_of(user))


def absent(dump: bytes) -> list[str]:
    return [word for word in WORDS if word.encode() in dump]


async def test_with_the_key_no_byte_of_the_store_holds_a_users_words(store: Store) -> None:
    service = await store.open(KEY)
    await learned(service)
    await pending_later(service)
    assert absent(await store.every_byte()) == []
    assert (await service.user(ALICE).show()).facts[0].content == FACT  # the engine reads it as before

    plain = Store("plain", store.data.parent / "plain", None, store.base_url)  # the check can fail: no key
    plain.data.mkdir()
    try:
        unsealed = await plain.open(None)
        await learned(unsealed)
        await pending_later(unsealed)
        assert SECRET in absent(await plain.every_byte()) and LATER in absent(await plain.every_byte())
    finally:
        await plain.aclose()


async def test_memory_and_pending_turns_survive_a_restart(store: Store, chat_server: ChatServer) -> None:
    service = await store.open(KEY)
    await learned(service)
    await pending_later(service)
    await store.close(service)

    chat_server.default = extraction(facts=[(f"Eats {LATER} for breakfast", "habit", 0.95)])
    again = await store.open(KEY)
    await asyncio.wait_for(wait_idle(again), 20)  # the pending turn, resumed and learned
    facts = sorted(item.content for item in (await again.user(ALICE).show()).facts)
    assert facts == sorted([FACT, f"Eats {LATER} for breakfast"])
    assert await parts(again).storage.turns.pending_turns_of(ALICE) == []
    assert absent(await store.every_byte()) == []


async def test_a_copy_taken_before_a_forget_is_unreadable_with_the_key_store_after_it(
    store: Store, chat_server: ChatServer
) -> None:
    service = await store.open(KEY)
    await learned(service)
    chat_server.default = extraction(facts=[(BOB_FACT, "hobby", 0.95)])
    await learn(service, ConversationKey(CHANNEL, BOB), [turn(BOB, "I collect enamel pins of lighthouses")])
    await asyncio.wait_for(wait_idle(service), 20)
    chat_server.default = extraction(facts=[(FACT, "context", 0.95)])
    await pending_later(service)
    backup = await take_backup(store)

    assert (await service.user(ALICE).forget(ForgetEverything())).any_memory
    await store.close(service)
    await restore_data_keeping_keys(store, backup)  # the old data, the key store as it is now

    restored = await store.open(KEY)
    await asyncio.wait_for(wait_idle(restored), 20)
    assert (await restored.user(ALICE).show()).facts == []  # her old memory does not open
    assert await parts(restored).storage.turns.pending_turns_of(ALICE) == []  # nor her old pending turn
    assert [item.content for item in (await restored.user(BOB).show()).facts] == [BOB_FACT]  # Bob's does
    assert absent(backup.dump) == [] and SECRET not in str(await restored.user(ALICE).export())

    await learned(restored)  # she comes back: a new key, a new memory
    assert [item.content for item in (await restored.user(ALICE).show()).facts] == [FACT]


@dataclass
class Backup:
    files: Path
    rows: dict[str, list[dict[str, Any]]]
    dump: bytes


async def take_backup(store: Store) -> Backup:
    """What a data backup holds: DATA_DIR without the key store, the data tables without the key tables."""
    files = store.data.parent / "backup"
    shutil.copytree(store.data, files, ignore=shutil.ignore_patterns("keys"))
    rows: dict[str, list[dict[str, Any]]] = {}
    if store.url is not None:
        conn = await asyncpg.connect(store.url)
        try:
            for table in ("memories", "pending_turns"):
                rows[table] = [dict(row) for row in await conn.fetch(f"SELECT * FROM {table}")]
        finally:
            await conn.close()
    dump = b"\n".join(p.read_bytes() for p in files.rglob("*") if p.is_file())
    dump += repr(rows).encode()
    return Backup(files, rows, dump)


async def restore_data_keeping_keys(store: Store, backup: Backup) -> None:
    keys = store.data / "keys"  # files: the key store (PostgreSQL: its tables, left as they are)
    kept = store.data.parent / "keys-now"
    if keys.exists():
        shutil.move(keys, kept)
    shutil.rmtree(store.data)
    shutil.copytree(backup.files, store.data)
    if kept.exists():
        shutil.move(kept, keys)
    if store.url is not None:
        conn = await asyncpg.connect(store.url)
        try:
            for table, rows in backup.rows.items():
                await conn.execute(f"DELETE FROM {table}")
                for row in rows:
                    columns = ", ".join(row)
                    places = ", ".join(f"${n}" for n in range(1, len(row) + 1))
                    await conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({places})", *row.values())
        finally:
            await conn.close()


# --- refusing to start ---------------------------------------------------------------------------------------


async def refusal(store: Store, key: MasterKey | None) -> str:
    service = store.service(key)
    with pytest.raises(EncryptionRefused) as caught:
        await parts(service).storage.open()
    await parts(service).storage.close()
    return str(caught.value)


async def test_a_missing_or_wrong_key_refuses_to_start(store: Store) -> None:
    service = await store.open(KEY)
    await learned(service)
    await store.close(service)
    assert "is encrypted: set MEMORY_ENCRYPTION_KEY" in await refusal(store, None)
    assert "MEMORY_ENCRYPTION_KEY is not the key" in await refusal(store, OTHER_KEY)
    if store.url is None:
        shutil.move(store.data / "keys", store.data.parent / "elsewhere")
    else:
        conn = await asyncpg.connect(store.url)
        await conn.execute("DELETE FROM memory_key_store")
        await conn.close()
    assert "the key store" in await refusal(store, KEY) and "is missing" in await refusal(store, KEY)


async def test_plain_memory_under_a_key_refuses_to_start_until_it_is_converted(store: Store) -> None:
    service = await store.open(None)
    await learned(service)
    await pending_later(service)
    await store.close(service)
    assert "not encrypted yet" in await refusal(store, KEY)

    first = await convert(store, KEY)
    assert (first.memories_sealed, first.turns_sealed) == (1, 1)
    assert absent(await store.every_byte()) == []
    before = await store.every_byte()
    second = await convert(store, KEY)
    assert not second.changed and (second.memories_already, second.turns_already) == (1, 1)
    assert await store.every_byte() == before  # the second run changed nothing

    converted = await store.open(KEY)
    assert [item.content for item in (await converted.user(ALICE).show()).facts] == [FACT]
    assert any(LATER in item.turn.text for item in await parts(converted).storage.turns.pending_turns_of(ALICE))


async def convert(store: Store, key: MasterKey) -> Any:
    if store.url is None:
        return await asyncio.to_thread(encrypt_files, store.data, key, durable=False)
    return await with_database(store, lambda database: encrypt_postgres(database, key))


async def with_database(store: Store, work: Callable[[Database], Awaitable[Any]]) -> Any:
    assert store.url is not None
    database = Database(store.url, size=2)
    await database.open()
    try:
        return await work(database)
    finally:
        await database.close()


async def test_a_rotated_key_replaces_the_old_one(store: Store) -> None:
    service = await store.open(KEY)
    await learned(service)
    await learned(service, BOB)
    await store.close(service)
    if store.url is None:
        assert await asyncio.to_thread(rotate_files, store.data, KEY, OTHER_KEY, durable=False) == (2, 0)
    else:
        assert await with_database(store, lambda database: rotate_postgres(database, KEY, OTHER_KEY)) == (2, 0)
    assert "MEMORY_ENCRYPTION_KEY is not the key" in await refusal(store, KEY)
    rotated = await store.open(OTHER_KEY)
    assert [item.content for item in (await rotated.user(BOB).show()).facts] == [FACT]

