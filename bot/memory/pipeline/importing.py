"""Reading a memory file brought from elsewhere (`/memory import`), and sorting what it holds. Pure: no I/O.

Two formats: the bot's own `/memory export` JSON (its open facts, with their category and dates: a round trip gives
back the same facts), and plain text or Markdown with one memory per line or bullet, as ChatGPT's "Manage memories",
Claude's and Gemini's memory views give them when copied (headings, rules, code fences and empty lines are skipped).
Anything else is refused whole with one line (`InvalidRequest`), before anything is stored: a file over
`MAX_IMPORT_BYTES`, an archive or an image, text that is not UTF-8, JSON that is no export, an export of someone
else, or a file with nothing to import.

`sort_items` then says, for each memory, whether it is new, already known (a near duplicate of a fact that holds, or
of an earlier line), refused (a credential, named by its kind and never repeated; what the poisoning guard refuses;
too long), or sensitive (health, sex life, religion, politics, finances: imported only when the user says so). The
credential and sensitive checks are the engine's own (`bot.memory.rules.credentials`, `bot.memory.rules.sensitive`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from bot.memory.errors import InvalidRequest, Phrase
from bot.memory.models import FACT_CATEGORIES, Fact, MemoryFile
from bot.memory.rules.credentials import credential_kind
from bot.memory.rules.findings import named_kind
from bot.memory.rules.guard import rejection_reason
from bot.memory.rules.sensitive import categories_in

MAX_IMPORT_BYTES = 1024 * 1024
MAX_IMPORT_FACT_CHARS = 400  # as a fact the user types (`/memory remember`)
KEPT_FIELDS = ("eventDate", "validUntil", "observedAt", "shared")  # what an export's fact brings besides its words

_ZIP, _COMPRESSED, _IMAGE = Phrase("a zip archive"), Phrase("a compressed archive"), Phrase("an image")
_SIGNATURES = (
    (b"PK\x03\x04", _ZIP), (b"PK\x05\x06", _ZIP), (b"\x1f\x8b", _COMPRESSED), (b"7z\xbc\xaf", _COMPRESSED),
    (b"Rar!", _COMPRESSED), (b"%PDF", Phrase("a PDF document")), (b"\x89PNG", _IMAGE), (b"\xff\xd8\xff", _IMAGE),
    (b"GIF8", _IMAGE), (b"RIFF", Phrase("an image or a media file")),
)
_FORMATS = Phrase("the JSON of /memory export, or a text or Markdown file with one memory per line")
_SKIPPED = re.compile(r"^(?:#|```|~~~|---|\*\*\*|===|\|)")
_BULLET = re.compile(r"^(?:[-*+•·▪◦‣–—]|\d{1,3}[.)]|\[[ xX]\])\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ImportItem:
    """One memory read from a file: its words, its category, where in the file it was (a line, or a fact's
    position in an export) and, from an export, the fact's other fields (`KEPT_FIELDS`)."""

    content: str
    line: int
    category: str = "context"
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SortedImport:
    """What an import would do. `refused` holds one line per refused item, never its text."""

    adding: list[ImportItem] = field(default_factory=list)
    known: list[ImportItem] = field(default_factory=list)
    refused: list[Phrase] = field(default_factory=list)
    sensitive: list[tuple[ImportItem, str]] = field(default_factory=list)  # with the kind of data


def too_large(size: int) -> InvalidRequest:
    return InvalidRequest(
        "That file is {size} MB; an import can be at most 1 MB. Nothing was imported.",
        size=round(size / 1024 / 1024, 1),
    )


def read_items(data: bytes, *, user_id: int) -> list[ImportItem]:
    """The memories in a file (see the module); `InvalidRequest` with one line when it cannot be imported."""
    if len(data) > MAX_IMPORT_BYTES:
        raise too_large(len(data))
    for signature, kind in _SIGNATURES:
        if data.startswith(signature):
            raise InvalidRequest("That file is {kind}; I can import {formats}. Nothing was imported.", kind=kind,
                                 formats=_FORMATS)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidRequest(
            "That file is not UTF-8 text; I can import {formats}. Nothing was imported.", formats=_FORMATS
        ) from None
    if _CONTROL.search(text):
        raise InvalidRequest(
            "That file is not in a format I know; I can import {formats}. Nothing was imported.", formats=_FORMATS
        )
    stripped = text.lstrip()
    items = _export_items(stripped, user_id) if stripped[:1] in {"{", "["} else _lines(text)
    if not items:
        raise InvalidRequest("That file holds no memories to import (one per line or bullet). Nothing was imported.")
    return items


def _export_items(text: str, user_id: int) -> list[ImportItem]:
    """The open facts of a `/memory export` file of `user_id`."""
    not_an_export = InvalidRequest(
        "That JSON file is not a /memory export; I can import {formats}. Nothing was imported.", formats=_FORMATS
    )
    try:
        data = json.loads(text)
    except ValueError:
        raise not_an_export from None
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list) or "version" not in data:
        raise not_an_export
    owner = data.get("exportedFor")
    if owner is not None and str(owner) != str(user_id):
        raise InvalidRequest("That file is someone else's memory export: I only import your own. Nothing was imported.")
    try:
        memory = MemoryFile.model_validate(data)
    except ValidationError:
        raise not_an_export from None
    return [_from_fact(fact, number) for number, fact in enumerate(memory.facts, 1) if not fact.closed]


def _from_fact(fact: Fact, number: int) -> ImportItem:
    fields = {name: getattr(fact, name) for name in KEPT_FIELDS if getattr(fact, name)}
    category = fact.category if fact.category in FACT_CATEGORIES else "context"
    return ImportItem(" ".join(fact.content.split()), number, category, fields)


def _lines(text: str) -> list[ImportItem]:
    """One memory per non-empty line, bullets and numbering taken off; headings, rules and fences skipped."""
    items = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or _SKIPPED.match(line):
            continue
        while (bare := _BULLET.sub("", line, count=1)) != line:
            line = bare.strip()
        line = " ".join(line.split())
        if line:
            items.append(ImportItem(line, number))
    return items


def sort_items(
    items: Sequence[ImportItem], holding: Sequence[Fact], *, duplicate: Callable[[list[Fact], str], Fact | None]
) -> SortedImport:
    """Sort each item (see the module); `duplicate(facts, text)` finds a near duplicate of `text` among `facts`."""
    result = SortedImport()
    seen = list(holding)
    for item in items:
        refusal = _refusal(item.content)
        if refusal is not None:
            line = not item.fields and item.category == "context"
            result.refused.append(
                Phrase("line {number}: {refusal}", number=item.line, refusal=refusal) if line
                else Phrase("item {number}: {refusal}", number=item.line, refusal=refusal)
            )
            continue
        if duplicate(seen, item.content) is not None:
            result.known.append(item)
            continue
        seen.append(Fact(id="", content=item.content))
        kinds = sorted(categories_in(item.content))
        if kinds:
            result.sensitive.append((item, kinds[0]))
        else:
            result.adding.append(item)
    return result


def _refusal(content: str) -> Phrase | None:
    """Why an item may not be imported at all, without repeating it; None when it may."""
    kind = credential_kind(content)
    if kind is not None:
        return Phrase("refused, it holds {kind} (never stored or shown)", kind=named_kind(kind))
    if len(content) > MAX_IMPORT_FACT_CHARS:
        return Phrase("refused, longer than {most} characters", most=MAX_IMPORT_FACT_CHARS)
    reason = rejection_reason(content)
    return Phrase("refused, {reason}", reason=Phrase(reason)) if reason else None
