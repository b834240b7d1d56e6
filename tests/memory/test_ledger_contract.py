"""The storage parts behind Discord deletes and the history sweep, on both backends: the message ledger (whose memory
each learned message taught), deleting a message's pending turns whoever holds them, and the upkeep schedule.
Ids and times only, forgotten with the user, kept across a restart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.memory.drivers.interfaces import LEDGER_RECENT
from bot.memory.errors import ClaimLost
from bot.memory.models import ConversationKey, Place, Turn
from tests.memory.storage_backends import Storage, open_storage

USER = 412345678901234567
OTHER = 512345678901234567
KEY = ConversationKey(77, USER, Place.guild(9))
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def turn(message: int, text: str, *, role: str = "user", reply_to: int | None = None, user: int = USER) -> Turn:
    return Turn(
        "assistant" if role == "assistant" else "user", user if role == "user" else 42, "ana", text, NOW,
        str(message), reply_to=str(reply_to) if reply_to else "",
    )




# --- the message ledger -------------------------------------------------------------------------------------


async def test_the_ledger_finds_whose_message_it_was_after_a_restart(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    async with open_storage(backend, tmp_path, url) as first:
        ledger = first.bundle.ledger
        await ledger.note(USER, "guild:9", ["1001", "1002"], NOW)
        await ledger.note(OTHER, "dm", ["2001"], NOW)
        await ledger.cite(USER, cited=[], uncited=["1002"])
    async with open_storage(backend, tmp_path, url) as again:
        found = await again.bundle.ledger.lookup(["1001", "1002", "2001", "3001"])
    assert {m: (e.user_id, e.place, e.cited) for m, e in found.items()} == {
        "1001": (USER, "guild:9", True), "1002": (USER, "guild:9", False), "2001": (OTHER, "dm", True),
    }
    assert found["1001"].learned_at == NOW


async def test_uncited_entries_go_after_a_day_cited_ones_stay(storage: Storage) -> None:
    ledger = storage.bundle.ledger
    await ledger.note(USER, "dm", ["1001", "1002", "1003"], NOW)
    await ledger.cite(USER, cited=[], uncited=["1002", "1003"])
    await ledger.cite(USER, cited=["1003", "1004"], uncited=[])  # cited again, and one without an entry yet
    assert await ledger.prune(NOW + LEDGER_RECENT - timedelta(seconds=1)) == 0
    assert await ledger.prune(NOW + LEDGER_RECENT + timedelta(seconds=1)) == 1
    assert sorted(await ledger.lookup(["1001", "1002", "1003", "1004"])) == ["1001", "1003", "1004"]
    await ledger.drop(["1001"])
    assert sorted(await ledger.lookup(["1001", "1003"])) == ["1003"]


async def test_forgetting_a_user_takes_their_ledger_entries_and_no_one_elses(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    async with open_storage(backend, tmp_path, url) as storage:
        await storage.bundle.ledger.note(USER, "dm", ["1001"], NOW)
        await storage.bundle.ledger.note(OTHER, "dm", ["2001"], NOW)
        await storage.bundle.forget_user(USER)
        assert list(await storage.bundle.ledger.lookup(["1001", "2001"])) == ["2001"]
    if backend == "files":  # not a byte of theirs left under the data folder, at once
        assert not any(str(USER).encode() in path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())


# --- pending turns of deleted messages ----------------------------------------------------------------------


async def test_a_deleted_message_and_the_reply_to_it_leave_the_queue_with_every_text_of_it(storage: Storage) -> None:
    await storage.queue.add(KEY, [turn(1001, "my secret"), turn(1002, "about your secret", role="assistant",
                                                                    reply_to=1001)])
    await storage.queue.add(KEY, [turn(1003, "hello"), Turn("user", USER, "ana", "edited", NOW, "1004.17")])
    other_key = ConversationKey(78, OTHER, Place.dm())
    await storage.queue.add(other_key, [turn(1005, "bob's", user=OTHER)])
    dropped = await storage.queue.drop_messages(["1001", "1004", "9999"])
    assert {user: sorted(ids) for user, ids in dropped.items()} == {USER: ["1001", "1002", "1004.17"]}
    assert [item.turn.turn_id for item in await storage.queue.pending_turns_of(USER)] == ["1003"]
    assert [item.turn.turn_id for item in await storage.queue.pending_turns_of(OTHER)] == ["1005"]
    if storage.kind == "files":
        journal = storage.bundle.turns.path  # type: ignore[attr-defined]
        assert b"secret" not in journal.read_bytes()  # gone from the disk at once, not at a compaction


async def test_a_claim_on_a_deleted_message_is_void_in_another_process(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    if backend == "files":
        pytest.skip("one process owns the files: the engine's own record of withdrawn messages covers it")
    async with open_storage(backend, tmp_path, url) as holder, open_storage(backend, tmp_path, url) as other:
        await holder.queue.add(KEY, [turn(1001, "secret"), turn(1003, "hello")])
        claim = await holder.queue.claim(KEY, [turn(1001, "secret"), turn(1003, "hello")])
        assert claim.turn_ids == ["1001", "1003"]
        assert await other.queue.drop_messages(["1001"]) == {USER: ["1001"]}
        with pytest.raises(ClaimLost):
            async with holder.store.edit(USER, settles=claim) as draft:
                draft.appliedTurnIds.append("1001")
        again = await holder.queue.claim(KEY, [turn(1001, "secret"), turn(1003, "hello")])
        assert again.turn_ids == ["1003"]  # the rest of the batch is still there to extract


# --- the upkeep schedule ------------------------------------------------------------------------------------


async def test_the_upkeep_schedule_names_the_users_due_and_survives_a_restart(
    backend: str, url: str | None, tmp_path: Path
) -> None:
    async with open_storage(backend, tmp_path, url) as first:
        upkeep = first.bundle.upkeep
        assert await upkeep.due(NOW) == []  # an empty store: nothing to catch up
        await upkeep.plan(USER, NOW - timedelta(hours=1))
        await upkeep.plan(OTHER, NOW + timedelta(hours=1))
        assert await upkeep.due(NOW) == [USER]
        await upkeep.plan(OTHER, NOW - timedelta(hours=2))  # sooner
        await upkeep.plan(USER, None)  # nothing left to do
    async with open_storage(backend, tmp_path, url) as again:
        assert await again.bundle.upkeep.due(NOW) == [OTHER]
        await again.bundle.forget_user(OTHER)
        assert await again.bundle.upkeep.due(NOW) == []
