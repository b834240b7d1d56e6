"""`/memory import file:` through the bot's real command tree and discord.py's own component dispatch: the export
round trip (export, forget everything, import: the same facts, used in replies), a text file whose credential is
refused and never kept and whose health item waits for "Import including sensitive", buttons that answer only their
owner and survive a restart, and every bad file answered with one line and nothing stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.memory.doors import ForgetEverything
from bot.memory.models import Place
from cogs.memory.views import OWNER_ONLY
from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness, Scene
from tests.helpers import (
    Harness,
    calls,
    dispatch,
    extraction_input,
    make_interaction,
    make_user,
    run_slash,
    seed_memory,
)
from tests.support.importing import buttons, press, preview_of, run_import
from tests.support.llm_server import Response, extraction

ALICE = make_user(ALICE_ID, "Alice")
BOB = make_user(BOB_ID, "Bob")
PASSWORD = "hunter2-Blue!Sky"


def facts_on_disk(h: Harness) -> list[dict[str, Any]]:
    stored = h.memory_on_disk(ALICE_ID)
    return list(stored["facts"]) if stored else []


def learner(body: dict[str, Any]) -> Response:
    said = " ".join(turn["text"] for turn in extraction_input(body)["newTurns"] if turn["speaker"] == "user")
    if "Porto" in said:
        return extraction(facts=[("Lives in Porto and commutes to Braga by train every weekday", "context", 0.9),
                                 ("Plays the cello in an amateur orchestra on Thursday evenings", "preference", 0.85)])
    return extraction()


async def test_export_forget_everything_import_gives_back_the_same_facts_used_in_replies(scene: Scene) -> None:
    h, bot = scene.h, scene.h.bot
    h.llm.extract = learner
    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I live in Porto, cello!"))
    await h.settle()
    await h.memory.user(ALICE_ID).add("Hates coriander in every dish, even a little", place=Place.dm())
    before = [(f["content"], f["category"]) for f in facts_on_disk(h)]
    assert len(before) == 3

    exported = await run_import_export(bot)
    forgot = await h.memory.user(ALICE_ID).forget(ForgetEverything())
    assert forgot.any_memory and h.memory_on_disk(ALICE_ID) is None

    answered = await run_import(bot, ALICE, f"memory-{ALICE_ID}.json", exported)
    text, message = preview_of(answered)
    assert "**Will be added** (3)" in text and "Lives in Porto" in text and message is not None
    assert set(buttons(message)) == {"Import", "Cancel"}  # nothing sensitive: no second import button
    intruder = await press(h, message, "Import", BOB)
    assert [c.content for c in calls(intruder)] == [OWNER_ONLY] and not facts_on_disk(h)
    done = await press(h, message, "Import", ALICE)
    assert calls(done)[-1].content.startswith("Imported 3 memories")
    after = facts_on_disk(h)
    assert [(f["content"], f["category"]) for f in after] == before
    assert {f["origin"] for f in after} == {"imported"} and {f["place"] for f in after} == {"dm"}
    assert "pendingImport" not in (h.memory_on_disk(ALICE_ID) or {})

    asked = h.discord.message(scene.alice_dm, scene.alice_user, "any tips for my commute to Braga?")
    await dispatch(bot, "message", asked)
    assert "commutes to Braga" in str(h.llm.chat_requests[-1]["messages"])
    shown = await h.memory.user(ALICE_ID).show()
    assert all(fact.user_owned for fact in shown.facts)  # the model never changes or evicts them
    page = calls(await run_slash(bot, make_interaction(ALICE), "memory show"))[-1].kwargs["embed"]
    assert (page.description or "").count("*yours, imported*") == 3


async def run_import_export(bot: Any) -> bytes:
    exported = await run_slash(bot, make_interaction(ALICE), "memory export")
    attachment = calls(exported)[-1].kwargs["file"]
    data = attachment.fp.read()
    assert isinstance(data, bytes) and json.loads(data)["exportedFor"] == str(ALICE_ID)
    return data


NOTES = (
    "# Saved memories\n"
    "- Prefers window seats on long flights\n"
    f"- My email password is {PASSWORD}\n"
    "- Takes insulin for type 1 diabetes\n"
    "* Prefers window seats on long flights\n"
    "1. Is learning Portuguese with a tutor on Tuesdays\n"
).encode()


async def test_a_credential_is_refused_unseen_and_health_waits_for_including_sensitive(harness: Harness) -> None:
    h = harness
    answered = await run_import(h.bot, ALICE, "chatgpt-memories.md", NOTES)
    text, message = preview_of(answered)
    assert PASSWORD not in text and "line 3: refused, it holds a password" in text
    assert "**Will be added** (2)" in text and "**Already known, skipped** (1)" in text
    assert "Takes insulin" in text and "(health)" in text
    on_disk = h.memory_path(ALICE_ID).read_bytes()
    assert PASSWORD.encode() not in on_disk and b"Prefers window seats" in on_disk  # pending, without the secret
    assert set(buttons(message)) == {"Import", "Import including sensitive", "Cancel"}

    done = await press(h, message, "Import", ALICE)
    assert "1 sensitive one was left out" in calls(done)[-1].content
    contents = [f["content"] for f in facts_on_disk(h)]
    assert contents == ["Prefers window seats on long flights", "Is learning Portuguese with a tutor on Tuesdays"]
    late = await press(h, message, "Import including sensitive", ALICE)  # already answered
    assert "expired or was already answered" in calls(late)[-1].content and len(facts_on_disk(h)) == 2

    again, message = preview_of(await run_import(h.bot, ALICE, "chatgpt-memories.md", NOTES))
    assert "**Already known, skipped** (3)" in again and "**Will be added**" not in again
    await press(h, message, "Import including sensitive", ALICE)
    contents = [f["content"] for f in facts_on_disk(h)]
    assert "Takes insulin for type 1 diabetes" in contents and len(contents) == 3
    assert PASSWORD.encode() not in h.memory_path(ALICE_ID).read_bytes()


async def test_the_buttons_work_after_a_restart_and_cancel_keeps_nothing(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data)
    _, message = preview_of(await run_import(h.bot, ALICE, "notes.txt", b"Runs a small pottery studio\n"))
    await h.close()
    restarted = await make_harness(data_dir=data)
    done = await press(restarted, message, "Import", ALICE)
    assert calls(done)[-1].content.startswith("Imported 1 memory:")
    assert [f["content"] for f in facts_on_disk(restarted)] == ["Runs a small pottery studio"]
    _, second = preview_of(await run_import(restarted.bot, ALICE, "notes.txt", b"Keeps two cats\n"))
    cancelled = await press(restarted, second, "Cancel", ALICE)
    assert calls(cancelled)[-1].content == "Cancelled: nothing was imported."
    stored = restarted.memory_on_disk(ALICE_ID) or {}
    assert "pendingImport" not in stored and len(stored["facts"]) == 1


OTHER_EXPORT = json.dumps({"version": "2.0", "facts": [{"id": "fact_1", "content": "Bob's"}],
                           "exportedFor": str(BOB_ID)}).encode()


@pytest.mark.parametrize(
    ("filename", "data", "size", "answer"),
    [
        ("huge.txt", b"x\n", 2 * 1024 * 1024, "at most 1 MB"),
        ("latin1.txt", "Café au lait every morning\n".encode("latin-1"), None, "not UTF-8"),
        ("memories.zip", b"PK\x03\x04" + b"\0" * 40, None, "a zip archive"),
        ("photo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 40, None, "an image"),
        ("data.json", b'{"memories": ["Likes tea"]}', None, "not a /memory export"),
        ("bob.json", OTHER_EXPORT, None, "someone else's memory export"),
        ("empty.md", b"# Memories\n\n---\n", None, "no memories to import"),
        ("many.txt", "".join(f"Fact number {n} about my hobbies\n" for n in range(6)).encode(), None,
         "That is 6 new memories, but only 3 more fit (I keep at most 3 facts)"),  # a learned fact gives way
    ],
)
async def test_each_bad_file_gets_one_line_and_nothing_is_stored(
    make_harness: MakeHarness, filename: str, data: bytes, size: int | None, answer: str
) -> None:
    h = await make_harness(memory_max_facts=3)
    await seed_memory(h.memory, ALICE_ID, ["Lives in Lisbon"])
    before = h.memory_path(ALICE_ID).read_bytes()
    answered = await run_import(h.bot, ALICE, filename, data, size=size)
    [_, reply] = calls(answered)
    assert reply.name == "followup.send" and answer in reply.content and "Nothing was imported" in reply.content
    assert "\n" not in reply.content and "Traceback" not in reply.content
    assert h.memory_path(ALICE_ID).read_bytes() == before
    if size is not None:
        assert answered.extras["fetched"] == []  # over the limit: never downloaded


async def test_at_the_cap_learned_facts_make_way_for_imported_ones_and_the_users_own_stay(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(memory_max_facts=3)
    await seed_memory(h.memory, ALICE_ID, ["Lives in Lisbon near the river", "Works in a bakery on weekdays"])
    own = await h.memory.user(ALICE_ID).add("Hates coriander in every dish", place=Place.dm())
    text, message = preview_of(await run_import(h.bot, ALICE, "notes.txt", b"Keeps two cats\nRuns marathons\n"))
    assert "**Will be added** (2)" in text
    await press(h, message, "Import", ALICE)
    contents = {f["content"]: f.get("origin", "") for f in facts_on_disk(h)}
    assert contents == {own.content: "user", "Keeps two cats": "imported", "Runs marathons": "imported"}
    answered = await run_import(h.bot, ALICE, "more.txt", b"Plays the oboe\n")
    assert "only 0 more fit" in calls(answered)[-1].content and len(facts_on_disk(h)) == 3
