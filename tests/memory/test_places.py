"""Memory places in the engine: the rules, the extraction view, migration of seed-format files, the journal keeping
a turn's place, and the service (through the real extractor and the local LLM server) showing and writing only
what a place may use. The end-to-end checks through the Discord bot are in tests/cogs/test_places.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.memory.doors import ForgetEverything, ForgetFact, ForgetMinutes, ForgetSection
from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.models import DM_PLACE, ConversationKey, Fact, MemoryFile, Place
from bot.memory.pipeline.answer import ExtractionResult
from bot.memory.pipeline.apply import apply_extraction
from bot.memory.rules.places import (
    extraction_view,
    may_use,
    merge_extraction_view,
    usable_facts,
    usable_summaries,
)
from tests.memory.test_service import ALICE, Engine, make_engine, payload_of, turn
from tests.support import engine as support
from tests.support.engine import where_in
from tests.support.llm_server import ChatServer, extraction

GUILD_A, GUILD_B = 7001, 7002
STAFF_A, STAFF_B = 8001, 8002  # restricted channels of A and B

DM = Place.dm()
PUBLIC_A = Place.guild(GUILD_A)
PUBLIC_B = Place.guild(GUILD_B)
STAFF_IN_A = Place.channel(STAFF_A, GUILD_A)
STAFF_IN_B = Place.channel(STAFF_B, GUILD_B)
ALL = [DM, PUBLIC_A, PUBLIC_B, STAFF_IN_A, STAFF_IN_B]


def allowed(reader: Place, learned_in: Place) -> bool:
    """The rule, written out independently of the engine: DMs use everything; a public channel of G uses G's
    public memory; a restricted channel C of G uses C's memory and G's public memory."""
    if reader in (DM, learned_in):
        return True
    return reader.kind == "channel" and learned_in == Place.guild(reader.guild_id)


# --- the rule ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", ALL, ids=lambda p: p.key)
@pytest.mark.parametrize("learned_in", ALL, ids=lambda p: p.key)
def test_may_use_follows_the_rule_for_every_pair_of_places(reader: Place, learned_in: Place) -> None:
    assert may_use(reader, learned_in.key) is allowed(reader, learned_in)
    assert may_use(reader, learned_in.key, shared=True) is True  # shared: everywhere


def test_the_place_keys_are_the_documented_strings_and_survive_json() -> None:
    assert [p.key for p in ALL] == ["dm", "guild:7001", "guild:7002", "channel:8001", "channel:8002"]
    for place in ALL:
        assert Place.from_json(json.loads(json.dumps(place.to_json()))) == place
    assert Place.from_json({}) == DM  # a record from before places: the safe reading
    with pytest.raises(ValueError):
        Place.from_json({"place": "planet:3"})


# --- migration of a file written before places ------------------------------------------------------------

SEED_FILE = {
    "version": "1.0",
    "user": {
        "workContext": {"summary": "Nurse on night shifts.", "updatedAt": "2024-01-01T00:00:00+00:00"},
        "personalContext": {"summary": "", "updatedAt": ""},
        "topOfMind": {"summary": "Being treated for depression.", "updatedAt": "2024-01-01T00:00:00+00:00"},
    },
    "history": {
        "recentMonths": {"summary": "", "updatedAt": ""},
        "earlierContext": {"summary": "", "updatedAt": ""},
        "longTermBackground": {"summary": "", "updatedAt": ""},
    },
    "facts": [
        {"id": "fact_0000aaaa", "content": "Is being treated for depression", "category": "context",
         "confidence": 0.95, "createdAt": "2024-01-01T00:00:00+00:00"},
        {"id": "fact_0000bbbb", "content": "Likes hiking in the Alps", "category": "preference",
         "confidence": 0.9, "createdAt": "2024-01-01T00:00:00+00:00"},
    ],
}


def test_a_seed_format_file_loads_as_dm_only_memory() -> None:
    memory = MemoryFile.model_validate(SEED_FILE)
    assert memory.version == "2.0"
    assert [(fact.place, fact.shared) for fact in memory.facts] == [("dm", False), ("dm", False)]
    assert memory.user.topOfMind.summary == "Being treated for depression."  # the seed's fields, readable as ever
    assert memory.sections_of(DM_PLACE)[2][1].summary == "Being treated for depression."
    for place in [PUBLIC_A, STAFF_IN_A]:
        assert usable_facts(memory, place) == []
        assert usable_summaries(memory, place) == []
    assert len(usable_facts(memory, DM)) == 2
    assert {name for _, name, _ in usable_summaries(memory, DM)} == {"workContext", "topOfMind"}
    memory.facts[1].shared = True  # `/memory share`
    assert [fact.content for fact in usable_facts(memory, PUBLIC_A)] == ["Likes hiking in the Alps"]


# --- the extraction view ----------------------------------------------------------------------------------


def placed_memory() -> MemoryFile:
    memory = MemoryFile(
        facts=[
            Fact(id="fact_000000d1", content="DM secret", place="dm"),
            Fact(id="fact_000000a1", content="Public in A", place=PUBLIC_A.key),
            Fact(id="fact_000000s1", content="Staff of A", place=STAFF_IN_A.key),
            Fact(id="fact_000000b1", content="Public in B", place=PUBLIC_B.key),
            Fact(id="fact_000000x1", content="Shared hobby", place="dm", shared=True),
        ]
    )
    memory.user.topOfMind.summary = "DM summary"
    for place, text in [(PUBLIC_A, "A summary"), (STAFF_IN_A, "Staff summary"), (PUBLIC_B, "B summary")]:
        summaries = memory.place_memory(place.key)
        summaries.user.topOfMind.summary = text
        memory.set_place_memory(place.key, summaries)
    return memory


@pytest.mark.parametrize(
    ("place", "facts", "summary"),
    [
        (DM, ["DM secret", "Public in A", "Staff of A", "Public in B", "Shared hobby"], "DM summary"),
        (PUBLIC_A, ["Public in A", "Shared hobby"], "A summary"),
        (STAFF_IN_A, ["Public in A", "Staff of A", "Shared hobby"], "Staff summary"),
        (PUBLIC_B, ["Public in B", "Shared hobby"], "B summary"),
    ],
    ids=lambda value: value.key if isinstance(value, Place) else None,
)
def test_an_extraction_sees_what_its_place_may_use_and_its_own_summaries(
    place: Place, facts: list[str], summary: str
) -> None:
    view = extraction_view(placed_memory(), place, "place")
    assert [fact.content for fact in view.facts] == facts
    assert view.user.topOfMind.summary == summary
    assert view.places == {}


def test_an_applied_view_writes_only_its_place_and_removes_only_what_it_may_use() -> None:
    memory = placed_memory()
    view = extraction_view(memory, PUBLIC_A, "place")
    result = ExtractionResult.model_validate(
        {
            "user": {"topOfMind": {"summary": "Planning a hike", "shouldUpdate": True}},
            "newFacts": [{"content": "Hikes every weekend", "category": "preference", "confidence": 0.9}],
            "factsToRemove": ["fact_000000a1", "fact_000000d1", "fact_000000s1"],  # only A's is A's to remove
        }
    )
    apply_extraction(view, result, now=datetime(2024, 6, 1, tzinfo=UTC), min_confidence=0.7, max_facts=100,
                     duplicate_similarity=0.85)
    added = merge_extraction_view(memory, view, PUBLIC_A, "place")
    assert [(f.content, f.place) for f in added] == [("Hikes every weekend", "guild:7001")]
    assert [f.content for f in memory.facts] == ["DM secret", "Staff of A", "Public in B", "Shared hobby",
                                                 "Hikes every weekend"]
    assert memory.place_memory(PUBLIC_A.key).user.topOfMind.summary == "Planning a hike"
    assert memory.user.topOfMind.summary == "DM summary"
    assert memory.place_memory(STAFF_IN_A.key).user.topOfMind.summary == "Staff summary"
    assert memory.place_memory(PUBLIC_B.key).user.topOfMind.summary == "B summary"


def test_with_scope_user_every_place_reads_and_writes_one_memory() -> None:
    memory = placed_memory()
    view = extraction_view(memory, PUBLIC_A, "user")
    assert len(view.facts) == 5 and view.user.topOfMind.summary == "DM summary"
    view.user.topOfMind.summary = "One memory"
    view.facts.append(Fact(id="fact_000000n1", content="New in A"))
    merge_extraction_view(memory, view, PUBLIC_A, "user")
    assert memory.user.topOfMind.summary == "One memory"
    assert memory.facts[-1].place == PUBLIC_A.key  # still records where it was learned


# --- the journal keeps each pending turn's place ----------------------------------------------------------


async def test_replay_gives_back_each_turns_place_and_an_old_record_is_a_dm(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_NAME
    journal = Journal(path, FileGenerations(), durable=False)
    for n, place in enumerate(ALL):
        await journal.add(ConversationKey(100 + n, ALICE, place), [turn(ALICE, f"said in {place.key}")])
    old = {"op": "turn", "conv": "99", "user": str(ALICE), "turn": turn(ALICE, "from before places").to_json()}
    with path.open("a") as handle:
        handle.write(json.dumps(old) + "\n")
    replayed = {item.turn.text: item.key.place for item in Journal(path, FileGenerations()).replay()}
    assert replayed == {**{f"said in {p.key}": p for p in ALL}, "from before places": DM}


# --- the service, through the real extractor and the local LLM server ------------------------------------


@pytest.fixture
async def engine(tmp_path: Path, chat_server: ChatServer) -> AsyncIterator[Engine]:
    built = make_engine(tmp_path, chat_server.base_url)
    await built.service.ops.open()
    yield built
    await built.aclose()


async def learn(engine: Engine, server: ChatServer, place: Place, text: str, fact: str, top: str) -> dict[str, Any]:
    """One batch said in `place`; the model answers with `fact` and a top-of-mind summary. Returns the
    extraction request's payload (what the model was shown)."""
    server.enqueue(extraction(top=top, facts=[(fact, "context", 0.95)]))
    channel = {"dm": 1, "guild": 2, "channel": 3}[place.kind] * 10_000 + place.id % 10_000
    await support.learn(engine.service, ConversationKey(channel, ALICE, place), [turn(ALICE, text)])
    await engine.settle()
    return payload_of(server.requests[-1])


