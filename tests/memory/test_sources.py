"""Where each fact came from (`sourceMessageIds`), what a deleted or edited message takes with it, the write gate
keeping sources right when it confirms or splits a fact, the summary history's day, and the in-process record of
withdrawn messages. Pure functions, no I/O."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot.memory.models import Fact, MemoryFile, Place, PreviousSummary, Turn
from bot.memory.parts.withdrawn import WITHDRAWN_SECONDS, Withdrawn
from bot.memory.rules import summary_expiry as history
from bot.memory.rules.sources import (
    MAX_SOURCES,
    cited,
    message_of,
    retract,
    retract_only_from,
    set_sources,
    snapshot,
    sources_of,
    stamp,
    user_message_ids,
)
from bot.memory.rules.write_gate import ModelAuthor, admit, derived_from

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
USER = 1001


def fact(fact_id: str, content: str, *sources: str, origin: str = "", place: str = "dm") -> Fact:
    made = Fact(id=fact_id, content=content, createdAt="2026-03-01T11:00:00+00:00", origin=origin, place=place)
    set_sources(made, sources)
    return made


def test_turn_ids_name_their_message_and_made_up_ids_name_none() -> None:
    assert message_of("123456") == "123456"
    assert message_of("123456.1700000000000") == "123456"  # the text of an edit, learned again
    assert message_of("anon-1f2e") is None
    assert message_of("") is None
    turns = [
        Turn("user", USER, "ana", "I keep bees", NOW, "11"),
        Turn("assistant", 42, "bot", "Nice!", NOW, "12", reply_to="11"),
        Turn("user", 2002, "bob", "me too", NOW, "13"),
        Turn("user", USER, "ana", "in Lyon", NOW, "14.99"),
        Turn("user", USER, "ana", "no id", NOW, "anon-1"),
    ]
    assert user_message_ids(turns, USER) == ["11", "14"]


def test_sources_round_trip_through_the_file_and_old_files_load_without_them() -> None:
    memory = MemoryFile(facts=[fact("fact_1", "Keeps bees", "11", "14"), Fact(id="fact_2", content="Old fact")])
    again = MemoryFile.model_validate(json.loads(json.dumps(memory.model_dump(mode="json"))))
    assert sources_of(again.facts[0]) == ["11", "14"]
    assert sources_of(again.facts[1]) == []
    assert "sourceMessageIds" not in again.model_dump(mode="json")["facts"][1]
    assert cited(again) == {"11", "14"}


def test_a_fact_keeps_its_newest_sources_without_repeats() -> None:
    made = fact("fact_1", "Keeps bees")
    set_sources(made, [str(n) for n in range(100)] + ["5"])
    assert len(sources_of(made)) == MAX_SOURCES
    assert sources_of(made)[-1] == "99" and "5" not in sources_of(made)  # only the newest are kept
    set_sources(made, [])
    assert "sourceMessageIds" not in made.model_dump()


def test_an_extraction_stamps_what_it_added_reworded_or_confirmed() -> None:
    memory = MemoryFile(facts=[fact("fact_1", "Keeps bees", "11"), fact("fact_2", "Lives in Lyon", "12")])
    before = snapshot(memory)
    memory.facts[0].lastConfirmedAt = "2026-03-01T12:00:00+00:00"  # confirmed
    memory.facts.append(Fact(id="fact_3", content="Sells honey"))  # new
    assert stamp(before, memory, ["20", "21"]) == 2
    assert sources_of(memory.facts[0]) == ["11", "20", "21"]
    assert sources_of(memory.facts[1]) == ["12"]  # untouched: the batch did not speak of it
    assert sources_of(memory.facts[2]) == ["20", "21"]


def test_a_deleted_message_retracts_what_came_only_from_it_but_never_the_users_own() -> None:
    memory = MemoryFile(
        facts=[
            fact("fact_1", "Keeps bees", "11"),
            fact("fact_2", "Lives in Lyon", "11", "12"),
            fact("fact_3", "Sells honey", "11", origin="corrected"),
            fact("fact_4", "Has a dog", "13"),
            Fact(id="fact_5", content="From before sources were recorded"),
        ]
    )
    result = retract(memory, {"11"})
    assert result.facts == ["fact_1"]
    assert [f.id for f in memory.facts] == ["fact_2", "fact_3", "fact_4", "fact_5"]
    assert sources_of(memory.facts[0]) == ["12"]
    assert sources_of(memory.facts[1]) == []  # the user's correction stays, without the gone message
    result = retract(memory, {"12", "13"})
    assert result.facts == ["fact_2", "fact_4"]
    assert [f.id for f in memory.facts] == ["fact_3", "fact_5"]


def test_an_edited_message_takes_back_only_the_facts_that_came_from_it_alone() -> None:
    memory = MemoryFile(
        facts=[fact("fact_1", "Lives in Paris", "11"), fact("fact_2", "Keeps bees", "11", "12"),
               fact("fact_3", "Likes Paris", "11", origin="user")],
        appliedTurnIds=["10", "11", "12", "11.5"],
    )
    assert retract_only_from(memory, "11").facts == ["fact_1"]
    assert [f.id for f in memory.facts] == ["fact_2", "fact_3"]
    assert sources_of(memory.facts[0]) == ["11", "12"]  # the message still exists, edited
    assert memory.appliedTurnIds == ["10", "12"]  # its turns may be applied again


def _author(place: Place) -> ModelAuthor:
    return ModelAuthor(place, "place", NOW, grounding="")


def test_the_gate_keeps_the_sources_of_a_confirmed_fact_and_gives_a_split_copy_the_batchs() -> None:
    guild = Place.guild(777)
    before = MemoryFile(facts=[fact("fact_1", "Keeps bees", "11"), fact("fact_2", "Lives in Lyon", "12")])
    for shared in before.facts:
        shared.shared = True  # learned in DMs, shared everywhere: a server channel may use them, not reword them
    after = before.model_copy(deep=True)
    # In a server channel the model confirmed one and reworded the other; the batch's message is 30.
    after.facts[0].lastConfirmedAt = "2026-03-01T12:00:00+00:00"
    set_sources(after.facts[0], ["11", "30"])
    after.facts[1].content = "Lives in Lyon with two cats"
    set_sources(after.facts[1], ["12", "30"])
    admit(before, after, _author(guild))
    by_content = {f.content: f for f in after.facts}
    assert sources_of(by_content["Keeps bees"]) == ["11", "30"]
    assert sources_of(by_content["Lives in Lyon"]) == ["12", "30"]  # confirmed, its text kept
    copy = by_content["Lives in Lyon with two cats"]
    assert derived_from(copy) == "fact_2" and copy.place == "guild:777"
    assert sources_of(copy) == ["30"]  # the new wording came from the batch


def test_the_gate_puts_back_a_restored_facts_sources() -> None:
    before = MemoryFile(facts=[fact("fact_1", "Keeps bees", "11", origin="user")])
    after = MemoryFile()  # the model removed the user's own fact
    admit(before, after, _author(Place.dm()))
    assert [(f.id, sources_of(f)) for f in after.facts] == [("fact_1", ["11"])]


def test_history_expires_after_a_day_in_every_place_and_says_when_next() -> None:
    memory = MemoryFile()
    memory.user.workContext.summary = "Now"
    memory.user.workContext.previous = [
        PreviousSummary(summary="Divorced in March", updatedAt="2025-11-01T00:00:00+00:00",
                        replacedAt=(NOW - timedelta(days=90)).isoformat()),
        PreviousSummary(summary="Yesterday's", updatedAt="2026-02-28T00:00:00+00:00",
                        replacedAt=(NOW - timedelta(hours=2)).isoformat()),
    ]
    in_guild = memory.place_memory("guild:5")
    in_guild.user.topOfMind.previous = [PreviousSummary(summary="x", replacedAt="not a date")]
    memory.set_place_memory("guild:5", in_guild)
    assert history.due(memory) is not None and history.due(memory) < NOW  # something is overdue
    assert history.expire(memory, NOW) == 2
    assert [old.summary for old in memory.user.workContext.previous] == ["Yesterday's"]
    assert "guild:5" not in memory.places  # nothing left there
    assert history.due(memory) == NOW - timedelta(hours=2) + timedelta(days=1)
    assert history.expire(memory, NOW + timedelta(days=1, seconds=1)) == 1
    assert history.due(memory) is None


def test_withdrawn_messages_and_replies_to_them_are_left_out_until_they_age_out() -> None:
    clock = [1000.0]
    withdrawn = Withdrawn(clock=lambda: clock[0])
    said = Turn("user", USER, "ana", "secret", NOW, "11")
    reply = Turn("assistant", 42, "bot", "about your secret", NOW, "12", reply_to="11")
    other = Turn("user", USER, "ana", "hello", NOW, "13")
    withdrawn.deleted(["11"])
    assert withdrawn.keep([said, reply, other]) == [other]
    withdrawn.edited("13", "13.5")  # edited: the old text is out, the new one in
    assert not withdrawn.covers(Turn("user", USER, "ana", "hello again", NOW, "13.5"))
    assert withdrawn.covers(other)
    clock[0] += WITHDRAWN_SECONDS + 1
    assert withdrawn.keep([said, reply, other]) == [said, reply, other]
    assert len(withdrawn) == 0
