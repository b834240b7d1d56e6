"""What the gates withhold, in the wordings an extraction model writes, through the bot's real dispatch on files and
PostgreSQL, in the clear and encrypted, with a model that writes down whatever it knows (`tests.support.hostile`):

- a password, passphrase or key in one text, as models word it ("Their Wi-Fi password is now sunflower42",
  "password is: ...", "is still ...", "— ...", a passphrase that starts with a common word, and wordings only the
  trained reader reads: "Their router admin page still uses admin / Marzipan77") is never stored, in a fact or a
  summary, while ordinary talk about keys and password managers is;
- a value given before its name ("Kingfisher#31" … "thats my new email password") is never written down, not
  even while its message waits to be learned, and a lone word that names nothing is still learned;
- a reply that quotes a secret from the channel's history (said while the bot was away) is learned without it;
- a sensitive detail inside a longer fact ("Works night shifts as a nurse in Dublin while pregnant") is not stored
  unless the user asked, and is when they do; so is a sensitive fact in words no pattern names, which only the
  trained reader finds ("Their hardship fund application was approved so they can pay rent").

Every stored byte and row is read; encrypted, what `/memory export` gives too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from bot.memory.rules.sensitive import pattern_categories
from tests.cogs.conftest import ALICE_ID, MakeHarness
from tests.cogs.test_guarantees import SEED, hostile_bot
from tests.cogs.test_guarantees import memory_of as raw_memory_of
from tests.helpers import dispatch
from tests.support.engine import parts
from tests.support.hostile import HostileModel
from tests.support.llm_server import reply
from tests.support.storage import everything_stored, stored_text


async def everything(h: Any) -> str:
    """Every stored byte and row, after the pending turns are compacted; encrypted, the export as well."""
    await parts(h.memory).storage.turns.compact()
    text = stored_text(await everything_stored(h.settings))
    if h.settings.memory_encryption_key is not None:
        text += (await h.memory.user(ALICE_ID).export()).decode()
    return text


async def facts_of_alice(h: Any) -> list[str]:
    if h.settings.memory_encryption_key is None:
        [doc] = await raw_memory_of(h, ALICE_ID)
    else:
        doc = json.loads(await h.memory.user(ALICE_ID).export())
    return [fact["content"] for fact in doc["facts"]]


# --- single texts in a model's wordings ------------------------------------------------------------------------

# What Alice says (cut before it waits), and what the model writes anyway, knowing the value.
WORDINGS = {
    "my wifi password is now sunflower42": "Their Wi-Fi password is now sunflower42",
    "email password is: Tr0ub4dor&3": "Their email password is: Tr0ub4dor&3",
    "the NAS password is still plum-Harbor-73": "The NAS admin password is still plum-Harbor-73",
    "steam password — lanternfish2020": "Steam password — lanternfish2020",
    "my vault passphrase is the yellow canoe drifts at midnight":
        "Their master passphrase is the yellow canoe drifts at midnight",
    # Facts no pattern reads as holding a password; the trained reader does (the messages are cut on arrival).
    "hulu sign in is jo.m@posteo.de with Pineapple#2024": "User's Hulu sign-in: jo.m@posteo.de with Pineapple#2024",
    "the router admin page is still admin / Marzipan77": "Their router admin page still uses admin / Marzipan77",
}
SECRETS = ("sunflower42", "Tr0ub4dor&3", "plum-Harbor-73", "lanternfish2020", "yellow canoe drifts", "Pineapple#2024",
           "Marzipan77")
TECHNICAL = {
    "the API key rotation at work runs nightly": "The API key rotation at work runs nightly",
    "I keep everything in password managers like Bitwarden": "Keeps passwords in password managers like Bitwarden",
}


def writes_what_it_knows(text: str, name: str) -> list[str]:
    """The model's fact for each message, written from what it knows rather than what it was shown (the value)."""
    for said, fact in {**WORDINGS, **TECHNICAL}.items():
        if text.split(" is", 1)[0] == said.split(" is", 1)[0] and text[:12] == said[:12]:
            return [fact]
    return []


async def test_a_credential_in_a_models_wording_is_never_stored_and_talk_about_keys_is(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED, facts_of=writes_what_it_knows, remove_chance=0, restate_chance=0)
    h, scene, clock = await hostile_bot(make_harness, storage, model)
    # Replies that quote the secrets from the channel history are another path (see SECURITY.md): here the model
    # writes what it knows into facts and summaries only.
    h.llm.chat_reply = lambda body: reply("Noted.")
    for said in (*WORDINGS, *TECHNICAL):
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, said))
        await h.settle()
        clock.advance(minutes=2)
    shown = json.dumps(h.llm.extraction_requests)
    assert "removed]" in shown and not any(secret in shown for secret in SECRETS)  # cut before the model saw them
    assert model.stats["summaries_rewritten"] > 0

    stored = await everything(h)
    assert not [secret for secret in SECRETS if secret in stored]
    facts = await facts_of_alice(h)
    assert any("API key rotation at work runs nightly" in fact for fact in facts)  # the model's rewording
    assert any("password managers like Bitwarden" in fact for fact in facts)
    assert not [fact for fact in facts if any(secret in fact for secret in SECRETS)]


