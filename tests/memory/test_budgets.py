"""Budgets in the engine, on both backends: extraction tokens count for the user and, outside DMs, their server (as
the endpoint reported them, or estimated when it reported none); a budget stops at its limit and resets at the
next midnight UTC; and a reply the user deleted or replaced is never learned: its pending turn is dropped (the
user's own words stay), a late hand-over is refused, and one already learned is reported as such."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

from bot.memory.drivers.files.usage import FileUsageLog
from bot.memory.drivers.tally import Spent, estimate_tokens, utc_day
from bot.memory.models import ConversationKey, Place, Turn
from bot.memory.parts.budgets import Budgets, next_reset
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from tests.conftest_state import Databases
from tests.support.engine import close_service, file_service, learn, parts, postgres_service
from tests.support.llm_server import ChatServer, RecordedRequest, extraction, extraction_payload, raw_body

ALICE, BOB = 1001, 1002
GUILD = 7000
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def client(chat_server: ChatServer) -> AsyncIterator[AsyncOpenAI]:
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    yield client
    await client.close()


async def service_on(
    tmp_path: Path, databases: Databases | None, client: AsyncOpenAI, **policy: Any
) -> MemoryService:
    extractor = MemoryExtractor(client, model="memory", max_retries=0)
    rules = MemoryPolicy(debounce_seconds=30.0, max_wait_seconds=60.0, **policy)
    service = (
        file_service(tmp_path / "data", extractor, rules, durable=False)
        if databases is None
        else postgres_service(await databases.open(), extractor, rules)
    )
    await service.ops.open()
    return service


def turn(user: int, text: str, turn_id: int, *, assistant: bool = False) -> Turn:
    return Turn("assistant" if assistant else "user", user, f"user{user}", text, T0, str(turn_id))


def new_texts(request: RecordedRequest) -> list[str]:
    content = request["body"]["messages"][1]["content"]
    return [t["text"] for t in json.loads(content[content.index("{") :])["newTurns"]]


async def test_extraction_tokens_count_for_the_user_and_their_server(
    tmp_path: Path, databases: Databases | None, client: AsyncOpenAI, chat_server: ChatServer
) -> None:
    service = await service_on(tmp_path, databases, client)
    today = utc_day(service.clock())
    no_usage = {"choices": [{"message": {"role": "assistant", "content": json.dumps(extraction_payload())}}]}
    chat_server.enqueue(extraction(), raw_body(json.dumps(no_usage).encode()))
    await learn(service, ConversationKey(1, ALICE, Place.guild(GUILD)), [turn(ALICE, "I build boats.", 11)])
    await service.ops.flush()
    reported = chat_server.requests[-1]
    spent = parts(service).storage.usage.spent(("user", ALICE), today)
    assert spent.tokens > 0 and spent.estimated == 0
    assert parts(service).storage.usage.spent(("guild", GUILD), today) == spent
    assert reported["body"]["model"] == "memory"

    await learn(service, ConversationKey(2, ALICE, Place.dm()), [turn(ALICE, "And sail them on weekends.", 12)])
    await service.ops.flush()  # this endpoint answer carries no usage: counted by an estimate, for the user only
    after = parts(service).storage.usage.spent(("user", ALICE), today)
    assert after.estimated > 0 and after.tokens == spent.tokens + after.estimated
    assert parts(service).storage.usage.spent(("guild", GUILD), today) == spent
    assert service.ops.snapshot().llm_tokens == {"chat": 0, "extraction": after.tokens}
    await service.budgets.save()
    await close_service(service)
    again = await service_on(tmp_path, databases, client)
    assert again.budgets.report(ALICE, GUILD).user == after  # counts survive a restart
    await close_service(again)


def test_a_budget_stops_at_its_limit_and_resets_at_midnight_utc(tmp_path: Path) -> None:
    now = [datetime(2024, 5, 1, 23, 59, tzinfo=UTC)]
    tally = FileUsageLog(tmp_path / "usage.json")
    budgets = Budgets(tally, user_daily=100, guild_daily=250, clock=lambda: now[0])
    budgets.count("chat", user_id=ALICE, guild_id=GUILD, tokens=99)
    assert budgets.exceeded(ALICE, GUILD) is None
    budgets.count("extraction", user_id=ALICE, guild_id=GUILD, tokens=1)
    exceeded = budgets.exceeded(ALICE, GUILD)
    assert exceeded is not None and (exceeded.scope, exceeded.limit, exceeded.spent) == ("user", 100, 100)
    assert exceeded.resets_at == datetime(2024, 5, 2, tzinfo=UTC) == next_reset(now[0])
    assert budgets.exceeded(ALICE, None) is not None  # the user's budget holds in DMs too
    budgets.count("chat", user_id=BOB, guild_id=GUILD, tokens=90)
    assert budgets.exceeded(BOB, GUILD) is None  # the server has spent 190 of 250
    budgets.count("chat", user_id=3003, guild_id=GUILD, tokens=60)
    guild = budgets.exceeded(BOB, GUILD)  # Bob is within his own budget, but the server is not
    assert guild is not None and guild.scope == "guild" and budgets.exceeded(BOB, None) is None
    report = budgets.report(BOB, GUILD)
    assert (report.user, report.guild, report.user_limit, report.guild_limit) == (Spent(90), Spent(250), 100, 250)
    now[0] += timedelta(minutes=2)  # a new UTC day
    assert budgets.exceeded(ALICE, GUILD) is None and budgets.exceeded(BOB, GUILD) is None
    assert Budgets(tally, user_daily=0, guild_daily=0, clock=lambda: now[0]).exceeded(ALICE, GUILD) is None


def test_estimates_grow_with_the_text() -> None:
    assert estimate_tokens([]) == 0
    assert estimate_tokens(["abcd" * 10], messages=2) == 10 + 8
    assert estimate_tokens(["a"]) == 1


async def test_a_withdrawn_reply_is_never_learned_and_the_users_words_are(
    tmp_path: Path, databases: Databases | None, client: AsyncOpenAI, chat_server: ChatServer
) -> None:
    service = await service_on(tmp_path, databases, client)
    chat_server.responder = lambda body: extraction()
    key = ConversationKey(3, ALICE, Place.guild(GUILD))
    said = [turn(ALICE, "My cat is called Miso.", 21), turn(ALICE, "Lovely name!", 22, assistant=True)]
    await learn(service, key, said)
    withdrawn = await service.learning.withdraw_reply(ALICE, [22])
    assert (withdrawn.dropped, withdrawn.learned) == (1, False)
    # The reply's own hand-over arriving late (the chat was still finishing) is refused too.
    await learn(service, key, [turn(ALICE, "Lovely name!", 22, assistant=True), turn(ALICE, "She is grey.", 23)])
    await service.ops.flush()
    assert [new_texts(r) for r in chat_server.requests] == [["My cat is called Miso.", "She is grey."]]

    await learn(service, key, [turn(ALICE, "I moved to Oslo.", 31), turn(ALICE, "How exciting!", 32, assistant=True)])
    await service.ops.flush()
    assert new_texts(chat_server.requests[-1]) == ["I moved to Oslo.", "How exciting!"]
    late = await service.learning.withdraw_reply(ALICE, [32])
    assert (late.dropped, late.learned) == (0, True)  # already distilled: the caller says so
    never = await service.learning.withdraw_reply(BOB, [99])
    assert (never.dropped, never.learned) == (0, False)
    await close_service(service)
