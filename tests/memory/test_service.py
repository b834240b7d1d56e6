"""MemoryService end to end: turns → journal → debounce → extraction (real client, real HTTP server) → atomic file
→ selection and rendering, plus the rules that span parts: only new turns are sent, a failed extraction changes
nothing and keeps the turns journaled, /memory forget beats in-flight and pending work, pausing, strict per-user
isolation, exactly-once application across a crash, shutdown flush, and disk faults."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from openai import AsyncOpenAI

from bot.memory.doors import PAUSE, ForgetEverything, ForgetFact, Resume
from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.drivers.interfaces import Generations
from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn
from bot.memory.parts.learning import MAX_REQUEUES
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.rules.places import Scope
from bot.memory.service import MemoryPolicy, MemoryService
from bot.storage.atomic import AtomicWriter
from tests.support.engine import DM_HERE, close_service, file_service, learn, parts, save_memory
from tests.support.llm_server import (
    ChatServer,
    RecordedRequest,
    Response,
    error,
    extraction,
    extraction_payload,
    json_reply,
    stall,
)
from tests.support.llm_server import _Exchange as Exchange

ALICE = 1001
BOB = 1002
CHANNEL = 500
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
_ids = iter(range(10_000, 10**9))


def turn(user: int, text: str, *, role: str = "user", name: str | None = None) -> Turn:
    n = next(_ids)
    return Turn(
        "assistant" if role == "assistant" else "user",
        user,
        name or f"user{user}",
        text,
        T0 + timedelta(seconds=n - 10_000),
        str(n),
    )


def payload_of(request: RecordedRequest) -> dict[str, Any]:
    content = request["body"]["messages"][1]["content"]
    return json.loads(content[content.index("{") :])


def new_texts(request: RecordedRequest) -> list[str]:
    return [t["text"] for t in payload_of(request)["newTurns"]]


def echo_facts(body: dict[str, Any]) -> Response:
    """A responder that obeys the conversation: one fact per user line, in that line's own words."""
    content = body["messages"][1]["content"]
    sent = json.loads(content[content.index("{") :])
    facts = [(f"Said: {t['text']}", "context", 0.95) for t in sent["newTurns"] if t["speaker"] == "user"]
    return json_reply(extraction_payload(facts=facts))


class Attempts:
    """Every HTTP attempt the extractor's client makes (the SDK's own retries included), with its time: an httpx
    request hook, called before the connection is made, so refused connections count too. `before_attempt` runs
    first (a test can bring a server back on the n-th attempt)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.before_attempt: Callable[[int], Awaitable[None]] | None = None

    async def __call__(self, request: httpx.Request) -> None:
        self.times.append(time.monotonic())
        if self.before_attempt is not None:
            await self.before_attempt(len(self.times))

    @property
    def count(self) -> int:
        return len(self.times)

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:], strict=False)]


@dataclass(frozen=True)
class Gated(Response):
    """Holds the request until the test opens `gate` (a threading.Event, set from the test's loop)."""

    gate: threading.Event
    then: Response
    kind: ClassVar[str] = "gated"

    async def render(self, ex: Exchange) -> Any:
        await asyncio.get_running_loop().run_in_executor(None, self.gate.wait, 30)
        return await self.then.render(ex)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}


@dataclass
class Engine:
    service: MemoryService
    client: AsyncOpenAI
    data: Path
    attempts: Attempts = field(default_factory=Attempts)

    @property
    def store(self) -> MemoryStore:
        memories = parts(self.service).storage.memories
        assert isinstance(memories, MemoryStore)
        return memories

    @property
    def journal_path(self) -> Path:
        return self.data / JOURNAL_NAME

    def file(self, user: int) -> Path:
        return self.store.path_for(user)

    def on_disk(self, user: int) -> MemoryFile:
        return MemoryFile.model_validate(json.loads(self.file(user).read_bytes()))

    def facts_on_disk(self, user: int) -> list[str]:
        return [fact.content for fact in self.on_disk(user).facts]

    def journaled(self) -> list[str]:
        """Texts of the turns a fresh start would replay."""
        return [item.turn.text for item in Journal(self.journal_path, FileGenerations()).replay()]

    async def settle(self) -> None:
        await asyncio.wait_for(parts(self.service).learning.debouncer.wait_idle(), 20)

    async def aclose(self) -> None:
        await close_service(self.service)
        await self.client.close()


