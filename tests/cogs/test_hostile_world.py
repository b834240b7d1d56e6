"""A randomised world with a hostile model, through the bot's real dispatch, on files and on PostgreSQL.

Three users talk to the bot in their DMs and in two servers: public channels, restricted channels, public and
private threads. They share and unshare facts, and forget one fact, one summary, the last minutes or everything
while a reply is being written, an extraction is in flight and another batch waits behind it (the test server's
`Gate` holds those answers until the forget has been answered). The model (`tests.support.hostile`) restates
facts with new details, repeats everything it is shown, reasons aloud and names other people.

Twice a user imports a notes file (`/memory import`): its memory must stay as imported whatever the model does,
and the password line in it must never be stored or reach the model.

Every message carries a token (`tok-a-12-q`: Alice's 12th) and the test knows where each was said. The rules are
written here, independently of the engine (DESIGN section 7's table, section 8's forgets):
- a chat prompt's memory blocks carry only what its user said or heard, and nothing from a place the reply's
  place may not read (a DM reads everything of that user's; a public channel of server G reads G's public memory;
  a restricted channel C of G reads C and G's public memory; a shared fact is read everywhere);
- an extraction request shows only what its batch's place may read, and only that user's turns and the bot's
  replies to them;
- every stored item (the raw bytes of every file under DATA_DIR; on PostgreSQL every row) respects the same rule
  for the place it is stored under, and text outside such items holds no token at all;
- nothing forgotten comes back: a token that a forget removed from the user's memory appears there again only if
  the conversation showed it to the model again afterwards (a later message, the channel history), or, after
  `minutes:`, if it was said before the window and still waiting to be learned; a forgotten fact's tokens never
  come back at all (its fingerprint holds against the bot's replies and the history repeating them, the
  model's paraphrases and summaries, and the user's words from before the forget: DESIGN section 15); the
  forgotten fact's words never come back as a new fact, and what the held extraction would have written never
  lands in the cleared summary. After each forget of a fact its user replies into the chain of the message that
  taught it, so the bot's reply and the chain show the model the forgotten words again.
  What a forget promises holds the moment it answers (the fact gone, the summary empty in every place, nothing of
  the user left, nothing learned in the window left but a detail that a same-place merge gave an older fact), and
  a reply written during a wipe leaves no record behind.
- a password a user gives over two messages (the name in one, the value in the next) reaches no extraction, no
  memory block of any prompt and no stored record, though the model and the replies repeat what they are shown.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.cogs.conftest import ALICE_ID, BOB_ID, CAROL_ID, MakeHarness
from tests.helpers import (
    Clock,
    Harness,
    calls,
    dispatch,
    make_guild,
    make_interaction,
    make_member,
    make_user,
    press_through_discord,
    run_slash,
)
from tests.support.engine import parts
from tests.support.hostile import (
    REASONING_MARK,
    SECTIONS,
    HostileModel,
    memory_blocks,
    reworded,
    without_memory,
)
from tests.support.importing import press, preview_of, run_import
from tests.support.llm_server import Gate, Response, held
from tests.support.storage import Stored, everything_stored, user_of

NAMES = {ALICE_ID: "Alice", BOB_ID: "Bob", CAROL_ID: "Carol"}
LETTERS = {ALICE_ID: "a", BOB_ID: "b", CAROL_ID: "c"}
BY_LETTER = {letter: uid for uid, letter in LETTERS.items()}
# A token ends with "-q", so a token cut short (a summary or a turn trimmed to its limit) is no token at all,
# rather than a different one.
TOKEN = re.compile(r"\btok-([abc])-(\d+)-q\b")
ROUNDS = 16
START = datetime(2030, 6, 1, 9, 0, tzinfo=UTC)  # a fixed clock: the same requests, so the same answers, every run
FORGET_ROUNDS = (3, 6, 9, 12)
KINDS = ("fact", "section", "minutes", "all")
SECRETS = 2  # passwords given over two messages, after the rounds
IMPORT_ROUNDS = (5, 11)


def tokens(text: str) -> set[str]:
    return {match.group(0) for match in TOKEN.finditer(text)}


# --- the rules, written independently of the engine ---------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """A place: `dm` (of user `id`), `guild` (server `id`'s public channels), `channel` (restricted channel or
    private thread `id` of server `guild`)."""

    kind: str
    id: int
    guild: int = 0

    @property
    def key(self) -> str:
        """How stored items name it (DESIGN section 7): `dm`, `guild:<id>`, `channel:<id>`."""
        return "dm" if self.kind == "dm" else f"{self.kind}:{self.id}"


def may_read(reader: Where, learned: Where) -> bool:
    """Whether what was said in `learned` may be used in `reader` (DESIGN section 7's table). One user's DM is not
    another's."""
    if reader.kind == "dm":
        return learned.kind != "dm" or learned.id == reader.id
    if learned.kind == "dm":
        return False
    if learned == reader:
        return True
    return reader.kind == "channel" and learned == Where("guild", reader.guild, reader.guild)


# --- the world ------------------------------------------------------------------------------------------------


@dataclass
class Said:
    token: str
    user: int
    where: Where
    message: Any
    at: float  # time.monotonic() when it was handed to the bot
    created_at: datetime


@dataclass
class Forget:
    user: int
    kind: str  # "fact", "section", "minutes" or "all"
    option: dict[str, Any]
    started: float
    done: float = 0.0
    since: datetime | None = None  # minutes: the start of the window
    before: set[str] = field(default_factory=set)  # the user's memory's tokens just before
    after: set[str] = field(default_factory=set)  # ... and right after it answered
    fact_text: str = ""  # fact: the forgotten fact's words
    kept_ids: set[str] = field(default_factory=set)  # fact: ids of the facts holding those words right after
    held_summary: str = ""  # section: what the held extraction would write into the cleared summary
    target_shown: bool = False  # there was something to forget (for fact and section: shown to the held extraction)
    in_flight: tuple[str, ...] = ()  # what was verified held or waiting when it ran


@dataclass
class Brought:
    """A notes file the user imported: the memory it added (with a token) and the password line refused in it."""

    user: int
    token: str
    line: str
    secret: str
    done: float
    answer: str


@dataclass
class Snapshot:
    at: float
    records: list[Stored]


@dataclass
class World:
    h: Harness
    rng: random.Random
    model: HostileModel
    clock: Clock
    rooms: dict[str, tuple[Any, Where]] = field(default_factory=dict)
    members: dict[tuple[int, int], Any] = field(default_factory=dict)
    users: dict[int, Any] = field(default_factory=dict)
    said: dict[str, Said] = field(default_factory=dict)
    forgets: list[Forget] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    released: dict[str, float] = field(default_factory=dict)  # token -> when a fact holding it was shared
    shares: list[str] = field(default_factory=list)
    counter: int = 0
    restated_forgotten: int = 0  # replies into the chain of a forgotten fact's message, its words shown again
    room_cycle: list[str] = field(default_factory=list)
    extraction_holds: dict[int, Gate] = field(default_factory=dict)  # user -> gate for their extractions
    held_extractions: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    chat_holds: dict[str, Gate] = field(default_factory=dict)  # token -> gate for the reply to its message
    secrets: list[str] = field(default_factory=list)  # passwords given over two messages: stored nowhere, ever
    imports: list[Brought] = field(default_factory=list)

    def setup(self) -> None:
        d = self.h.discord
        a, b = make_guild(name="Server A"), make_guild(name="Server B")
        general = d.text_channel(a, name="general")
        staff = d.text_channel(a, name="staff", private=True)
        secret_thread = d.thread(general, name="secret-santa", private=True)
        mods = d.text_channel(b, name="mods", private=True)
        self.rooms = {
            "A#general": (general, Where("guild", a.id, a.id)),
            "A#general/thread": (d.thread(general), Where("guild", a.id, a.id)),
            "A#general/private-thread": (secret_thread, Where("channel", secret_thread.id, a.id)),
            "A#staff": (staff, Where("channel", staff.id, a.id)),
            "A#staff/thread": (d.thread(staff), Where("channel", staff.id, a.id)),
            "B#lobby": (d.text_channel(b, name="lobby"), Where("guild", b.id, b.id)),
            "B#mods": (mods, Where("channel", mods.id, b.id)),
        }
        for uid, name in NAMES.items():
            user = self.users[uid] = make_user(uid, name)
            self.rooms[f"dm:{name}"] = (d.dm(user), Where("dm", uid))
            for guild in (a, b):
                self.members[(guild.id, uid)] = make_member(user, guild)

    def where_of_key(self, key: str, owner: int) -> Where | None:
        """The place a stored item names, for the user it belongs to."""
        if key == "dm":
            return Where("dm", owner)
        return next((where for _, where in self.rooms.values() if where.key == key), None)

    # --- talking ---

    def next_room(self) -> str:
        if not self.room_cycle:
            self.room_cycle = list(self.rooms)
            self.rng.shuffle(self.room_cycle)
        return self.room_cycle.pop()

    def message(self, room: str, uid: int | None = None, words: str = "", tag: str = "{words} {token}"
                ) -> tuple[Any, Said]:
        channel, where = self.rooms[room]
        if where.kind == "dm":
            uid = where.id
        elif uid is None:
            uid = self.rng.choice(list(NAMES))
        self.counter += 1
        token = f"tok-{LETTERS[uid]}-{self.counter}-q"
        text = tag.format(words=words, token=token) if words else f"remember {token} please"
        if where.kind == "dm":
            message = self.h.discord.message(channel, self.users[uid], text)
        else:
            message = self.h.discord.mention_bot(channel, self.members[(channel.guild.id, uid)], text)
        said = Said(token, uid, where, message, time.monotonic(), message.created_at)
        self.said[token] = said
        return message, said

    async def say(self, room: str, uid: int | None = None, words: str = "", tag: str = "{words} {token}") -> Said:
        message, said = self.message(room, uid, words, tag)
        said.at = time.monotonic()
        await dispatch(self.h.bot, "message", message)
        return said

    async def split_secret(self, rng: random.Random) -> None:
        """A user gives a password over two messages in their DM, the name in one and the value in the next, within
        one quiet period (a deployment's debounce sees them together; the test's is shorter, so it is lengthened
        for the two). Neither message holds it alone; the model repeats what it is shown, and the reply repeats
        the value: it must reach no stored byte, no extraction and no memory block. Said by a user with no partial
        forget behind them, so the forget rules above judge the rounds alone. Each message's token is set apart in
        brackets: a random-looking word right after a password's name is read as the password, and cut."""
        partial = {f.user for f in self.forgets if f.kind != "all"}
        uid = rng.choice([u for u in NAMES if u not in partial] or list(NAMES))
        secret = f"Walrus{rng.randint(100, 999)}{rng.choice('xyz')}!"
        self.secrets.append(secret)
        debouncer = parts(self.h.memory).learning.debouncer
        quiet, longest = debouncer.quiet_seconds, debouncer.max_wait_seconds
        debouncer.quiet_seconds, debouncer.max_wait_seconds = 30.0, 60.0
        try:
            apart = "{words} (message {token})"
            await self.say(f"dm:{NAMES[uid]}", uid, "I changed my wifi password again", apart)
            await self.say(f"dm:{NAMES[uid]}", uid, f"it's now {secret} lol", apart)
        finally:
            debouncer.quiet_seconds, debouncer.max_wait_seconds = quiet, longest
        await self.h.memory.ops.flush(10)

    def room_of_user(self, uid: int) -> str:
        """A room the user can talk in: any of the servers' rooms or their own DM."""
        return self.rng.choice([name for name, (_, w) in self.rooms.items() if w.kind != "dm" or w.id == uid])

    async def import_notes(self, uid: int) -> None:
        """The user brings a notes file (`/memory import`): one memory holding a new token, said in their DM as far
        as the rules go, and a password line the bot must never keep; Import is pressed through the view store."""
        self.counter += 1
        token = f"tok-{LETTERS[uid]}-{self.counter}-q"
        secret = f"Vx{self.rng.randrange(10**9):09d}!Qz"
        line = f"Keeps a notebook called {token} for recipes"
        channel, where = self.rooms[f"dm:{NAMES[uid]}"]
        words = self.h.discord.message(channel, self.users[uid], line)  # the imported words, as the user's own
        self.said[token] = Said(token, uid, where, words, time.monotonic(), self.clock.now)
        data = f"# Notes\n- {line}\n- My email password is {secret}\n".encode()
        _, preview = preview_of(await run_import(self.h.bot, self.users[uid], "notes.md", data))
        assert preview is not None, "the import offered nothing to press"
        pressed = await press(self.h, preview, "Import", self.users[uid])
        self.imports.append(Brought(uid, token, line, secret, time.monotonic(), calls(pressed)[-1].content))

    # --- the model, with answers held where the test says ---

    def on_extract(self, body: dict[str, Any]) -> Response:
        answer = self.model.extract(body)
        said = [t for t in _extraction_payload(body)["newTurns"] if t["speaker"] == "user"]
        users = {BY_LETTER[m.group(1)] for turn in said for m in TOKEN.finditer(turn["text"])}
        held_for = next((u for u in users if u in self.extraction_holds), None)
        if held_for is None:
            return answer
        self.held_extractions[held_for].append(body)
        return held(self.extraction_holds[held_for], answer)

    def on_chat(self, body: dict[str, Any]) -> Response:
        answer = self.model.chat(body)
        current = tokens(without_memory(_text(body["messages"][-1]["content"])))
        gate = next((self.chat_holds[t] for t in current if t in self.chat_holds), None)
        return held(gate, answer) if gate is not None else answer

    # --- storage ---

    async def snapshot(self) -> Snapshot:
        at = time.monotonic()
        snap = Snapshot(at, await everything_stored(self.h.settings))
        self.snapshots.append(snap)
        return snap

    def memory_tokens(self, snap: Snapshot, uid: int) -> set[str]:
        return {t for doc in _docs_of(snap, uid) for t in tokens(json.dumps(doc))}

    def facts_of(self, snap: Snapshot, uid: int) -> list[dict[str, Any]]:
        return [fact for doc in _docs_of(snap, uid) for fact in doc.get("facts", [])]

    # --- commands ---

    async def slash(self, uid: int, path: str, **options: Any) -> Any:
        interaction = await run_slash(self.h.bot, make_interaction(self.users[uid]), path, **options)
        assert calls(interaction), f"/{path} {options} was not answered"
        return interaction

    async def share_something(self, shared: bool, *, again: bool = True) -> None:
        """`/memory share` a fact (rather one from a DM or a restricted place: sharing opens it up), or `/memory
        unshare` a shared one (sharing one first if none is shared any more)."""
        snap = await self.snapshot()
        candidates = [
            (uid, fact) for uid in NAMES for fact in self.facts_of(snap, uid)
            if bool(fact.get("shared")) != shared and tokens(fact.get("content", ""))
        ]
        if not candidates and not shared and again:
            await self.share_something(shared=True)
            await self.share_something(shared=False, again=False)
            return
        if not candidates:
            return
        if shared:
            closed = [(u, f) for u, f in candidates if not str(f.get("place", "dm")).startswith("guild:")]
            candidates = closed or candidates
        uid, fact = self.rng.choice(candidates)
        answer = await self.slash(uid, "memory share" if shared else "memory unshare", fact=fact["id"])
        self.shares.append(("share " if shared else "unshare ") + calls(answer)[-1].content)
        if shared:
            for token in tokens(fact["content"]):
                self.released.setdefault(token, time.monotonic())

    async def forget_in_flight(self, kind: str) -> None:
        """A forget of `kind` by a user with memory, while an extraction of theirs is held, another batch of theirs
        waits behind it, and a reply to them is being written."""
        await self.h.settle()
        snap = await self.snapshot()
        uid = max(NAMES, key=lambda u: (len(self.memory_tokens(snap, u)), self.rng.random()))
        # The held extraction is a DM's (shown every fact), or for a summary, one of a place that has summaries.
        room = f"dm:{NAMES[uid]}"
        if kind == "section":
            places = {key for key, name in _summaries_of(snap, uid)}
            rooms = [r for r, (_, w) in self.rooms.items() if w.key in places and (w.kind != "dm" or w.id == uid)]
            room = room if "dm" in places or not rooms else self.rng.choice(sorted(rooms))
        # A first message there gives the held extraction a fact nothing restates or rewords yet.
        await self.say(room, uid)
        await self.h.settle()
        extraction_gate, reply_gate = Gate(), Gate()
        self.extraction_holds[uid] = extraction_gate
        self.held_extractions[uid] = []
        await self.say(room, uid)
        await extraction_gate.reached(1)
        shown = self.held_extractions[uid][0]
        waiting = await self.say(self.room_of_user(uid), uid)
        message, said = self.message(self.room_of_user(uid), uid)
        self.chat_holds[said.token] = reply_gate
        said.at = time.monotonic()
        handler = asyncio.create_task(dispatch(self.h.bot, "message", message))
        try:
            await reply_gate.reached(1)
            before = await self.snapshot()
            memory = _extraction_payload(shown)["currentMemory"]
            forget = Forget(uid, kind, {}, time.monotonic(), before=self.memory_tokens(before, uid))
            if kind == "fact":
                # One learned from the user's own words (the model cannot make it up again from what it is shown
                # later, as it can a rewording or a list of what the bot said), and nothing else repeats it yet
                # (a near-duplicate of it would absorb what the held extraction writes back).
                own = [f for f in memory["facts"] if f["content"].startswith(f"{NAMES[uid]} talked about ")]
                stored = self.facts_of(before, uid)
                alone = [f for f in own if not any(_core(f["content"]) in g["content"] for g in stored
                                                   if g["id"] != f["id"])]
                target = self.rng.choice(alone or own or memory["facts"] or stored)
                forget.option = {"fact": target["id"]}
                forget.fact_text = target["content"]
                forget.target_shown = target in alone
            elif kind == "section":
                written = [name for name in SECTIONS if memory["summaries"].get(name)]
                name = self.rng.choice(written or list(SECTIONS))
                forget.option = {"section": name}
                forget.held_summary = _summary_in(self.model.answer(shown), name)
                forget.target_shown = bool(written)
            elif kind == "minutes":
                forget.option = {"minutes": self.rng.randint(2, 6)}
                forget.since = self.clock.now - timedelta(minutes=forget.option["minutes"])
                window = {t for t, s in self.said.items() if s.created_at >= forget.since}
                forget.target_shown = bool(window & forget.before)  # something learned in the window, to forget
            else:
                forget.target_shown = bool(forget.before)
            forget.in_flight = tuple(
                state for state, holds in [
                    ("an extraction held", extraction_gate.arrived >= 1 and not extraction_gate.is_open),
                    ("a batch waiting", not any(waiting.token in json.dumps(b) for b in self.extraction_bodies())),
                    ("a reply being written", reply_gate.arrived >= 1 and not handler.done()),
                ] if holds
            )
            if kind == "all":
                asked = await self.slash(uid, "memory forget")
                view = calls(asked)[0].kwargs["view"]
                assert await press_through_discord(view, view.confirm, make_interaction(self.users[uid]))
            else:
                await self.slash(uid, "memory forget", **forget.option)
            forget.done = time.monotonic()
            after = await self.snapshot()
            forget.after = self.memory_tokens(after, uid)
            if forget.fact_text:
                core = _core(forget.fact_text)
                forget.kept_ids = {f["id"] for f in self.facts_of(after, uid) if core in f["content"]}
            self.forgets.append(forget)
        finally:
            extraction_gate.open()
            reply_gate.open()
            self.extraction_holds.pop(uid, None)
            self.chat_holds.pop(said.token, None)
        await asyncio.wait_for(handler, 30)
        await self.h.settle()
        if kind == "fact":
            await self.restate_forgotten(self.forgets[-1])
            await self.h.settle()

    async def restate_forgotten(self, forget: Forget) -> None:
        """After a fact's forget, its user replies into the chain of the message that taught it: the chain, and the
        bot's reply that repeats it, show the model the forgotten words again, and the model writes them into facts
        and summaries (`check_fact_stays_forgotten` holds them out)."""
        sources = [self.said[t] for t in sorted(tokens(forget.fact_text)) if t in self.said]
        source = next((s for s in sources if s.user == forget.user), None)
        if source is None:
            return
        answers = self.h.discord.replies_to(source.message)
        target = answers[0].message if answers else source.message  # in a server: a reply to the bot's answer
        room = next(name for name, (channel, _) in self.rooms.items() if channel is source.message.channel)
        first, said = self.message(room, forget.user)
        said.message = self.h.discord.reply_to(first.channel, first.author, target, first.content)
        said.at = time.monotonic()
        await dispatch(self.h.bot, "message", said.message)
        self.restated_forgotten += 1

    def extraction_bodies(self) -> list[dict[str, Any]]:
        return [body for body in (r["body"] for r in self.h.llm.server.requests)
                if body.get("model") != self.h.settings.chat_model]


def _core(fact_text: str) -> str:
    """A fact's words without its first letter: also found in a rewording ("They mentioned that carol ...")."""
    return fact_text[1:]


def conversation(body: dict[str, Any]) -> str:
    """What a chat request shows of the conversation: its messages after the system prompt, memory blocks left out."""
    return " ".join(without_memory(_text(message.get("content"))) for message in body["messages"][1:])


def _summary_in(answer: dict[str, Any], name: str) -> str:
    group = "user" if name in SECTIONS[:3] else "history"
    return str(answer[group][name]["summary"]).strip()


def _text(content: object) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _extraction_payload(body: dict[str, Any]) -> dict[str, Any]:
    content = _text(body["messages"][-1]["content"])
    return dict(json.loads(content[content.index("{"):]))


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)


