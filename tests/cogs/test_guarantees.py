"""Two promises, tried the way a new user would, with a model that words things the way real models do
(`tests.support.hostile`), through the bot's real dispatch, on files and on PostgreSQL.

- A DM detail never reaches a public channel. Alice's public fact was learned in #general; in a DM the model
  restates it with a private detail ("... while she is pregnant"). The next #general prompt must not carry the
  detail, the public fact keeps its words, and `/memory forget minutes:5` removes the detail. A health detail is
  also kept out by the sensitive-data rule, so the same story runs with a detail only the place rule stops (a job
  hunt she has not told her colleagues about). Both restatements are close enough to the public fact for the
  near-duplicate merge to take them as that fact with more detail.
- A partial forget wins against work in flight: a message whose reply is still being written when the user runs
  `/memory forget minutes:5` is not learned afterwards; an extraction in flight during `/memory forget section:`
  does not write the cleared summary back after the user was told "Cleared"; the record behind "What did you
  remember?" of a reply written during `/memory forget` (everything) is not kept after the wipe.

"In flight" is made exact with the test server's `Gate`: the model's answer is held until the test opens it.
Storage is checked in its raw bytes (`tests.support.storage`): every file under DATA_DIR, every database row.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.cogs.conftest import ALICE_ID, MakeHarness, Scene, make_scene
from tests.helpers import (
    Clock,
    Harness,
    calls,
    dispatch,
    last_text,
    make_interaction,
    press_through_discord,
    run_message_menu,
    run_slash,
)
from tests.support.hostile import HostileModel, memory_blocks
from tests.support.llm_server import Gate, held
from tests.support.storage import everything_stored, memory_documents, stored_text

SEED = 20
START = datetime(2030, 6, 1, 9, 0, tzinfo=UTC)  # a fixed clock: the same requests, so the same answers, every run


@pytest.fixture(params=["files", "postgres"])
def storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Settings for each backend. Ask for it before `make_harness`, so the bots close before the database goes."""
    patient: dict[str, Any] = {"llm_timeout_seconds": 60}  # an answer held back by the test is no timeout
    if request.param == "postgres":
        return {**patient, "database_url": request.getfixturevalue("postgres_url")}
    return patient


async def hostile_bot(
    make_harness: MakeHarness, storage: dict[str, Any], model: HostileModel
) -> tuple[Harness, Scene, Clock]:
    """The bot with `model` answering, its engine and the fake Discord on one clock (so "the last 5 minutes" holds
    the messages just sent), and the usual scene: Alice and Bob in a server channel and in their DMs."""
    h = await make_harness(**storage)
    clock = Clock(START)
    h.memory.clock = clock
    h.discord.clock = clock
    h.llm.extract = model.extract
    h.llm.chat_reply = model.chat
    return h, make_scene(h), clock


async def memory_of(h: Harness, user_id: int) -> list[dict[str, Any]]:
    """The user's stored memory documents, read from the raw files or rows (a copy kept aside counts too)."""
    return [doc for user, _, doc in memory_documents(await everything_stored(h.settings)) if user == user_id]


def memory_text(body: dict[str, Any]) -> str:
    """The memory a chat request carries (its memory blocks, wherever the prompt puts them)."""
    return "\n".join(memory_blocks(body["messages"]))


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


# --- a DM detail never reaches a public channel ------------------------------------------------------------

NURSE_SAID = "I work night shifts as a nurse at Saint Mary hospital in Dublin, mostly on weekends."
NURSE_FACT = "Works night shifts as a nurse at Saint Mary hospital in Dublin, mostly on weekends"


@dataclass(frozen=True)
class Secret:
    """What Alice tells in her DM, the fact the model takes from it, the detail it adds to the fact it restates,
    and the word that must never reach #general."""

    said: str
    fact: str
    detail: str
    word: str