def make_engine(
    data: Path,
    base_url: str,
    *,
    debounce: float = 0.05,
    max_wait: float = 5.0,
    timeout: float = 5.0,
    retries: int = 2,
    writer: AtomicWriter | None = None,
    max_concurrent: int = 4,
    durable: bool = True,
    journal_durable: bool | None = None,
    attempts: Attempts | None = None,
    scope: Scope = "place",
) -> Engine:
    """A MemoryService over real parts in `data`, its extractor talking to `base_url` with the SDK's retries
    (every attempt recorded in `attempts`)."""
    attempts = attempts or Attempts()
    http = httpx.AsyncClient(event_hooks={"request": [attempts]}, timeout=timeout)
    client = AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=timeout, http_client=http)
    extractor = MemoryExtractor(client, model="memory-model", max_retries=retries)
    service = file_service(
        data,
        extractor,
        MemoryPolicy(
            debounce_seconds=debounce, max_wait_seconds=max_wait, max_concurrent_extractions=max_concurrent, scope=scope
        ),
        writer=writer or AtomicWriter(durable=durable),
        journal_options={"durable": durable if journal_durable is None else journal_durable},
    )
    return Engine(service, client, data, attempts)


@pytest.fixture
async def engine(tmp_path: Path, chat_server: ChatServer) -> AsyncIterator[Engine]:
    built = make_engine(tmp_path, chat_server.base_url)
    await built.service.ops.open()
    yield built
    await built.aclose()


@pytest.fixture
def gate(chat_server: ChatServer) -> Iterator[threading.Event]:
    """Opened at teardown at the latest, so the server can stop."""
    event = threading.Event()
    yield event
    event.set()


def errors_in(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.levelno >= logging.ERROR]


# --- the happy path ---------------------------------------------------------------------------------------


async def test_turns_become_a_file_and_reach_the_next_reply(engine: Engine, chat_server: ChatServer) -> None:
    chat_server.enqueue(
        extraction(work="They write Go microservices at a fintech.",
                   facts=[("Writes Go microservices at work", "knowledge", 0.95)])
    )
    key = ConversationKey(CHANNEL, ALICE)
    first = [turn(ALICE, "I write Go microservices at a fintech"), turn(ALICE, "mostly payment APIs")]
    assert await learn(engine.service, key, first) is True
    assert parts(engine.service).storage.turns is not None and parts(engine.service).storage.turns.pending == 2
    await engine.settle()

    memory = engine.on_disk(ALICE)
    assert [fact.content for fact in memory.facts] == ["Writes Go microservices at work"]
    assert memory.facts[0].id.startswith("fact_")
    assert memory.user.workContext.summary == "They write Go microservices at a fintech."
    assert set(memory.appliedTurnIds) == {t.turn_id for t in first}
    assert engine.journaled() == []  # done once saved

    rendered = await engine.service.recall.prompt(
        ALICE, ["which language for my new service?"], user_label="alice", where=DM_HERE
    )
    prompt = rendered.text
    assert "Writes Go microservices at work" in prompt
    assert "They write Go microservices at a fintech." in prompt
    assert prompt.startswith("<user_memory") and prompt.endswith("</user_memory>")
    nothing = await engine.service.recall.prompt(BOB, ["hello"], user_label="bob", where=DM_HERE)
    assert nothing.text == ""


