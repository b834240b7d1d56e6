"""PostgreSQL-only behaviour: a forget or pause in one process refuses turns from before it that another process
adds later, and the pool reconnects after the server dropped its connections."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from bot.memory.doors import PAUSE, Incognito, LearningTicket, Resume
from bot.memory.drivers.pg.generations import PostgresGenerations
from bot.memory.errors import Stale
from bot.memory.models import ConversationKey, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.pg.database import Database
from bot.storage.pg.records import PostgresRecords
from tests.memory.storage_backends import open_storage
from tests.support.engine import learn, parts, postgres_service
from tests.support.llm_server import ChatServer
from tests.support.postgres import run_as_admin

USER = 812345678901234567
OTHER = 812345678901234568
KEY = ConversationKey(5, USER)


def turn(turn_id: str, at: datetime) -> Turn:
    return Turn("user", USER, "ana", "my new phone number is 555 0199", at, turn_id)


async def test_a_turn_from_before_a_forget_in_another_process_is_not_taken(
    postgres_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    async with open_storage("postgres", tmp_path, postgres_url) as wiping, \
            open_storage("postgres", tmp_path, postgres_url) as slow:
        generation = await wiping.bundle.generations.bump(USER)
        # the slow process took its ticket before the forget, and may not have heard of it yet
        with pytest.raises(Stale):
            await slow.queue.add(KEY, [turn("before", now)])
        await slow.queue.add(KEY, [dataclasses.replace(turn("after", now), generation=generation)])
        assert [item.turn.turn_id for item in await slow.queue.pending_turns_of(USER)] == ["after"]

        other = ConversationKey(5, OTHER)  # nobody else is affected
        await slow.queue.add(other, [Turn("user", OTHER, "bo", "hi", now - timedelta(minutes=5), "old")])
        assert [item.turn.turn_id for item in await slow.queue.pending_turns_of(OTHER)] == ["old"]


async def test_the_pool_reconnects_after_the_server_dropped_its_connections(postgres_url: str, tmp_path: Path) -> None:
    async with open_storage("postgres", tmp_path, postgres_url) as storage:
        async with storage.store.edit(USER) as draft:
            draft.appliedTurnIds.append("t1")
        name = postgres_url.rsplit("/", 1)[1]
        terminate = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        await run_as_admin(postgres_url, terminate)
        async with storage.store.edit(USER) as draft:  # on a fresh connection, after a retry
            draft.appliedTurnIds.append("t2")
        assert (await storage.store.load(USER)).appliedTurnIds == ["t1", "t2"]


async def test_turns_held_by_a_process_that_died_are_taken_over_once_and_counted(
    postgres_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    async with open_storage("postgres", tmp_path, postgres_url, orphan_seconds=0) as dead, \
            open_storage("postgres", tmp_path, postgres_url, orphan_seconds=60) as alive, \
            open_storage("postgres", tmp_path, postgres_url, orphan_seconds=60) as third:
        await dead.queue.add(KEY, [turn("t1", now), turn("t2", now)])  # held for 0 s: as if its process died
        taken, again = await alive.queue.take_over(), await third.queue.take_over()  # type: ignore[attr-defined]
        assert sorted(item.turn.turn_id for item in taken) == ["t1", "t2"] and again == []
        assert (alive.queue.taken_over, third.queue.taken_over) == (2, 0)
        claim = await third.queue.claim(KEY, [item.turn for item in taken])
        assert claim.turns == ()  # leased to the process that took them over


async def test_a_pause_or_incognito_set_in_one_process_refuses_turns_another_adds_at_once(
    postgres_url: str, chat_server: ChatServer
) -> None:
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    policy = MemoryPolicy(debounce_seconds=3600, max_wait_seconds=3600)
    pausing = postgres_service(Database(postgres_url, size=2), MemoryExtractor(client, model="m"), policy)
    behind = postgres_service(Database(postgres_url, size=2), MemoryExtractor(client, model="m"), policy)
    await pausing.ops.open()
    await behind.ops.open()
    try:
        key = ConversationKey(5, USER)
        for start in (lambda: pausing.user(USER).set_mode(PAUSE), lambda: pausing.user(USER).set_mode(Incognito(5))):
            ticket = behind.learning.ticket(USER)  # the message reached the other process first
            await start()
            assert await learn(behind, key, [turn(f"while-{ticket.generation}", now())], ticket=ticket) is False
            await pausing.user(USER).set_mode(Resume())
        assert await learn(behind, key, [turn("after", now())], ticket=await fresh_ticket(behind, pausing)) is True
        assert [item.turn.text for item in await parts(behind).storage.turns.pending_turns_of(USER)] == [
            "my new phone number is 555 0199"
        ]
    finally:
        await asyncio.gather(pausing.ops.shutdown(1), behind.ops.shutdown(1))
        await client.close()


def now() -> datetime:
    return datetime.now(UTC)


async def fresh_ticket(behind: MemoryService, pausing: MemoryService) -> LearningTicket:
    """A ticket taken once the other process has heard of every forget and pause (as a later message would)."""
    generation = pausing.learning.ticket(USER).generation
    table = parts(behind).storage.generations
    assert isinstance(table, PostgresGenerations)
    await asyncio.wait_for(table.wait_for(lambda: behind.learning.ticket(USER).generation == generation), 30)
    privacy = parts(behind).storage.privacy.table
    assert isinstance(privacy, PostgresRecords)
    await asyncio.wait_for(privacy.wait_for(lambda: not behind.user(USER).privacy.incognito), 30)
    return behind.learning.ticket(USER)
