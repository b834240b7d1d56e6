"""Forgetting removes the bytes: after `/memory forget` (everything or one fact), no file under the data folder
holds the user's words or the forgotten fact, temp files and copies kept aside included; applied turns leave the
journal shortly after they are applied; a message that arrived before a wipe is not learned after it; files are
private to the bot's user; a batch that can never succeed is parked instead of being replayed forever."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.memory.doors import PAUSE, ForgetEverything, ForgetFact
from bot.memory.drivers.files import journal as journal_module
from bot.memory.drivers.files.journal import JOURNAL_NAME, PARKED_RETENTION
from bot.memory.models import ConversationKey, utc_now
from bot.memory.parts.learning import MAX_PERMANENT_FAILURES
from tests.memory.test_service import ALICE, BOB, CHANNEL, Engine, errors_in, make_engine, turn
from tests.support.engine import learn, parts, save_memory
from tests.support.llm_server import ChatServer, error, extraction

SECRET = "zebra-violet-4711"
FACT = f"Keeps a pet axolotl called {SECRET}"


def holders(root: Path, needle: str) -> list[str]:
    """Every file under `root` (hidden, temp and `.corrupt-*` files included) whose bytes contain `needle`."""
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if needle.encode() in path.read_bytes():
                found.append(str(path.relative_to(root)))
    return found


async def eventually(condition: object, timeout: float = 20.0) -> bool:
    """Wait for a condition no event announces (a file's contents), checking every 20 ms."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


@pytest.fixture
def secret_fact(chat_server: ChatServer) -> None:
    chat_server.default = extraction(facts=[(FACT, "context", 0.95)])


async def learned(engine: Engine, user: int = ALICE) -> None:
    key = ConversationKey(CHANNEL, user)
    await learn(engine.service, key, [turn(user, f"my axolotl is called {SECRET}")])
    await learn(engine.service, key, [turn(user, f"yes, {SECRET} is orange", role="assistant")])
    await engine.settle()
    assert engine.facts_on_disk(user) == [FACT]


async def test_forget_everything_leaves_no_byte_of_the_user_under_the_data_folder(
    tmp_path: Path, chat_server: ChatServer, secret_fact: None
) -> None:
    engine = make_engine(tmp_path, chat_server.base_url, debounce=0.05)
    await engine.service.ops.open()
    try:
        await learned(engine)
        # more words still waiting for their extraction, and a damaged copy of the memory file kept aside
        parts(engine.service).learning.debouncer.quiet_seconds = 60
        await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, f"{SECRET} ate a worm")])
        (engine.file(ALICE).parent / f"{ALICE}.json.corrupt-20240101T000000000000Z").write_text(f'{{"{SECRET}')
        assert holders(tmp_path, SECRET)

        assert (await engine.service.user(ALICE).forget(ForgetEverything())).any_memory
        assert holders(tmp_path, SECRET) == []  # at once, not after a compaction or a restart
        assert holders(tmp_path, str(ALICE)) == []
    finally:
        await engine.aclose()


async def test_applied_turns_leave_the_journal_shortly_after(
    tmp_path: Path, chat_server: ChatServer, secret_fact: None
) -> None:
    engine = make_engine(tmp_path, chat_server.base_url)
    await engine.service.ops.open()
    try:
        await learned(engine)
        journal = tmp_path / JOURNAL_NAME
        assert await eventually(lambda: SECRET.encode() not in journal.read_bytes())
        assert holders(tmp_path, SECRET) == [f"memory/{ALICE}.json"]  # the fact itself, and nothing else
    finally:
        await engine.aclose()


async def test_forget_one_fact_removes_its_text_from_every_file(
    tmp_path: Path, chat_server: ChatServer, secret_fact: None
) -> None:
    engine = make_engine(tmp_path, chat_server.base_url)
    await engine.service.ops.open()
    parts(engine.service).storage.turns._compaction.delay = 3600  # type: ignore[union-attr]  # the applied turns are still there
    try:
        await learned(engine)
        (engine.file(ALICE).parent / f"{ALICE}.json.corrupt-20240101T000000000000Z").write_text(f'["{FACT}"')
        await save_memory(engine.store, BOB, engine.on_disk(ALICE))  # Bob holds the same words: not his forget
        fact_id = engine.on_disk(ALICE).facts[0].id
        assert len(holders(tmp_path, SECRET)) >= 3

        assert (await engine.service.user(ALICE).forget(ForgetFact(fact_id))).facts
        assert holders(tmp_path, SECRET) == [f"memory/{BOB}.json"]
    finally:
        await engine.aclose()


