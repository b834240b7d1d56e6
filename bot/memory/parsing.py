"""Tolerant parsing of the extractor's answer.

Models wrap JSON in code fences, put prose around it, or think aloud in `<think>` blocks first. We find the JSON
object anyway, then validate it; anything that is not an answer of the right shape raises `ExtractionParseError`
and changes nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from bot.memory.models import ExtractionResult

MAX_ANSWER_CHARS = 200_000
_EXPECTED_KEYS = {"user", "history", "newFacts", "factsToRemove"}
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_UNCLOSED_THINK = re.compile(r"^.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class ExtractionParseError(ValueError):
    """The answer holds no usable extraction JSON; the message says why (never the answer itself)."""


def _candidates(text: str) -> list[str]:
    """Places the JSON may be, most likely first: fenced blocks, then the whole text."""
    text = _THINK.sub("", text)
    if "</think" in text.lower():
        text = _UNCLOSED_THINK.sub("", text)
    return [block for block in _FENCE.findall(text)] + [text]


def _first_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` that looks like an extraction answer."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and _EXPECTED_KEYS & value.keys():
            return value
        start = text.find("{", start + 1)
    return None


def parse_extraction(answer: str | None) -> ExtractionResult:
    """Validate the model's answer into an `ExtractionResult` or raise `ExtractionParseError`."""
    if not answer or not answer.strip():
        raise ExtractionParseError("empty answer")
    if len(answer) > MAX_ANSWER_CHARS:
        raise ExtractionParseError(f"answer too long ({len(answer)} characters)")
    for candidate in _candidates(answer):
        try:
            found = _first_object(candidate)
        except RecursionError:
            raise ExtractionParseError("answer nests too deeply") from None
        if found is None:
            continue
        try:
            return ExtractionResult.model_validate(found)
        except ValidationError as error:
            raise ExtractionParseError(f"wrong shape: {error.error_count()} validation errors") from None
    raise ExtractionParseError("no JSON object with extraction fields found")