def _is_doc(value: dict[str, Any]) -> bool:
    return isinstance(value.get("facts"), list) and isinstance(value.get("user"), dict)


def _docs_of(snap: Snapshot, uid: int) -> list[dict[str, Any]]:
    return [doc for record in snap.records if user_of(record) == uid for doc in _walk(record.value) if _is_doc(doc)]


def placed_texts(doc: dict[str, Any]) -> Iterator[tuple[str, str, bool, str]]:
    """(label, place key, shared, text) of every fact and every summary (with its earlier values) of a memory
    document: top-level summaries are the DM place's, `places` holds the others (the documented file schema)."""
    for fact in doc.get("facts", []):
        yield f"fact {fact.get('id')}", str(fact.get("place", "dm")), bool(fact.get("shared")), str(fact["content"])
    for key, summaries in [("dm", doc), *(doc.get("places") or {}).items()]:
        for group in ("user", "history"):
            for name, section in (summaries.get(group) or {}).items():
                if not isinstance(section, dict):
                    continue
                values = [section.get("summary", "")] + [old.get("summary", "") for old in section.get("previous", [])]
                for value in values:
                    yield f"summary {name}@{key}", key, False, str(value)


def _summaries_of(snap: Snapshot, uid: int) -> set[tuple[str, str]]:
    """(place key, section name) of the user's non-empty summaries."""
    found = set()
    for doc in _docs_of(snap, uid):
        for key, summaries in [("dm", doc), *(doc.get("places") or {}).items()]:
            for group in ("user", "history"):
                for name, section in (summaries.get(group) or {}).items():
                    if isinstance(section, dict) and section.get("summary"):
                        found.add((key, name))
    return found


