"""Everything the bot has stored, read raw: every file under DATA_DIR and, with DATABASE_URL, every row of every
table in the bot's schema.

Privacy tests check these bytes rather than what the engine's API shows, so a copy kept aside, a journal line, a
summary's earlier value or a record in a table nobody thought of is seen too. Nothing here knows the formats:
records are raw text plus the JSON they parse to, if any.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from bot.config import Settings


@dataclass(frozen=True)
class Stored:
    """One stored record: a whole file, one line of a JSON-lines file, or one table row (as `to_jsonb`)."""

    where: str  # "memory/111.json", "pending.jsonl line 3", "table memories row 2"
    text: str  # as stored (files decoded as UTF-8, undecodable bytes replaced)
    value: Any = None  # the JSON it parses to; None when it is not JSON
    path: Path | None = None  # the file, relative to DATA_DIR
    table: str = ""


def _parse(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def stored_files(data_dir: Path) -> list[Stored]:
    """Every file under `data_dir`: JSON as one record, JSON lines as one record per line, anything else raw.

    The bot may be writing meanwhile: a temporary file listed here can be renamed over its target before it is read
    (an atomic write finishing), and that target may not have been listed. The walk then starts again, so a file
    never goes unread because another one vanished."""
    while True:
        try:
            return _stored_files_once(data_dir)
        except FileNotFoundError:
            continue


def _stored_files_once(data_dir: Path) -> list[Stored]:
    records: list[Stored] = []
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(data_dir)
        text = path.read_bytes().decode("utf-8", "replace")
        parsed, value = _parse(text)
        if parsed:
            records.append(Stored(str(relative), text, value, relative))
            continue
        lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        as_json = [(number, line, *_parse(line)) for number, line in lines]
        if lines and all(ok for _, _, ok, _ in as_json):
            records += [Stored(f"{relative} line {n}", line, v, relative) for n, line, _, v in as_json]
        else:
            records.append(Stored(str(relative), text, None, relative))
    return records


async def stored_rows(database_url: str) -> list[Stored]:
    """Every row of every table in the database's current schema, as its `to_jsonb` text."""
    conn = await asyncpg.connect(database_url)
    try:
        tables = [
            row["table_name"]
            for row in await conn.fetch(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
            )
        ]
        records: list[Stored] = []
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            rows = await conn.fetch(f"SELECT to_jsonb(t)::text AS row FROM {quoted} t")
            for number, row in enumerate(rows, 1):
                text = str(row["row"])
                records.append(Stored(f"table {table} row {number}", text, json.loads(text), table=table))
        return records
    finally:
        await conn.close()


async def everything_stored(settings: Settings) -> list[Stored]:
    """The files under DATA_DIR, and the database's rows when the bot uses one."""
    records = stored_files(settings.data_dir) if settings.data_dir.exists() else []
    if settings.database_url is not None:
        records += await stored_rows(settings.database_url.get_secret_value())
    return records


def stored_text(records: list[Stored]) -> str:
    """All records' text, one after the other: for "this word is stored nowhere" checks."""
    return "\n".join(record.text for record in records)


_BASE64_LETTER = "A-Za-z0-9+/="


def words_in_clear(words: tuple[str, ...], stored: bytes) -> list[str]:
    """The `words` that `stored` holds as words of plain text: not touched on either side by a base64 letter.

    Sealed values are base64, where a short word turns up by chance now and then across runs of the suite; a plain
    copy of it (a JSON string, a table column, a log line) has a space, a quote or a stop beside it."""
    return [
        word
        for word in words
        if re.search(rf"(?<![{_BASE64_LETTER}]){re.escape(word)}(?![{_BASE64_LETTER}])".encode(), stored)
    ]


def user_of(record: Stored) -> int | None:
    """Whose record this is: the row's `user_id`, or the number a file is named after (`memory/<user id>.json`)."""
    if isinstance(record.value, dict) and "user_id" in record.value:
        return int(record.value["user_id"])
    if record.path is not None:
        number = re.search(r"\d+", record.path.name)  # also a copy kept aside or a file being written
        return int(number.group(0)) if number else None
    return None


def memory_documents(records: list[Stored]) -> list[tuple[int | None, Stored, dict[str, Any]]]:
    """(user id, record, document) for every stored memory document: a JSON object with a `facts` list and a
    `user` object, anywhere inside a record (a whole file, or a column of a row). The user is the row's `user_id`
    or the number the file is named after."""
    found: list[tuple[int | None, Stored, dict[str, Any]]] = []

    def walk(value: Any, record: Stored) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("facts"), list) and isinstance(value.get("user"), dict):
                found.append((user_of(record), record, value))
                return
            for inner in value.values():
                walk(inner, record)
        elif isinstance(value, list):
            for inner in value:
                walk(inner, record)

    for record in records:
        walk(record.value, record)
    return found
