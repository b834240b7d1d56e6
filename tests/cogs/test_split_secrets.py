"""A password given over two messages ("I changed my wifi password again" … "it's now sunflower42 lol"), through the
bot's real dispatch, on files and on PostgreSQL: it is never journaled, never shown to the extraction model and
never stored, even when the model writes it anyway (split over two facts and a summary, as a person splits it
over messages), and the chat model's replies that repeat it are not learned. Every stored byte and row is read."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.helpers import dispatch, extraction_input
from tests.support.engine import parts
from tests.support.llm_server import extraction, reply
from tests.support.storage import everything_stored, memory_documents, stored_text

SECRET = "sunflower42"
NAMED, GIVEN = "I changed my wifi password again", f"it's now {SECRET} lol"


@pytest.fixture(params=["files", "postgres"])
def storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Settings for each backend. Ask for it before `make_harness`, so the bots close before the database goes."""
    if request.param == "postgres":
        return {"database_url": request.getfixturevalue("postgres_url")}
    return {}


def leaks_it_anyway(body: dict[str, Any]) -> Any:
    """A hostile model that knows the secret without being shown it: it writes it in one fact of its own, split
    over two facts, and in a summary whose sentences only together give it."""
    said = [t["text"] for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    facts: list[Any] = [(f"Said: {text}", "context", 0.95) for text in said]
    facts += [("Changed their wifi password again", "context", 0.95),
              (f"The new one is {SECRET}", "context", 0.95),
              (f"Their Wi-Fi password is now {SECRET}", "context", 0.95),
              ("Keeps chickens in the garden", "personal", 0.95)]
    return extraction(facts=facts, personal=f"Changed the wifi password. It is now {SECRET}. Keeps chickens.")


def last_said(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


async def test_a_password_split_over_two_messages_is_not_journaled_shown_or_stored(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    h = await make_harness(memory_debounce_seconds=30, memory_max_wait_seconds=60, **storage)  # the turns wait
    scene = make_scene(h)
    h.llm.extract = leaks_it_anyway
    h.llm.chat_reply = lambda body: reply(f"Noted: {last_said(body)}")  # a reply that repeats what it was told
    for text in (NAMED, GIVEN, "also I keep chickens in the garden"):
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
    assert parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)

    waiting = stored_text(await everything_stored(h.settings))
    assert "I changed my wifi password again" in waiting  # the turns are journaled, the secret is not
    assert "it's now [password removed] lol" in waiting
    assert SECRET not in waiting

    await h.memory.ops.flush(10)
    await h.settle()
    [request] = h.llm.extraction_requests
    assert SECRET not in str(request) and "removed]" in str(request)

    records = await everything_stored(h.settings)
    assert SECRET not in stored_text(records), [r.where for r in records if SECRET in r.text]
    [doc] = [doc for user, _, doc in memory_documents(records) if user == ALICE_ID]
    contents = sorted(fact["content"] for fact in doc["facts"])
    assert "Changed their wifi password again" in contents and "Keeps chickens in the garden" in contents
    assert not any("The new one is" in content or "Wi-Fi password is now" in content for content in contents)
    assert SECRET not in doc["user"]["personalContext"]["summary"]

    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "what did I change?"))
    assert "Changed their wifi password again" in str(h.llm.chat_requests[-1]["messages"])
    await h.memory.ops.flush(10)
    await h.settle()
    assert SECRET not in stored_text(await everything_stored(h.settings))
