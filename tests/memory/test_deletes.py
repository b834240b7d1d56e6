"""Discord deletes and edits through the memory engine's front door, on files and on PostgreSQL: a message deleted
before it is learned never reaches the extraction model (whether its reply is still being written, its turn is
waiting, or its batch is at the extractor), one deleted after takes its facts and its summary changes with it (never
what the user wrote or corrected), and an edited one is learned as it reads now. The extraction model is the real
`openai` client against the test server, writing down one fact per user line in that line's words."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

from bot.memory.models import ConversationKey, IncomingMessage, MemoryFile, Place
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.rules.sources import sources_of
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.pg.database import Database
from bot.storage.sealing import MasterKey, new_master_key_text
from tests.helpers import extraction_input
from tests.memory.test_service import Gated
from tests.support.engine import BOT_ID, close_service, file_service, parts, postgres_service, where_of
from tests.support.llm_server import ChatServer, Response, extraction

USER = 612345678901234567
SEALING_KEY = MasterKey.parse(new_master_key_text())
KEY = ConversationKey(700, USER, Place.dm())
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
_ids = iter(range(1_300_000_000_000_000_000, 1_400_000_000_000_000_000, 1 << 22))


def message(text: str, *, reply_to: int | None = None) -> IncomingMessage:
    """A new message of the user's, or (with `reply_to`) the bot's reply to one."""
    return IncomingMessage(
        message_id=next(_ids), author_id=BOT_ID if reply_to else USER, author_name="bot" if reply_to else "Ana",
        content=text, created_at=T0, is_self=reply_to is not None, reply_to_id=reply_to,
    )


def writes_it_down(body: dict[str, Any]) -> Response:
    """One fact per user line, in its words, and the Work summary listing them."""
    said = [t["text"] for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    facts = [(f"Said: {text}", "context", 0.95) for text in said]
    return extraction(facts=facts, work=" ".join(f"They said {text}." for text in said) or None)


@dataclass
class Engine:
    service: MemoryService
    server: ChatServer
    reopen: Callable[[], MemoryService]

    async def say(self, *messages: IncomingMessage) -> bool:
        service = self.service
        return await service.learning.remember(
            where_of(KEY), list(messages), ticket=service.learning.ticket(USER), bot_id=BOT_ID
        )

    async def exchange(self, text: str) -> tuple[IncomingMessage, IncomingMessage]:
        said = message(text)
        reply = message(f"Noted that {text}", reply_to=said.message_id)
        assert await self.say(said, reply)
        return said, reply

    async def settle(self) -> None:
        await asyncio.wait_for(parts(self.service).learning.debouncer.wait_idle(), 30)

    async def memory(self) -> MemoryFile:
        return await self.service.user(USER).show()

    async def facts(self) -> list[str]:
        return sorted(fact.content for fact in (await self.memory()).facts)

    def extracted_texts(self) -> list[str]:
        """Every user line any extraction request carried."""
        return [
            t["text"] for r in self.server.requests for t in extraction_input(r["body"])["newTurns"]
            if t["speaker"] == "user"
        ]

    async def restart(self) -> None:
        await close_service(self.service)
        self.service = self.reopen()
        await self.service.ops.open()


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Opened at teardown at the latest, so the server can stop."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture(params=["files", "postgres", "files-sealed", "postgres-sealed"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path, chat_server: ChatServer) -> AsyncIterator[Engine]:
    chat_server.responder = writes_it_down
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0, timeout=10)
    policy = MemoryPolicy(debounce_seconds=0.05, max_wait_seconds=5.0)
    databases: list[Database] = []

    def build() -> MemoryService:
        extractor = MemoryExtractor(client, model="memory-model", max_retries=0)
        backend, _, sealed = str(request.param).partition("-")
        key = SEALING_KEY if sealed else None  # MEMORY_ENCRYPTION_KEY: turns and memory are sealed at rest
        if backend == "files":
            return file_service(tmp_path / "data", extractor, policy, durable=False, encryption_key=key)
        database = Database(str(request.getfixturevalue("postgres_url")), size=4)
        databases.append(database)
        return postgres_service(database, extractor, policy, encryption_key=key)

    built = Engine(build(), chat_server, build)
    await built.service.ops.open()
    yield built
    await close_service(built.service)
    await client.close()


async def test_a_message_deleted_while_its_turn_waits_never_reaches_the_extraction_model(engine: Engine) -> None:
    parts(engine.service).learning.debouncer.quiet_seconds = 60  # waiting, as it would between messages
    secret, _ = await engine.exchange("my PIN hint is the dog's birthday")
    kept, _ = await engine.exchange("I keep bees on the roof")
    report = await engine.service.events.deleted([secret.message_id])
    assert report.turns == 2  # the message and the bot's reply to it
    pending = await parts(engine.service).storage.turns.pending_turns_of(USER)
    assert [item.turn.text for item in pending] == ["I keep bees on the roof", "Noted that I keep bees on the roof"]
    await engine.service.ops.flush(30)
    assert engine.extracted_texts() == ["I keep bees on the roof"]
    assert await engine.facts() == ["Said: I keep bees on the roof"]
    assert sources_of((await engine.memory()).facts[0]) == [str(kept.message_id)]


async def test_a_message_deleted_while_its_reply_is_written_is_never_queued(engine: Engine) -> None:
    said = message("I am moving to Porto next month")
    await engine.service.events.deleted([said.message_id])  # the delete beat the reply
    assert not await engine.say(said, message("Porto is lovely", reply_to=said.message_id))
    assert await parts(engine.service).storage.turns.pending_turns_of(USER) == []
    await engine.service.ops.flush(30)
    assert engine.server.requests == []
    assert (await engine.memory()).is_empty()


async def test_a_message_deleted_while_its_batch_is_extracted_is_not_saved_and_the_rest_is(
    engine: Engine, gate: threading.Event
) -> None:
    first = Gated(gate, extraction(facts=[("Said: I am applying for a job at Acme", "context", 0.95),
                                          ("Said: I like jazz", "context", 0.95)]))
    engine.server.responder = None
    engine.server.enqueue(first)
    parts(engine.service).learning.debouncer.quiet_seconds = 60
    secret, _ = await engine.exchange("I am applying for a job at Acme")
    await engine.exchange("I like jazz")
    flushing = asyncio.create_task(engine.service.ops.flush(30))
    await engine.server.await_requests(1, timeout=30)  # at the extractor
    engine.server.responder = writes_it_down
    await engine.service.events.deleted([secret.message_id])
    gate.set()
    await flushing
    await engine.settle()
    assert await engine.facts() == ["Said: I like jazz"]  # the batch again, without the deleted message
    assert engine.extracted_texts() == ["I am applying for a job at Acme", "I like jazz", "I like jazz"]
    assert await parts(engine.service).storage.turns.pending_turns_of(USER) == []


async def test_a_learned_message_deleted_later_takes_its_facts_and_summary_but_not_the_users_own(
    engine: Engine,
) -> None:
    secret, _ = await engine.exchange("I am planning a surprise party for my brother in room 4000")
    await engine.settle()
    bees, _ = await engine.exchange("I keep bees on the roof")
    await engine.settle()
    memory = await engine.memory()
    owed = next(f for f in memory.facts if "brother" in f.content)
    assert sources_of(owed) == [str(secret.message_id)]
    corrected = await engine.service.user(USER).edit(owed.id, "Has a brother")  # the user's own words now
    assert "room 4000" in str(memory.model_dump())  # an earlier value of the summary, kept for a day

    report = await engine.service.events.deleted([secret.message_id])
    assert (report.facts, report.users) == (0, 1)  # the user corrected that fact: theirs to remove
    memory = await engine.memory()
    assert await engine.facts() == ["Has a brother", "Said: I keep bees on the roof"]
    assert sources_of(memory.fact_by_id(corrected.id)) == []  # type: ignore[arg-type]
    assert "room 4000" not in str(memory.model_dump())  # the summary went back to before the message

    report = await engine.service.events.deleted([bees.message_id])
    assert report.facts == 1
    assert await engine.facts() == ["Has a brother"]
    assert await parts(engine.service).storage.ledger.lookup([str(secret.message_id), str(bees.message_id)]) == {}


async def test_a_fact_from_two_messages_of_a_batch_goes_when_both_are_deleted(engine: Engine) -> None:
    engine.server.responder = lambda body: extraction(facts=[("Runs marathons", "preference", 0.95)])
    parts(engine.service).learning.debouncer.quiet_seconds = 60
    first, _ = await engine.exchange("I ran Berlin")
    second, _ = await engine.exchange("and Boston")
    await engine.service.ops.flush(30)
    assert await engine.facts() == ["Runs marathons"]
    await engine.service.events.deleted([first.message_id])
    assert await engine.facts() == ["Runs marathons"]
    await engine.service.events.deleted([second.message_id])
    assert await engine.facts() == []


async def test_a_delete_after_a_restart_finds_the_memory_it_taught(engine: Engine) -> None:
    said, _ = await engine.exchange("I work night shifts at the hospital")
    await engine.settle()
    await engine.restart()  # nothing of the message is cached any more: only its id reaches us
    report = await engine.service.events.deleted([said.message_id, 1234])
    assert (report.facts, report.users) == (1, 1)
    assert (await engine.memory()).facts == []


async def test_an_edit_of_a_waiting_message_is_learned_as_edited(engine: Engine) -> None:
    parts(engine.service).learning.debouncer.quiet_seconds = 60
    said, _ = await engine.exchange("I live in Paris")
    edited = IncomingMessage(said.message_id, USER, "Ana", "I live in Lyon", T0)
    assert await engine.service.events.edited(where_of(KEY), edited, bot_id=BOT_ID) == "pending"
    await engine.service.ops.flush(30)
    assert engine.extracted_texts() == ["I live in Lyon"]  # the old text, and the reply to it, never sent
    memory = await engine.memory()
    assert [(f.content, sources_of(f)) for f in memory.facts] == [("Said: I live in Lyon", [str(said.message_id)])]


async def test_an_edit_after_learning_learns_the_message_again(engine: Engine) -> None:
    said, _ = await engine.exchange("I live in Paris")
    await engine.settle()
    await engine.exchange("I keep bees")
    await engine.settle()
    edited = IncomingMessage(said.message_id, USER, "Ana", "I live in Lyon", T0)
    assert await engine.service.events.edited(where_of(KEY), edited, bot_id=BOT_ID) == "learned"
    await engine.settle()
    assert await engine.facts() == ["Said: I keep bees", "Said: I live in Lyon"]
    assert engine.extracted_texts()[-1] == "I live in Lyon"
    # and a message that was never on its way to memory is left alone
    stranger = IncomingMessage(next(_ids), USER, "Ana", "hello?", T0)
    assert await engine.service.events.edited(where_of(KEY), stranger, bot_id=BOT_ID) == "not learned"
