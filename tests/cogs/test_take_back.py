"""Taking back reaches every copy (DESIGN section 15), through the bot's real dispatch, on files and on PostgreSQL,
with a model that restates, paraphrases and repeats what it once saw (`tests.support.hostile`).

- `/memory forget fact:` takes the fact's words out of every summary of every place, current and earlier values,
  in the same step: no stored byte or row holds them afterwards, and no later prompt carries them;
- what was forgotten does not come back: not as the model's paraphrase of it, not through the bot's own reply that
  repeated it, not through a summary that repeats the conversation; the fingerprint it leaves holds no text;
- the user saying it again in a new message is learned as usual.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.cogs.conftest import ALICE_ID, MakeHarness
from tests.cogs.test_guarantees import SEED, hostile_bot, memory_text
from tests.cogs.test_guarantees import memory_of as raw_memory_of
from tests.helpers import dispatch, last_text, make_interaction, run_slash
from tests.support.hostile import HostileModel
from tests.support.storage import everything_stored, stored_text

NURSE_SAID = "I work night shifts as a nurse at Saint Mary hospital in Dublin."
NURSE_FACT = "Works night shifts as a nurse at Saint Mary hospital in Dublin"
CHOIR_SAID = "I also sing in a choir on Sundays."
CHOIR_FACT = "Sings in a choir on Sundays"
PARAPHRASE = "Does nights as a Dublin nurse at Saint Mary"  # the model's own retelling, whatever it was told
AGAIN_SAID = "Actually yes, I still work night shifts as a nurse in Dublin."
AGAIN_FACT = "Works night shifts as a nurse in Dublin"
FORGOTTEN_WORDS = re.compile(r"nurse|saint mary|dublin", re.IGNORECASE)




async def memory_of(h: Any, user_id: int) -> list[dict[str, Any]]:
    """The user's memory documents: the raw files or rows, or, sealed, what `/memory export` gives."""
    if h.settings.memory_encryption_key is None:
        return await raw_memory_of(h, user_id)
    return [json.loads(await h.memory.user(user_id).export())]


def story(text: str, name: str) -> list[str]:
    """What the model takes from each of Alice's messages: the nurse fact, the choir fact, the nurse fact said
    again; and, for anything else, its own paraphrase of the nurse fact (a model that never forgets)."""
    if text == NURSE_SAID:
        return [NURSE_FACT]
    if text == CHOIR_SAID:
        return [CHOIR_FACT]
    if text == AGAIN_SAID:
        return [AGAIN_FACT]
    return [PARAPHRASE]


async def stored(h: Any) -> str:
    return stored_text(await everything_stored(h.settings))


async def test_forget_fact_takes_its_words_out_of_every_summary_and_they_do_not_come_back(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED, facts_of=story, remove_chance=0, restate_chance=0)
    h, scene, clock = await hostile_bot(make_harness, storage, model)
    for said in (NURSE_SAID, CHOIR_SAID):
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, said))
        await h.settle()
        clock.advance(minutes=2)
    [doc] = await memory_of(h, ALICE_ID)
    nurse = next(f for f in doc["facts"] if f["content"] == NURSE_FACT)
    summaries = json.dumps([doc["user"], doc["history"]])
    assert "nurse" in doc["user"]["workContext"]["summary"]  # the model wrote the fact into the summaries...
    assert "previous" in doc["user"]["workContext"] and "nurse" in json.dumps(doc["user"]["workContext"]["previous"])
    assert "choir" in summaries  # ...next to what stays

    forgot = await run_slash(h.bot, make_interaction(scene.alice_user), "memory forget", fact=nurse["id"])
    assert last_text(forgot).startswith(f"Forgotten: `{nurse['id']}`")
    assert not FORGOTTEN_WORDS.search(await stored(h))  # no summary, earlier value, fact or row keeps a word of it
    [doc] = await memory_of(h, ALICE_ID)
    assert [f["content"] for f in doc["facts"] if "choir" in f["content"]] == [CHOIR_FACT]
    assert doc["forgotten"] and not FORGOTTEN_WORDS.search(json.dumps(doc["forgotten"]))  # a print, no text

    # The model paraphrases the fact into a new one, the bot's reply repeats the DM's history (which still has
    # Alice's first message), and the summaries repeat that reply: none of it is stored.
    clock.advance(minutes=2)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "Lovely weather today."))
    await h.settle()
    assert "nurse" in json.dumps(h.llm.chat_requests[-1]).lower()  # the history still showed the words...
    assert model.stats["summaries_rewritten"] >= 18
    assert not FORGOTTEN_WORDS.search(json.dumps(await memory_of(h, ALICE_ID)))  # ...and nothing learned them
    clock.advance(minutes=2)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "Any plans for Sunday?"))
    assert not FORGOTTEN_WORDS.search(memory_text(h.llm.chat_requests[-1]))  # no prompt's memory carries them
    await h.settle()

    # Alice says it again herself, in a new message: that is learned.
    clock.advance(minutes=2)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, AGAIN_SAID))
    await h.settle()
    [doc] = await memory_of(h, ALICE_ID)
    assert AGAIN_FACT in [f["content"] for f in doc["facts"]]
    assert PARAPHRASE not in json.dumps(doc)


# --- a Discord edit rewinds the summaries its message changed, then learns the new text ---------------------

DUBLIN_SAID = "I live in Dublin and work as a nurse."
CORK_SAID = "I live in Cork and work as a baker."


def moving_story(text: str, name: str) -> list[str]:
    if text == CHOIR_SAID:
        return [CHOIR_FACT]
    return {DUBLIN_SAID: ["Lives in Dublin and works as a nurse"], CORK_SAID: ["Lives in Cork, works as a baker"]}.get(
        text, []
    )


async def test_a_discord_edit_takes_the_old_words_out_of_the_summaries_then_learns_the_new_ones(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    from tests.cogs.test_deletes import edited

    model = HostileModel(SEED, facts_of=moving_story, remove_chance=0, restate_chance=0)
    h, scene, clock = await hostile_bot(make_harness, storage, model)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, CHOIR_SAID))
    await h.settle()
    clock.advance(minutes=2)
    message = h.discord.message(scene.alice_dm, scene.alice_user, DUBLIN_SAID)
    await dispatch(h.bot, "message", message)
    await h.settle()
    [doc] = await memory_of(h, ALICE_ID)
    assert "Dublin" in doc["user"]["workContext"]["summary"]  # the summaries carry the old words

    clock.advance(minutes=2)
    await dispatch(h.bot, "raw_message_edit", edited(message, CORK_SAID, cached=False))
    await h.settle()
    [doc] = await memory_of(h, ALICE_ID)
    assert not re.search(r"dublin|nurse", json.dumps(doc), re.IGNORECASE)  # no fact, summary or earlier value
    assert "Cork" in doc["user"]["workContext"]["summary"]  # the new text is learned
    assert "Lives in Cork, works as a baker" in [f["content"] for f in doc["facts"]]
    assert CHOIR_FACT in [f["content"] for f in doc["facts"]]
