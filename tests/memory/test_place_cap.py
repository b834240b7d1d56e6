"""The cap on places with summaries (`MEMORY_MAX_PLACES`): the rule on its own, and the engine applying it on every
model save through the writer (the real extractor against the local LLM server, files on disk). Through the
Discord bot: tests/cogs/test_place_cap.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from openai import AsyncOpenAI

from bot.memory.models import ConversationKey, Fact, MemoryFile, Place, PlaceMemory, Turn, iso
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.rules.place_cap import evict_old_places, last_updated
from bot.memory.service import MemoryPolicy
from tests.support.engine import file_service, learn, parts, save_memory
from tests.support.llm_server import ChatServer, extraction

USER = 612345678901234999
GUILD = 4242
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def summaries_at(moment: datetime, text: str = "Waiting for a refund") -> PlaceMemory:
    place = PlaceMemory()
    place.user.topOfMind.summary = text
    place.user.topOfMind.updatedAt = iso(moment)
    return place


def test_the_places_updated_longest_ago_go_first_and_the_written_place_stays() -> None:
    memory = MemoryFile()
    memory.user.workContext.summary = "Nurse"  # the DM place's summaries are the top-level fields
    for n in range(5):
        memory.places[f"channel:{n}"] = summaries_at(T0 + timedelta(hours=n))

    assert evict_old_places(memory, 3, keep="channel:0") == ["channel:1", "channel:2"]
    assert sorted(memory.places) == ["channel:0", "channel:3", "channel:4"]
    assert memory.user.workContext.summary == "Nurse"
    assert evict_old_places(memory, 3, keep="channel:0") == []  # at the cap: nothing more


def test_a_place_counts_as_updated_when_any_summary_or_previous_value_changed() -> None:
    place = summaries_at(T0)
    place.history.recentMonths.updatedAt = iso(T0 + timedelta(days=2))
    assert last_updated(place) == iso(T0 + timedelta(days=2))
    assert last_updated(PlaceMemory()) == ""  # never: the first to go


def ticket_turn(n: int, at: datetime) -> Turn:
    return Turn("user", USER, "ana", f"ticket {n}: my order has not arrived", at, f"t{n}")


async def test_model_saves_keep_the_summaries_of_the_most_recently_updated_places(
    tmp_path: Path, chat_server: ChatServer
) -> None:
    moments = iter(T0 + timedelta(minutes=n) for n in range(100))
    now = [T0]
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    service = file_service(
        tmp_path, MemoryExtractor(client, model="m", max_retries=0),
        MemoryPolicy(debounce_seconds=0.05, max_wait_seconds=1, max_places=3, min_confidence=0.5),
        clock=lambda: now[0], durable=False,
    )
    await service.ops.open()
    try:
        chat_server.enqueue(extraction(work="Runs a small bakery", facts=[("Runs a small bakery", "context")]))
        now[0] = next(moments)
        assert await learn(service, ConversationKey(1, USER, Place.dm()), [ticket_turn(0, now[0])])
        await service.ops.flush(30)
        for n in range(1, 6):  # one restricted channel per ticket
            chat_server.enqueue(extraction(top=f"Waiting for order {n}", facts=[(f"Ordered item {n}", "context")]))
            now[0] = next(moments)
            place = Place.channel(9000 + n, GUILD)
            assert await learn(service, ConversationKey(9000 + n, USER, place), [ticket_turn(n, now[0])])
            assert await service.ops.flush(30)

        memory = await parts(service).storage.memories.load(USER)
        assert sorted(memory.places) == ["channel:9003", "channel:9004", "channel:9005"]
        assert memory.places["channel:9005"].user.topOfMind.summary == "Waiting for order 5"
        assert memory.user.workContext.summary == "Runs a small bakery"  # DMs are never evicted
        assert len(memory.facts) == 6  # facts have their own cap: untouched
    finally:
        await service.ops.shutdown(5)
        await client.close()


async def test_a_document_already_past_the_cap_is_trimmed_at_its_next_model_save(
    tmp_path: Path, chat_server: ChatServer
) -> None:
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    service = file_service(
        tmp_path, MemoryExtractor(client, model="m", max_retries=0),
        MemoryPolicy(debounce_seconds=0.05, max_wait_seconds=1, max_places=50, min_confidence=0.5), durable=False,
    )
    await service.ops.open()
    try:
        stored = MemoryFile(facts=[Fact(id="fact_00000001", content="Likes tea", confidence=0.9)])
        for n in range(300):
            stored.places[f"channel:{10_000 + n}"] = summaries_at(T0 + timedelta(minutes=n), f"Ticket {n} open")
        await save_memory(parts(service).storage.memories, USER, stored)
        stored = await parts(service).storage.memories.load(USER)
        assert len(stored.places) == 300  # saved as it was: not a model save

        chat_server.enqueue(extraction(facts=[("Prefers email to phone calls", "preference")]))
        turn = Turn("user", USER, "ana", "please email me, do not call", datetime.now(UTC), "t1")
        assert await learn(service, ConversationKey(1, USER, Place.dm()), [turn])
        assert await service.ops.flush(30)
        memory = await parts(service).storage.memories.load(USER)
        assert sorted(memory.places) == [f"channel:{10_000 + n}" for n in range(250, 300)]
        assert [fact.content for fact in memory.facts] == ["Likes tea", "Prefers email to phone calls"]
    finally:
        await service.ops.shutdown(5)
        await client.close()
