"""Tolerant parsing of the extractor's answer.

Models wrap JSON in code fences, put prose around it, or think aloud in `<think>` blocks first. We find the JSON
object anyway, then validate it; anything that is not an answer of the right shape raises `ExtractionParseError`
and changes nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

from pydantic import ValidationError

from bot.memory.pipeline.answer import ExtractionResult

MAX_ANSWER_CHARS = 200_000
MAX_FAILED_STARTS = 100
_EXPECTED_KEYS = {"user", "history", "newFacts", "factsToRemove"}
_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)
_OBJECT_START = re.compile(r'\{\s*["}]')
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class ExtractionParseError(ValueError):
    """The answer holds no usable extraction JSON; the message says why (never the answer itself)."""


def strip_thinking(text: str) -> str:
    """The text without its `<think>…</think>` blocks, in one linear pass (no backtracking regex).

    A closing tag without an opener (some servers strip the opener) means everything before it was thinking; an
    opener never closed (the answer was cut off) means everything after it was.
    """
    kept: list[str] = []
    depth = 0
    position = 0
    for tag in _THINK_TAG.finditer(text):
        if not tag.group(1):  # <think>
            if depth == 0:
                kept.append(text[position : tag.start()])
            depth += 1
        elif depth > 0:  # </think> closing an opener
            depth -= 1
            if depth == 0:
                position = tag.end()
        else:  # </think> with no opener
            kept = []
            position = tag.end()
    if depth == 0:
        kept.append(text[position:])
    return "".join(kept)


def _candidates(text: str) -> list[str]:
    """Places the JSON may be, most likely first: fenced blocks, then the whole text."""
    text = strip_thinking(text)
    return [block for block in _FENCE.findall(text)] + [text]


def _is_extraction(value: object) -> bool:
    return isinstance(value, dict) and bool(_EXPECTED_KEYS & value.keys())


def _first_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` that looks like an extraction answer (or wraps one, one level down).

    Only places where an object can start (`{` then a key or `}`) are tried. A decoded object that is not an
    answer is skipped whole, so its inner objects are not tried one by one; and after `MAX_FAILED_STARTS` places
    that do not decode we stop: each failed attempt costs time proportional to the text (the decoder's error
    message counts lines), so without a cap a page of `{"` would take quadratic time.
    """
    decoder = json.JSONDecoder()
    failures = 0
    position = 0
    while (match := _OBJECT_START.search(text, position)) is not None:
        start = match.start()
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            failures += 1
            if failures >= MAX_FAILED_STARTS:
                return None
            position = start + 1
            continue
        if _is_extraction(value):
            return cast(dict[str, Any], value)
        if isinstance(value, dict):
            wrapped = next((inner for inner in value.values() if _is_extraction(inner)), None)
            if wrapped is not None:
                return cast(dict[str, Any], wrapped)
        position = end
    return None


def parse_extraction(answer: str | None) -> ExtractionResult:
    """Validate the model's answer into an `ExtractionResult` or raise `ExtractionParseError`."""
    if not answer or not answer.strip():
        raise ExtractionParseError("empty answer")
    if len(answer) > MAX_ANSWER_CHARS:
        raise ExtractionParseError(f"answer too long ({len(answer)} characters)")
    for candidate in _candidates(answer):
        found = _first_object(candidate)
        if found is None:
            continue
        try:
            return ExtractionResult.model_validate(found)
        except ValidationError as error:
            raise ExtractionParseError(f"wrong shape: {error.error_count()} validation errors") from None
        except RecursionError:
            raise ExtractionParseError("answer nests too deeply") from None
    raise ExtractionParseError("no JSON object with extraction fields found")