def where_in(snap: Snapshot, uid: int, token: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(label, place key, the fact or None for a summary) of every item of the user's memory holding `token`."""
    found = []
    for doc in _docs_of(snap, uid):
        facts = {f"fact {fact.get('id')}": fact for fact in doc.get("facts", [])}
        found += [
            (f"{label} ({key})", key, facts.get(label)) for label, key, _, text in placed_texts(doc)
            if token in tokens(text)
        ]
    return found


def section_texts(doc: dict[str, Any], name: str) -> list[str]:
    found = []
    for summaries in [doc, *(doc.get("places") or {}).values()]:
        for group in ("user", "history"):
            section = (summaries.get(group) or {}).get(name)
            if isinstance(section, dict):
                found += [section.get("summary", "")] + [o.get("summary", "") for o in section.get("previous", [])]
    return [text for text in found if text]


# --- the checker ----------------------------------------------------------------------------------------------


class Checker:
    """Holds the world to the rules; `found` collects every violation under a short heading."""

    def __init__(self, world: World) -> None:
        self.w = world
        self.found: dict[str, list[str]] = defaultdict(list)
        self.chats: list[tuple[float, dict[str, Any], Said]] = []
        self.extractions: list[tuple[float, dict[str, Any]]] = []
        for request in world.h.llm.server.requests:
            body = request["body"]
            if body.get("model") == world.h.settings.chat_model:
                current = [world.said[t] for t in tokens(without_memory(_text(body["messages"][-1]["content"])))]
                assert len(current) == 1, f"a chat request for no single message: {current}"
                self.chats.append((request["received_at"], body, current[0]))
            else:
                self.extractions.append((request["received_at"], body))
        self.cross_place_uses = 0
        self.restricted_reads_public = 0
        self.shared_used_elsewhere = 0
        self.foreign_facts_shown_to_dm = 0
        self.documents_read = 0  # memory documents the storage checks found (none would make them vacuous)

    def add(self, heading: str, text: str) -> None:
        if text not in self.found[heading]:  # one line per distinct violation, however many snapshots show it
            self.found[heading].append(text)

    def origin(self, token: str) -> Where:
        return self.w.said[token].where

    def allowed(self, reader: Where, token: str, at: float) -> bool:
        released = self.w.released.get(token)
        return may_read(reader, self.origin(token)) or (released is not None and released <= at)

    def heard(self, uid: int, before: float, *, whole: bool = False) -> set[str]:
        """What the user said, and what the model was shown while answering them (the conversation only, or
        `whole` requests), before `before`."""
        known = {s.token for s in self.w.said.values() if s.user == uid and s.at < before}
        for received, body, said in self.chats:
            if said.user == uid and received < before:
                known |= tokens(json.dumps(body["messages"]) if whole else conversation(body))
        return known

    def exposed_after(self, uid: int, start: float, end: float) -> set[str]:
        """Tokens the conversation showed the model for this user in messages handed to the bot in (start, end)."""
        shown: set[str] = set()
        for _, body, said in self.chats:
            if said.user == uid and start < said.at < end:
                shown |= tokens(conversation(body))
        return shown

    # --- prompts ---

    def check_chats(self) -> None:
        for received, body, said in self.chats:
            everything = json.dumps(body["messages"], ensure_ascii=False)
            memory = tokens(" ".join(memory_blocks(body["messages"])))
            label = f"reply to {said.token} in {said.where.key}"
            for token in tokens(everything):
                if not self.allowed(said.where, token, received):
                    self.add("chat prompt: a token from a place this one may not read",
                             f"{label}: {token} said in {self.origin(token).key}")
            foreign = memory - self.heard(said.user, received)
            if foreign:
                self.add("chat prompt: memory the user never said or heard", f"{label}: {sorted(foreign)}")
            others = {self.origin(t) for t in memory} - {said.where}
            self.cross_place_uses += bool(others)
            self.restricted_reads_public += said.where.kind == "channel" and any(o.kind == "guild" for o in others)
            self.shared_used_elsewhere += any(
                t in self.w.released and not may_read(said.where, self.origin(t)) for t in memory
            )
        for sent in self.w.h.discord.sent:
            shown = [sent.content, sent.posted_content, *(edit.content for edit in sent.edits)]
            if any(REASONING_MARK in text or "</think>" in text for text in shown):
                self.add("Discord: reasoning shown", f"message in channel {sent.channel_id}")

    def check_extractions(self) -> None:
        for received, body in self.extractions:
            payload = _extraction_payload(body)
            turns = payload["newTurns"]
            said = [self.w.said[t] for turn in turns if turn["speaker"] == "user" for t in tokens(turn["text"])]
            if {turn["speaker"] for turn in turns} - {"user", "assistant"}:
                self.add("extraction: another person's turn", json.dumps(turns)[:200])
            if len({(s.user, s.message.channel.id) for s in said}) != 1:
                self.add("extraction: not one user's turns in one channel", str([s.token for s in said]))
                continue
            uid, where = said[0].user, said[0].where
            label = f"extraction for {said[0].token} in {where.key}"
            memory = json.dumps(payload["currentMemory"])
            for token in tokens(memory):
                if not self.allowed(where, token, received):
                    self.add("extraction: memory from a place the batch may not read",
                             f"{label}: {token} said in {self.origin(token).key}")
            foreign = tokens(memory) - self.heard(uid, received)
            if foreign:
                self.add("extraction: memory the user never said or heard", f"{label}: {sorted(foreign)}")
            replies = " ".join(turn["text"] for turn in turns if turn["speaker"] == "assistant")
            unknown = tokens(replies) - self.heard(uid, received, whole=True)
            if unknown or REASONING_MARK in replies:
                self.add("extraction: assistant turns that were no reply to this user", f"{label}: {sorted(unknown)}")
            if where.kind == "dm":
                self.foreign_facts_shown_to_dm += any(
                    self.origin(t).kind != "dm" for fact in payload["currentMemory"]["facts"]
                    for t in tokens(fact["content"])
                )

    def check_secrets(self) -> None:
        """A password split over two messages is in no extraction, no chat prompt's memory and no stored record, nor
        is its body without the closing "!" (a cut that stopped short of the punctuation is found as well)."""
        for secret in (value.rstrip("!") for value in self.w.secrets):
            for _, body in self.extractions:
                if secret in json.dumps(body, ensure_ascii=False):
                    self.add("split secret: shown to the extraction model", secret)
            for _, body, said in self.chats:
                if secret in " ".join(memory_blocks(body["messages"])):
                    self.add("split secret: in a chat prompt's memory", f"{secret} in the reply to {said.token}")
            for snap in self.w.snapshots:
                for record in snap.records:
                    if secret in record.text:
                        self.add("split secret: stored", f"{secret} in {record.where}")

    # --- storage ---

    def check_snapshot(self, snap: Snapshot) -> None:
        for record in snap.records:
            if REASONING_MARK in record.text:
                self.add("storage: reasoning stored", record.where)
            covered: set[str] = set()
            owner = user_of(record)
            for value in _walk(record.value):
                if _is_doc(value) and owner is not None:
                    self.documents_read += 1
                    covered |= self.check_doc(snap, record, owner, value)
                turn = value.get("turn")
                if isinstance(turn, dict) and "text" in turn:
                    covered |= self.check_turn(snap, record, value, str(turn["text"]))
            loose = tokens(record.text) - covered
            if loose:
                self.add("storage: tokens outside any placed item", f"{record.where}: {sorted(loose)[:5]}")

    def check_doc(self, snap: Snapshot, record: Stored, owner: int, doc: dict[str, Any]) -> set[str]:
        inside: set[str] = set()
        for label, key, shared, text in placed_texts(doc):
            found = tokens(text)
            inside |= found
            where = self.w.where_of_key(key, owner)
            if where is None:
                self.add("storage: an item in an unknown place", f"{record.where} {label}: {key}")
                continue
            bad = [t for t in found if not shared and not self.allowed(where, t, snap.at)]
            if bad:
                self.add("storage: an item holds a token from a place its own may not read",
                         f"{record.where} {label} ({key}): " + ", ".join(f"{t} from {self.origin(t).key}" for t in bad))
        everything = tokens(json.dumps(doc))
        if everything - inside:
            self.add("storage: tokens in a memory document outside facts and summaries",
                     f"{record.where}: {sorted(everything - inside)[:5]}")
        foreign = everything - self.heard(owner, snap.at)
        if foreign:
            self.add("storage: memory the user never said or heard", f"{record.where}: {sorted(foreign)[:5]}")
        return everything

    def check_turn(self, snap: Snapshot, record: Stored, value: dict[str, Any], text: str) -> set[str]:
        place = value.get("place")
        key = str(place.get("place") if isinstance(place, dict) else place)
        owner = value.get("user") or value.get("user_id") or user_of(record)
        where = self.w.where_of_key(key, int(owner)) if owner is not None else None
        found = tokens(text)
        if where is None:
            self.add("storage: a pending turn in an unknown place", f"{record.where}: {key}")
            return found
        bad = [t for t in found if not self.allowed(where, t, snap.at)]
        if bad:
            self.add("storage: a pending turn holds a token from a place its own may not read",
                     f"{record.where}: {bad}")
        return found

    # --- imports ---

    def check_imports(self) -> None:
        """A refused credential reaches no byte stored and no model; an imported memory stays as imported (the
        model never rewrites or removes it) until its owner forgets something."""
        requests = [json.dumps(body) for _, body in self.extractions] + [json.dumps(b) for _, b, _ in self.chats]
        for brought in self.w.imports:
            label = f"{NAMES[brought.user]}'s import of {brought.token}"
            if not brought.answer.startswith("Imported 1 memory:"):
                self.add("import: not imported", f"{label}: {brought.answer}")
            if any(brought.secret in text for text in requests):
                self.add("import: a refused credential reached the model", label)
            for snap in self.w.snapshots:
                leaked = [record.where for record in snap.records if brought.secret in record.text]
                if leaked:
                    self.add("import: a refused credential was stored", f"{label}: {leaked[:3]}")
                forgot = any(f.user == brought.user and brought.done < f.started < snap.at for f in self.w.forgets)
                if snap.at <= brought.done or forgot:
                    continue
                kept = [fact for fact in self.w.facts_of(snap, brought.user)
                        if fact.get("origin") == "imported" and fact.get("content") == brought.line]
                if len(kept) != 1:
                    self.add("import: an imported memory was changed or dropped", label)

    # --- forgets ---

    def check_forgets(self) -> None:
        for forget in self.w.forgets:
            label = f"{NAMES[forget.user]}'s forget {forget.kind} {forget.option}"
            # What it forgot: what left the user's memory, and the user's own words it covers that were still on
            # their way (a reply being written, a batch waiting, an extraction in flight).
            forgotten = forget.before - forget.after
            on_the_way = {s.token for s in self.w.said.values() if s.user == forget.user and s.at < forget.started}
            on_the_way -= forget.after  # what stayed is judged by what the forget promises, below
            if forget.kind == "all":
                forgotten |= on_the_way
            after = next(s for s in self.w.snapshots if s.at > forget.done)
            allowance: set[str] = set()
            if forget.since is not None:
                window = {t for t, s in self.w.said.items() if s.created_at >= forget.since}
                forgotten |= on_the_way & window
                for s in self.w.said.values():
                    if s.user == forget.user and s.created_at < forget.since:
                        allowance |= {s.token} | tokens(self.w.h.discord.reply_text(s.message))
                for token in sorted(window & forget.after):
                    holders = where_in(after, forget.user, token)
                    if all(self.merged_in_place(forget.user, item, token, forget.since) for item in holders):
                        continue  # a detail merged into an older fact of its own place: not "learned" in the window
                    self.add("forget: minutes left what was learned in the window",
                             f"{label}: {token} in {[label for label, *_ in holders]}")
            self.check_promise(forget, after, label)
            for snap in self.w.snapshots:
                if snap.at <= forget.done:
                    continue
                self.check_written_back(forget, snap, label)
                back = self.w.memory_tokens(snap, forget.user) & forgotten
                back -= self.exposed_after(forget.user, forget.done, snap.at) | allowance
                if back:
                    self.add("forget: forgotten memory came back", f"{label}: {sorted(back)[:5]}")
            if forget.kind == "all":
                self.check_nothing_of_before(forget, label)
            if forget.kind == "fact":
                self.check_fact_stays_forgotten(forget, forgotten, label)

    def check_fact_stays_forgotten(self, forget: Forget, forgotten: set[str], label: str) -> None:
        """DESIGN section 15: a forgotten fact leaves a fingerprint, so its words never come back: not through the
        bot's replies repeating the channel's history, not through a paraphrase or a summary repeating them, not
        through the user's own words from before the forget. (No user says an old token again in this world.)"""
        gone = tokens(forget.fact_text) & forgotten
        for snap in self.w.snapshots:
            if snap.at > forget.done and (back := self.w.memory_tokens(snap, forget.user) & gone):
                self.add("forget: a forgotten fact came back, restated", f"{label}: {sorted(back)[:5]}")

    def merged_in_place(
        self, uid: int, item: tuple[str, str, dict[str, Any] | None], token: str, since: datetime
    ) -> bool:
        """A fact created before `since`, in a place that may read `token`: a near-duplicate merge of its own
        place gave it the detail. DESIGN section 8 promises to forget the facts learned in the window and to put
        summaries back; what an older fact took in by a merge in its own place is not covered, so it is not held
        against it (a merge across places is caught by the place rule)."""
        _, key, fact = item
        where = self.w.where_of_key(key, uid)
        if fact is None or where is None or not may_read(where, self.origin(token)):
            return False
        return bool(fact.get("createdAt")) and datetime.fromisoformat(str(fact["createdAt"])) < since

    def check_written_back(self, forget: Forget, snap: Snapshot, label: str) -> None:
        """The forgotten fact's words in a new fact (as they were, extended or reworded), or the held
        extraction's text in the cleared summary.

        A fact that still held the forgotten words right after the forget (one extending it, learned elsewhere)
        may be extended or reworded again as a new fact; the forgotten words alone never come back."""
        since = [s for s in self.w.snapshots if forget.done < s.at <= snap.at]
        rewordings = {reworded(f["content"]) for s in since for f in self.w.facts_of(s, forget.user)}
        for doc in _docs_of(snap, forget.user):
            for fact in doc["facts"] if forget.fact_text else []:
                if fact["id"] in forget.kept_ids or _core(forget.fact_text) not in fact["content"]:
                    continue
                if fact["content"] in rewordings:
                    continue  # the model reworded a fact that was not forgotten, and happened to say it again
                if not forget.kept_ids or fact["content"] == forget.fact_text:
                    self.add("forget: the forgotten fact came back", f"{label}: {fact['content'][:90]}")
            if forget.held_summary and any(
                text[:150] == forget.held_summary[:150] for text in section_texts(doc, forget.option["section"])
            ):
                self.add("forget: the cleared summary was written back", f"{label}: {forget.held_summary[:60]}")

    def check_promise(self, forget: Forget, snap: Snapshot, label: str) -> None:
        docs = _docs_of(snap, forget.user)
        if "fact" in forget.option and any(f["id"] == forget.option["fact"] for d in docs for f in d["facts"]):
            self.add("forget: the fact is still there", label)
        if "section" in forget.option and any(section_texts(d, forget.option["section"]) for d in docs):
            self.add("forget: the summary is still there", label)
        if forget.kind == "all" and self.w.memory_tokens(snap, forget.user):
            self.add("forget: memory left after forgetting everything", label)

    def check_nothing_of_before(self, forget: Forget, label: str) -> None:
        """After a wipe, no stored byte names a message of the user's from before it, nor the bot's reply to one
        (a reply record, a pending turn, an applied turn id)."""
        ids: set[str] = set()
        for s in self.w.said.values():
            if s.user == forget.user and s.at < forget.started:
                ids.add(str(s.message.id))
                ids |= {str(sent.message.id) for sent in self.w.h.discord.replies_to(s.message)}
        for snap in self.w.snapshots:
            if snap.at > forget.done:
                kept = sorted({record.where for record in snap.records for i in ids if i in record.text})
                if kept:
                    self.add("forget: a record of a message from before the wipe was kept", f"{label}: in {kept}")
                    return


# --- the test -------------------------------------------------------------------------------------------------


@pytest.fixture(params=["files", "postgres"])
def storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Settings for each backend. Ask for it before `make_harness`, so the bots close before the database goes."""
    if request.param == "postgres":
        return {"database_url": request.getfixturevalue("postgres_url")}
    return {}


@pytest.mark.parametrize("seed", [3, 2024, 77777])
async def test_a_hostile_model_breaks_no_promise(storage: dict[str, Any], make_harness: MakeHarness, seed: int) -> None:
    h = await make_harness(history_messages=6, llm_timeout_seconds=60, **storage)  # held answers are not timeouts
    clock = Clock(START)
    h.memory.clock = clock
    h.discord.clock = clock
    world = World(h, random.Random(seed), HostileModel(seed), clock)
    world.setup()
    h.llm.extract = world.on_extract
    h.llm.chat_reply = world.on_chat
    kinds = list(KINDS)
    world.rng.shuffle(kinds)

    for round_number in range(ROUNDS):
        clock.advance(minutes=world.rng.randint(1, 3), seconds=7)
        for _ in range(world.rng.randint(1, 3)):
            await world.say(world.next_room())
        if world.rng.random() < 0.6:
            await h.settle()
        if round_number in FORGET_ROUNDS:
            await world.forget_in_flight(kinds[FORGET_ROUNDS.index(round_number)])
        elif round_number in (4, 10):
            await h.settle()
            await world.share_something(shared=True)
        elif round_number in (7, 13):
            await h.settle()
            await world.share_something(shared=False)
        elif round_number in IMPORT_ROUNDS:
            await h.settle()
            await world.import_notes(world.rng.choice(list(NAMES)))
        await h.settle()  # a snapshot of storage at rest, not of a file half written
        await world.snapshot()
    await h.settle()
    await world.snapshot()
    # Last, so the rounds above run as they always did: passwords given over two messages, then storage read again.
    for number in range(SECRETS):
        await world.split_secret(random.Random(seed * 100 + number))
        await h.settle()
        await world.snapshot()

    check = Checker(world)
    check.check_chats()
    check.check_extractions()
    check.check_secrets()
    for snap in world.snapshots:
        check.check_snapshot(snap)
    check.check_forgets()
    check.check_imports()

    report = "\n".join(
        f"{heading} ({len(items)}):\n  " + "\n  ".join(items[:4]) for heading, items in check.found.items()
    )
    assert not check.found, f"promises broken:\n{report}"

    # The world did what it is for (so a clean result means something).
    assert len(check.chats) >= len(world.said) - len(world.imports)  # an imported memory was said in no message
    assert check.documents_read > 0, "no memory document found in storage: the storage checks saw nothing"
    assert {s.where.kind for s in world.said.values()} == {"dm", "guild", "channel"}
    assert check.cross_place_uses > 0, "no prompt used memory from another place"
    assert check.restricted_reads_public > 0, "no restricted channel used its server's public memory"
    assert check.foreign_facts_shown_to_dm > 0, "no DM extraction was shown a fact learned elsewhere"
    assert sorted(f.kind for f in world.forgets if f.target_shown) == sorted(KINDS), [
        (f.kind, f.option, f.target_shown) for f in world.forgets
    ]
    assert all(len(f.in_flight) == 3 for f in world.forgets), [f.in_flight for f in world.forgets]
    assert len(world.secrets) == SECRETS, world.secrets
    assert world.restated_forgotten > 0, "no forgotten fact's words were shown to the model again"
    assert any(s.startswith("share ") and "everywhere" in s for s in world.shares), world.shares
    assert any(s.startswith("unshare ") and "only where I learned it" in s for s in world.shares), world.shares
    assert check.shared_used_elsewhere > 0, "no shared fact was used where only sharing let it be"
    assert len(world.imports) == len(IMPORT_ROUNDS), "the world imported nothing"
    behaviours = ("restated", "repeated", "reworded", "heard_from_assistant", "named_others", "chat_named_others",
                  "wrap_plain", "wrap_think", "wrap_lone_close", "wrap_fence", "summaries_rewritten")
    assert all(world.model.stats[b] > 0 for b in behaviours), world.model.stats