async def test_a_second_batch_sends_only_the_new_turns(engine: Engine, chat_server: ChatServer) -> None:
    chat_server.enqueue(
        extraction(facts=[("Writes Go microservices at work", "knowledge", 0.95)]),
        extraction(facts=[("Is learning Rust", "goal", 0.9)]),
    )
    key = ConversationKey(CHANNEL, ALICE)
    await learn(engine.service, key, [turn(ALICE, "I write Go microservices at a fintech")])
    await engine.settle()
    fact_id = engine.on_disk(ALICE).facts[0].id
    await learn(engine.service, key, [turn(ALICE, "I started learning Rust this week")])
    await engine.settle()

    first, second = chat_server.requests
    assert new_texts(first) == ["I write Go microservices at a fintech"]
    assert new_texts(second) == ["I started learning Rust this week"]
    assert "fintech" not in second["body"]["messages"][1]["content"]  # the first batch is not sent again
    assert [f["id"] for f in payload_of(second)["currentMemory"]["facts"]] == [fact_id]
    assert engine.facts_on_disk(ALICE) == ["Writes Go microservices at work", "Is learning Rust"]


async def test_forget_one_fact(engine: Engine, chat_server: ChatServer) -> None:
    chat_server.enqueue(extraction(facts=[("Likes tea", "preference"), ("Has a cat named Miso", "context")]))
    await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "tea and my cat Miso")])
    await engine.settle()
    tea = engine.on_disk(ALICE).facts[0].id
    assert (await engine.service.user(ALICE).forget(ForgetFact(tea))).facts == 1
    assert (await engine.service.user(ALICE).forget(ForgetFact(tea))).facts == 0
    assert engine.facts_on_disk(ALICE) == ["Has a cat named Miso"]


class SlowJournal(Journal):
    """A journal on a slow disk: appends take `delay` each, one at a time."""

    def __init__(self, path: Path, generations: Generations, delay: float) -> None:
        super().__init__(path, generations, durable=False)
        self.delay = delay
        self._disk = asyncio.Lock()

    async def add(self, key: ConversationKey, turns: list[Turn]) -> None:
        async with self._disk:
            await asyncio.sleep(self.delay)  # simulated disk latency, not synchronisation
            await super().add(key, turns)


async def test_a_slow_journal_does_not_split_a_burst(tmp_path: Path, chat_server: ChatServer) -> None:
    """Quiet time is measured on the user's pace: five messages arriving together are one extraction, even when
    each journal append takes twice the debounce time."""
    chat_server.responder = echo_facts
    engine = make_engine(tmp_path, chat_server.base_url, debounce=0.05)
    storage = parts(engine.service).storage
    storage.turns = SlowJournal(tmp_path / JOURNAL_NAME, storage.generations, delay=0.1)
    await engine.service.ops.open()
    key = ConversationKey(CHANNEL, ALICE)
    burst = [turn(ALICE, f"message {n}") for n in range(5)]
    try:
        # like discord.py: one handler task per message, all arriving at once
        await asyncio.gather(*(learn(engine.service, key, [t]) for t in burst))
        await engine.settle()
    finally:
        await engine.aclose()
    (request,) = chat_server.requests
    assert new_texts(request) == [t.text for t in burst]
    assert engine.journaled() == []


# --- failures keep memory and turns -----------------------------------------------------------------------


async def test_a_lasting_llm_outage_leaves_the_file_and_keeps_the_turns(
    engine: Engine, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    baseline = MemoryFile(facts=[Fact(id="fact_0000aaaa", content="Likes tea", confidence=0.9)])
    await save_memory(engine.store, ALICE, baseline)
    before = engine.file(ALICE).read_bytes()
    chat_server.default = error(500)
    texts = ["I moved to Lisbon", "I now work remotely"]
    with caplog.at_level(logging.INFO):
        await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, t) for t in texts])
        await engine.settle()
    rounds = MAX_REQUEUES + 1  # re-queued after a quiet period a few times, then given up
    assert len(chat_server.requests) == 3 * rounds  # each round: the first try and the SDK's two retries
    assert engine.attempts.count == 3 * rounds
    requeued = [r for r in caplog.records if "trying again later" in r.getMessage()]
    assert len(requeued) == MAX_REQUEUES and all(r.levelno == logging.WARNING for r in requeued)
    assert engine.file(ALICE).read_bytes() == before
    (line,) = errors_in(caplog)
    assert "1001" in line.getMessage() and "kept pending" in line.getMessage()
    assert "Lisbon" not in caplog.text  # no message contents in the logs
    assert engine.journaled() == texts
    assert parts(engine.service).learning.stats.batches_failed == 1