async def prompt_in(engine: Engine, place: Place) -> str:
    prompt = await engine.service.recall.prompt(
        ALICE, ["anything"], user_label="alice", where=where_in(place)
    )
    return prompt.text


async def test_a_public_batch_is_never_shown_dm_memory_and_writes_only_its_place(
    engine: Engine, chat_server: ChatServer
) -> None:
    await learn(engine, chat_server, DM, "between us, remember that I'm being treated for depression",
                "Is being treated for depression", "Coping with depression")
    shown = await learn(engine, chat_server, PUBLIC_A, "any hiking trails near Lyon?",
                        "Likes hiking near Lyon", "Planning a hike near Lyon")
    assert "depression" not in json.dumps(shown)
    assert shown["currentMemory"]["facts"] == []

    memory = engine.on_disk(ALICE)
    assert [(f.content, f.place) for f in memory.facts] == [
        ("Is being treated for depression", "dm"), ("Likes hiking near Lyon", "guild:7001"),
    ]
    assert memory.user.topOfMind.summary == "Coping with depression"
    assert memory.places["guild:7001"].user.topOfMind.summary == "Planning a hike near Lyon"

    public = await prompt_in(engine, PUBLIC_A)
    assert "hiking" in public and "Planning a hike" in public and "depression" not in public
    private = await prompt_in(engine, DM)
    assert "depression" in private and "hiking" in private  # a DM may use everything


