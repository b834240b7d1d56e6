"""The one door to a user's memory document (`bot.memory.parts.writer.MemoryWriter.change`), over the real file
storage: the write gate applied before the save, `Stale` for work from before a forget, nothing written when the
body raises or changes nothing, the caps on the model's changes, summary values past their day dropped on every
save, and the bookkeeping beside the memory (the message ledger, the upkeep schedule), whose failure never undoes
the change. The gate's rules themselves: test_write_gate.py."""

from __future__ import annotations

import errno
import logging
from collections.abc import AsyncIterator, Collection
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.memory.drivers.bundle import StorageBundle, build_file_storage
from bot.memory.drivers.interfaces import Stale
from bot.memory.errors import InvalidRequest
from bot.memory.models import Fact, MemoryFile, Place, PreviousSummary, iso
from bot.memory.parts.writer import MemoryWriter
from bot.memory.rules.sources import set_sources
from bot.memory.rules.write_gate import GateReport, ModelAuthor, SystemAuthor, UserAuthor
from tests.support.engine import save_memory

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
USER = 612345678901234567
DM = Place.dm()
KEY = "sk-proj-4fQz9LmN2xVb7KpR1sTy8WcD3eHg6JuA0iOk5nMl"


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def bundle(tmp_path: Path) -> AsyncIterator[StorageBundle]:
    storage = build_file_storage(tmp_path, durable=False)
    await storage.open()
    try:
        yield storage
    finally:
        await storage.close()


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


def writer_for(bundle: StorageBundle, clock: Clock, *, max_facts: int = 100, max_places: int = 10) -> MemoryWriter:
    return MemoryWriter(
        bundle.memories, max_facts=max_facts, max_places=max_places, ledger=bundle.ledger, upkeep=bundle.upkeep,
        clock=clock,
    )


@pytest.fixture
def writer(bundle: StorageBundle, clock: Clock) -> MemoryWriter:
    return writer_for(bundle, clock)


def fact(
    fact_id: str, content: str, *, confidence: float = 0.8, origin: str = "", sources: Collection[str] = ()
) -> Fact:
    made = Fact(id=fact_id, content=content, confidence=confidence, origin=origin, createdAt=iso(NOW),
                lastConfirmedAt=iso(NOW))
    set_sources(made, list(sources))
    return made


def model(place: Place = DM, grounding: str = "") -> ModelAuthor:
    return ModelAuthor(place, "place", NOW, grounding=grounding)


def memory_file(tmp_path: Path) -> Path:
    return tmp_path / "memory" / f"{USER}.json"


async def stored(tmp_path: Path) -> MemoryFile:
    """The user's memory as a fresh process reads it from disk (no cache of this one)."""
    again = build_file_storage(tmp_path, durable=False)
    await again.memories.open()
    try:
        return await again.memories.load(USER)
    finally:
        await again.memories.close()


async def seed(bundle: StorageBundle, memory: MemoryFile) -> None:
    await save_memory(bundle.memories, USER, memory)


# --- the save -------------------------------------------------------------------------------------------------


async def test_a_change_is_saved_when_the_body_returns(writer: MemoryWriter, tmp_path: Path) -> None:
    async with writer.change(USER, UserAuthor()) as draft:
        draft.facts.append(fact("fact_0000000a", "Is vegetarian", origin="user"))
        assert not memory_file(tmp_path).exists()  # nothing is written while the body runs
    assert [f.content for f in (await stored(tmp_path)).facts] == ["Is vegetarian"]


async def test_the_gate_is_applied_before_the_save_and_its_holds_are_reported(
    bundle: StorageBundle, writer: MemoryWriter, tmp_path: Path
) -> None:
    await seed(bundle, MemoryFile(facts=[fact("fact_0000000a", "Is vegetarian", origin="user")]))
    report = GateReport(restored=2)
    async with writer.change(USER, model(grounding="lives in lyon"), report=report) as draft:
        draft.facts = [fact("fact_0000000b", "Lives in Lyon"), fact("fact_0000000c", "Ordered parcel 9981Q")]
    assert [f.content for f in (await stored(tmp_path)).facts] == ["Is vegetarian", "Lives in Lyon"]
    assert (report.restored, report.ungrounded) == (3, 1)  # added to what the report held


