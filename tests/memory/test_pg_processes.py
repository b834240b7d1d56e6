"""Several bot processes on one PostgreSQL database: no lost update, a killed process's batch finished exactly
once by another (or by itself restarted), a killed process's turns taken over once its liveness row went stale
(not after its hold), a stalled process that comes back settling nothing it lost, and a forget in one process
cancelling work the other has claimed.
Real processes (the composition root's engine), a real server, the real `openai` client against a local server."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.schema import migrate
from bot.memory.models import Fact, MemoryFile
from bot.storage.pg.database import Database
from tests.support.engine import message_id_of, save_memory
from tests.support.llm_server import ChatServer, Response, _Exchange, extraction

ROOT = Path(__file__).resolve().parents[2]
USER = 612345678901234567
LEASE = 3.0
WAIT = 120.0  # generous: the machine may be loaded; every wait ends as soon as its line arrives


class Engine:
    """A worker process; its stdout lines are read by a thread, so a wait never blocks on a dead pipe."""

    def __init__(self, args: list[str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self._stderr = stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.memory.pg_engine_worker", *args],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.passed: list[str] = []  # lines `expect` read past
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put("<EOF>")

    def expect(self, prefix: str, timeout: float = WAIT) -> str:
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {prefix!r} within {timeout}s; stderr:\n{self.stderr()}") from None
            if line == "<EOF>":
                raise AssertionError(f"worker ended before {prefix!r}; stderr:\n{self.stderr()}")
            if line.startswith(prefix):
                return line
            self.passed.append(line)

    def expect_once(self, prefix: str, timeout: float = WAIT) -> str:
        """`expect`, or the line an earlier `expect` already read past (say while waiting for READY)."""
        for index, line in enumerate(self.passed):
            if line.startswith(prefix):
                return self.passed.pop(index)
        return self.expect(prefix, timeout)

    def send(self, **command: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=WAIT)

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def carry_on(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def finish(self) -> None:
        self.send(op="exit")
        self.expect("DONE")
        assert self.proc.wait(timeout=WAIT) == 0

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT)
        self._stderr.close()


class Gate(Response):
    """Holds a request until the test opens the gate, then answers `then`: an extraction mid-flight, on cue."""

    def __init__(self, then: Response) -> None:
        self.then = then
        self.opened = threading.Event()

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        await asyncio.to_thread(self.opened.wait, WAIT)
        return await self.then.render(ex)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "gate"}


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[list[Engine]]:
    started: list[Engine] = []
    yield started
    for engine in started:
        engine.close()


def start_engine(
    engines: list[Engine], url: str, server: ChatServer, folder: Path, name: str, *options: str, lease: float = LEASE
) -> Engine:
    data = folder / name
    data.mkdir(exist_ok=True)
    engine = Engine([url, server.base_url, str(data), str(lease), *options], folder / f"{name}.stderr")
    engines.append(engine)
    engine.expect("READY")
    return engine


async def memory_of(url: str, user: int) -> MemoryFile:
    database = Database(url)
    await database.open()
    try:
        return await PostgresMemoryStore(database).load(user)
    finally:
        await database.close()


async def pending_rows(url: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch("SELECT user_id, turn_id, turn::text AS turn FROM pending_turns"))
    finally:
        await conn.close()


@pytest.mark.parametrize("survivor", ["another process", "the same process restarted"])
async def test_a_batch_of_a_killed_process_is_completed_exactly_once(
    survivor: str, postgres_url: str, chat_server: ChatServer, engines: list[Engine], tmp_path: Path
) -> None:
    stuck = Gate(extraction(facts=[("Sails a small boat on weekends", "preference")]))
    chat_server.enqueue(stuck, extraction(facts=[("Sails a small boat on weekends", "preference")]))
    first = start_engine(engines, postgres_url, chat_server, tmp_path, "first")
    other = None
    if survivor == "another process":
        other = start_engine(engines, postgres_url, chat_server, tmp_path, "other")

    first.send(op="remember", user=USER, conv=5, id="t1", text="I sail a small boat every weekend")
    first.expect("ACK t1")
    assert first.expect("CLAIMED") == f"CLAIMED {USER} {message_id_of('t1')}"
    await chat_server.await_requests(1, timeout=WAIT)  # the extraction is in flight
    first.kill()
    stuck.opened.set()  # the answer goes to a dead process

    finisher = other or start_engine(engines, postgres_url, chat_server, tmp_path, "restarted")
    assert finisher.expect("CLAIMED") == f"CLAIMED {USER} {message_id_of('t1')}"  # after the lease ran out
    finisher.send(op="flush")
    finisher.expect("FLUSHED")
    finisher.finish()

    memory = await memory_of(postgres_url, USER)
    assert [fact.content for fact in memory.facts] == ["Sails a small boat on weekends"]
    assert memory.appliedTurnIds == [str(message_id_of("t1"))]
    assert await pending_rows(postgres_url) == []
    assert len(chat_server.requests) == 2  # the killed attempt and the one that finished


# Holds as the bot's defaults make them (a turn is held for the max wait plus the lease: minutes), and liveness
# shortened so the test runs in seconds: only a stale liveness row can free the turns within the test's waits.
LONG_HOLD = ("--debounce", "600", "--max-wait", "600")
LONG_LEASE = 600.0
QUICK_LIVENESS = ("--liveness", "0.5,2")


@pytest.mark.parametrize("survivor", ["another process", "the same process restarted"])
async def test_turns_of_a_killed_process_are_taken_over_once_its_liveness_row_is_stale_not_after_its_hold(
    survivor: str, postgres_url: str, chat_server: ChatServer, engines: list[Engine], tmp_path: Path
) -> None:
    chat_server.enqueue(extraction(facts=[("Keeps bees on a rooftop", "preference")]))
    options = (*LONG_HOLD, *QUICK_LIVENESS)
    first = start_engine(engines, postgres_url, chat_server, tmp_path, "first", *options, lease=LONG_LEASE)
    other = None
    if survivor == "another process":
        other = start_engine(engines, postgres_url, chat_server, tmp_path, "other", *options, lease=LONG_LEASE)
    first.send(op="remember", user=USER, conv=5, id="t1", text="I keep bees on the roof of our building")
    first.expect("ACK t1")  # held by the first process for 20 minutes: its debouncer would claim it
    first.kill()

    finisher = other or start_engine(
        engines, postgres_url, chat_server, tmp_path, "restarted", *options, lease=LONG_LEASE
    )
    assert finisher.expect_once("TAKEN") == f"TAKEN {message_id_of('t1')}"  # at start or by the sweep
    finisher.send(op="flush")
    assert finisher.expect("CLAIMED") == f"CLAIMED {USER} {message_id_of('t1')}"
    assert finisher.expect("FLUSHED") == "FLUSHED 1"
    finisher.finish()

    memory = await memory_of(postgres_url, USER)
    assert [fact.content for fact in memory.facts] == ["Keeps bees on a rooftop"]
    assert memory.appliedTurnIds == [str(message_id_of("t1"))]
    assert await pending_rows(postgres_url) == []
    assert len(chat_server.requests) == 1


async def test_a_stalled_process_presumed_dead_settles_nothing_when_it_comes_back(
    postgres_url: str, chat_server: ChatServer, engines: list[Engine], tmp_path: Path
) -> None:
    stalled = Gate(extraction(facts=[("Plays the cello in an orchestra", "preference")]))
    chat_server.enqueue(stalled, extraction(facts=[("Plays the cello in an orchestra", "preference")]))
    slow = start_engine(engines, postgres_url, chat_server, tmp_path, "slow", *QUICK_LIVENESS, lease=LONG_LEASE)
    other = start_engine(engines, postgres_url, chat_server, tmp_path, "other", *QUICK_LIVENESS, lease=LONG_LEASE)

    slow.send(op="remember", user=USER, conv=5, id="t1", text="I play the cello in the city orchestra")
    slow.expect("ACK t1")
    assert slow.expect("CLAIMED") == f"CLAIMED {USER} {message_id_of('t1')}"  # leased for 10 minutes
    await chat_server.await_requests(1, timeout=WAIT)  # its extraction is in flight
    slow.pause()  # SIGSTOP: no beat, no progress, as a process stuck in a long pause
    try:
        assert other.expect("TAKEN") == f"TAKEN {message_id_of('t1')}"
        other.send(op="flush")
        assert other.expect("CLAIMED") == f"CLAIMED {USER} {message_id_of('t1')}"
        assert other.expect("FLUSHED") == "FLUSHED 1"
    finally:
        stalled.opened.set()  # the slow process's answer arrives once it runs again
        slow.carry_on()
    slow.send(op="flush")
    assert slow.expect("FLUSHED") == "FLUSHED 0"  # its save found its claim gone: nothing applied twice
    slow.send(op="beat")  # its own beat (now, or its loop's since it ran again) found it was given up for dead
    assert int(slow.expect("BEAT").split()[1]) >= 1
    slow.finish()
    other.finish()

    memory = await memory_of(postgres_url, USER)
    assert [fact.content for fact in memory.facts] == ["Plays the cello in an orchestra"]
    assert memory.appliedTurnIds == [str(message_id_of("t1"))]
    assert await pending_rows(postgres_url) == []
    assert "presumed dead" in slow.stderr()


async def test_a_forget_in_one_process_cancels_the_batch_another_has_claimed(
    postgres_url: str, chat_server: ChatServer, engines: list[Engine], tmp_path: Path
) -> None:
    held = Gate(extraction(facts=[("Is recovering from a knee operation", "context")], top="Knee surgery"))
    chat_server.enqueue(held)
    learner = start_engine(engines, postgres_url, chat_server, tmp_path, "learner")
    forgetter = start_engine(engines, postgres_url, chat_server, tmp_path, "forgetter")

    learner.send(op="remember", user=USER, conv=5, id="t1", text="my knee operation went fine")
    learner.expect("ACK t1")
    learner.expect("CLAIMED")
    await chat_server.await_requests(1, timeout=WAIT)
    forgetter.send(op="forget", user=USER)
    forgetter.expect(f"FORGOT {USER}")
    assert await pending_rows(postgres_url) == []  # the claimed row is gone at once, text and all

    held.opened.set()
    learner.send(op="flush")
    learner.expect("FLUSHED")
    learner.finish()
    forgetter.finish()
    assert (await memory_of(postgres_url, USER)).is_empty()
    assert "discarded: the user forgot or paused meanwhile" in learner.stderr()
    conn = await asyncpg.connect(postgres_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM memories") == 0
    finally:
        await conn.close()


async def test_a_message_deleted_in_one_process_is_not_saved_by_the_batch_another_is_extracting(
    postgres_url: str, chat_server: ChatServer, engines: list[Engine], tmp_path: Path
) -> None:
    held = Gate(extraction(facts=[("Is interviewing at Globex", "context"), ("Plays the oboe", "preference")]))
    chat_server.enqueue(held, extraction(facts=[("Plays the oboe", "preference")]))
    learner = start_engine(engines, postgres_url, chat_server, tmp_path, "learner")
    deleter = start_engine(engines, postgres_url, chat_server, tmp_path, "deleter")

    learner.send(op="remember", user=USER, conv=5, id="t1", text="I am interviewing at Globex")
    learner.send(op="remember", user=USER, conv=5, id="t2", text="I play the oboe")
    learner.expect("ACK t1")
    learner.expect("ACK t2")
    await chat_server.await_requests(1, timeout=WAIT)  # the batch is at the extractor
    deleter.send(op="delete", ids=["t1"])
    assert deleter.expect("DELETED") == "DELETED 1 0"  # its row, claimed by the other process, is gone
    assert "Globex" not in str(await pending_rows(postgres_url))

    held.opened.set()
    learner.send(op="flush")
    learner.expect("FLUSHED")
    memory = await memory_of(postgres_url, USER)
    assert [fact.content for fact in memory.facts] == ["Plays the oboe"]  # the rest, extracted again
    assert "Globex" not in str(chat_server.requests[-1]["body"])

    deleter.send(op="delete", ids=["t2"])  # and once learned, a delete anywhere retracts it
    assert deleter.expect("DELETED") == "DELETED 0 1"
    learner.finish()
    deleter.finish()
    assert (await memory_of(postgres_url, USER)).facts == []


FIRST_USER = 700000000000000000
USERS = 1000
PER_PROCESS = 5
PRELOADED = 20


def preloaded_fact(uid: int, i: int) -> Fact:
    text = f"Fact {i} of {uid}: coordinates the volunteer rota for the food bank and writes its newsletter, " * 3
    return Fact(id=f"fact_{i:08x}", content=text[: 150 + (i * 41) % 150], category="context", confidence=0.9,
                createdAt="2026-11-01T10:00:00+00:00", source="conversation:1")


async def test_two_processes_updating_the_same_users_lose_no_update(postgres_url: str, tmp_path: Path) -> None:
    database = Database(postgres_url, size=8)
    await database.open()
    await database.run(migrate, transaction=False)
    store = PostgresMemoryStore(database)
    slots = asyncio.Semaphore(16)

    async def preload(uid: int) -> None:
        async with slots:
            await save_memory(store, uid, MemoryFile(facts=[preloaded_fact(uid, i) for i in range(PRELOADED)]))

    await asyncio.gather(*(preload(FIRST_USER + u) for u in range(USERS)))
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.memory.pg_engine_worker", "--updates", postgres_url, str(FIRST_USER),
             str(USERS), str(PER_PROCESS), tag],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for tag in ("a", "b")
    ]
    outputs = [await asyncio.to_thread(worker.communicate, timeout=900) for worker in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert out.strip() == f"UPDATED {USERS * PER_PROCESS}"

    lost = 0
    for u in range(USERS):
        uid = FIRST_USER + u
        memory = await PostgresMemoryStore(database).load(uid)
        ids = {fact.id for fact in memory.facts}
        expected = {f"{tag}-{uid}-{n}" for tag in ("a", "b") for n in range(PER_PROCESS)}
        lost += len(expected - ids)
        assert len(memory.facts) == PRELOADED + len(ids & expected)  # nothing doubled either
    await database.close()
    assert lost == 0