async def test_server_a_and_server_b_never_see_each_other(engine: Engine, chat_server: ChatServer) -> None:
    await learn(engine, chat_server, PUBLIC_A, "I moderate the Lyon hikers", "Moderates the Lyon hikers",
                "Organising the Lyon hikers")
    shown_in_b = await learn(engine, chat_server, PUBLIC_B, "I speedrun Zelda", "Speedruns Zelda",
                             "Training a Zelda speedrun")
    assert "Lyon" not in json.dumps(shown_in_b)
    shown_in_a = await learn(engine, chat_server, PUBLIC_A, "meet-up on Sunday", "Goes to Sunday meet-ups",
                             "Sunday meet-up")
    assert "Zelda" not in json.dumps(shown_in_a) and "Lyon" in json.dumps(shown_in_a)
    in_a, in_b = await prompt_in(engine, PUBLIC_A), await prompt_in(engine, PUBLIC_B)
    assert "Lyon" in in_a and "Zelda" not in in_a
    assert "Zelda" in in_b and "Lyon" not in in_b


async def test_restricted_to_public_never_and_public_to_restricted_always(
    engine: Engine, chat_server: ChatServer
) -> None:
    await learn(engine, chat_server, STAFF_IN_A, "the ban appeal for user X is mine", "Handles X's ban appeal",
                "Reviewing a ban appeal")
    shown_public = await learn(engine, chat_server, PUBLIC_A, "I love bouldering", "Loves bouldering",
                               "Bouldering season")
    assert "ban appeal" not in json.dumps(shown_public)
    shown_staff = await learn(engine, chat_server, STAFF_IN_A, "next mod meeting Friday", "Attends mod meetings",
                              "Mod meeting on Friday")
    assert "bouldering" in json.dumps(shown_staff)  # a restricted channel may use its server's public memory
    assert "Reviewing a ban appeal" in json.dumps(shown_staff)  # and its own summaries, to merge into them

    public, staff = await prompt_in(engine, PUBLIC_A), await prompt_in(engine, STAFF_IN_A)
    assert "bouldering" in public.lower() and "ban appeal" not in public and "mod meeting" not in public.lower()
    assert "ban appeal" in staff and "bouldering" in staff.lower() and "Bouldering season" in staff
    other_staff = await prompt_in(engine, STAFF_IN_B)
    assert other_staff == ""  # another server's staff room: nothing