async def test_a_credential_the_user_writes_is_refused_and_nothing_is_written(
    writer: MemoryWriter, tmp_path: Path
) -> None:
    with pytest.raises(InvalidRequest):
        async with writer.change(USER, UserAuthor()) as draft:
            draft.facts.append(fact("fact_0000000a", f"My API key is {KEY}", origin="user"))
    assert not memory_file(tmp_path).exists()


async def test_nothing_is_written_when_the_body_raises(
    bundle: StorageBundle, writer: MemoryWriter, tmp_path: Path
) -> None:
    await seed(bundle, MemoryFile(facts=[fact("fact_0000000a", "Plays chess")]))
    written = memory_file(tmp_path).read_bytes()
    with pytest.raises(RuntimeError, match="the body failed"):
        async with writer.change(USER, UserAuthor()) as draft:
            draft.facts.clear()
            raise RuntimeError("the body failed")
    assert memory_file(tmp_path).read_bytes() == written
    assert [f.content for f in (await bundle.memories.load(USER)).facts] == ["Plays chess"]


async def test_nothing_is_written_when_the_body_changes_nothing(
    bundle: StorageBundle, writer: MemoryWriter, tmp_path: Path
) -> None:
    async with writer.change(USER, model()) as draft:
        assert draft == MemoryFile()
    assert not memory_file(tmp_path).exists()
    assert await bundle.upkeep.due(NOW + timedelta(days=365)) == []


# --- work from before a forget --------------------------------------------------------------------------------


async def test_work_from_before_a_forget_is_stale_and_its_body_never_runs(
    bundle: StorageBundle, writer: MemoryWriter, tmp_path: Path
) -> None:
    generation = bundle.generations.current(USER)
    await bundle.generations.bump(USER)  # a forget began
    ran = False
    with pytest.raises(Stale):
        async with writer.change(USER, model(), generation=generation) as draft:
            ran = True
            draft.facts.append(fact("fact_0000000a", "Plays chess"))
    assert not ran and not memory_file(tmp_path).exists()


async def test_a_forget_that_begins_while_the_body_runs_wins(
    bundle: StorageBundle, writer: MemoryWriter, tmp_path: Path
) -> None:
    generation = bundle.generations.current(USER)
    with pytest.raises(Stale):
        async with writer.change(USER, model(), generation=generation) as draft:
            draft.facts.append(fact("fact_0000000a", "Plays chess"))
            await bundle.generations.bump(USER)
    assert not memory_file(tmp_path).exists()


async def test_work_under_the_current_generation_is_saved(writer: MemoryWriter, bundle: StorageBundle) -> None:
    await bundle.generations.bump(USER)
    async with writer.change(USER, model(), generation=bundle.generations.current(USER)) as draft:
        draft.facts.append(fact("fact_0000000a", "Plays chess"))
    assert len((await bundle.memories.load(USER)).facts) == 1


# --- the caps on the model's changes --------------------------------------------------------------------------


async def test_the_fact_cap_holds_for_the_models_changes_only(bundle: StorageBundle, clock: Clock) -> None:
    capped = writer_for(bundle, clock, max_facts=2)
    new = [fact(f"fact_0000000{n}", f"Likes colour number {n}", confidence=0.5 + n / 10) for n in range(4)]
    async with capped.change(USER, model()) as draft:
        draft.facts = [f.model_copy() for f in new]
    assert [f.id for f in (await bundle.memories.load(USER)).facts] == ["fact_00000002", "fact_00000003"]
    async with capped.change(USER, UserAuthor()) as draft:
        draft.facts = [f.model_copy(update={"origin": "user"}) for f in new]
    assert len((await bundle.memories.load(USER)).facts) == 4  # the user's own writes are not the model's to cap


