"""Settings errors in plain words: the setting's name, what was given and what is allowed, in one phrase.

pydantic's own wording ("Input should be a valid integer, unable to parse string as an integer") is written for
programmers; an operator editing `.env` needs "MEMORY_TOP_K must be a whole number (given 'many')". The value given
is quoted so a typo is visible at once when it is short; a long one is described by its length only, since it may
be a secret pasted into the wrong line; a secret setting's value is never repeated, not even in part.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

MAX_GIVEN_CHARS = 20  # longer values may be a key or a token pasted into the wrong setting

_PHRASES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "int_parsing": lambda _: "must be a whole number",
    "int_from_float": lambda _: "must be a whole number",
    "int_type": lambda _: "must be a whole number",
    "float_parsing": lambda _: "must be a number",
    "float_type": lambda _: "must be a number",
    "bool_parsing": lambda _: "must be true or false",
    "bool_type": lambda _: "must be true or false",
    "literal_error": lambda ctx: f"must be one of {ctx.get('expected', '?')}",
    "greater_than_equal": lambda ctx: f"must be at least {ctx.get('ge')}",
    "greater_than": lambda ctx: f"must be more than {ctx.get('gt')}",
    "less_than_equal": lambda ctx: f"must be at most {ctx.get('le')}",
    "less_than": lambda ctx: f"must be less than {ctx.get('lt')}",
    "string_type": lambda _: "must be text",
    "path_type": lambda _: "must be a folder path",
}

_LIST_SETTINGS = {"int": "ids (whole numbers) separated by commas"}


def given(value: object) -> str:
    """The value as the operator wrote it, quoted, or only its length when it is long."""
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    if len(text) > MAX_GIVEN_CHARS:
        return f"a value of {len(text)} characters"
    return repr(text)


def _custom(item: Mapping[str, Any]) -> str:
    """A validator's own message (already plain), or a list of ids that did not parse."""
    error = (item.get("ctx") or {}).get("error")
    text = str(error) if error is not None else str(item.get("msg", ""))
    if text.startswith("invalid literal for int()"):
        return f"must be {_LIST_SETTINGS['int']}"
    return text.removeprefix("Value error, ") or "is not valid"


def plain_problem(item: Mapping[str, Any], *, secret_names: Collection[str]) -> str:
    """One phrase for one pydantic error: `NAME must ... (given '...')`, never the value of a secret."""
    field = str(item["loc"][0]) if item.get("loc") else "settings"
    name = field.upper()
    kind = str(item.get("type", ""))
    if kind == "missing":
        return f"{name} is required but not set"
    phrase = _PHRASES.get(kind)
    words = phrase(item.get("ctx") or {}) if phrase is not None else _custom(item)
    if field in secret_names or "input" not in item:
        return f"{name} {words}"
    return f"{name} {words} (given {given(item['input'])})"
