"""Memory that knows time through the service, on files and on PostgreSQL: real turns through the journal or the
pending rows, the real extractor against the local Chat Completions server, the writer and its gate, then the
reply's memory block, the forget commands and retention. And memories written before any of this load unchanged
from both stores."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

from bot.memory.doors import ForgetEverything, ForgetFact, ForgetMinutes
from bot.memory.models import ConversationKey, Location, MemoryFile, Place, Turn, iso
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.rules.write_gate import UserAuthor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.pg.database import Database
from tests.helpers import extraction_input
from tests.support.engine import close_service, file_service, learn, parts, postgres_service, wait_idle
from tests.support.llm_server import ChatServer, Response, extraction

ALICE = 412345678901234567
CHANNEL = 900
PARIS_SAID = datetime(2024, 5, 2, 18, 0, tzinfo=UTC)  # a Thursday
LYON_SAID = datetime(2024, 6, 5, 21, 30, tzinfo=UTC)  # a Wednesday
LYON_LEARNED = LYON_SAID + timedelta(days=2)  # the batch waited: extracted two days later


@dataclass
class Clock:
    now: datetime = PARIS_SAID

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Model:
    """A scripted memory model: it reads the request as a model would and answers with the ideal extraction."""

    shown: list[list[str]] = field(default_factory=list)  # the facts each request showed as current memory

    def __call__(self, body: dict[str, Any]) -> Response:
        sent = extraction_input(body)
        facts = {fact["content"]: fact["id"] for fact in sent["currentMemory"]["facts"]}
        self.shown.append(sorted(facts))
        said = " ".join(turn["text"] for turn in sent["newTurns"] if turn["speaker"] == "user")
        if "live in Paris" in said:
            return extraction(facts=[("Lives in Paris", "context", 0.95)])
        if "moved to Lyon" in said:
            paris = facts.get("Lives in Paris")
            return extraction(
                facts=[{"content": "Moved to Lyon last week", "category": "context", "confidence": 0.95,
                        "when": "last week", "replaces": [paris] if paris else []},
                       {"content": "Starts a new job next Monday", "category": "goal", "confidence": 0.9,
                        "when": "next Monday"}],
                remove=[paris] if paris else [],
            )
        return extraction()


@dataclass
class Setup:
    service: MemoryService
    clock: Clock
    model: Model

    async def say(self, text: str, at: datetime, *, turn_id: str) -> None:
        self.clock.now = at
        key = ConversationKey(CHANNEL, ALICE, Place.dm())
        assert await learn(self.service, key, [Turn("user", ALICE, "alice", text, at, turn_id)])

    async def settle(self, learned_at: datetime) -> None:
        self.clock.now = learned_at  # the extraction runs "now": later than the message
        await wait_idle(self.service)

    async def memory(self) -> MemoryFile:
        return await self.service.user(ALICE).show()


@pytest.fixture(params=["files", "postgres"])
async def setup(request: pytest.FixtureRequest, chat_server: ChatServer, tmp_path: Path) -> AsyncIterator[Setup]:
    model = Model()
    chat_server.responder = model
    clock = Clock()
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0, timeout=10)
    extractor = MemoryExtractor(client, model="memory-model", max_retries=0)
    policy = MemoryPolicy(debounce_seconds=0.05, max_wait_seconds=5, retention_days=30)
    if request.param == "files":
        service = file_service(tmp_path, extractor, policy, clock=clock)
    else:
        url = request.getfixturevalue("postgres_url")
        service = postgres_service(Database(url, size=4), extractor, policy, clock=clock)
    await service.ops.open()
    try:
        yield Setup(service, clock, model)
    finally:
        await close_service(service)
        await client.close()


async def moved(setup: Setup) -> MemoryFile:
    await setup.say("I live in Paris, near the canal", PARIS_SAID, turn_id="1")
    await setup.settle(PARIS_SAID + timedelta(minutes=1))
    # the extraction's clock is two days after the message: dates count from the message
    setup.clock.now = LYON_SAID
    await setup.say("big news: we moved to Lyon last week! and I start a new job next Monday", LYON_SAID, turn_id="2")
    await setup.settle(LYON_LEARNED)
    return await setup.memory()


async def test_a_move_closes_the_old_fact_and_dates_the_new_ones_by_the_message(setup: Setup) -> None:
    memory = await moved(setup)
    paris, lyon, job = memory.facts
    assert paris.content == "Lives in Paris" and paris.observedAt == iso(PARIS_SAID)
    assert paris.closed and paris.validTo == iso(LYON_SAID) and paris.supersededBy == lyon.id
    assert lyon.content == "Moved to Lyon in the week of 2024-05-27" and lyon.eventDate == "2024-W22"
    assert job.content == "Starts a new job on 2024-06-10" and job.eventDate == "2024-06-10"
    assert lyon.observedAt == job.observedAt == iso(LYON_SAID)
    assert lyon.createdAt == iso(LYON_LEARNED)  # learned later than it was said

    # History never reaches a prompt: not the reply's, however much the conversation is about Paris...
    prompt = await setup.service.recall.prompt(
        ALICE, ["where do I live in Paris?", "Paris"], user_label="alice", where=Location.dm(CHANNEL),
    )
    assert "Lyon" in prompt.text and "Paris" not in prompt.text and paris.id not in prompt.fact_ids
    # ...nor the extractor's: the next extraction is shown only what holds now
    await setup.say("I live in Paris again? no, kidding", LYON_LEARNED, turn_id="3")
    await setup.settle(LYON_LEARNED + timedelta(minutes=1))
    assert setup.model.shown[-1] == ["Moved to Lyon in the week of 2024-05-27", "Starts a new job on 2024-06-10"]


async def test_forgetting_the_minutes_that_closed_a_fact_reopens_it(setup: Setup) -> None:
    await moved(setup)
    setup.clock.now = LYON_LEARNED + timedelta(minutes=2)
    report = await setup.service.user(ALICE).forget(ForgetMinutes(5))
    memory = await setup.memory()
    assert report.facts == 2
    assert [(f.content, f.closed) for f in memory.facts] == [("Lives in Paris", False)]


async def test_history_goes_with_forget_fact_forget_everything_and_retention(setup: Setup) -> None:
    memory = await moved(setup)
    paris = memory.facts[0]
    assert (await setup.service.user(ALICE).forget(ForgetFact(paris.id))).facts
    memory = await setup.memory()
    assert paris.id not in {f.id for f in memory.facts} and len(memory.facts) == 2
    assert (await setup.service.user(ALICE).forget(ForgetEverything())).any_memory
    assert (await setup.memory()).is_empty()

    memory = await moved(setup)  # again, then silent for longer than the retention
    assert any(f.closed for f in memory.facts)
    await setup.service.ops.save_activity()
    # silent for longer than the retention, by the clock and by the time the store last wrote the memory
    assert await setup.service.ops.sweep(datetime.now(UTC) + timedelta(days=400)) == 1
    assert (await setup.memory()).is_empty()


OLD_DOCUMENT = {
    "version": "1.0",
    "user": {"workContext": {"summary": "Nurse.", "updatedAt": "2024-01-01T00:00:00+00:00"}},
    "facts": [
        {"id": "fact_0000000a", "content": "Lives in Paris", "category": "context", "confidence": 0.9,
         "createdAt": "2024-01-01T00:00:00+00:00"},
        {"id": "fact_0000000b", "content": "Has a cat named Miso", "category": "relationship", "confidence": 0.8,
         "createdAt": "2024-01-02T00:00:00+00:00", "source": "conversation:1", "lastConfirmedAt": "",
         "place": "dm", "shared": False, "newerField": [1, 2]},
    ],
}


async def test_memories_written_before_load_unchanged_from_either_store(setup: Setup, tmp_path: Path) -> None:
    storage = parts(setup.service).storage
    raw = json.dumps(OLD_DOCUMENT)
    if storage.database is None:
        (tmp_path / "memory" / f"{ALICE}.json").write_text(raw, encoding="utf-8")
    else:
        await storage.database.execute(
            "INSERT INTO memories (user_id, doc, revision, updated_at) VALUES ($1, $2::jsonb, 1, now())", ALICE, raw
        )
    memory = await setup.memory()
    assert [f.closed for f in memory.facts] == [False, False]
    assert [f.said_at for f in memory.facts] == ["2024-01-01T00:00:00+00:00", "2024-01-02T00:00:00+00:00"]
    # a change elsewhere in the document writes the facts back with no field added or lost
    async with parts(setup.service).writer.change(ALICE, UserAuthor()) as draft:
        draft.user.topOfMind.summary = "Busy week."
    saved = json.loads(await setup.service.user(ALICE).export())["facts"]
    assert saved[1] == OLD_DOCUMENT["facts"][1]  # type: ignore[index]
    assert {key: saved[0][key] for key in OLD_DOCUMENT["facts"][0]} == OLD_DOCUMENT["facts"][0]  # type: ignore[index]
    assert not {"observedAt", "eventDate", "validTo", "supersededBy"} & set(saved[0])


async def test_retracting_the_fact_that_replaced_another_reopens_it(setup: Setup) -> None:
    """The messages that said "moved to Lyon" were deleted: that statement is taken back, so Paris holds again."""
    memory = await moved(setup)
    paris, lyon, _ = memory.facts
    report = await setup.service.events.deleted([2])
    assert report.facts == 2  # "moved to Lyon" and the new job, both from message 2
    memory = await setup.memory()
    first = memory.facts[0]
    assert (first.id, first.content, first.closed) == (paris.id, "Lives in Paris", False)
    assert lyon.id not in {f.id for f in memory.facts}
