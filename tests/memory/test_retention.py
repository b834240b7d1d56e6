"""Retention: the daily sweep deletes exactly the users silent for MEMORY_RETENTION_DAYS, with every trace of
them (memory file, kept-aside copies, journal lines, reply records, privacy record, activity record), and nothing
of anyone else.
A fake clock drives "days"; every byte under DATA_DIR is searched, not the API's view."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from bot.memory.doors import PAUSE, ForgetEverything, Fresh
from bot.memory.drivers.files.activity import ACTIVITY_FILE
from bot.memory.drivers.interfaces import ReplyRecord
from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from bot.ops.housekeeping import Housekeeping
from tests.support.engine import file_service, parts, save_memory
from tests.support.llm_server import ChatServer

T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
ALICE, BOB, CAROL, DAVE, ERIN = 1001, 1002, 1003, 1004, 1005


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def make_service(data: Path, base_url: str, clock: Clock, *, days: int = 365) -> MemoryService:
    client = AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0)
    return file_service(
        data,
        MemoryExtractor(client, model="memory-model", max_retries=0),
        MemoryPolicy(debounce_seconds=3600, max_wait_seconds=3600, retention_days=days),
        clock=clock,
        durable=False,
    )


async def record(
    service: MemoryService, message_ids: list[int], user: int, sections: list[str], facts: list[str]
) -> None:
    reply = ReplyRecord(tuple(message_ids), user, tuple(sections), tuple(facts))
    await parts(service).storage.replies.record(reply, generation=service.learning.ticket(user).generation)


def secret(user: int) -> str:
    return f"secret-{user}-text"


def memory_of(user: int, n: int = 3) -> MemoryFile:
    memory = MemoryFile()
    for i in range(n):
        memory.facts.append(Fact(id=f"fact_{user:04x}{i:04x}", content=f"{secret(user)} fact {i} " + "x" * 150,
                                 category="context", confidence=0.9, createdAt=T0.isoformat()))
    memory.user.workContext.summary = f"{secret(user)} works on compilers"
    return memory


def set_mtime(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def every_byte(data: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file())


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


async def test_the_sweep_deletes_exactly_the_silent_users_and_every_trace(
    data: Path, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(T0)
    service = make_service(data, chat_server.base_url, clock)
    await service.ops.open()
    # Alice: memory, turns left in the journal (an extraction that was given up), a kept-aside corrupt copy.
    await save_memory(parts(service).storage.memories, ALICE, memory_of(ALICE))
    assert parts(service).storage.turns is not None
    key = ConversationKey(77, ALICE)
    await parts(service).storage.turns.add(key, [Turn(role="user", author_id=ALICE, author_name="A", text=secret(ALICE),
                                         at=T0, turn_id="t-alice-1")])
    (data / "memory" / f"{ALICE}.json.corrupt-20250101T000000000000Z").write_text(secret(ALICE))
    await record(service, [777000111, 777000112], ALICE, ["workContext"], [f"fact_{ALICE:04x}0000"])
    service.learning.note_activity(ALICE)
    # Carol: paused learning and chose replies without memory, nothing else. Dave: paused, never seen since
    # activity was recorded.
    await service.user(CAROL).set_mode(PAUSE)
    await service.user(CAROL).set_mode(Fresh(0))
    service.learning.note_activity(CAROL)
    await parts(service).storage.privacy.update(DAVE, clock.now, paused=True)
    # Bob: old memory, but he talked to the bot 300 days later. Erin: learned something 200 days later.
    await save_memory(parts(service).storage.memories, BOB, memory_of(BOB))
    await record(service, [777000222], BOB, ["workContext"], [])
    await save_memory(parts(service).storage.memories, ERIN, memory_of(ERIN))
    for user in (ALICE, BOB, ERIN):
        set_mtime(data / "memory" / f"{user}.json", T0)
    set_mtime(data / "memory" / f"{ALICE}.json.corrupt-20250101T000000000000Z", T0)
    set_mtime(data / "memory" / f"{ERIN}.json", T0 + timedelta(days=200))
    clock.now = T0 + timedelta(days=300)
    service.learning.note_activity(BOB)
    await service.ops.save_activity()

    # A day before the year is up nobody is silent for long enough.
    caplog.set_level(logging.DEBUG)
    assert await service.ops.sweep(T0 + timedelta(days=364)) == 0
    assert secret(ALICE).encode() in every_byte(data)

    assert await service.ops.sweep(T0 + timedelta(days=366, hours=13)) == 2
    everything = every_byte(data)
    for gone in (ALICE, CAROL):
        assert secret(gone).encode() not in everything
        assert str(gone).encode() not in everything, f"user {gone} left a trace"
    assert b"777000111" not in everything and b"777000222" in everything  # reply records: Alice's gone, Bob's kept
    assert service.user(CAROL).privacy.fresh_until_resume is False
    for kept in (BOB, ERIN):
        assert secret(kept).encode() in everything
        assert (data / "memory" / f"{kept}.json").exists()
    assert service.user(DAVE).privacy.incognito and not service.user(CAROL).privacy.incognito
    info = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and r.name.startswith("bot.")]
    assert any("deleted the memory of 2 users" in line for line in info)
    assert not any(str(user) in line for line in info for user in (ALICE, CAROL))

    # Dave's clock started at the first sweep that saw him (day 364): a year later he goes too, and so do the others.
    assert await service.ops.sweep(T0 + timedelta(days=200 + 367)) == 1  # Erin (learned on day 200)
    assert (data / "memory" / f"{BOB}.json").exists() and service.user(DAVE).privacy.incognito
    assert await service.ops.sweep(T0 + timedelta(days=2 * 366 + 1)) == 2  # Bob and Dave
    assert not service.user(DAVE).privacy.incognito
    assert not list((data / "memory").iterdir())
    await service.ops.shutdown(1.0)


async def test_zero_keeps_everything_forever(data: Path, chat_server: ChatServer) -> None:
    service = make_service(data, chat_server.base_url, Clock(T0), days=0)
    await service.ops.open()
    await save_memory(parts(service).storage.memories, ALICE, memory_of(ALICE))
    set_mtime(data / "memory" / f"{ALICE}.json", T0 - timedelta(days=5000))
    assert await service.ops.sweep(T0) == 0
    assert (data / "memory" / f"{ALICE}.json").exists()


async def test_activity_survives_a_restart(data: Path, chat_server: ChatServer) -> None:
    clock = Clock(T0)
    first = make_service(data, chat_server.base_url, clock)
    await first.ops.open()
    await save_memory(parts(first).storage.memories, ALICE, memory_of(ALICE))
    set_mtime(data / "memory" / f"{ALICE}.json", T0 - timedelta(days=400))
    first.learning.note_activity(ALICE)  # she talked today, without anything new being learned
    await first.ops.shutdown(1.0)  # saves the activity file
    second = make_service(data, chat_server.base_url, clock)
    await second.ops.open()
    assert await second.ops.sweep(T0 + timedelta(days=100)) == 0
    assert (data / "memory" / f"{ALICE}.json").exists()
    assert await second.ops.sweep(T0 + timedelta(days=367)) == 1


async def test_forget_all_also_removes_the_activity_record(data: Path, chat_server: ChatServer) -> None:
    service = make_service(data, chat_server.base_url, Clock(T0))
    await service.ops.open()
    service.learning.note_activity(ALICE)
    service.learning.note_activity(BOB)
    await service.ops.save_activity()
    await service.user(ALICE).forget(ForgetEverything())
    assert str(ALICE).encode() not in (data / ACTIVITY_FILE).read_bytes()
    assert str(BOB).encode() in (data / ACTIVITY_FILE).read_bytes()


async def test_housekeeping_sweeps_after_start_and_then_daily(data: Path, chat_server: ChatServer) -> None:
    slept: list[float] = []
    resume = asyncio.Event()

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > 26:
            resume.set()
            await asyncio.Event().wait()  # park here until stopped

    service = make_service(data, chat_server.base_url, Clock(T0))
    await service.ops.open()
    keeper = Housekeeping(service, sleep=fake_sleep)
    keeper.start()
    await resume.wait()
    await keeper.stop()
    assert slept[0] == 300 and all(step == 3600 for step in slept[1:26])
    assert keeper.sweeps == 2  # at 5 minutes, then 24 hours later


async def test_10000_users_on_disk_do_not_stall_the_loop(data: Path, chat_server: ChatServer) -> None:
    """A generous bound on a loaded machine; bench/retention_sweep.py measures the real figure."""
    service = make_service(data, chat_server.base_url, Clock(T0))
    await service.ops.open()
    body = memory_of(1).model_dump_json().encode()
    folder = data / "memory"

    def populate() -> None:
        for user in range(10_000, 20_000):
            path = folder / f"{user}.json"
            path.write_bytes(body)
            when = (T0 - timedelta(days=400 if user % 50 == 0 else 10)).timestamp()
            os.utime(path, (when, when))

    await asyncio.to_thread(populate)
    worst = 0.0
    stop = False

    async def ticker() -> None:
        nonlocal worst
        while not stop:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            worst = max(worst, time.perf_counter() - before - 0.005)

    ticking = asyncio.create_task(ticker())
    deleted = await service.ops.sweep(T0)
    stop = True
    await ticking
    assert deleted == 200
    assert len(list(folder.iterdir())) == 9_800
    assert worst < 1.0, f"the loop stalled for {worst:.3f}s"