SECRETS = [
    Secret(
        "Between us: I'm pregnant, and the night shifts are getting hard.",
        "Is pregnant and finds night shifts hard", "she is pregnant", "pregnant",
    ),
    Secret(
        "Between us: I'm job hunting, and the night shifts are getting hard.",
        "Is looking for a new job", "job hunting", "hunting",
    ),
]


@pytest.fixture(params=SECRETS, ids=["health", "plain"])
def secret(request: pytest.FixtureRequest) -> Secret:
    return request.param  # type: ignore[no-any-return]


async def a_public_fact_restated_in_a_dm(
    make_harness: MakeHarness, storage: dict[str, Any], secret: Secret
) -> tuple[Harness, Scene]:
    """Alice's fact learned in #general, then, half an hour later, her DM that the model answers by restating it
    with the private detail."""
    def story(text: str, name: str) -> list[str]:  # what the model takes from each of Alice's messages
        return [NURSE_FACT] if "nurse" in text else [secret.fact] if secret.said == text else []

    def detail(text: str) -> str:  # the detail the model adds to a fact it restates
        return secret.detail if secret.said == text else ""

    model = HostileModel(SEED, facts_of=story, detail_of=detail, remove_chance=0)
    h, scene, clock = await hostile_bot(make_harness, storage, model)

    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, NURSE_SAID))
    await h.settle()
    [doc] = await memory_of(h, ALICE_ID)
    assert [(f["content"], f["place"]) for f in doc["facts"]] == [(NURSE_FACT, f"guild:{scene.guild.id}")]

    clock.advance(minutes=30)
    restated = model.stats["restated"]
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, secret.said))
    await h.settle()
    assert model.stats["restated"] > restated  # the DM extraction was shown the public fact and restated it
    clock.advance(minutes=1)
    return h, scene


def public_facts(docs: list[dict[str, Any]], guild_id: int) -> list[str]:
    return [f["content"] for doc in docs for f in doc["facts"] if f["place"] == f"guild:{guild_id}" or f["shared"]]


async def test_a_dm_detail_does_not_reach_the_next_public_reply(
    storage: dict[str, Any], make_harness: MakeHarness, secret: Secret
) -> None:
    h, scene = await a_public_fact_restated_in_a_dm(make_harness, storage, secret)
    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, "any tips for staying awake?"))
    public = h.llm.chat_requests[-1]
    assert "staying awake" in request_text(public)
    assert NURSE_FACT in memory_text(public)  # the public fact is used here...
    assert secret.word not in request_text(public).lower()  # ...without the detail told in private
    assert public_facts(await memory_of(h, ALICE_ID), scene.guild.id) == [NURSE_FACT]  # its words are untouched


async def test_forget_minutes_removes_a_dm_detail_added_to_an_older_public_fact(
    storage: dict[str, Any], make_harness: MakeHarness, secret: Secret
) -> None:
    h, scene = await a_public_fact_restated_in_a_dm(make_harness, storage, secret)
    forgot = await run_slash(h.bot, make_interaction(scene.alice_user), "memory forget", minutes=5)
    assert last_text(forgot).startswith("Forgot the last 5 minutes")
    await h.settle()
    docs = await memory_of(h, ALICE_ID)
    assert secret.word not in json.dumps(docs).lower()  # no fact, summary or earlier value of one keeps it
    assert public_facts(docs, scene.guild.id) == [NURSE_FACT]  # learned 31 minutes ago: kept, as it was

    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, "and for the commute?"))
    assert NURSE_FACT in memory_text(h.llm.chat_requests[-1])
    assert secret.word not in request_text(h.llm.chat_requests[-1]).lower()


# --- a partial forget wins against work in flight -------------------------------------------------------------

QUOKKA = "quokka-saffron-5150"