async def test_share_and_unshare_round_trip(engine: Engine, chat_server: ChatServer) -> None:
    await learn(engine, chat_server, DM, "I'm vegetarian", "Is vegetarian", "Eating vegetarian")
    [fact] = engine.on_disk(ALICE).facts
    assert "vegetarian" not in await prompt_in(engine, PUBLIC_A)
    assert await engine.service.user(ALICE).share(fact.id, True) is True
    assert await engine.service.user(ALICE).share(fact.id, True) is False  # already
    assert engine.on_disk(ALICE).facts[0].shared is True
    public = await prompt_in(engine, PUBLIC_A)
    assert "Is vegetarian" in public and "Eating vegetarian" not in public  # the fact, not the DM summary
    shown = await learn(engine, chat_server, PUBLIC_B, "pizza tonight", "Likes pizza", "Pizza night")
    assert "Is vegetarian" in json.dumps(shown)
    assert await engine.service.user(ALICE).share(fact.id, False) is True
    assert "vegetarian" not in await prompt_in(engine, PUBLIC_A)
    assert await engine.service.user(ALICE).share("fact_ffffffff", True) is None


async def test_an_old_file_is_dm_only_until_shared(engine: Engine) -> None:
    engine.file(ALICE).parent.mkdir(parents=True, exist_ok=True)
    engine.file(ALICE).write_text(json.dumps(SEED_FILE))
    assert "depression" in await prompt_in(engine, DM)
    assert await prompt_in(engine, PUBLIC_A) == ""
    assert await engine.service.user(ALICE).share("fact_0000bbbb", True) is True
    public = await prompt_in(engine, PUBLIC_A)
    assert "Alps" in public and "depression" not in public and "Nurse" not in public
    on_disk = json.loads(engine.file(ALICE).read_bytes())
    assert on_disk["version"] == "2.0"
    assert [(f["place"], f["shared"]) for f in on_disk["facts"]] == [("dm", False), ("dm", True)]


async def test_forget_and_export_work_across_places(engine: Engine, chat_server: ChatServer) -> None:
    await learn(engine, chat_server, DM, "I'm vegetarian", "Is vegetarian", "Eating vegetarian")
    await learn(engine, chat_server, STAFF_IN_A, "I run the wiki", "Runs the wiki", "Wiki revamp")
    exported = json.loads(await engine.service.user(ALICE).export())
    assert [(f["content"], f["place"], f["shared"]) for f in exported["facts"]] == [
        ("Is vegetarian", "dm", False), ("Runs the wiki", "channel:8001", False),
    ]
    assert exported["places"]["channel:8001"]["user"]["topOfMind"]["summary"] == "Wiki revamp"
    staff_fact = exported["facts"][1]["id"]
    forgotten = await engine.service.user(ALICE).forget(ForgetFact(staff_fact))  # asked from anywhere, e.g. a DM
    assert forgotten.facts == 1
    staff = await prompt_in(engine, STAFF_IN_A)
    assert "Runs the wiki" not in staff and "Wiki revamp" not in staff  # one fact gone, its words from the summaries
    assert "vegetarian" in await prompt_in(engine, DM)  # the rest stays
    assert (await engine.service.user(ALICE).forget(ForgetEverything())).any_memory is True
    assert not engine.file(ALICE).exists()
    assert await prompt_in(engine, STAFF_IN_A) == "" and await prompt_in(engine, DM) == ""


