"""The extractor's answer: the JSON shape docs/architecture.md fixes, validated tolerantly.

Models write confidence as 0.9, "0.9", "90%" or "high", `null` for "nothing to say", unknown categories and stray
fields; every model here accepts those and reads them the one safe way, so a sloppy answer loses only what cannot
be read, never the whole batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from bot.memory.models import FACT_CATEGORIES, HISTORY_SECTIONS, USER_SECTIONS
from bot.memory.rules.sensitive import marked_category


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
    # The model's mark for health, sex life, religion, politics or finances (None: not marked); see `sensitive`.
    sensitive: str | None = None
    # Time: the time words as the user said them ("next Friday"), and the date the model counted from them; the
    # code resolves the words itself and uses the model's date only for words it cannot read
    # (`bot.memory.pipeline.dates`).
    when: str | None = None
    eventDate: str | None = None
    # The last day the fact holds, when the model says it is time-boxed (`bot.memory.pipeline.lifetimes`).
    validUntil: str | None = None
    # Ids of stored facts this one makes no longer true ("moved to Lyon" replaces "lives in Paris"): they are
    # closed as history when this fact is stored, and stay as they are when it is not.
    replaces: list[str] = Field(default_factory=list)

    @field_validator("sensitive", mode="before")
    @classmethod
    def _sensitive(cls, value: Any) -> str | None:
        return marked_category(value)

    @field_validator("when", "eventDate", "validUntil", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> str | None:
        """Text, or None for anything else (a number, an object, an empty string)."""
        return (value.strip()[:100] or None) if isinstance(value, str) else None

    @field_validator("replaces", mode="before")
    @classmethod
    def _replaced_ids(cls, value: Any) -> list[str]:
        """One id or a list of them; anything else means none."""
        items = [value] if isinstance(value, str | int) and not isinstance(value, bool) else value
        if not isinstance(items, list):
            return []
        return [str(item) for item in items if isinstance(item, str | int) and not isinstance(item, bool)]

    @model_serializer(mode="wrap")
    def _without_empty_marks(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Facts without the optional fields keep the documented shape (content, category, confidence)."""
        data = handler(self)
        if isinstance(data, dict):
            for name in ("sensitive", "when", "eventDate", "validUntil", "replaces"):
                if not data.get(name):
                    data.pop(name, None)
        return data

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


@dataclass(slots=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    extra: dict[str, int] = field(default_factory=dict)
