"""PostgreSQL-only behaviour: a wipe in one process refuses turns written before it that another process adds
later, and the pool reconnects after the server dropped its connections."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.memory.models import ConversationKey, Turn
from bot.memory.pg.modes import PostgresModeRegistry, PostgresPauseRegistry
from tests.memory.storage_backends import open_storage
from tests.postgres import run_as_admin

USER = 812345678901234567
OTHER = 812345678901234568
KEY = ConversationKey(5, USER)


def turn(turn_id: str, at: datetime) -> Turn:
    return Turn("user", USER, "ana", "my new phone number is 555 0199", at, turn_id)


async def test_a_turn_written_before_a_wipe_in_another_process_is_not_taken(
    postgres_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    async with open_storage("postgres", tmp_path, postgres_url) as wiping, \
            open_storage("postgres", tmp_path, postgres_url) as slow:
        await wiping.queue.purge(USER, wiped=True)
        late = [turn("before", now - timedelta(seconds=30)), turn("after", now + timedelta(minutes=1))]
        await slow.queue.add(KEY, late)
        assert [item.turn.turn_id for item in await slow.queue.pending_turns_of(USER)] == ["after"]

        other = ConversationKey(5, OTHER)
        await wiping.queue.purge(OTHER)  # a purge without a wipe (a pause, incognito) refuses nothing later
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
    postgres_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    async with open_storage("postgres", tmp_path, postgres_url) as pausing, \
            open_storage("postgres", tmp_path, postgres_url) as behind:
        assert pausing.database is not None
        pauses, modes = PostgresPauseRegistry(pausing.database), PostgresModeRegistry(pausing.database)
        await pauses.open()
        await modes.open(now)
        await pauses.set_paused(USER, True)  # the other process has not heard of it yet: only the table knows
        await behind.queue.add(KEY, [turn("while-paused", now)])
        await pauses.set_paused(USER, False)
        await modes.set_incognito(USER, now + timedelta(minutes=5), now)
        await behind.queue.add(KEY, [turn("while-incognito", now)])
        await modes.clear(USER, now)
        await behind.queue.add(KEY, [turn("after", now)])
        assert [item.turn.turn_id for item in await behind.queue.pending_turns_of(USER)] == ["after"]
        await pauses.close()
        await modes.close()

