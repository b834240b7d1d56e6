"""Process liveness on PostgreSQL: the turns a process holds are free once its liveness row is stale, whatever their
hold; never while it lives; a process presumed dead that comes back settles nothing it lost and registers again; a
clean shutdown removes its row; the retention sweep's lock follows the same rule.

Several "processes" are several storage bundles on one database, each with its own pool and registry. A process
is made to look dead by moving its row's `last_seen` back (its beat is set far apart so it does not refresh it):
the real-process tests with SIGKILL and SIGSTOP are in `test_pg_processes.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest

from bot.memory.drivers.bundle import StorageBundle, build_postgres_storage
from bot.memory.drivers.interfaces import ClaimLost
from bot.memory.drivers.pg.turns import PostgresTurnQueue
from bot.memory.models import ConversationKey, Turn
from bot.storage.pg.database import Database
from bot.storage.pg.processes import ProcessRegistry

USER = 912345678901234567
KEY = ConversationKey(5, USER)
HOLD = 3600.0  # a turn's hold and a claim's lease: never runs out during a test


def turn(turn_id: str) -> Turn:
    return Turn("user", USER, "ana", "I restore old motorbikes", datetime.now(UTC), turn_id)


@asynccontextmanager
async def process(url: str) -> AsyncIterator[StorageBundle]:
    """One process's storage, opened (its liveness row registered) and closed cleanly at the end; it beats only
    when a test says so."""
    database = Database(url, size=2)
    registry = ProcessRegistry(database, beat_seconds=3600.0, stale_seconds=20.0)
    bundle = build_postgres_storage(database, lease_seconds=HOLD, orphan_seconds=HOLD, processes=registry)
    await bundle.open()
    try:
        yield bundle
    finally:
        await bundle.close()


def queue_of(bundle: StorageBundle) -> PostgresTurnQueue:
    assert isinstance(bundle.turns, PostgresTurnQueue)
    return bundle.turns


async def go_silent(bundle: StorageBundle, seconds: float = 60.0) -> None:
    """As if the process had not beaten for `seconds` (it died, or stalled)."""
    assert bundle.database is not None
    await bundle.database.execute(
        "UPDATE processes SET last_seen = now() - make_interval(secs => $2) WHERE owner = $1",
        queue_of(bundle).owner, seconds,
    )


async def test_held_turns_are_free_once_their_holder_is_stale_and_never_before(postgres_url: str) -> None:
    async with process(postgres_url) as holder, process(postgres_url) as other:
        await holder.turns.add(KEY, [turn("t1"), turn("t2")])
        assert await queue_of(other).take_over() == []  # held for an hour by a live process
        await go_silent(holder, seconds=5)  # late, not yet stale
        assert await queue_of(other).take_over() == []

        await go_silent(holder)
        taken = await queue_of(other).take_over()
        assert [item.turn.turn_id for item in taken] == ["t1", "t2"]
        assert (await holder.turns.claim(KEY, [turn("t1"), turn("t2")])).turns == ()  # its own are gone
        assert await queue_of(other).take_over() == []  # taken once


async def test_a_process_presumed_dead_that_comes_back_settles_nothing_it_lost(postgres_url: str) -> None:
    async with process(postgres_url) as slow, process(postgres_url) as other:
        await slow.turns.add(KEY, [turn("t1")])
        claim = await slow.turns.claim(KEY, [turn("t1")])
        assert claim.turn_ids == ["t1"]
        await go_silent(slow)
        taken = await queue_of(other).take_over()
        assert [item.turn.turn_id for item in taken] == ["t1"]

        await queue_of(slow).processes.beat()  # it runs again
        assert queue_of(slow).processes.presumed_dead == 1
        with pytest.raises(ClaimLost):
            async with slow.memories.edit(USER, settles=claim) as draft:
                draft.appliedTurnIds.append("t1")
        second = await other.turns.claim(KEY, [item.turn for item in taken])
        async with other.memories.edit(USER, settles=second) as draft:
            draft.appliedTurnIds.append("t1")
        assert (await other.memories.load(USER)).appliedTurnIds == ["t1"]
        assert await other.turns.pending_turns_of(USER) == []


async def test_a_late_beat_makes_the_process_alive_again(postgres_url: str) -> None:
    async with process(postgres_url) as holder, process(postgres_url) as other:
        await holder.turns.add(KEY, [turn("t1")])
        await go_silent(holder)
        registry = queue_of(holder).processes
        await registry.beat()  # what its beat task does every `beat_seconds`
        assert await queue_of(other).take_over() == []
        assert registry.presumed_dead == 1  # the gap was noticed and logged


async def test_a_clean_shutdown_removes_the_liveness_row_and_frees_what_it_held(postgres_url: str) -> None:
    async with process(postgres_url) as other:
        async with process(postgres_url) as leaving:
            owner = queue_of(leaving).owner
            await leaving.turns.add(KEY, [turn("t1")])
            assert other.database is not None
            assert await other.database.fetchval("SELECT count(*) FROM processes WHERE owner = $1", owner) == 1
        assert await other.database.fetchval("SELECT count(*) FROM processes WHERE owner = $1", owner) == 0
        assert [item.turn.turn_id for item in await queue_of(other).take_over()] == ["t1"]


async def test_the_sweep_lock_of_a_dead_process_is_taken_over_and_a_live_ones_is_not(postgres_url: str) -> None:
    async with process(postgres_url) as sweeping, process(postgres_url) as other, \
            sweeping.activity.sweep_lock() as mine:
        assert mine
        async with other.activity.sweep_lock() as theirs:
            assert not theirs  # the holder lives
        await go_silent(sweeping)
        async with other.activity.sweep_lock() as theirs:
            assert theirs  # its holder is presumed dead
