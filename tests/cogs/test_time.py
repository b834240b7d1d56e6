"""Memory that knows time, through the bot's real dispatch: messages into `bot.dispatch`, a scripted memory model
behind the local Chat Completions server, slash commands into the command tree. A move closes the old fact, which
`/memory show` lists as history and no reply's prompt carries; relative dates are resolved against the message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.i18n.speech import ENGLISH_SPEECH
from bot.memory.models import Fact, Location, MemoryFile, iso
from cogs.memory.rendering import IN_DMS, build_show_pages, memory_as_markdown
from tests.cogs.conftest import ALICE_ID, MakeHarness, Scene, make_scene
from tests.helpers import Clock, calls, check_discord_limits, dispatch, extraction_input, make_interaction, run_slash
from tests.support.engine import parts, save_memory
from tests.support.llm_server import Response, extraction


def attentive(body: dict[str, Any]) -> Response:
    """A memory model that reads the current memory and says what replaces what."""
    sent = extraction_input(body)
    current = {fact["content"]: fact["id"] for fact in sent["currentMemory"]["facts"]}
    said = " ".join(turn["text"] for turn in sent["newTurns"] if turn["speaker"] == "user")
    if "I live in Paris" in said:
        return extraction(facts=[("Lives in Paris", "context", 0.95)])
    if "moved to Lyon" in said:
        paris = current["Lives in Paris"]
        return extraction(facts=[{"content": "Moved to Lyon", "category": "context", "confidence": 0.95,
                                  "replaces": [paris]},
                                 {"content": "Has a housewarming party next Saturday", "category": "goal",
                                  "confidence": 0.9, "when": "next Saturday"}],
                          remove=[paris])
    return extraction()


async def test_a_move_is_history_in_show_and_absent_from_every_later_prompt(scene: Scene) -> None:
    h, bot = scene.h, scene.h.bot
    h.llm.extract = attentive
    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I live in Paris, 11e"))
    await h.settle()
    moving = h.discord.message(scene.alice_dm, scene.alice_user, "we finally moved to Lyon!! party next Saturday")
    await dispatch(bot, "message", moving)
    await h.settle()

    stored = h.memory_on_disk(ALICE_ID)
    assert stored is not None
    paris, lyon, party = stored["facts"]
    assert paris["content"] == "Lives in Paris" and paris["supersededBy"] == lyon["id"]
    assert paris["validTo"] == iso(moving.created_at) == lyon["observedAt"]  # the message's time
    said_on = moving.created_at.date()
    saturday = said_on - timedelta(days=said_on.weekday()) + timedelta(days=12)
    assert party["eventDate"] == saturday.isoformat() and party["content"].endswith(saturday.isoformat())

    shown = await run_slash(bot, make_interaction(scene.alice_user), "memory show")
    embed = calls(shown)[-1].kwargs["embed"]
    page = embed.description or ""
    facts_part, _, history_part = page.partition("**History**")
    assert "Moved to Lyon" in facts_part and "Lives in Paris" not in facts_part
    assert f"`{paris['id']}` ~~Lives in Paris~~" in history_part
    assert f"replaced by {lyon['id']}" in history_part and f"until {ENGLISH_SPEECH.date(said_on)}" in history_part

    asked = h.discord.message(scene.alice_dm, scene.alice_user, "what's a good bakery near me in Paris?")
    await dispatch(bot, "message", asked)
    prompt = str(h.llm.chat_requests[-1]["messages"])
    assert "Moved to Lyon" in prompt and "Lives in Paris" not in prompt
    reply = h.discord.replies_to(asked)[0]
    record = await h.memory.recall.reply_record(reply.message.id)
    assert record is not None and paris["id"] not in record.fact_ids and lyon["id"] in record.fact_ids

    # History is forgotten like any fact.
    forgot = await run_slash(bot, make_interaction(scene.alice_user), "memory forget", fact=paris["id"])
    assert calls(forgot)[-1].content == f"Forgotten: `{paris['id']}`."
    after = h.memory_on_disk(ALICE_ID)
    assert after is not None and [f["id"] for f in after["facts"]] == [lyon["id"], party["id"]]



def lived_in(n: int) -> Fact:
    return Fact(id=f"fact_{n:08x}", content=f"Lived in city number {n}, " + "a long story about that place " * 6,
                validTo=f"2024-0{1 + n % 9}-01T10:00:00+00:00", supersededBy=f"fact_{n + 1:08x}")


def test_history_alone_is_shown_as_history_on_pages_within_discord_limits() -> None:
    memory = MemoryFile(facts=[lived_in(n) for n in range(1, 40)])
    pages, _ = build_show_pages(memory)
    assert len(pages) > 1
    for page in pages:
        check_discord_limits(embed=page)
        assert "**Facts**" not in (page.description or "")  # nothing holds now: no facts heading on any page
    first = pages[0].description or ""
    assert first.startswith("**History** (39)") and "~~Lived in city number 1," in first
    assert "replaced by fact_00000002" in first and "until Feb 1, 2024" in first  # dates the reader's way
    text = "".join(page.description or "" for page in pages)
    assert "replaced by fact_00000028" not in text  # the last one's replacement is gone: no dangling id
    assert text.count("~~Lived in city number") == 39


def test_a_search_finds_history_too_and_the_markdown_copy_has_it_apart() -> None:
    lyon = Fact(id="fact_0000aaaa", content="Lives in Lyon")
    paris = Fact(id="fact_0000bbbb", content="Lives in Paris", validTo="2024-06-05T21:30:00+00:00",
                 supersededBy=lyon.id)
    memory = MemoryFile(facts=[paris, lyon])
    pages, _ = build_show_pages(memory, search="paris")
    description = pages[0].description or ""
    assert description.startswith("**History** (1)") and "Lives in Lyon" not in description
    pages, _ = build_show_pages(memory, search="rome")
    assert pages[0].description == "No fact matches that search."
    document = memory_as_markdown(memory, IN_DMS)
    facts, _, history = document.partition("## History")
    assert "Lives in Lyon" in facts and "Lives in Paris" not in facts
    assert "`fact_0000bbbb` Lives in Paris (until Jun 5, 2024, replaced by fact_0000aaaa; DMs)" in history


def time_boxed(body: dict[str, Any]) -> Response:
    """A memory model of the documented shape only: the code must read the lifetime from the words."""
    said = " ".join(turn["text"] for turn in extraction_input(body)["newTurns"] if turn["speaker"] == "user")
    if "I'm in Rome" in said:
        return extraction(facts=[("Is in Rome this week for a dental conference", "context", 0.95),
                                 ("Works weekends at a bakery", "context", 0.95)])
    return extraction()


async def test_a_time_boxed_fact_is_used_in_its_week_then_is_history_and_frees_its_place(scene: Scene) -> None:
    h, bot = scene.h, scene.h.bot
    clock = Clock(datetime(2024, 6, 12, 9, 0, tzinfo=UTC))  # a Wednesday
    h.memory.clock = clock
    h.discord.clock = clock
    h.llm.extract = time_boxed
    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "this week I'm in Rome!"))
    await h.settle()
    stored = h.memory_on_disk(ALICE_ID)
    assert stored is not None
    rome, bakery = stored["facts"]
    assert rome["validUntil"] == "2024-06-16" and "validUntil" not in bakery  # "works weekends" is a habit

    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "where to eat in Rome?"))
    assert "dental conference" in str(h.llm.chat_requests[-1]["messages"])

    clock.advance(days=5)  # Monday: the week is over
    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "where to eat in Rome?"))
    prompt = str(h.llm.chat_requests[-1]["messages"])
    assert "dental conference" not in prompt and "bakery" in prompt
    await h.settle()
    shown = str(extraction_input(h.llm.extraction_requests[-1])["currentMemory"]["facts"])
    assert "dental conference" not in shown and "'saidAt': '2024-06-12'" in shown  # the extractor sees dates
    after = h.memory_on_disk(ALICE_ID)
    assert after is not None
    closed = next(fact for fact in after["facts"] if fact["id"] == rome["id"])
    assert closed["validTo"] == "2024-06-17T00:00:00+00:00" and "supersededBy" not in closed

    page = calls(await run_slash(bot, make_interaction(scene.alice_user), "memory show"))[-1].kwargs["embed"]
    facts_part, _, history_part = (page.description or "").partition("**History**")
    assert "dental conference" not in facts_part and "bakery" in facts_part
    assert f"`{rome['id']}` ~~Is in Rome" in history_part and "said Jun 12, 2024, until Jun 16, 2024" in history_part


def aged(content: str, days_ago: int, now: datetime, **fields: Any) -> Fact:
    stamp = iso(now - timedelta(days=days_ago))
    return Fact(id=f"fact_{days_ago:08x}", content=content, confidence=0.9, createdAt=stamp, observedAt=stamp,
                lastConfirmedAt=stamp, **fields)


@pytest.mark.parametrize(("origin", "used"), [("", "padel"), ("user", "tennis")])
async def test_a_fact_nobody_confirmed_for_half_a_year_loses_a_near_tie_unless_the_user_wrote_it(
    make_harness: MakeHarness, origin: str, used: str
) -> None:
    h = await make_harness(memory_top_k=1)
    scene = make_scene(h)
    clock = Clock(datetime(2025, 6, 1, 12, 0, tzinfo=UTC))
    h.memory.clock = clock
    h.discord.clock = clock
    # Stored newest first: without staleness the tie would go to the later (older) fact.
    memory = MemoryFile(facts=[aged("Plays padel on Saturdays at the club", 2, clock.now),
                               aged("Plays tennis on Saturdays at the club", 400, clock.now, origin=origin)])
    await save_memory(parts(h.memory).storage.memories, ALICE_ID, memory)
    asked = h.discord.message(scene.alice_dm, scene.alice_user, "what shall I do on Saturdays at the club?")
    await dispatch(h.bot, "message", asked)
    prompt = str(h.llm.chat_requests[-1]["messages"])
    assert f"Plays {used}" in prompt and f"Plays {({'padel', 'tennis'} - {used}).pop()}" not in prompt
    stored = h.memory_on_disk(ALICE_ID)
    assert stored is not None and len(stored["facts"]) == 2  # age alone never deletes


async def test_a_fact_lapses_for_replies_even_when_nothing_was_written_since_its_index_was_built(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(memory_top_k=1)
    clock = Clock(datetime(2024, 6, 14, 20, 0, tzinfo=UTC))  # Friday evening
    h.memory.clock = clock
    rome = Fact(id="fact_0000000a", content="Is in Rome this week for a dental conference", confidence=0.95,
                createdAt="2024-06-12T09:00:00+00:00", validUntil="2024-06-16")
    bakery = Fact(id="fact_0000000b", content="Works weekends at a bakery in Rome", confidence=0.9,
                  createdAt="2024-06-12T09:00:00+00:00")
    await save_memory(parts(h.memory).storage.memories, ALICE_ID, MemoryFile(facts=[bakery, rome]))
    before = h.memory_path(ALICE_ID).read_bytes()
    where = Location.dm(1)
    during = await h.memory.recall.prompt(ALICE_ID, ["the conference in Rome"], user_label="Alice", where=where)
    assert during.fact_ids == (rome.id,)  # the index of this revision is cached now
    clock.advance(days=2)  # Sunday evening -> Monday
    clock.advance(hours=5)
    after = await h.memory.recall.prompt(ALICE_ID, ["the conference in Rome"], user_label="Alice", where=where)
    assert after.fact_ids == (bakery.id,)  # the one slot goes to what still holds
    assert h.memory_path(ALICE_ID).read_bytes() == before  # nothing was written: the read side decided
