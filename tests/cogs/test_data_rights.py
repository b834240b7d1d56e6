"""Credentials are never stored and sensitive data only on request, through the bot's real dispatch: messages into
`bot.dispatch`, an extraction model that writes down everything it is told (the worst case), slash commands into the
command tree."""

from __future__ import annotations

from typing import Any

from tests.cogs.conftest import ALICE_ID, Scene
from tests.helpers import calls, dispatch, extraction_input, make_interaction, make_user, run_slash
from tests.support.engine import parts
from tests.support.llm_server import extraction

KEY = "sk-proj-4fQz9LmN2xVb7KpR1sTy8WcD3eHg6JuA0iOk5nMl"
CARD = "4539 1488 0343 6467"


def writes_everything_down(body: dict[str, Any]) -> Any:
    """An obedient model: every user line becomes a fact (marking the health ones, forgetting to mark the rest) and
    the Work summary repeats them all."""
    said = [t["text"] for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    facts: list[Any] = []
    for text in said:
        if "diabetes" in text:
            facts.append({"content": "Has type 1 diabetes", "category": "context", "confidence": 0.95,
                          "sensitive": "health"})
        if "Catholic" in text:
            facts.append(("Is a practising Catholic", "context", 0.95))  # unmarked: the backstop's job
        if "sk-" in text:
            facts.append((f"Their OpenAI API key is {KEY}", "knowledge", 0.95))
        if "card" in text:
            facts.append((f"Pays with the card {CARD}", "context", 0.95))
        if "Go" in text:
            facts.append(("Writes Go microservices at work", "knowledge", 0.95))
    summary = " ".join(f"They said: {text}." for text in said) if said else None
    return extraction(facts=facts, work=summary)


def stored_text(scene: Scene) -> str:
    memory = scene.h.memory_on_disk(ALICE_ID)
    assert memory is not None
    return str(memory)


async def test_credentials_are_never_stored_and_sensitive_data_only_when_asked(scene: Scene) -> None:
    h, bot = scene.h, scene.h.bot
    h.llm.extract = writes_everything_down
    for text in (f"I write Go microservices. My OpenAI key is {KEY}, can you check it?",
                 f"my card is {CARD} btw",
                 "Please remember that I have type 1 diabetes.",
                 "Also I'm a practising Catholic."):
        await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
    await h.settle()
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None
    assert sorted(fact["content"] for fact in memory["facts"]) == ["Has type 1 diabetes",
                                                                   "Writes Go microservices at work"]
    text = stored_text(scene)
    assert KEY not in text and CARD not in text and "4539" not in text
    assert "Catholic" not in text  # said with the request (or after it), but never asked to be remembered
    # However the messages were batched, the summaries kept what they could: the sentences without a secret.
    assert memory["user"]["workContext"]["summary"].startswith("They said:")

    # The next batch has no request: something sensitive said now is not kept.
    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user,
                                                     "My diabetes has been bad this week, I'm Catholic by the way."))
    await h.settle()
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None and "Catholic" not in stored_text(scene)
    assert [fact["content"] for fact in memory["facts"]].count("Has type 1 diabetes") == 1

    export = await run_slash(bot, make_interaction(scene.alice_user), "memory export")
    assert calls(export), "export did not answer"
    assert KEY not in str(await h.memory.user(ALICE_ID).export())


async def test_remember_and_edit_refuse_a_credential_in_one_line_without_repeating_it(scene: Scene) -> None:
    h, bot = scene.h, scene.h.bot
    refused = await run_slash(bot, make_interaction(scene.alice_user), "memory remember",
                              text="my email password is Bluebird!7")
    answer = calls(refused)[-1].content
    assert "password" in answer and "Bluebird" not in answer and "\n" not in answer
    assert h.memory_on_disk(ALICE_ID) is None

    kept = await run_slash(bot, make_interaction(scene.alice_user), "memory remember",
                           text="I have type 1 diabetes")  # their own words: sensitive, and theirs to keep
    assert "Remembered" in calls(kept)[-1].content
    memory = h.memory_on_disk(ALICE_ID)
    assert memory is not None
    [fact] = memory["facts"]
    assert fact["content"] == "I have type 1 diabetes"

    edited = await run_slash(bot, make_interaction(scene.alice_user), "memory edit", fact=fact["id"],
                             text=f"I have type 1 diabetes, card {CARD}")
    answer = calls(edited)[-1].content
    assert "card number" in answer and CARD not in answer and "\n" not in answer
    assert h.memory_on_disk(ALICE_ID) == memory


async def test_a_secret_is_cut_from_a_message_before_it_waits_on_disk_or_reaches_the_extractor(
    make_harness: Any,
) -> None:
    h = await make_harness(memory_debounce_seconds=30, memory_max_wait_seconds=60)  # the turn waits on disk
    alice = make_user(ALICE_ID, "Alice")
    await dispatch(h.bot, "message", h.discord.message(h.discord.dm(alice), alice, f"my OpenAI key is {KEY} ok"))
    assert parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)
    on_disk = b"".join(p.read_bytes() for p in h.settings.data_dir.rglob("*") if p.is_file())
    assert KEY.encode() not in on_disk and b"my OpenAI key is" in on_disk  # the turn is there, its secret is not
    await h.memory.ops.flush(10)
    [request] = h.llm.extraction_requests
    assert KEY not in str(request) and "removed]" in str(request)