# --- /memory forget ---------------------------------------------------------------------------------------


async def test_forget_all_during_an_inflight_extraction_writes_nothing(
    engine: Engine, chat_server: ChatServer, gate: threading.Event
) -> None:
    await save_memory(engine.store, ALICE, MemoryFile(facts=[Fact(id="fact_0000aaaa", content="Likes tea")]))
    chat_server.enqueue(Gated(gate, extraction(facts=[("Lives in Lisbon", "context")])))
    await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "I live in Lisbon")])
    await chat_server.await_requests(1)
    assert (await engine.service.user(ALICE).forget(ForgetEverything())).any_memory is True
    gate.set()  # the model answers now, too late
    await engine.settle()
    assert not engine.file(ALICE).exists()
    assert engine.journaled() == []
    assert (await engine.service.user(ALICE).show()).is_empty()


async def test_an_extraction_answered_after_forget_all_is_discarded(
    engine: Engine, chat_server: ChatServer, gate: threading.Event
) -> None:
    """Work started before the wipe (not through the debouncer, so nothing cancels it) never writes."""
    chat_server.enqueue(Gated(gate, extraction(facts=[("Lives in Lisbon", "context")])))
    batch = [turn(ALICE, "I live in Lisbon")]
    work = asyncio.create_task(parts(engine.service).learning._process_batch(ConversationKey(CHANNEL, ALICE), batch))
    await chat_server.await_requests(1)
    await engine.service.user(ALICE).forget(ForgetEverything())
    gate.set()
    await asyncio.wait_for(work, 10)
    assert not engine.file(ALICE).exists()


@pytest.fixture
async def slow_engine(tmp_path: Path, chat_server: ChatServer) -> AsyncIterator[Engine]:
    """An engine whose quiet time never runs out during a test: a batch is pending until the test flushes it, so
    "pending" does not depend on how fast a loaded machine gets from one line to the next."""
    built = make_engine(tmp_path, chat_server.base_url, debounce=600, max_wait=1200)
    await built.service.ops.open()
    yield built
    await built.aclose()


async def test_forget_all_cancels_pending_batches(slow_engine: Engine, chat_server: ChatServer) -> None:
    engine = slow_engine
    chat_server.responder = echo_facts
    await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "I live in Lisbon")])
    await learn(engine.service, ConversationKey(CHANNEL + 1, ALICE), [turn(ALICE, "I like tea")])
    await engine.service.user(ALICE).forget(ForgetEverything())
    await learn(engine.service, ConversationKey(CHANNEL, BOB), [turn(BOB, "I like trains")])
    assert (await engine.service.ops.flush(20)).finished
    (only,) = chat_server.requests  # Bob's, which was queued after Alice's and still ran
    assert new_texts(only) == ["I like trains"]
    assert not engine.file(ALICE).exists()
    assert engine.journaled() == []


# --- pausing ----------------------------------------------------------------------------------------------


async def test_a_paused_user_teaches_nothing_until_resumed(slow_engine: Engine, chat_server: ChatServer) -> None:
    engine = slow_engine
    chat_server.responder = echo_facts
    key = ConversationKey(CHANNEL, ALICE)
    await learn(engine.service, key, [turn(ALICE, "pending when I paused")])
    assert not (await engine.service.user(ALICE).set_mode(PAUSE)).before.paused
    assert await learn(engine.service, key, [turn(ALICE, "I live in Lisbon")]) is False
    assert parts(engine.service).storage.turns is not None and parts(engine.service).storage.turns.pending == 0
    await learn(engine.service, ConversationKey(CHANNEL, BOB), [turn(BOB, "I like trains")])
    assert (await engine.service.ops.flush(20)).finished
    assert [new_texts(r) for r in chat_server.requests] == [["I like trains"]]
    assert not engine.file(ALICE).exists()
    assert engine.journaled() == []

    assert (await engine.service.user(ALICE).set_mode(Resume())).before.anything_on
    assert await learn(engine.service, key, [turn(ALICE, "I like tea")]) is True
    assert (await engine.service.ops.flush(20)).finished
    assert engine.facts_on_disk(ALICE) == ["Said: I like tea"]