async def test_scope_user_keeps_one_memory_everywhere(tmp_path: Path, chat_server: ChatServer) -> None:
    built = make_engine(tmp_path, chat_server.base_url, scope="user")
    await built.service.ops.open()
    try:
        await learn(built, chat_server, DM, "between us, remember that I'm being treated for depression",
                    "Is being treated for depression", "Coping with depression")
        shown = await learn(built, chat_server, PUBLIC_A, "hiking?", "Likes hiking", "Planning a hike")
        assert "depression" in json.dumps(shown)  # today's behaviour: one memory
        public = await prompt_in(built, PUBLIC_B)
        assert "depression" in public and "hiking" in public and "Planning a hike" in public
        memory = built.on_disk(ALICE)
        assert memory.places == {}  # one set of summaries
        assert [f.place for f in memory.facts] == ["dm", "guild:7001"]  # still recorded, for a later switch
    finally:
        await built.aclose()


def test_a_places_unknown_fields_survive_an_extraction_there() -> None:
    memory = MemoryFile.model_validate(
        {"places": {"guild:7001": {"user": {"topOfMind": {"summary": "Old", "mood": "calm"}}, "fromTheFuture": 1}}}
    )
    view = extraction_view(memory, PUBLIC_A, "place")
    view.user.topOfMind.summary = "New"
    merge_extraction_view(memory, view, PUBLIC_A, "place")
    dumped = memory.model_dump(mode="json")["places"]["guild:7001"]
    assert dumped["fromTheFuture"] == 1
    assert dumped["user"]["topOfMind"] == {"summary": "New", "updatedAt": "", "mood": "calm"}


# --- the memory commands across places --------------------------------------------------------------------


async def test_remember_belongs_where_it_was_typed_unless_everywhere(engine: Engine) -> None:
    staff_only = await engine.service.user(ALICE).add("I run the moderation rota", place=STAFF_IN_A)
    everywhere = await engine.service.user(ALICE).add("Call me Ali", place=STAFF_IN_A, everywhere=True)
    assert (staff_only.place, staff_only.shared) == ("channel:8001", False)
    assert (everywhere.place, everywhere.shared) == ("channel:8001", True)
    public = await prompt_in(engine, PUBLIC_A)
    assert "Call me Ali" in public and "moderation rota" not in public
    assert "moderation rota" in await prompt_in(engine, STAFF_IN_A)


async def test_forget_section_and_forget_minutes_reach_every_place(engine: Engine, chat_server: ChatServer) -> None:
    await learn(engine, chat_server, DM, "I'm vegetarian", "Is vegetarian", "Eating vegetarian")
    await learn(engine, chat_server, PUBLIC_A, "I love bouldering", "Loves bouldering", "Bouldering season")
    await learn(engine, chat_server, STAFF_IN_A, "I run the wiki", "Runs the wiki", "Wiki revamp")
    assert (await engine.service.user(ALICE).forget(ForgetSection("topOfMind"))).sections > 0
    memory = engine.on_disk(ALICE)
    assert [memory.section_of(p.key, "topOfMind").summary for p in (DM, PUBLIC_A, STAFF_IN_A)] == ["", "", ""]

    await learn(engine, chat_server, PUBLIC_B, "I speedrun Zelda", "Speedruns Zelda", "Training a speedrun")
    report = await engine.service.user(ALICE).forget(ForgetMinutes(60))
    assert report.facts == 4 and report.sections == 1  # every fact was learned within the hour; B's summary too
    memory = engine.on_disk(ALICE)
    assert memory.facts == [] and memory.section_of(PUBLIC_B.key, "topOfMind").summary == ""


async def test_what_did_you_remember_names_the_summaries_of_the_place_used(
    engine: Engine, chat_server: ChatServer
) -> None:
    await learn(engine, chat_server, DM, "between us, remember that I'm being treated for depression",
                "Is being treated for depression", "Coping with depression")
    await learn(engine, chat_server, PUBLIC_A, "I love bouldering", "Loves bouldering", "Bouldering season")
    used = await engine.service.recall.prompt(
        ALICE, ["climbing?"], user_label="alice", where=where_in(PUBLIC_A)
    )
    assert used.sections == ("topOfMind@guild:7001",)
    await engine.service.recall.record_reply([424242], ALICE, used, engine.service.learning.ticket(ALICE))
    record = await engine.service.recall.reply_record(424242)
    assert record is not None
    recalled = await engine.service.user(ALICE).recalled(record)
    summaries = [(item.key, item.text, item.place) for item in recalled if item.kind == "section"]
    assert summaries == [("topOfMind", "Bouldering season", "guild:7001")]  # not the DM summary of the same name
    assert "depression" not in json.dumps([item.text for item in recalled])