async def test_a_message_whose_reply_is_written_during_forget_minutes_is_not_learned(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED)
    h, scene, _ = await hostile_bot(make_harness, storage, model)
    gate = Gate()
    h.llm.chat_reply = lambda body: held(gate, model.chat(body))  # the model takes its time with this reply
    message = h.discord.message(scene.alice_dm, scene.alice_user, f"my quokka is called {QUOKKA}")
    handler = asyncio.create_task(dispatch(h.bot, "message", message))
    try:
        await gate.reached(1)  # the reply is being written
        forgot = await run_slash(h.bot, make_interaction(scene.alice_user), "memory forget", minutes=5)
        assert calls(forgot)[-1].kwargs.get("ephemeral") is True
    finally:
        gate.open()
    await asyncio.wait_for(handler, 10)
    assert QUOKKA in h.discord.reply_text(message)  # the reply went out...
    await h.settle()

    assert not any(QUOKKA in json.dumps(body) for body in h.llm.extraction_requests)  # ...and nothing learned it
    assert QUOKKA not in stored_text(await everything_stored(h.settings))  # nor kept it anywhere


DIVORCE_SAID = "I'm going through a divorce and we are moving house."


async def test_an_extraction_in_flight_during_forget_section_does_not_write_the_summary_back(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED, facts_of=lambda text, name: [], summary_sections=["personalContext"], remove_chance=0)
    h, scene, _ = await hostile_bot(make_harness, storage, model)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, DIVORCE_SAID))
    await h.settle()
    [doc] = await memory_of(h, ALICE_ID)
    assert "divorce" in doc["user"]["personalContext"]["summary"]

    gate = Gate()
    h.llm.extract = lambda body: held(gate, model.extract(body))
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "Any tips for packing?"))
    try:
        await gate.reached(1)  # the extraction is in flight, shown the summary as it was
        cleared = await run_slash(
            h.bot, make_interaction(scene.alice_user), "memory forget", section="personalContext"
        )
        assert last_text(cleared).startswith("Cleared")
    finally:
        gate.open()
    await h.settle()

    for doc in await memory_of(h, ALICE_ID):
        personal = [doc["user"]["personalContext"]]
        personal += [place["user"]["personalContext"] for place in doc.get("places", {}).values()]
        assert "divorce" not in json.dumps(personal)  # the summary, nor an earlier value of it, in any place


async def test_the_record_of_a_reply_written_during_a_wipe_is_not_kept(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED)
    h, scene, _ = await hostile_bot(make_harness, storage, model)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I restore Vespa-150s"))
    await h.settle()
    before = h.discord.message(scene.alice_dm, scene.alice_user, "what do I restore?")
    await dispatch(h.bot, "message", before)
    inspected = await run_message_menu(
        h.bot, make_interaction(scene.alice_user), "What did you remember?", h.discord.replies_to(before)[0].message
    )
    assert calls(inspected)[-1].kwargs.get("embed") is not None  # a reply's record, shown (the check works)

    gate = Gate()
    h.llm.chat_reply = lambda body: held(gate, model.chat(body))
    during = h.discord.message(scene.alice_dm, scene.alice_user, "and where do I live?")
    handler = asyncio.create_task(dispatch(h.bot, "message", during))
    try:
        await gate.reached(1)  # the reply is being written, its prompt built from the memory about to go
        asked = await run_slash(h.bot, make_interaction(scene.alice_user), "memory forget")
        view = calls(asked)[0].kwargs["view"]
        confirm = make_interaction(scene.alice_user)
        assert await press_through_discord(view, view.confirm, confirm)
        assert last_text(confirm).startswith("Done: I've forgotten everything")
    finally:
        gate.open()
    await asyncio.wait_for(handler, 10)
    await h.settle()
    [reply] = h.discord.replies_to(during)
    assert "Vespa-150s" in reply.content  # it was written from the memory that is now gone

    inspected = await run_message_menu(
        h.bot, make_interaction(scene.alice_user), "What did you remember?", reply.message
    )
    answer = calls(inspected)[-1]
    shown = answer.kwargs["embed"].to_dict() if answer.kwargs.get("embed") else answer.kwargs
    assert answer.content.startswith("I have no record"), f"a record kept after the wipe: {shown}"
    stored = stored_text(await everything_stored(h.settings))
    assert str(reply.message.id) not in stored and "Vespa-150s" not in stored
