"""Lifetimes: the last day a fact's words give it (`bot.memory.pipeline.lifetimes`), and what happens past it
(`bot.memory.rules.lifetimes`: history, never current, first out of the fact cap)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bot.memory.models import Fact, MemoryFile
from bot.memory.pipeline.apply import evict_overflow
from bot.memory.pipeline.lifetimes import last_day
from bot.memory.rules.lifetimes import current, lapse

WEDNESDAY = date(2024, 6, 12)


@pytest.mark.parametrize(
    ("words", "last"),
    [
        ("This week I'm in Rome for a conference", "2024-06-16"),
        ("My driving test is on Friday", "2024-06-14"),
        ("Is at her parents' this weekend", "2024-06-16"),
        ("Is in Rome until Sunday", "2024-06-16"),
        ("Is house-sitting till next Tuesday", "2024-06-18"),
        ("Is staying with a sister for the next two months", "2024-08-11"),
        ("Has a job interview tomorrow", "2024-06-13"),
        ("Is in Berlin till the end of the month", "2024-06-30"),
        ("这周我在罗马开会", "2024-06-16"),
        ("周五考驾照", "2024-06-14"),
        ("直到周日我都在罗马", "2024-06-16"),
        ("接下来两个月在北京出差", "2024-08-11"),
        ("今週はローマで会議", "2024-06-16"),
        ("金曜日に運転免許の試験がある", "2024-06-14"),
        ("日曜日までローマにいる", "2024-06-16"),
        ("これから2か月東京にいる", "2024-08-11"),
    ],
)
def test_time_boxed_words_give_the_last_day_counted_from_the_message(words: str, last: str) -> None:
    assert last_day(words, WEDNESDAY) == last


@pytest.mark.parametrize(
    "words",
    [
        "Works weekends", "Goes to the gym every Friday", "Moved to Rome this week", "Birthday is in May",
        "Has lived in Rome for two years", "Started a new job on Monday", "Plays chess on Sundays",
        "周末都要上班", "每周五去健身房", "这周搬到了罗马",
        "週末は仕事", "毎週金曜日にジムに行く", "今週ローマに引っ越した",
    ],
)
def test_durable_look_alikes_have_no_lifetime(words: str) -> None:
    assert last_day(words, WEDNESDAY) == ""


def test_the_models_dates_bound_what_the_code_cannot_read() -> None:
    assert last_day("Is on a trek in Nepal", WEDNESDAY, valid_until="2024-06-30") == "2024-06-30"
    assert last_day("Is on a trek in Nepal", WEDNESDAY, valid_until="2024-W25") == "2024-06-23"
    assert last_day("Has a recital", WEDNESDAY, event_date="2024-06-20") == "2024-06-20"
    assert last_day("Has a recital", WEDNESDAY, valid_until="2023-01-01") == ""  # already over when said: ignored
    assert last_day("Moved to Oslo", WEDNESDAY, valid_until="2024-06-30") == ""  # the past outlives any date
    assert last_day("Lives in Oslo", WEDNESDAY, event_date="2024-07") == ""  # a month is no end


def facts_at_cap() -> MemoryFile:
    rome = Fact(id="fact_0000000a", content="Is in Rome this week for a conference " + "x" * 150,
                validUntil="2024-06-16", confidence=0.99)
    rest = [Fact(id=f"fact_{n:08x}", content=f"Durable fact number {n} " + "y" * 160, confidence=0.5)
            for n in range(1, 5)]
    return MemoryFile(facts=[rome, *rest])


def test_past_its_last_day_a_fact_is_history_and_goes_first_at_the_cap() -> None:
    memory = facts_at_cap()
    sunday = datetime(2024, 6, 16, 23, 59, tzinfo=UTC)
    assert lapse(memory, sunday) == 0 and len(current(memory.live_facts(), sunday)) == 5
    monday = datetime(2024, 6, 17, 0, 0, tzinfo=UTC)
    assert [fact.id for fact in current(memory.facts, monday)] == [f"fact_{n:08x}" for n in range(1, 5)]
    assert lapse(memory, monday) == 1
    rome = memory.facts[0]
    assert rome.closed and rome.validTo == "2024-06-17T00:00:00+00:00" and not rome.supersededBy
    assert len(memory.live_facts()) == 4
    memory.facts.append(Fact(id="fact_000000ff", content="A new durable fact " + "z" * 150, confidence=0.4))
    evict_overflow(memory, 5)  # the expired fact, not the least confident one that holds, leaves the cap
    assert "fact_0000000a" not in {fact.id for fact in memory.facts} and len(memory.facts) == 5


def test_a_bad_hand_edited_date_never_costs_the_fact() -> None:
    memory = MemoryFile(facts=[Fact(id="fact_00000001", content="Is in Rome", validUntil="2024-13-99")])
    assert lapse(memory, datetime(2025, 1, 1, tzinfo=UTC)) == 0
    assert memory.facts[0].validUntil == "" and not memory.facts[0].closed