async def test_a_turn_that_arrived_before_a_wipe_is_not_learned_after_it(
    tmp_path: Path, chat_server: ChatServer, secret_fact: None
) -> None:
    engine = make_engine(tmp_path, chat_server.base_url)
    await engine.service.ops.open()
    try:
        ticket = engine.service.learning.ticket(ALICE)  # the message arrives; the reply takes a while...
        # ...and the wipe is confirmed meanwhile
        assert (await engine.service.user(ALICE).forget(ForgetEverything())).any_memory is False
        kept = await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, SECRET)], ticket=ticket)
        assert kept is False
        await engine.settle()
        assert chat_server.requests == []
        assert holders(tmp_path, SECRET) == []
        fresh = engine.service.learning.ticket(ALICE)  # a message after the wipe is learned as usual
        assert await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, SECRET)], ticket=fresh)
    finally:
        await engine.aclose()


# --- permissions -------------------------------------------------------------------------------------------


@pytest.fixture
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_files_and_folders_are_private_under_a_normal_umask(
    tmp_path: Path, chat_server: ChatServer, secret_fact: None, loose_umask: None
) -> None:
    data = tmp_path / "data"
    engine = make_engine(data, chat_server.base_url)
    parts(engine.service).storage.turns._compaction.delay = 3600  # type: ignore[union-attr]  # keep the journal non-empty
    await engine.service.ops.open()
    try:
        await learned(engine)
        await engine.service.user(BOB).set_mode(PAUSE)
        (engine.file(BOB)).write_text("{broken")
        await engine.service.user(BOB).show()  # kept aside
    finally:
        await engine.aclose()
    files = [p for p in data.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {f"{ALICE}.json", JOURNAL_NAME, "privacy.json"}
    assert any(".corrupt-" in p.name for p in files)
    assert {str(p.relative_to(data)): oct(mode(p)) for p in files} == {
        str(p.relative_to(data)): oct(0o600) for p in files
    }
    assert oct(mode(data)) == oct(0o700) and oct(mode(data / "memory")) == oct(0o700)


async def test_files_an_older_version_left_readable_are_tightened_at_start(
    tmp_path: Path, chat_server: ChatServer, loose_umask: None
) -> None:
    data = tmp_path / "data"
    (data / "memory").mkdir(parents=True, mode=0o755)
    data.chmod(0o755)
    loose = [data / "memory" / f"{ALICE}.json", data / JOURNAL_NAME, data / "privacy.json"]
    loose[0].write_text("{}")
    loose[1].write_text("")
    loose[2].write_text('{"records": {}}')
    for path in loose:
        path.chmod(0o644)
    engine = make_engine(data, chat_server.base_url)
    await engine.service.ops.open()
    await engine.aclose()
    assert [oct(mode(p)) for p in loose] == [oct(0o600)] * 3
    assert oct(mode(data)) == oct(0o700) and oct(mode(data / "memory")) == oct(0o700)


# --- batches that can never succeed -----------------------------------------------------------------------


async def test_a_batch_the_model_always_refuses_is_parked_across_restarts_then_deleted(
    tmp_path: Path, chat_server: ChatServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_server.default = error(400, message="This model's maximum context length is 8192 tokens")
    caplog.set_level(logging.INFO)

    async def run_once(first: bool = False) -> int:
        """One life of the bot: start (replaying the journal), settle, stop; returns extraction requests made."""
        before = len(chat_server.requests)
        engine = make_engine(tmp_path, chat_server.base_url)
        await engine.service.ops.open()
        if first:
            await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, f"a long story {SECRET}")])
        await engine.settle()
        await engine.service.ops.shutdown(5)
        await engine.aclose()
        return len(chat_server.requests) - before

    lives = [await run_once(first=True)] + [await run_once() for _ in range(MAX_PERMANENT_FAILURES)]
    assert all(n > 0 for n in lives[:MAX_PERMANENT_FAILURES]) and lives[MAX_PERMANENT_FAILURES] == 0
    parked = [r for r in errors_in(caplog) if "parked" in r.getMessage()]
    assert len(parked) == 1 and SECRET not in caplog.text
    assert holders(tmp_path, SECRET) == [JOURNAL_NAME]  # kept for a while, for an operator to look at

    later = utc_now() + PARKED_RETENTION + timedelta(minutes=1)
    monkeypatch.setattr(journal_module, "utc_now", lambda: later)
    assert await run_once() == 0
    assert holders(tmp_path, SECRET) == []
    assert json.loads(b"[" + (tmp_path / JOURNAL_NAME).read_bytes().replace(b"\n", b",").rstrip(b",") + b"]") == []
