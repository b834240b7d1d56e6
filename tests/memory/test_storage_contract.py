"""The storage contract: the file backend and the PostgreSQL backend behave the same for everything the engine
relies on (read, read-modify-write, delete, export, pending turns, claims, failures, resuming after a crash)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.memory.errors import Stale
from bot.memory.models import ConversationKey, Fact, MemoryFile, Place, Turn
from bot.storage.errors import InvalidUserId
from tests.memory.storage_backends import Storage, open_storage
from tests.support.engine import save_memory

USER = 412345678901234567
OTHER = 512345678901234567


def long_fact(i: int) -> Fact:
    text = f"Fact {i}: " + ("works on a long-running migration of the team's billing service to a new queue; " * 3)
    return Fact(id=f"fact_{i:08x}", content=text[: 150 + (i * 37) % 150], category="context", confidence=0.9,
                createdAt="2026-11-01T10:00:00+00:00", source="conversation:1")


def turn(i: int, user: int = USER, text: str | None = None) -> Turn:
    return Turn("user", user, "ana", text or f"message {i}", datetime(2026, 11, 30, 12, 0, i % 60, tzinfo=UTC), f"t{i}")




# --- memory documents -------------------------------------------------------------------------------------------


async def test_an_unknown_user_has_an_empty_memory_with_a_stable_revision(storage: Storage) -> None:
    memory, first = await storage.store.load_with_revision(USER)
    again, second = await storage.store.load_with_revision(USER)
    assert memory.is_empty() and again.is_empty()
    assert first == second


async def test_an_edit_is_saved_and_changes_the_revision(storage: Storage) -> None:
    _, before = await storage.store.load_with_revision(USER)
    async with storage.store.edit(USER) as draft:
        draft.facts = [long_fact(i) for i in range(100)]
        draft.user.workContext.summary = "Builds billing systems."
    memory, after = await storage.store.load_with_revision(USER)
    assert after != before
    assert [fact.content for fact in memory.facts] == [long_fact(i).content for i in range(100)]
    assert memory.user.workContext.summary == "Builds billing systems."
    assert (await storage.store.load(OTHER)).is_empty()


async def test_an_edit_that_changes_nothing_keeps_the_revision(storage: Storage) -> None:
    async with storage.store.edit(USER) as draft:
        draft.facts.append(long_fact(1))
    _, before = await storage.store.load_with_revision(USER)
    async with storage.store.edit(USER):
        pass
    _, after = await storage.store.load_with_revision(USER)
    assert after == before


async def test_an_edit_whose_body_fails_saves_nothing(storage: Storage) -> None:
    async with storage.store.edit(USER) as draft:
        draft.facts.append(long_fact(1))
    with pytest.raises(RuntimeError):
        async with storage.store.edit(USER) as draft:
            draft.facts.append(long_fact(2))
            raise RuntimeError("apply failed")
    assert [fact.id for fact in (await storage.store.load(USER)).facts] == [long_fact(1).id]


async def test_concurrent_edits_of_one_user_all_land(storage: Storage) -> None:
    async def add(i: int) -> None:
        async with storage.store.edit(USER) as draft:
            await asyncio.sleep(0)  # let the others try to interleave
            draft.facts.append(long_fact(i))

    await asyncio.gather(*(add(i) for i in range(60)))
    stored = sorted(fact.id for fact in (await storage.store.load(USER)).facts)
    assert stored == sorted(long_fact(i).id for i in range(60))


async def test_a_whole_memory_written_through_edit_replaces_what_was_there(storage: Storage) -> None:
    async with storage.store.edit(USER) as draft:
        draft.facts.append(long_fact(1))
        draft.user.workContext.summary = "Builds billing systems."
    memory = MemoryFile.model_validate({"facts": [long_fact(3).model_dump(mode="json")], "laterField": [1, "x"]})
    await save_memory(storage.store, USER, memory)
    assert (await storage.store.load(USER)).model_dump() == memory.model_dump()


async def test_forget_user_removes_the_memory(storage: Storage) -> None:
    async with storage.store.edit(USER) as draft:
        draft.facts.append(long_fact(1))
    assert await storage.store.forget_user(USER) is True
    assert (await storage.store.load(USER)).is_empty()
    assert await storage.store.forget_user(USER) is False
    assert USER not in await storage.store.last_written()
    assert USER not in await storage.store.user_ids()


async def test_export_is_the_memory_as_json(storage: Storage) -> None:
    async with storage.store.edit(USER) as draft:
        draft.facts.append(long_fact(7))
    exported = json.loads(await storage.store.export_bytes(USER))
    assert exported["facts"][0]["content"] == long_fact(7).content
    assert MemoryFile.model_validate(exported).model_dump() == (await storage.store.load(USER)).model_dump()


async def test_last_written_and_user_ids_list_every_user_with_memory(storage: Storage) -> None:
    for uid in (USER, OTHER):
        async with storage.store.edit(uid) as draft:
            draft.facts.append(long_fact(uid % 97))
    written = await storage.store.last_written()
    assert set(written) == {USER, OTHER}
    now = datetime.now(UTC).timestamp()
    assert all(now - 300 < moment <= now + 5 for moment in written.values())
    assert await storage.store.user_ids() == sorted([USER, OTHER])


@pytest.mark.parametrize("bad", ["../etc/passwd", "12a", "-5", "0", True])
async def test_a_user_id_that_is_not_a_snowflake_is_refused(storage: Storage, bad: object) -> None:
    with pytest.raises(InvalidUserId):
        await storage.store.load(bad)  # type: ignore[arg-type]


# --- pending turns ----------------------------------------------------------------------------------------------

KEY = ConversationKey(900, USER, Place.channel(901, 902))
DM_KEY = ConversationKey(800, USER, Place.dm())


async def test_added_turns_are_pending_in_order_with_their_place(storage: Storage) -> None:
    await storage.queue.add(KEY, [turn(1), turn(2)])
    await storage.queue.add(DM_KEY, [turn(3)])
    pending = await storage.queue.pending_turns_of(USER)
    assert [(item.key, item.turn.turn_id) for item in pending] == [(KEY, "t1"), (KEY, "t2"), (DM_KEY, "t3")]
    assert pending[0].turn == turn(1)
    assert await storage.queue.pending_turns_of(OTHER) == []


async def test_a_claimed_batch_that_is_settled_is_no_longer_pending(storage: Storage) -> None:
    await storage.queue.add(KEY, [turn(1), turn(2)])
    claim = await storage.queue.claim(KEY, [turn(1), turn(2)])
    assert [t.turn_id for t in claim.turns] == ["t1", "t2"]
    async with storage.store.edit(USER, settles=claim) as draft:
        draft.appliedTurnIds.extend(claim.turn_ids)
    await storage.queue.done(USER, claim.turn_ids)
    assert await storage.queue.pending_turns_of(USER) == []
    assert (await storage.store.load(USER)).appliedTurnIds == ["t1", "t2"]


async def test_pending_turns_survive_a_crash_and_are_resumed(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    async with open_storage(backend, tmp_path, url) as first:
        await first.queue.add(KEY, [turn(1), turn(2)])
        await first.queue.add(ConversationKey(1, OTHER), [turn(3, OTHER)])
        done = await first.queue.claim(KEY, [turn(2)])
        async with first.store.edit(USER, settles=done):
            pass
        await first.queue.done(USER, ["t2"])
    async with open_storage(backend, tmp_path, url) as restarted:
        resumed = await restarted.queue.resume()
    assert sorted((item.key.user_id, item.turn.turn_id) for item in resumed) == [(USER, "t1"), (OTHER, "t3")]


async def test_forget_user_drops_everything_of_the_user_only(backend: str, url: str | None, tmp_path: Path) -> None:
    async with open_storage(backend, tmp_path, url) as first:
        await first.queue.add(KEY, [turn(1, text="my secret diagnosis")])
        await first.queue.add(ConversationKey(1, OTHER), [turn(2, OTHER)])
        await first.queue.failed(USER, ["t1"], permanent=True)
        await first.queue.forget_user(USER)
        assert await first.queue.pending_turns_of(USER) == []
    async with open_storage(backend, tmp_path, url) as restarted:
        resumed = await restarted.queue.resume()
    assert [(item.key.user_id, item.turn.turn_id) for item in resumed] == [(OTHER, "t2")]


async def test_failures_are_counted_across_restarts_and_a_parked_batch_is_not_resumed(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    async with open_storage(backend, tmp_path, url) as first:
        await first.queue.add(KEY, [turn(1), turn(2)])
        await first.queue.add(DM_KEY, [turn(3)])
        await first.queue.failed(USER, ["t1", "t2"], permanent=True)
        counts = await first.queue.failed(USER, ["t1", "t2"], permanent=False)
        assert (counts.permanent, counts.transient) == (1, 1)
    async with open_storage(backend, tmp_path, url) as second:
        await second.queue.resume()
        counts = await second.queue.failed(USER, ["t1"], permanent=True)
        assert (counts.permanent, counts.transient) == (2, 1)
        await second.queue.park(USER, ["t1", "t2"])
        assert [item.turn.turn_id for item in await second.queue.pending_turns_of(USER)] == ["t3"]
    async with open_storage(backend, tmp_path, url) as third:
        assert [item.turn.turn_id for item in await third.queue.resume()] == ["t3"]


async def test_a_waiting_turn_is_activity_for_the_retention_sweep(storage: Storage) -> None:
    now = datetime.now(UTC)
    await storage.queue.add(KEY, [Turn("user", USER, "ana", "back after a year", now, "t1")])
    assert await storage.queue.active_since(USER, now - timedelta(hours=1)) is True
    assert await storage.queue.active_since(USER, now + timedelta(hours=1)) is False
    assert await storage.queue.active_since(OTHER, now - timedelta(hours=1)) is False
    await storage.queue.forget_user(USER)
    assert await storage.queue.active_since(USER, now - timedelta(hours=1)) is False


# --- the forget generation ------------------------------------------------------------------------------------


async def test_work_from_before_a_forget_writes_nothing(storage: Storage) -> None:
    generations = storage.bundle.generations
    before = generations.current(USER)
    async with storage.store.edit(USER, generation=before) as draft:
        draft.facts.append(long_fact(1))
    await storage.queue.add(KEY, [turn(1)])
    now = await generations.bump(USER)
    assert now == before + 1 == generations.current(USER)
    with pytest.raises(Stale) as memory_refused:
        async with storage.store.edit(USER, generation=before) as draft:
            draft.facts.append(long_fact(2))
    with pytest.raises(Stale) as turns_refused:
        await storage.queue.add(KEY, [turn(2)])  # its generation is the one before the forget
    # One message on every backend: what was refused and whose, never its text.
    assert str(memory_refused.value) == (
        f"memory write of user {USER} refused: they forgot or paused since this work began"
    )
    assert (turns_refused.value.what, turns_refused.value.user_id) == ("pending turns", USER)
    assert "message 2" not in str(turns_refused.value)
    await storage.queue.add(KEY, [dataclasses.replace(turn(3), generation=now)])
    await storage.queue.add(ConversationKey(1, OTHER), [turn(4, OTHER)])  # nobody else is affected
    assert [f.id for f in (await storage.store.load(USER)).facts] == [long_fact(1).id]
    assert [item.turn.turn_id for item in await storage.queue.pending_turns_of(USER)] == ["t1", "t3"]


async def test_keep_only_drops_the_rest_and_continues_the_kept_under_the_new_generation(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    async with open_storage(backend, tmp_path, url) as first:
        await first.queue.add(KEY, [turn(1), turn(2, text="in the window")])
        await first.queue.add(DM_KEY, [turn(3)])
        await first.queue.add(ConversationKey(1, OTHER), [turn(4, OTHER)])
        generation = await first.bundle.generations.bump(USER)
        kept, dropped = await first.queue.keep_only(USER, lambda item: item.turn.turn_id != "t2", generation)
        assert [(item.turn.turn_id, item.turn.generation) for item in kept] == [("t1", generation), ("t3", generation)]
        assert dropped == 1
        assert [item.turn.turn_id for item in await first.queue.pending_turns_of(USER)] == ["t1", "t3"]
    async with open_storage(backend, tmp_path, url) as restarted:
        resumed = await restarted.queue.resume()
    assert sorted(item.turn.turn_id for item in resumed) == ["t1", "t3", "t4"]
    assert "in the window" not in str(resumed)


async def test_the_installations_fingerprint_key_is_made_once_and_shared(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    """The key of the fingerprints of forgotten facts: made on first use, the same after a restart and in another
    process, so a fingerprint made by one still matches in the other."""
    async with open_storage(backend, tmp_path, url) as first, open_storage(backend, tmp_path / "other", url) as peer:
        made = await first.bundle.installation.fingerprints()
        if backend == "postgres":  # another process of the same installation
            assert (await peer.bundle.installation.fingerprints()).key == made.key
    async with open_storage(backend, tmp_path, url) as restarted:
        assert (await restarted.bundle.installation.fingerprints()).key == made.key
        assert len(made.key) == 32