# --- a value before its name -----------------------------------------------------------------------------------

VALUE, NAMED = "Kingfisher#31", "thats my new email password dont forget it"
LONE = "NightPancake77"  # Alice's gamertag, answered on its own: nothing names it a password


def tells_the_gamertag(text: str, name: str) -> list[str]:
    return [f"Their gamertag is {LONE}"] if text == LONE else []


async def test_a_value_given_before_its_name_is_never_written_down(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED, facts_of=tells_the_gamertag, remove_chance=0, restate_chance=0)
    waits = {"memory_debounce_seconds": 30, "memory_max_wait_seconds": 60}  # the turns wait on disk
    h, scene, _ = await hostile_bot(make_harness, {**storage, **waits}, model)
    for text in (VALUE, NAMED):
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
    assert parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)
    waiting = stored_text(await everything_stored(h.settings))
    assert VALUE not in waiting
    if h.settings.memory_encryption_key is None:
        assert NAMED in waiting and "[password removed]" in waiting  # the turns wait, the value does not

    await h.memory.ops.flush(10)
    await h.settle()
    assert VALUE not in json.dumps(h.llm.extraction_requests)  # the batch read whole: the name points back
    assert VALUE not in await everything(h)

    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, LONE))
    assert LONE not in stored_text(await everything_stored(h.settings))  # written down cut, just in case...
    await h.memory.ops.flush(10)
    await h.settle()
    assert LONE in json.dumps(h.llm.extraction_requests[-1])  # ...but learned from the turn kept in RAM
    assert f"Their gamertag is {LONE}" in await facts_of_alice(h)


# --- a reply that quotes a secret from the channel's history ------------------------------------------------------

OLD_SECRET = "Marigold-Kettle-58"


async def test_a_reply_quoting_a_secret_from_the_history_is_never_written_down(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    model = HostileModel(SEED, remove_chance=0, restate_chance=0)
    h, scene, clock = await hostile_bot(make_harness, storage, model)
    # Said while the bot was away: in the DM's history, never handed to the memory engine.
    h.discord.message(scene.alice_dm, scene.alice_user, f"my router password is {OLD_SECRET}")
    clock.advance(minutes=1)
    quoted: list[str] = []

    def quotes_the_history(body: dict[str, Any]) -> Any:
        quoted.append(json.dumps(body["messages"]))
        return reply(f"Sure, here it is again: {OLD_SECRET} (the one from your earlier message).")

    h.llm.chat_reply = quotes_the_history
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "what was it again?"))
    await h.settle()
    assert OLD_SECRET in quoted[-1]  # the chat model was shown the history and quoted it
    assert h.llm.extraction_requests  # the exchange was learned...
    assert "here it is again" in json.dumps(h.llm.extraction_requests)
    assert OLD_SECRET not in json.dumps(h.llm.extraction_requests)  # ...without the value the reply quoted
    assert OLD_SECRET not in await everything(h)


# --- sensitive data the model did not mark: a detail inside a longer fact, and words no pattern names --------------


@dataclass(frozen=True)
class Told:
    """What Alice says, the fact the model writes from it, how she asks to keep it, and the word that must not be
    stored until she does; `patterns_miss`: only the trained reader beside the patterns finds it."""

    said: str
    fact: str
    asked: str
    word: str
    patterns_miss: bool


TOLD = {
    "a detail inside a longer fact": Told(
        "I work night shifts as a nurse in Dublin, and I'm pregnant.",
        "Works night shifts as a nurse in Dublin while pregnant",
        "Please remember that I'm pregnant, I work night shifts as a nurse in Dublin.", "pregnant", False),
    "words no pattern names": Told(
        "they approved my hardship fund application so I can pay rent",
        "Their hardship fund application was approved so they can pay rent",
        "Please remember that they approved my hardship fund application so I can pay rent.", "hardship", True),
}


@pytest.mark.parametrize("told", TOLD.values(), ids=TOLD.keys())
async def test_sensitive_data_is_stored_only_when_asked(
    told: Told, storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    """In the fact and in the summaries that quote what the user said; with no pattern for the words, the trained
    reader finds them (no debt, benefit or figure in "hardship fund")."""
    assert (pattern_categories(told.fact) == frozenset()) == told.patterns_miss

    def story(text: str, name: str) -> list[str]:
        return [told.fact] if told.word in text else []

    model = HostileModel(SEED, facts_of=story, remove_chance=0, restate_chance=0)
    h, scene, clock = await hostile_bot(make_harness, storage, model)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, told.said))
    await h.settle()
    assert told.word in json.dumps(h.llm.extraction_requests)  # the model was told, and wrote it down
    assert model.stats["summaries_rewritten"] > 0
    assert told.word not in (await everything(h)).lower()  # no fact, summary, earlier value or pending turn

    clock.advance(minutes=2)
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, told.asked))
    await h.settle()
    assert told.fact in await facts_of_alice(h)  # asked for: kept