async def test_the_place_cap_keeps_the_place_written_and_the_ones_updated_last(
    bundle: StorageBundle, clock: Clock
) -> None:
    before = MemoryFile()
    for n in range(3):
        summaries = before.place_memory(f"channel:{n}")
        summaries.user.topOfMind.summary = f"Ticket {n}"
        summaries.user.topOfMind.updatedAt = iso(NOW - timedelta(days=3 - n))
        before.set_place_memory(f"channel:{n}", summaries)
    await seed(bundle, before)
    capped = writer_for(bundle, clock, max_places=2)
    async with capped.change(USER, UserAuthor()) as draft:
        draft.user.workContext.summary = "Nurse"  # the user's change: over the cap, nothing is dropped
    assert sorted((await bundle.memories.load(USER)).places) == ["channel:0", "channel:1", "channel:2"]
    async with capped.change(USER, model(Place.channel(0, 7001))) as draft:
        summaries = draft.place_memory("channel:0")
        summaries.user.topOfMind.summary = "Ticket closed"
        draft.set_place_memory("channel:0", summaries)
    places = (await bundle.memories.load(USER)).places
    assert sorted(places) == ["channel:0", "channel:2"]  # the oldest other place went, never the one written
    assert places["channel:0"].user.topOfMind.summary == "Ticket closed"


# --- summary values past their day ----------------------------------------------------------------------------


async def test_every_save_drops_summary_values_replaced_more_than_a_day_ago(
    bundle: StorageBundle, writer: MemoryWriter
) -> None:
    before = MemoryFile()
    before.user.workContext.summary = "Nurse"
    before.user.workContext.previous = [
        PreviousSummary(summary="Student", replacedAt=iso(NOW - timedelta(days=2))),
        PreviousSummary(summary="Intern", replacedAt=iso(NOW - timedelta(hours=1))),
    ]
    await seed(bundle, before)
    async with writer.change(USER, SystemAuthor()) as draft:
        draft.facts.append(fact("fact_0000000a", "Plays chess"))
    kept = (await bundle.memories.load(USER)).user.workContext.previous
    assert [old.summary for old in kept] == ["Intern"]


# --- bookkeeping beside the memory ----------------------------------------------------------------------------


async def test_the_ledger_is_told_which_messages_the_facts_cite(bundle: StorageBundle, writer: MemoryWriter) -> None:
    async with writer.change(USER, model(), sources=(DM, ["101", "102"])) as draft:
        noted = await bundle.ledger.lookup(["101", "102"])
        assert set(noted) == {"101", "102"}  # noted before the save: a delete meanwhile finds whose they are
        draft.facts.append(fact("fact_0000000a", "Plays chess", sources=["101"]))
    entries = await bundle.ledger.lookup(["101", "102"])
    assert (entries["101"].user_id, entries["101"].place, entries["101"].cited) == (USER, "dm", True)
    assert entries["102"].cited is False  # read by the extraction, cited by no fact: it ages out
    async with writer.change(USER, SystemAuthor()) as draft:
        draft.facts.clear()
    assert (await bundle.ledger.lookup(["101"]))["101"].cited is False


async def test_the_upkeep_schedule_is_told_when_the_oldest_summary_value_expires(
    bundle: StorageBundle, writer: MemoryWriter, clock: Clock
) -> None:
    async with writer.change(USER, UserAuthor()) as draft:
        draft.user.workContext.replace("Nurse", NOW)
    assert await bundle.upkeep.due(NOW + timedelta(days=1)) == []  # no earlier value yet: nothing to remove
    async with writer.change(USER, UserAuthor()) as draft:
        draft.user.workContext.replace("Nurse at night", NOW)
    assert await bundle.upkeep.due(NOW + timedelta(days=1) - timedelta(seconds=1)) == []
    assert await bundle.upkeep.due(NOW + timedelta(days=1)) == [USER]
    clock.now = NOW + timedelta(days=2)
    async with writer.change(USER, UserAuthor()) as draft:
        draft.facts.append(fact("fact_0000000a", "Plays chess", origin="user"))
    assert await bundle.upkeep.due(NOW + timedelta(days=365)) == []  # the value expired on this save


async def test_a_bookkeeping_failure_is_logged_and_never_undoes_the_change(
    bundle: StorageBundle, writer: MemoryWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def disk_full(user_id: int, *, cited: Collection[str], uncited: Collection[str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bundle.ledger, "cite", disk_full)
    with caplog.at_level(logging.WARNING, logger="bot.memory.parts.writer"):
        async with writer.change(USER, model(), sources=(DM, ["101"])) as draft:
            draft.facts.append(fact("fact_0000000a", "Plays chess", sources=["101"]))
    assert [f.content for f in (await stored(tmp_path)).facts] == ["Plays chess"]
    assert "bookkeeping failed (No space left on device)" in caplog.text