# --- isolation --------------------------------------------------------------------------------------------


async def test_two_users_in_one_channel_never_share_memory(slow_engine: Engine, chat_server: ChatServer) -> None:
    engine = slow_engine  # each user's three turns are one burst however slowly the machine delivers them
    chat_server.responder = echo_facts
    alice_says = ["I grow tomatoes on my balcony", "I play the cello", "I am vegetarian"]
    bob_says = ["I restore old motorcycles", "I live near the sea", "I hate coriander"]
    for a, b in zip(alice_says, bob_says, strict=True):  # interleaved in the same channel
        await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, a, name="alice")])
        await learn(engine.service, ConversationKey(CHANNEL, BOB), [turn(BOB, b, name="bob")])
    assert (await engine.service.ops.flush(20)).finished

    assert sorted(engine.facts_on_disk(ALICE)) == sorted(f"Said: {t}" for t in alice_says)
    assert sorted(engine.facts_on_disk(BOB)) == sorted(f"Said: {t}" for t in bob_says)
    assert len(chat_server.requests) == 2
    for request in chat_server.requests:
        names = {t["name"] for t in payload_of(request)["newTurns"]}
        assert len(names) == 1  # one user's turns per request
        others = bob_says if names == {"alice"} else alice_says
        assert not any(text in request["body"]["messages"][1]["content"] for text in others)
    prompt = (await engine.service.recall.prompt(
        ALICE, ["tell me about motorcycles"], user_label="alice", where=DM_HERE
    )).text
    assert "tomatoes" in prompt and "motorcycles" not in prompt


# --- crash recovery ---------------------------------------------------------------------------------------


async def test_replay_after_saved_but_not_done_applies_nothing_twice(tmp_path: Path, chat_server: ChatServer) -> None:
    """The crash window: memory (with appliedTurnIds) was saved, the journal's "done" never written."""
    key = ConversationKey(CHANNEL, ALICE)
    applied = [turn(ALICE, "I live in Lisbon"), turn(ALICE, "I like tea")]
    new = turn(ALICE, "I started a pottery class")
    store = MemoryStore(tmp_path / "memory", FileGenerations())
    store.prepare()
    await save_memory(
        store,
        ALICE,
        MemoryFile(
            facts=[Fact(id="fact_0000aaaa", content="Said: I live in Lisbon", confidence=0.95),
                   Fact(id="fact_0000bbbb", content="Said: I like tea", confidence=0.95)],
            appliedTurnIds=[t.turn_id for t in applied],
        ),
    )
    await Journal(tmp_path / JOURNAL_NAME, FileGenerations()).add(key, [*applied, new])

    chat_server.responder = echo_facts
    engine = make_engine(tmp_path, chat_server.base_url)
    try:
        assert await engine.service.ops.open() == 3
        await engine.settle()
    finally:
        await engine.aclose()
    (request,) = chat_server.requests
    assert new_texts(request) == ["I started a pottery class"]
    assert engine.facts_on_disk(ALICE) == [
        "Said: I live in Lisbon", "Said: I like tea", "Said: I started a pottery class"
    ]
    assert engine.journaled() == []


async def test_replay_of_fully_applied_turns_makes_no_request(tmp_path: Path, chat_server: ChatServer) -> None:
    key = ConversationKey(CHANNEL, ALICE)
    applied = [turn(ALICE, "I live in Lisbon")]
    store = MemoryStore(tmp_path / "memory", FileGenerations())
    store.prepare()
    await save_memory(store, ALICE, MemoryFile(appliedTurnIds=[applied[0].turn_id]))
    before = store.path_for(ALICE).read_bytes()
    await Journal(tmp_path / JOURNAL_NAME, FileGenerations()).add(key, applied)
    engine = make_engine(tmp_path, chat_server.base_url)
    try:
        await engine.service.ops.open()
        await engine.settle()
    finally:
        await engine.aclose()
    assert chat_server.requests == []
    assert engine.file(ALICE).read_bytes() == before
    assert engine.journaled() == []


