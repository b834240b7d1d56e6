"""Nothing leaks between users, through the whole chat → memory → commands pipeline.

Three people talk to the bot at once, interleaved at random (seeded) in a shared channel, a second channel, a
thread and their DMs: by @mention, by replying to the bot, and in plain chatter the bot does not answer. Every
message carries a unique token `secret-<user id>-<n>`. The scripted models are the worst case: the extraction
model turns every token it sees in its request into a fact and a summary, and the chat model repeats every token
it finds in its system prompt and in the message it answers. So one token in the wrong place anywhere (a batch
mixing users, a prompt carrying someone else's memory, a command reading the wrong file) spreads into a file or
an output, where the checks below find it.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.cogs.conftest import ALICE_ID, BOB_ID, CAROL_ID, MakeHarness
from tests.helpers import (
    Harness,
    calls,
    extraction_input,
    make_guild,
    make_interaction,
    make_member,
    make_user,
    memory_text,
    owners_in,
    tokens_in,
)
from tests.support.llm_server import extraction, reply

NAMES = {ALICE_ID: "Alice", BOB_ID: "Bob", CAROL_ID: "Carol"}
BY_NAME = {name: uid for uid, name in NAMES.items()}
WORDS = ["kayak", "tulip", "violin", "lantern", "cactus", "pretzel", "glacier", "falcon", "origami", "saffron"]


def worst_case_extraction(body: dict[str, Any]) -> Any:
    """Obeys the data: every token in the request becomes a fact, and all of them the top-of-mind summary."""
    payload = extraction_input(body)
    tokens = sorted(tokens_in(json.dumps(payload)))
    facts = [(f"Remembers the code {token} for the {token.split('-')[-1]} time", "context", 0.95) for token in tokens]
    return extraction(facts=facts, top=" ".join(tokens) or None)


def echoing_chat(body: dict[str, Any]) -> Any:
    """Repeats every token of its system prompt and of the message it answers (not the channel's history)."""
    seen = tokens_in(memory_text(body)) | tokens_in(str(body["messages"][-1]["content"]))
    return reply("Noted: " + " ".join(sorted(seen)) if seen else "Noted.")


@dataclass
class World:
    h: Harness
    rng: random.Random
    guild: Any = None
    places: dict[str, Any] = field(default_factory=dict)
    members: dict[int, Any] = field(default_factory=dict)
    users: dict[int, Any] = field(default_factory=dict)
    dms: dict[int, Any] = field(default_factory=dict)
    counter: int = 0
    addressed: dict[str, tuple[int, str]] = field(default_factory=dict)  # token -> (author, "dm" | "guild")
    chatter: set[str] = field(default_factory=set)  # tokens in messages the bot was not asked about

    def setup(self) -> None:
        d = self.h.discord
        self.guild = make_guild()
        general = d.text_channel(self.guild, name="general")
        self.places = {"general": general, "random": d.text_channel(self.guild, name="random"),
                       "thread": d.thread(general)}
        for uid, name in NAMES.items():
            self.users[uid] = make_user(uid, name)
            self.members[uid] = make_member(self.users[uid], self.guild)
            self.dms[uid] = d.dm(self.users[uid])

    def text(self, uid: int) -> tuple[str, str]:
        self.counter += 1
        token = f"secret-{uid}-{self.counter}"
        # a nickname, not a code: a code given as such is a credential, and the gate cuts it
        return token, f"my {self.rng.choice(WORDS)} nickname is {token}, please keep it in mind"

    def next_message(self) -> Any:
        d, rng = self.h.discord, self.rng
        uid = rng.choice(list(NAMES))
        token, text = self.text(uid)
        where = rng.choice(["dm", "general", "random", "thread"])
        if where == "dm":
            self.addressed[token] = (uid, "dm")
            return d.message(self.dms[uid], self.users[uid], text)
        channel, author = self.places[where], self.members[uid]
        how = rng.choice(["mention", "mention", "reply", "chatter"])
        bot_messages = [s.message for s in d.bot_messages(channel)]
        if how == "chatter":
            self.chatter.add(token)
            return d.message(channel, author, text)
        self.addressed[token] = (uid, "guild")
        if how == "reply" and bot_messages:
            target = rng.choice(bot_messages)
            return d.reply_to(channel, author, target, text, resolved=rng.random() < 0.5)
        return d.mention_bot(channel, author, text)


async def converse(h: Harness, seed: int, rounds: int) -> World:
    world = World(h, random.Random(seed))
    world.setup()
    for _ in range(rounds):
        burst = [world.next_message() for _ in range(world.rng.randint(1, 5))]
        await asyncio.gather(*(h.chat.on_message(message) for message in burst))
        if world.rng.random() < 0.4:
            await h.settle()
    await h.settle()
    return world


def assert_only(text: str, uid: int, what: str) -> None:
    strangers = owners_in(text) - {uid}
    assert not strangers, f"{what} of {NAMES[uid]} holds tokens of {[NAMES.get(s, s) for s in strangers]}"


@pytest.mark.parametrize("seed", [7, 1234, 99991])
async def test_no_user_ever_sees_or_keeps_another_users_words(make_harness: MakeHarness, seed: int) -> None:
    h = await make_harness(history_messages=30)
    h.llm.extract = worst_case_extraction
    h.llm.chat_reply = echoing_chat
    world = await converse(h, seed, rounds=8)

    # It really happened: people were answered, batches were extracted, files were written.
    assert len(h.llm.chat_requests) == len(world.addressed) >= 10
    assert h.llm.extraction_requests

    # Memory files: own tokens only; chatter the bot was not asked about is learned by nobody.
    for uid in NAMES:
        text = h.memory_path(uid).read_text() if h.memory_path(uid).exists() else ""
        assert_only(text, uid, "memory file")
        assert not tokens_in(text) & world.chatter
        spoke = {token for token, (author, _) in world.addressed.items() if author == uid}
        if spoke:
            assert tokens_in(text) & spoke, f"{NAMES[uid]} spoke but nothing was learned"

    # Reply prompts: the memory (the profile in the system prompt, the facts ending the newest message) carries
    # the speaker's memory only; in a DM the whole prompt is theirs (the channel history in a server is public
    # context, labelled by name).
    for body in h.llm.chat_requests:
        said = str(body["messages"][-1]["content"]).split("\n\n<user_memory", 1)[0]  # before the facts block
        speaker = BY_NAME[said.split(":", 1)[0]]
        assert_only(memory_text(body), speaker, "reply memory")
        [token] = tokens_in(said)
        if world.addressed[token][1] == "dm":
            assert_only(json.dumps(body["messages"]), speaker, "DM reply prompt")

    # Extraction requests: one user's turns (and the bot's answers to them) and that user's memory only.
    for body in h.llm.extraction_requests:
        turns = extraction_input(body)["newTurns"]
        speakers = {t["name"] for t in turns if t["speaker"] == "user"}
        assert len(speakers) == 1 and {t["speaker"] for t in turns} <= {"user", "assistant"}
        [name] = speakers
        assert_only(json.dumps(body["messages"]), BY_NAME[name], "extraction request")
        assert not tokens_in(json.dumps(body["messages"])) & world.chatter

    # Commands: /memory show, export and the forget autocomplete read the caller's memory only.
    cog: Any = h.memory_cog  # discord.py types `autocomplete` handlers as unbound
    for uid, user in world.users.items():
        shown = make_interaction(user, guild=world.guild)
        await cog.show.callback(cog, shown)
        for call in calls(shown):
            embed, attachment = call.kwargs.get("embed"), call.kwargs.get("file")
            assert_only(call.content + json.dumps(embed.to_dict() if embed else {}), uid, "/memory show")
            if attachment is not None:
                assert_only(attachment.fp.read().decode(), uid, "/memory show attachment")
        exported = make_interaction(user)
        await cog.export.callback(cog, exported)
        assert_only(calls(exported)[-1].kwargs["file"].fp.read().decode(), uid, "/memory export")
        for typed in ("", "secret", "code"):
            choices = await cog.forget_autocomplete(make_interaction(user), typed)
            assert_only(" ".join(c.name + " " + c.value for c in choices), uid, "autocomplete")
