"""A fact's vector follows every rule its words follow (DESIGN section 16), through the bot's real dispatch, on files
and PostgreSQL, in the clear and encrypted, with a real embedding model and a model that never forgets
(`tests.support.hostile`: it writes the fact back whatever it is told):

- forgetting the fact takes its vector out of every stored byte, and meaning does not bring the fact back;
- a Discord delete of the message that taught it takes the vector with the fact;
- under MEMORY_ENCRYPTION_KEY the vector is sealed like the words (vectors reveal text);
- what was learned in a DM is not recalled by meaning in a server's channel;
- a forget while the fact's vector is being computed wins: nothing comes back with a vector.
"""

from __future__ import annotations

import json
from typing import Any

from bot.memory.doors import ForgetEverything
from tests.cogs.conftest import ALICE_ID, MakeHarness
from tests.cogs.test_deletes import deleted
from tests.cogs.test_guarantees import SEED, hostile_bot
from tests.cogs.test_recall_by_meaning import OTHERS, PUPPY, PUPPY_SAID, QUESTION, embedding_settings
from tests.helpers import Harness, dispatch, last_text, make_interaction, memory_text, run_slash, seed_memory
from tests.support.embeddings import EmbeddingProxy
from tests.support.engine import parts, wait_vectors
from tests.support.hostile import HostileModel
from tests.support.storage import everything_stored, stored_text


def puppy_story(text: str, name: str) -> list[str]:
    """What the model takes from any of Alice's messages: the puppy, every time (it never forgets)."""
    return [PUPPY]


async def bot_that_learned_the_puppy(
    make_harness: MakeHarness, settings: dict[str, Any], embeddings: EmbeddingProxy
) -> tuple[Harness, Any, Any]:
    model = HostileModel(SEED, facts_of=puppy_story, remove_chance=0, restate_chance=0)
    h, scene, _ = await hostile_bot(make_harness, {**settings, **embedding_settings(embeddings)}, model)
    await seed_memory(h.memory, ALICE_ID, OTHERS)
    message = h.discord.message(scene.alice_dm, scene.alice_user, PUPPY_SAID)
    await dispatch(h.bot, "message", message)
    await h.settle()
    await wait_vectors(h.memory)
    return h, scene, message


async def puppy_as_stored(h: Harness) -> dict[str, Any]:
    """The puppy fact as the engine reads it (opened, when sealed)."""
    memory = await parts(h.memory).storage.memories.load(ALICE_ID)
    [found] = [fact for fact in memory.facts if fact.content == PUPPY]
    return found.model_dump(mode="json")


async def test_forgetting_a_fact_takes_its_vector_and_meaning_does_not_bring_it_back(
    storage: dict[str, Any], make_harness: MakeHarness, embeddings: EmbeddingProxy
) -> None:
    h, scene, _ = await bot_that_learned_the_puppy(make_harness, storage, embeddings)
    puppy = await puppy_as_stored(h)
    assert puppy["vector"] and puppy["vectorModel"]
    sealed = h.settings.memory_encryption_key is not None
    assert (puppy["vector"] in stored_text(await everything_stored(h.settings))) is not sealed  # sealed: not in clear

    forgot = await run_slash(h.bot, make_interaction(scene.alice_user), "memory forget", fact=puppy["id"])
    assert last_text(forgot).startswith(f"Forgotten: `{puppy['id']}`")
    stored = stored_text(await everything_stored(h.settings))
    assert puppy["vector"] not in stored and "beagle" not in stored.lower()

    # The question means the puppy; the model writes the puppy back after it: neither brings it back.
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, QUESTION))
    await h.settle()
    await wait_vectors(h.memory)
    assert "beagle" not in memory_text(h.llm.chat_requests[-1]).lower()
    memory = await parts(h.memory).storage.memories.load(ALICE_ID)
    assert not [fact for fact in memory.facts if "beagle" in fact.content]
    assert all(fact.vector for fact in memory.facts)  # the others keep theirs


async def test_a_deleted_message_takes_the_vector_of_what_it_taught(
    storage: dict[str, Any], make_harness: MakeHarness, embeddings: EmbeddingProxy
) -> None:
    h, _, message = await bot_that_learned_the_puppy(make_harness, storage, embeddings)
    vector = (await puppy_as_stored(h))["vector"]

    await dispatch(h.bot, "raw_message_delete", deleted(message, cached=False))
    await h.settle()

    memory = await parts(h.memory).storage.memories.load(ALICE_ID)
    assert not [fact for fact in memory.facts if "beagle" in fact.content]
    assert vector not in stored_text(await everything_stored(h.settings))


async def test_what_a_dm_taught_is_not_recalled_by_meaning_in_a_server(
    make_harness: MakeHarness, embeddings: EmbeddingProxy
) -> None:
    h, scene, _ = await bot_that_learned_the_puppy(make_harness, {}, embeddings)
    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, QUESTION))
    assert len(h.llm.chat_requests) == 2
    assert "beagle" not in json.dumps(h.llm.chat_requests[-1]).lower()
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, QUESTION))
    assert "beagle" in memory_text(h.llm.chat_requests[-1]).lower()  # the same question in her DM: recalled


async def test_a_forget_while_the_vectors_are_computed_wins(
    storage: dict[str, Any], make_harness: MakeHarness, embeddings: EmbeddingProxy
) -> None:
    model = HostileModel(SEED, facts_of=puppy_story, remove_chance=0, restate_chance=0)
    h, scene, _ = await hostile_bot(make_harness, {**storage, **embedding_settings(embeddings)}, model)
    embeddings.hang()
    embeddings.arrived.clear()
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, PUPPY_SAID))
    await h.settle()
    keeper = parts(h.memory).keeper
    assert keeper is not None
    while not any(seen.input_type == "passage" for seen in embeddings.requests):
        embeddings.arrived.clear()
        await embeddings.arrived.wait()  # the keeper's request for the puppy's words is held at the endpoint

    await h.memory.user(ALICE_ID).forget(ForgetEverything())
    embeddings.recover()  # its vectors come back after the forget
    await wait_vectors(h.memory)

    memory = await parts(h.memory).storage.memories.load(ALICE_ID)
    assert memory.facts == []
    assert "beagle" not in stored_text(await everything_stored(h.settings)).lower()