# --- shutdown ---------------------------------------------------------------------------------------------


async def test_shutdown_flushes_pending_batches_to_disk(tmp_path: Path, chat_server: ChatServer) -> None:
    chat_server.responder = echo_facts
    engine = make_engine(tmp_path, chat_server.base_url, debounce=60, max_wait=600)  # nothing would fire alone
    await engine.service.ops.open()
    try:
        for user in range(2001, 2011):
            await learn(engine.service, ConversationKey(CHANNEL, user), [turn(user, f"I am user {user}")])
        assert chat_server.requests == []
        assert await engine.service.ops.shutdown(timeout=20) is True
        late = turn(2001, "said during shutdown")
        assert await learn(engine.service, ConversationKey(CHANNEL, 2001), [late]) is True
    finally:
        await engine.aclose()
    for user in range(2001, 2011):
        assert engine.facts_on_disk(user) == [f"Said: I am user {user}"]
    assert engine.journaled() == ["said during shutdown"]  # kept for the next start, not extracted now
    assert len(chat_server.requests) == 10


async def test_shutdown_with_a_stalled_server_keeps_the_turns_journaled(
    tmp_path: Path, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.default = stall(30)
    engine = make_engine(tmp_path, chat_server.base_url, debounce=60, max_wait=600, timeout=20)
    await engine.service.ops.open()
    try:
        await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "I live in Lisbon")])
        await learn(engine.service, ConversationKey(CHANNEL, BOB), [turn(BOB, "I like trains")])
        with caplog.at_level(logging.WARNING):
            assert await engine.service.ops.shutdown(timeout=0.3) is False
        assert parts(engine.service).learning.debouncer.running == 0  # nothing left running after the grace
    finally:
        await engine.aclose()
    assert sorted(engine.journaled()) == ["I like trains", "I live in Lisbon"]
    assert not engine.file(ALICE).exists() and not engine.file(BOB).exists()
    assert "stay pending" in caplog.text


# --- disk faults ------------------------------------------------------------------------------------------


class FaultyFsync:
    """The AtomicWriter's fsync seam: fails with ENOSPC while `failures` lasts; checks the old file meanwhile."""

    def __init__(self, target: Path, failures: int) -> None:
        self.target = target
        self.failures = failures
        self.injected = 0
        self.seen_during_fault: list[bytes] = []
        self._changed = threading.Condition()

    def __call__(self, fd: int) -> None:
        if self.failures > 0:
            self.failures -= 1
            with self._changed:
                self.injected += 1
                self._changed.notify_all()
            self.seen_during_fault.append(self.target.read_bytes())
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync(fd)

    def reached(self, injected: int, timeout: float = 20.0) -> None:
        """Block (on a worker thread) until `injected` faults were injected."""
        with self._changed:
            assert self._changed.wait_for(lambda: self.injected >= injected, timeout), self.injected


async def _disk_fault_engine(
    tmp_path: Path, chat_server: ChatServer, failures: int
) -> tuple[Engine, FaultyFsync, bytes]:
    fsync = FaultyFsync(tmp_path / "memory" / f"{ALICE}.json", failures=0)
    engine = make_engine(tmp_path, chat_server.base_url, writer=AtomicWriter(fsync=fsync))
    await engine.service.ops.open()
    await save_memory(engine.store, ALICE, MemoryFile(facts=[Fact(id="fact_0000aaaa", content="Likes tea")]))
    fsync.failures = failures
    return engine, fsync, engine.file(ALICE).read_bytes()


