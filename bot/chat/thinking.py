"""Keeping a model's reasoning off the screen while its answer streams.

Servers that strip the `<think>` opener (llama.cpp, vLLM and Ollama chat templates for reasoning models) stream the
reasoning as plain text and end it with a lone `</think>`: a display that shows text as it arrives would post the
reasoning and edit it away only at the end, and message loggers keep every edit. So what may be shown of a stream
depends on what the model is known to do (`Reveal`):

- a model that has never answered here is shown nothing until its first answer is complete (`WHOLE`): that answer
  shows whether it sends lone closers;
- a model that has sent a lone `</think>` (or that `THINKING_MODELS` names) is shown nothing before a closing tag
  (`AFTER_CLOSER`), then streams the answer after it;
- every other model streams from its first words (`LIVE`).

What a model does is a `ModelTraits` record: a synchronous read (the reveal decision is made per reply, on the hot
path) and an async record. A model seen sending a lone closer stays that way: a later answer without one never
downgrades it. `RecordModelTraits` keeps the record in the storage (a file under DATA_DIR, or PostgreSQL), so it
survives restarts and is shared by every process.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from enum import Enum, StrEnum
from typing import Protocol

from bot.storage.records import Record, RecordTable

log = logging.getLogger(__name__)

_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)


class Reveal(Enum):
    """How much of a streamed answer may be shown while it arrives."""

    LIVE = "live"  # from the first words
    AFTER_CLOSER = "after_closer"  # nothing before a closing `</think>` has arrived
    WHOLE = "whole"  # nothing until the answer is complete


class ThinkingHabit(StrEnum):
    """What a model has been seen to do with its reasoning."""

    UNKNOWN = "unknown"  # never answered here
    PLAIN = "plain"  # answered without a lone closer
    LONE_CLOSER = "lone_closer"  # has sent a lone `</think>`: everything before it was reasoning


def lone_closer_in(raw: str) -> bool:
    """Whether `raw` has a `</think>` (or `</thinking>`) that closes no opener: the sign of a server that strips
    the opener and streams the reasoning as plain text."""
    depth = 0
    for tag in _TAG.finditer(raw):
        if not tag.group(1):
            depth += 1
        elif depth > 0:
            depth -= 1
        else:
            return True
    return False


def closer_arrived(raw: str) -> bool:
    """Whether any closing tag is in `raw` yet (what an `AFTER_CLOSER` stream waits for)."""
    return any(tag.group(1) for tag in _TAG.finditer(raw))


def may_show(reveal: Reveal, raw: str) -> bool:
    """Whether anything of the partial answer `raw` may be shown under `reveal` (what is shown is then its visible
    part: no thinking, no half-received tag)."""
    if reveal is Reveal.LIVE:
        return True
    if reveal is Reveal.AFTER_CLOSER:
        return closer_arrived(raw)
    return False


class ModelTraits(Protocol):
    """Where what each model does is remembered. `habit` is read on every reply and must not block; `record` is
    called after answers and must keep `LONE_CLOSER` once recorded (a later `PLAIN` is ignored)."""

    def habit(self, model: str) -> ThinkingHabit: ...

    async def record(self, model: str, habit: ThinkingHabit) -> None: ...


class RecordModelTraits:
    """`ModelTraits` over a table of small records (`<model>` -> `{"habit": "plain" | "lone_closer"}`), the
    storage's `model_traits` table: a file under DATA_DIR, or rows every process shares. Reads come from RAM; a
    record that fails to save is kept in RAM until restart (the safe direction: the model's replies are held back
    the same way meanwhile)."""

    def __init__(self, table: RecordTable) -> None:
        self.table = table
        self._unsaved: dict[str, ThinkingHabit] = {}

    def habit(self, model: str) -> ThinkingHabit:
        if model in self._unsaved:
            return self._unsaved[model]
        record = self.table.get(model) or {}
        try:
            return ThinkingHabit(record.get("habit", ThinkingHabit.UNKNOWN))
        except ValueError:
            return ThinkingHabit.UNKNOWN

    async def record(self, model: str, habit: ThinkingHabit) -> None:
        current = self.habit(model)
        if habit is ThinkingHabit.UNKNOWN or current is habit or current is ThinkingHabit.LONE_CLOSER:
            return
        self._unsaved[model] = habit  # in effect at once; the storage follows

        def keep_lone_closer(old: Record | None) -> Record:
            return old if old is not None and old.get("habit") == ThinkingHabit.LONE_CLOSER else {"habit": str(habit)}

        try:
            await self.table.change(model, keep_lone_closer)
        except OSError as error:
            log.warning("could not save what model %s does with its reasoning (%s); kept until restart",
                        model, error.strerror or type(error).__name__)
            return
        self._unsaved.pop(model, None)


class ThinkingGuard:
    """Decides how each reply of a model may be shown, and learns from each answer what the model does.
    `thinking_models` (the operator's `THINKING_MODELS`) are treated as sending lone closers from the start."""

    def __init__(self, traits: ModelTraits, *, thinking_models: Iterable[str] = ()) -> None:
        self.traits = traits
        self.thinking_models = frozenset(thinking_models)

    def reveal_for(self, model: str) -> Reveal:
        if model in self.thinking_models:
            return Reveal.AFTER_CLOSER
        habit = self.traits.habit(model)
        if habit is ThinkingHabit.LONE_CLOSER:
            return Reveal.AFTER_CLOSER
        return Reveal.LIVE if habit is ThinkingHabit.PLAIN else Reveal.WHOLE

    async def learn(self, model: str, raw: str, *, complete: bool) -> None:
        """After an answer (`complete`) or part of one: a lone closer is always recorded; a complete answer
        without one marks the model as plain."""
        if lone_closer_in(raw):
            await self.traits.record(model, ThinkingHabit.LONE_CLOSER)
        elif complete:
            await self.traits.record(model, ThinkingHabit.PLAIN)
