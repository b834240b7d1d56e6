"""Data shapes of the memory engine: the memory file, a fact, a conversation turn, and the extractor's answer.

The memory file keeps the original format's fields (docs/architecture.md). Every model allows extra fields so a
file written by a newer or older version keeps what this version does not know about through a load/save round trip.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

MEMORY_VERSION = "1.0"
USER_SECTIONS = ("workContext", "personalContext", "topOfMind")
HISTORY_SECTIONS = ("recentMonths", "earlierContext", "longTermBackground")
FACT_CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "relationship")
SECTION_NAMES = USER_SECTIONS + HISTORY_SECTIONS
ORIGIN_USER = "user"  # a fact the user wrote with `/memory remember`
ORIGIN_CORRECTED = "corrected"  # a fact the user rewrote with `/memory edit`
USER_ORIGINS = frozenset({ORIGIN_USER, ORIGIN_CORRECTED})
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
    id: str
    content: str
    category: str = "context"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    createdAt: str = ""
    source: str = ""
    lastConfirmedAt: str = ""
    # "" learned by the model; "user" written by the user; "corrected" rewritten by the user (written only when set)
    origin: str = ""

    @field_validator("origin", mode="before")
    @classmethod
    def _known_origin(cls, value: Any) -> str:
        """Anything but a known marker reads as "learned by the model": a stray value never costs the whole file."""
        return value if isinstance(value, str) and value in USER_ORIGINS else ""

    @model_serializer(mode="wrap")
    def _without_empty_origin(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not self.origin:
            data.pop("origin", None)
        return data

    @property
    def user_owned(self) -> bool:
        """Written or corrected by the user: only the user may remove it; the model never does."""
        return self.origin in USER_ORIGINS


class MemoryFile(_Open):
    """One user's whole memory, as stored in `DATA_DIR/memory/<user id>.json`."""

    version: str = MEMORY_VERSION
    user: UserContext = Field(default_factory=UserContext)
    history: HistoryContext = Field(default_factory=HistoryContext)
    facts: list[Fact] = Field(default_factory=list)
    appliedTurnIds: list[str] = Field(default_factory=list)

    def sections(self) -> list[tuple[str, Section]]:
        """The six summary fields in a fixed order, for rendering and display."""
        return [(name, getattr(self.user, name)) for name in USER_SECTIONS] + [
            (name, getattr(self.history, name)) for name in HISTORY_SECTIONS
        ]

    def is_empty(self) -> bool:
        return not self.facts and not any(section.summary for _, section in self.sections())

    def fact_by_id(self, fact_id: str) -> Fact | None:
        return next((fact for fact in self.facts if fact.id == fact_id), None)

    def section(self, name: str) -> Section:
        """One of the six summaries by name (`KeyError` for any other name)."""
        if name in USER_SECTIONS:
            return getattr(self.user, name)  # type: ignore[no-any-return]
        if name in HISTORY_SECTIONS:
            return getattr(self.history, name)  # type: ignore[no-any-return]
        raise KeyError(name)


# --- the extractor's answer -------------------------------------------------------------------------------


def _coerce_confidence(value: Any) -> float:
    """LLMs write confidence as 0.9, "0.9", "90%", "high" or null; turn all of them into [0, 1]."""
    words = {"very high": 0.95, "high": 0.9, "medium": 0.7, "moderate": 0.7, "low": 0.4, "very low": 0.2}
    if value is None or isinstance(value, bool):
        return 0.0
    if isinstance(value, str):
        text = value.strip().lower()
        if text in words:
            return words[text]
        percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            return 0.0
        value = number / 100 if percent else number
    if not isinstance(value, int | float):
        return 0.0
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float: nonsense, not certainty
        return 0.0
    if not math.isfinite(number):
        return 0.0
    if 1.0 < number <= 100.0:
        number /= 100  # "85" meant 85 %
    return min(1.0, max(0.0, number))


class SectionUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    summary: str = ""
    shouldUpdate: bool = False

    @field_validator("summary", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("shouldUpdate", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() in {"true", "yes", "1"}
        return bool(value) if value is not None else False


def _none_as_empty(value: Any) -> Any:
    """Models write `null` for "nothing to say"; treat it as the empty default rather than a wrong shape."""
    return {} if value is None else value


class UserUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    workContext: SectionUpdate = Field(default_factory=SectionUpdate)
    personalContext: SectionUpdate = Field(default_factory=SectionUpdate)
    topOfMind: SectionUpdate = Field(default_factory=SectionUpdate)

    _sections = field_validator("*", mode="before")(_none_as_empty)


class HistoryUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    recentMonths: SectionUpdate = Field(default_factory=SectionUpdate)
    earlierContext: SectionUpdate = Field(default_factory=SectionUpdate)
    longTermBackground: SectionUpdate = Field(default_factory=SectionUpdate)

    _sections = field_validator("*", mode="before")(_none_as_empty)


class NewFact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str
    category: str = "context"
    confidence: float = 0.0

    @field_validator("confidence", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> float:
        return _coerce_confidence(value)

    @field_validator("category", mode="before")
    @classmethod
    def _category(cls, value: Any) -> str:
        text = str(value or "context").strip().lower()
        return text if text in FACT_CATEGORIES else "context"

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value


class ExtractionResult(BaseModel):
    """The extractor LLM's JSON answer, in the shape docs/architecture.md fixes."""

    model_config = ConfigDict(extra="ignore")

    user: UserUpdate = Field(default_factory=UserUpdate)
    history: HistoryUpdate = Field(default_factory=HistoryUpdate)
    newFacts: list[NewFact] = Field(default_factory=list)
    factsToRemove: list[str] = Field(default_factory=list)

    _parts = field_validator("user", "history", mode="before")(_none_as_empty)

    @field_validator("newFacts", "factsToRemove", mode="before")
    @classmethod
    def _list(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("factsToRemove", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [str(item) for item in value if isinstance(item, str | int)]
        return value

    def section_updates(self) -> list[tuple[str, SectionUpdate]]:
        return [(name, getattr(self.user, name)) for name in USER_SECTIONS] + [
            (name, getattr(self.history, name)) for name in HISTORY_SECTIONS
        ]


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

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "authorId": str(self.author_id),
            "authorName": self.author_name,
            "text": self.text,
            "at": iso(self.at),
            "turnId": self.turn_id,
        }

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
        )


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """Debounce key: one channel-or-thread and one user. Batches never mix users."""

    conversation_id: int
    user_id: int

    def label(self) -> str:
        return f"{self.conversation_id}:{self.user_id}"


@dataclass(slots=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    extra: dict[str, int] = field(default_factory=dict)