async def test_a_disk_fault_keeps_the_old_file_and_retries_the_batch(
    tmp_path: Path, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.responder = echo_facts
    engine, fsync, before = await _disk_fault_engine(tmp_path, chat_server, failures=2)
    try:
        with caplog.at_level(logging.WARNING):
            await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "I live in Lisbon")])
            await engine.settle()
            await asyncio.wait_for(parts(engine.service).learning.outage.wait_up(), 20)
            await engine.settle()
    finally:
        await engine.aclose()
    assert fsync.injected == 2  # the save, then the probe that waits for space
    assert fsync.seen_during_fault == [before, before]
    warnings = [r for r in caplog.records if "could not save" in r.getMessage()]
    assert [r.levelno for r in warnings] == [logging.WARNING]  # once per outage, not once per attempt
    assert engine.facts_on_disk(ALICE) == ["Likes tea", "Said: I live in Lisbon"]  # saved once the fault cleared
    assert engine.journaled() == []
    assert not list((tmp_path / "memory").glob(".*.tmp"))


async def test_a_lasting_disk_fault_is_waited_for_and_the_turn_saved_once_space_returns(
    tmp_path: Path, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.responder = echo_facts
    engine, fsync, before = await _disk_fault_engine(tmp_path, chat_server, failures=10**6)
    outage = parts(engine.service).learning.outage
    try:
        with caplog.at_level(logging.INFO):
            await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "I live in Lisbon")])
            await engine.settle()  # the batch failed and waits for the storage, outside the debouncer
            assert outage.down and engine.service.ops.snapshot().storage_down
            await asyncio.to_thread(fsync.reached, fsync.injected + 3)  # probes keep failing: nothing given up
            assert engine.file(ALICE).read_bytes() == before
            fsync.failures = 0  # space is back
            await asyncio.wait_for(outage.wait_up(), 20)
            await engine.settle()
    finally:
        await engine.aclose()
    assert engine.facts_on_disk(ALICE) == ["Likes tea", "Said: I live in Lisbon"]  # no restart needed
    assert engine.journaled() == []
    assert errors_in(caplog) == []  # never given up
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and "storage unreachable" in said[0], said  # one line per outage
    assert sum("reachable again" in r.getMessage() for r in caplog.records) == 1
    assert not engine.service.ops.snapshot().storage_down
    assert not list((tmp_path / "memory").glob(".*.tmp")) and not (tmp_path / "memory" / ".space-probe").exists()


# --- the front door's reporting operations ----------------------------------------------------------------


async def test_flush_reports_what_it_saved_failed_or_found_nothing(engine: Engine, chat_server: ChatServer) -> None:
    nothing = await engine.service.ops.flush(10)
    assert nothing.finished and nothing.nothing_pending and nothing.batches_saved == 0

    chat_server.enqueue(extraction(facts=[("Writes Go microservices at work", "knowledge", 0.95)]))
    parts(engine.service).learning.debouncer.quiet_seconds = 60.0  # only the flush may start this batch
    await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "I write Go microservices")])
    saved = await engine.service.ops.flush(10)
    assert (saved.finished, saved.batches_pending, saved.batches_saved, saved.batches_failed, saved.facts_added) == (
        True, 1, 1, 0, 1
    )

    chat_server.enqueue(json_reply("not json at all"))
    await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, "Also, I like tea")])
    failed = await engine.service.ops.flush(10)
    assert (failed.batches_saved, failed.batches_failed, failed.facts_added) == (0, 1, 0)
    assert len(failed.problems) == 1 and failed.problems[0].startswith("unusable answer"), failed.problems
    assert saved.problems == () and nothing.problems == ()


async def test_export_is_the_memory_file_as_json(engine: Engine) -> None:
    assert json.loads(await engine.service.user(ALICE).export())["facts"] == []
    await save_memory(engine.store, ALICE, MemoryFile(facts=[Fact(id="fact_0000aaaa", content="Likes tea")]))
    exported = json.loads(await engine.service.user(ALICE).export())
    assert [fact["content"] for fact in exported["facts"]] == ["Likes tea"]
    assert exported == {**json.loads(engine.file(ALICE).read_bytes()), "exportedFor": str(ALICE)}
