"""Data shapes of the memory engine: the memory file, a fact, a conversation turn, and the extractor's answer.

The memory file follows the seed's schema, extended with places (`version` "2.0"): the seed's top-level `user` and
`history` summaries are the DM place's; `places` holds the six summaries of every other place; each fact records
its `place` and whether the user `shared` it everywhere. A "1.0" file (written before places) loads unchanged in
meaning: its summaries are DM summaries and its facts, having no place, are DM facts, usable only in DMs until the
user shares them. Every model allows extra fields so a file written by a newer or older version keeps what this
version does not know about through a load/save round trip.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

MEMORY_VERSION = "2.0"
SEED_VERSION = "1.0"  # before places: everything in such a file was learned "in DMs" as far as we can tell
DM_PLACE = "dm"
USER_SECTIONS = ("workContext", "personalContext", "topOfMind")
HISTORY_SECTIONS = ("recentMonths", "earlierContext", "longTermBackground")
FACT_CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "relationship")
SECTION_NAMES = USER_SECTIONS + HISTORY_SECTIONS
ORIGIN_USER = "user"  # a fact the user wrote with `/memory remember`
ORIGIN_CORRECTED = "corrected"  # a fact the user rewrote with `/memory edit`
ORIGIN_IMPORTED = "imported"  # a fact the user brought from a file (`/memory import`): their own words too
USER_ORIGINS = frozenset({ORIGIN_USER, ORIGIN_CORRECTED, ORIGIN_IMPORTED})
SUMMARY_HISTORY_SECONDS = 24 * 3600  # how far back `/memory forget minutes:` can put a summary back
SUMMARY_HISTORY_KEPT = 8  # previous values kept per summary, at most


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with seconds, the only timestamp format we write."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def new_fact_id() -> str:
    return f"fact_{secrets.token_hex(4)}"


class _Open(BaseModel):
    """Base for file models: unknown fields are kept, so round trips lose nothing."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class PreviousSummary(_Open):
    """A value a summary had until `replacedAt` (it was written at `updatedAt`)."""

    summary: str = ""
    updatedAt: str = ""
    replacedAt: str = ""


class Section(_Open):
    summary: str = ""
    updatedAt: str = ""
    # The values this summary had during the last day, newest last: what `/memory forget minutes:` puts back.
    previous: list[PreviousSummary] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_empty_history(self, handler: SerializerFunctionWrapHandler) -> Any:
        """An empty history is not written: files keep the original shape until there is something to keep."""
        data = handler(self)
        if isinstance(data, dict) and not self.previous:
            data.pop("previous", None)
        return data

    def replace(self, text: str, now: datetime) -> None:
        """Overwrite the summary, keeping the old value in a short, bounded history (a day, a few values)."""
        stamp = iso(now)
        if self.summary or self.updatedAt:
            self.previous.append(PreviousSummary(summary=self.summary, updatedAt=self.updatedAt, replacedAt=stamp))
        horizon = iso(now - timedelta(seconds=SUMMARY_HISTORY_SECONDS))
        self.previous = [old for old in self.previous if old.replacedAt >= horizon][-SUMMARY_HISTORY_KEPT:]
        self.summary = text
        self.updatedAt = stamp

    def clear(self) -> None:
        """Forget the summary and every previous value of it."""
        self.summary = ""
        self.updatedAt = ""
        self.previous = []

    def rewind(self, since: datetime) -> bool:
        """Put back the value the summary had at `since`, dropping what was written after; True if it changed.

        Empty when the history does not reach back that far (a value older than what is kept is not known, so the
        safe answer is to forget it rather than guess).
        """
        cutoff = iso(since)
        if not self.updatedAt or self.updatedAt < cutoff:
            return False
        kept = [old for old in self.previous if old.replacedAt < cutoff]
        before = next((old for old in reversed(self.previous) if old.updatedAt < cutoff <= old.replacedAt), None)
        self.previous = kept
        if before is None:
            self.summary, self.updatedAt = "", ""
        else:
            self.summary, self.updatedAt = before.summary, before.updatedAt
        return True


class UserContext(_Open):
    workContext: Section = Field(default_factory=Section)
    personalContext: Section = Field(default_factory=Section)
    topOfMind: Section = Field(default_factory=Section)


class HistoryContext(_Open):
    recentMonths: Section = Field(default_factory=Section)
    earlierContext: Section = Field(default_factory=Section)
    longTermBackground: Section = Field(default_factory=Section)


class Fact(_Open):
    """One remembered statement. Besides the seed's fields it records where it was learned, who wrote it and when:
    `observedAt` when the user said it (the message's time; `createdAt` is when it was learned), `eventDate` when
    what it says happens or happened, if the words said (ISO 8601: `2024-06-14`, `2024-W24`, `2024-06` or `2024`).
    A fact a later statement contradicted is closed, not deleted: `validTo` is when the user said it stopped being
    true and `supersededBy` the id of the fact that replaced it. A closed fact is history: shown to its owner, never
    used in a reply or shown to the extractor. The optional fields are written only when set, so a fact without
    them keeps the seed's shape, and older files load unchanged (a fact without them is open)."""

    id: str
    content: str
    category: str = "context"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    createdAt: str = ""
    source: str = ""
    lastConfirmedAt: str = ""
    place: str = DM_PLACE  # where it was learned; absent in "1.0" files, whose facts are DM-only
    shared: bool = False  # the user made it usable in every place (/memory share)
    # "" learned by the model; "user" written by the user; "corrected" rewritten by the user (written only when set)
    origin: str = ""
    observedAt: str = ""
    eventDate: str = ""
    validTo: str = ""
    supersededBy: str = ""
    validUntil: str = ""  # the last UTC day its own words say it holds (`bot.memory.rules.lifetimes`)
    # Its meaning as numbers, when an embedding model is configured (`bot.memory.rules.vectors`): the vector of
    # `content`, L2-scaled to int8 and base64-encoded, and the model that computed it.
    vector: str = ""
    vectorModel: str = ""

    @field_validator("origin", mode="before")
    @classmethod
    def _known_origin(cls, value: Any) -> str:
        """Anything but a known marker reads as "learned by the model": a stray value never costs the whole file."""
        return value if isinstance(value, str) and value in USER_ORIGINS else ""

    @field_validator(
        "observedAt", "eventDate", "validTo", "supersededBy", "validUntil", "vector", "vectorModel", mode="before"
    )
    @classmethod
    def _text_or_empty(cls, value: Any) -> str:
        """A stray value (a number, null) reads as unset rather than costing the whole file."""
        return value if isinstance(value, str) else ""

    @model_serializer(mode="wrap")
    def _without_empty_optionals(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in _OPTIONAL_FACT_FIELDS:
                if not data.get(name, True):
                    data.pop(name, None)
        return data

    @property
    def user_owned(self) -> bool:
        """Written or corrected by the user: only the user may remove it; the model never does."""
        return self.origin in USER_ORIGINS

    @property
    def closed(self) -> bool:
        """Replaced by a later statement: history, never current memory."""
        return bool(self.validTo or self.supersededBy)

    @property
    def said_at(self) -> str:
        """When the user said it: `observedAt`, or `createdAt` for facts from before it was recorded."""
        return self.observedAt or self.createdAt

    def close(self, *, valid_to: str, superseded_by: str) -> None:
        self.validTo = valid_to
        self.supersededBy = superseded_by

    def reopen(self) -> None:
        self.validTo = ""
        self.supersededBy = ""


_OPTIONAL_FACT_FIELDS = (
    "origin", "observedAt", "eventDate", "validTo", "supersededBy", "validUntil", "vector", "vectorModel"
)
VECTOR_FIELDS = ("vector", "vectorModel")  # derived from `content`: never exported, never shown


class PlaceMemory(_Open):
    """The six summaries of one place."""

    user: UserContext = Field(default_factory=UserContext)
    history: HistoryContext = Field(default_factory=HistoryContext)

    def sections(self) -> list[tuple[str, Section]]:
        return [(name, getattr(self.user, name)) for name in USER_SECTIONS] + [
            (name, getattr(self.history, name)) for name in HISTORY_SECTIONS
        ]

    def is_empty(self) -> bool:
        return not any(section.summary for _, section in self.sections())

    def section(self, name: str) -> Section:
        """One of the six summaries by name (`KeyError` for any other name)."""
        return dict(self.sections())[name]

    def has_history(self) -> bool:
        """Previous values are kept (for `/memory forget minutes:`), even when every summary is empty now."""
        return any(section.previous for _, section in self.sections())


class ForgottenPrint(_Open):
    """What a forgotten or corrected fact leaves: keyed hashes of its distinctive words (no text) and when it was
    taken back (`bot.memory.rules.forgotten`)."""

    words: list[str] = Field(default_factory=list)
    strong: list[str] = Field(default_factory=list)  # those of `words` enough alone: codes, rare words, names
    context: list[str] = Field(default_factory=list)  # a correction's kept words: one of `words` beside one is enough
    at: str = ""


class MemoryFile(_Open):
    """One user's whole memory, as stored in `DATA_DIR/memory/<user id>.json`."""

    version: str = MEMORY_VERSION
    user: UserContext = Field(default_factory=UserContext)
    history: HistoryContext = Field(default_factory=HistoryContext)
    places: dict[str, PlaceMemory] = Field(default_factory=dict)  # summaries of every place but DMs
    facts: list[Fact] = Field(default_factory=list)
    appliedTurnIds: list[str] = Field(default_factory=list)
    forgotten: list[ForgottenPrint] = Field(default_factory=list)  # fingerprints of what was taken back

    @model_serializer(mode="wrap")
    def _without_empty_prints(self, handler: SerializerFunctionWrapHandler) -> Any:
        """No fingerprints, no field: a memory nobody took anything back from keeps its shape."""
        data = handler(self)
        if isinstance(data, dict) and not self.forgotten:
            data.pop("forgotten", None)
        return data

    @field_validator("version", mode="after")
    @classmethod
    def _migrate(cls, value: str) -> str:
        """A seed-format file reads as this format (nothing to convert: see the module docstring)."""
        return MEMORY_VERSION if value == SEED_VERSION else value

    def sections(self) -> list[tuple[str, Section]]:
        """The DM place's six summary fields (the seed's top-level ones) in a fixed order."""
        return [(name, getattr(self.user, name)) for name in USER_SECTIONS] + [
            (name, getattr(self.history, name)) for name in HISTORY_SECTIONS
        ]

    def summary_places(self) -> list[str]:
        """Every place that has a set of summaries: DMs, then the others as stored."""
        return [DM_PLACE, *self.places]

    def place_memory(self, place: str) -> PlaceMemory:
        """The summaries of `place` (the DM place's are the top-level fields, shared, not copied)."""
        if place == DM_PLACE:
            return PlaceMemory(user=self.user, history=self.history)
        return self.places.get(place) or PlaceMemory()

    def set_place_memory(self, place: str, summaries: PlaceMemory) -> None:
        if place == DM_PLACE:
            self.user, self.history = summaries.user, summaries.history
        elif summaries.is_empty() and not summaries.has_history() and not summaries.model_extra:
            self.places.pop(place, None)
        else:
            self.places[place] = summaries

    def sections_of(self, place: str) -> list[tuple[str, Section]]:
        return self.sections() if place == DM_PLACE else self.place_memory(place).sections()

    def is_empty(self) -> bool:
        return not self.facts and all(self.place_memory(place).is_empty() for place in self.summary_places())

    def fact_by_id(self, fact_id: str) -> Fact | None:
        return next((fact for fact in self.facts if fact.id == fact_id), None)

    def live_facts(self) -> list[Fact]:
        """The facts that hold now (not closed by a later statement)."""
        return [fact for fact in self.facts if not fact.closed]

    def reopen_replaced(self, *, removed: set[str], since: str | None = None) -> int:
        """Reopen the facts closed by a fact in `removed` (a fact that is gone can no longer stand for them) or,
        with `since`, by a statement made since then; returns how many. What undoes a change puts them back."""
        reopened = 0
        for fact in self.facts:
            if fact.closed and (fact.supersededBy in removed or (since is not None and fact.validTo >= since)):
                fact.reopen()
                reopened += 1
        return reopened

    def section_of(self, place: str, name: str) -> Section:
        """One of the six summaries of `place` by name (`KeyError` for any other name)."""
        return dict(self.sections_of(place))[name]

    def section(self, name: str) -> Section:
        """One of the DM place's six summaries by name (`KeyError` for any other name)."""
        if name in USER_SECTIONS:
            return getattr(self.user, name)  # type: ignore[no-any-return]
        if name in HISTORY_SECTIONS:
            return getattr(self.history, name)  # type: ignore[no-any-return]
        raise KeyError(name)


# --- conversation turns -----------------------------------------------------------------------------------

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """A chat message as the filter sees it: plain data, translated from Discord by the cogs."""

    message_id: int
    author_id: int
    author_name: str
    content: str
    created_at: datetime
    author_is_bot: bool = False
    is_self: bool = False  # written by this bot
    is_system: bool = False
    attachment_count: int = 0
    reply_to_id: int | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One filtered turn of conversation: what the extractor reads and the debouncer batches."""

    role: Role
    author_id: int
    author_name: str
    text: str
    at: datetime
    turn_id: str = ""
    reply_to: str = ""  # the bot's reply: the id of the message it answers (dropped with it when it is deleted)
    # The user's forget generation when the turn arrived (see `bot.memory.drivers.interfaces`): work under an
    # older one is never learned. Not part of the JSON: each store keeps it its own way.
    generation: int = 0

    def to_json(self) -> dict[str, Any]:
        data = {
            "role": self.role,
            "authorId": str(self.author_id),
            "authorName": self.author_name,
            "text": self.text,
            "at": iso(self.at),
            "turnId": self.turn_id,
        }
        if self.reply_to:
            data["replyTo"] = self.reply_to
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        role: Role = "assistant" if data.get("role") == "assistant" else "user"
        at = datetime.fromisoformat(str(data["at"]))
        if at.tzinfo is None:  # written by hand or by an old version: our timestamps are always UTC
            at = at.replace(tzinfo=UTC)
        return cls(
            role=role,
            author_id=int(data["authorId"]),
            author_name=str(data.get("authorName", "")),
            text=str(data["text"]),
            at=at,
            turn_id=str(data.get("turnId", "")),
            reply_to=str(data.get("replyTo", "")),
        )


PlaceKind = Literal["dm", "guild", "channel", "nsfw"]
NSFW_KIND = "nsfw"  # an age-restricted place: its key is `nsfw:<server id>` (public ones) or `nsfw:<channel id>`


@dataclass(frozen=True, slots=True)
class Place:
    """Where a turn happened. `id` is the guild id for `guild`, the channel or thread id for `channel`."""

    kind: PlaceKind = "dm"
    id: int = 0
    guild_id: int = 0  # the server of a `channel` place (the id of a `guild` place repeats here)

    @classmethod
    def dm(cls) -> Place:
        return cls()

    @classmethod
    def guild(cls, guild_id: int) -> Place:
        return cls("guild", guild_id, guild_id)

    @classmethod
    def channel(cls, channel_id: int, guild_id: int) -> Place:
        return cls("channel", channel_id, guild_id)

    @classmethod
    def nsfw(cls, place_id: int, guild_id: int) -> Place:
        """An age-restricted place: a server's age-restricted channels @everyone can read (`place_id` is the
        server's id), or one restricted age-restricted channel or private thread (its id)."""
        return cls("nsfw", place_id, guild_id)

    @property
    def key(self) -> str:
        """The stable string stored with every fact and summary: `dm`, `guild:<id>`, `channel:<id>` or `nsfw:<id>`."""
        return DM_PLACE if self.kind == "dm" else f"{self.kind}:{self.id}"

    @property
    def guild_key(self) -> str | None:
        """The key of this place's server's public memory (None in DMs)."""
        return None if self.kind == "dm" else f"guild:{self.guild_id}"

    def to_json(self) -> dict[str, str]:
        """For the journal: the key, plus the server of a restricted channel."""
        data = {"place": self.key}
        if self.kind in ("channel", "nsfw"):
            data["guild"] = str(self.guild_id)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Place:
        """The inverse of `to_json`. A record without a place (written before places existed) is a DM: its turns
        can then only teach DM-only memory, never memory a public channel would see."""
        key = data.get("place")
        if key is None or key == DM_PLACE:
            return cls.dm()
        kind, _, number = str(key).partition(":")
        if kind == "guild":
            return cls.guild(int(number))
        if kind == "channel":
            return cls.channel(int(number), int(data["guild"]))
        if kind == NSFW_KIND:
            return cls.nsfw(int(number), int(data["guild"]))
        raise ValueError(f"unknown place {key!r}")


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """Debounce key: one channel-or-thread, one user, and the place the channel is. Batches never mix users
    or places; the place decides what the extraction is shown and where its results go."""

    conversation_id: int
    user_id: int
    place: Place = Place()

    def label(self) -> str:
        return f"{self.conversation_id}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class Location:
    """Where a message was said or a command used: the one value every rule about "where" reads.

    - `place`: who can read it, the key memory is learned and used under (`bot.memory.rules.places`);
    - `conversation_id`: the channel or thread its turns are batched by (0 where there is none);
    - `guild_id` and `channel_id`: the server (None in DMs) and the channel whose memory switches count (a thread's
      parent; None for a server or a category itself);
    - `thread_id` and `category_id`: with the channel and the server, the path community settings are looked up
      along, most specific first (`bot.memory.records.community_settings`).
    Built from Discord objects by one translator (`bot.client.locations.location_of`); the engine only compares."""

    place: Place = Place()
    conversation_id: int = 0
    guild_id: int | None = None
    channel_id: int | None = None
    thread_id: int | None = None
    category_id: int | None = None

    @classmethod
    def dm(cls, conversation_id: int = 0) -> Location:
        """A direct conversation with the bot: no server, so no switch or community setting applies."""
        return cls(Place.dm(), conversation_id)

    def key(self, user_id: int) -> ConversationKey:
        """The debounce key of `user_id`'s turns said here."""
        return ConversationKey(self.conversation_id, user_id, self.place)
