"""The small records of a data folder, for `import-files`: privacy records, reply records, activity days, the
servers' memory switches and their community settings (persona, model, allowed roles), and the message ledger (whose
memory each learned Discord message taught). Today's token counts are not carried over: they are a day's budget,
and start afresh.

Each file is read the way the bot reads it (its own loader, on a copy in a temporary folder where loading could
keep a damaged file aside or sweep temp files), so the import never changes the folder. Rows are inserted only
where missing (by user, by reply message ids, by server or channel), so an import run again adds nothing twice.

What cannot be carried over is said, never skipped silently. A privacy choice that cannot be read (a damaged
privacy or switches file) makes the import incomplete, so the operator looks before the bots run on the
database; the reply records and activity days are only conveniences (the bot itself starts them afresh when they
are unreadable), so those are a note.
"""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import asyncpg

from bot.memory.drivers.bundle import COMMUNITY_FILE, INSTALLATION_FILE, PRIVACY_FILE, SWITCHES_FILE, build_file_storage
from bot.memory.drivers.files.activity import ACTIVITY_FILE
from bot.memory.drivers.files.ledger import LEDGER_FOLDER, FileLedger
from bot.memory.drivers.files.legacy import MODES_FILE, PAUSES_FILE
from bot.memory.drivers.files.replies import REPLIES_FILE, record_from_json
from bot.memory.drivers.interfaces import REPLIES_KEPT
from bot.storage.errors import RecordsUnreadable
from bot.storage.ids import user_key
from bot.storage.pg.database import Database
from bot.storage.quarantine import copies_of


@dataclass(slots=True)
class Records:
    """What one file gave: the rows to insert, and what could not be carried over."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    problem: str | None = None  # makes the import incomplete
    note: str | None = None  # said, but the import is complete without it


def _small_files(folder: Path, names: Sequence[str], scratch: Path) -> None:
    """Copy the named files and the damaged copies kept aside for them into `scratch` (loading may convert or
    move them; the folder itself must not change)."""
    for name in names:
        for path in [folder / name, *copies_of(folder / name)]:
            if path.is_file():
                shutil.copyfile(path, scratch / path.name)


def read_table(folder: Path, kind: str) -> Records:
    """A table of small records (privacy records, memory switches, community settings), read the way the bot reads
    it, on a copy.
    Rows are (key, value); a table the bot would fail closed on (held, unreadable) makes the import incomplete."""
    names = {
        "privacy": [PRIVACY_FILE, PAUSES_FILE, MODES_FILE],
        "switches": [SWITCHES_FILE],
        "community": [COMMUNITY_FILE],
        "installation": [INSTALLATION_FILE],
    }[kind]
    with tempfile.TemporaryDirectory(prefix="memory-bot-import-") as scratch:
        _small_files(folder, names, Path(scratch))
        files = build_file_storage(Path(scratch), durable=False)
        table = {"privacy": files.privacy.table, "switches": files.switches.table, "community": files.community.table,
                 "installation": files.installation.table}[kind]
        try:
            asyncio.run(table.open())
        except RecordsUnreadable as error:
            return Records(problem=f"{error}; then run the import again")
        rows = sorted(table.items().items())
        if table.damaged:
            return Records(
                rows,
                problem=(
                    f"a damaged copy of the {kind} records is kept aside in {folder} (the bot holds learning and "
                    "memory for everyone until an operator has looked): check it, delete it and import again"
                ),
            )
    return Records(rows)


async def insert_table(conn: asyncpg.Connection, rows: list[tuple[Any, ...]], *, kind: str) -> int:
    found = await conn.fetch(
        "INSERT INTO records (kind, key, value) SELECT $1, k, v::jsonb FROM unnest($2::text[], $3::text[]) AS t(k, v)"
        " ON CONFLICT (kind, key) DO NOTHING RETURNING 1",
        kind,
        [key for key, _ in rows],
        [json.dumps(value) for _, value in rows],
    )
    return len(found)


async def count_table(conn: asyncpg.Connection, rows: list[tuple[Any, ...]], *, kind: str) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM records WHERE kind = $1 AND key = ANY($2::text[])", kind, [key for key, _ in rows]
        )
    )


def read_replies(folder: Path) -> Records:
    path = folder / REPLIES_FILE
    if not path.is_file():
        return Records()
    try:
        items = json.loads(path.read_bytes())["replies"]
        replies = [record_from_json(item) for item in items][-REPLIES_KEPT:]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return Records(note=f"{REPLIES_FILE} is unreadable: not imported (it only serves \"What did you remember?\")")
    rows = [
        (user_key(r.user_id), list(r.message_ids), list(r.sections), list(r.fact_ids)) for r in replies if r.message_ids
    ]
    return Records(rows)


def read_activity(folder: Path) -> Records:
    path = folder / ACTIVITY_FILE
    if not path.is_file():
        return Records()
    try:
        days = json.loads(path.read_bytes())["users"]
        rows = sorted((user_key(uid), date.fromisoformat(day)) for uid, day in days.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return Records(note=f"{ACTIVITY_FILE} is unreadable: not imported (memory's own times still count)")
    return Records([(uid, day) for uid, day in rows])


# --- writing -------------------------------------------------------------------------------------------------


_REPLY_INPUT = """
    input AS (
        SELECT n, (e->>0)::bigint AS user_id,
            ARRAY(SELECT jsonb_array_elements_text(e->1)::bigint) AS message_ids,
            ARRAY(SELECT jsonb_array_elements_text(e->2)) AS sections,
            ARRAY(SELECT jsonb_array_elements_text(e->3)) AS fact_ids
        FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(e, n)
    )
"""


def _replies_json(rows: list[tuple[Any, ...]]) -> str:
    records = [[str(uid), [str(m) for m in messages], sections, facts] for uid, messages, sections, facts in rows]
    return json.dumps(records)


async def insert_replies(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    """In the file's order (oldest first), so the database keeps the same newest ones; a reply is known by its
    message ids."""
    found = await conn.fetch(
        f"WITH {_REPLY_INPUT}"  # noqa: S608 (a constant, no input)
        " INSERT INTO reply_records (user_id, message_ids, sections, fact_ids)"
        " SELECT user_id, message_ids, sections, fact_ids FROM input"
        " WHERE NOT EXISTS (SELECT 1 FROM reply_records AS r WHERE r.message_ids = input.message_ids)"
        " ORDER BY n RETURNING 1",
        _replies_json(rows),
    )
    return len(found)


async def count_replies(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    return int(
        await conn.fetchval(
            f"WITH {_REPLY_INPUT}"  # noqa: S608 (a constant, no input)
            " SELECT count(*) FROM input"
            " WHERE EXISTS (SELECT 1 FROM reply_records AS r WHERE r.message_ids = input.message_ids)",
            _replies_json(rows),
        )
    )


async def insert_activity(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    found = await conn.fetch(
        "INSERT INTO user_activity (user_id, last_day) SELECT * FROM unnest($1::bigint[], $2::date[])"
        " ON CONFLICT DO NOTHING RETURNING 1",
        [uid for uid, _ in rows],
        [day for _, day in rows],
    )
    return len(found)


async def count_activity(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM user_activity WHERE user_id = ANY($1::bigint[])", [uid for uid, _ in rows]
        )
    )


def read_ledger(folder: Path) -> Records:
    """The message ledger's entries (ids, places, times), read by the bot's own loader on a copy."""
    source = folder / LEDGER_FOLDER
    if not source.is_dir():
        return Records()
    with tempfile.TemporaryDirectory(prefix="memory-bot-import-") as scratch:
        copy = Path(scratch) / LEDGER_FOLDER
        shutil.copytree(source, copy)
        ledger = FileLedger(copy, durable=False)
        asyncio.run(ledger.open())
        entries = asyncio.run(ledger.lookup(list(ledger.messages())))
    rows = [(int(m), e.user_id, e.place, e.learned_at, e.cited) for m, e in sorted(entries.items())]
    return Records([row for row in rows if row[0] < 2**63 and row[1] < 2**63])


async def insert_ledger(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    found = await conn.fetch(
        "INSERT INTO message_ledger (message_id, user_id, place, learned_at, cited)"
        " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::boolean[])"
        " ON CONFLICT (message_id) DO NOTHING RETURNING 1",
        *[list(column) for column in zip(*rows, strict=True)],
    )
    return len(found)


async def count_ledger(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM message_ledger WHERE message_id = ANY($1::bigint[])", [row[0] for row in rows]
        )
    )


Insert = Callable[[asyncpg.Connection, list[tuple[Any, ...]]], Any]


@dataclass(frozen=True, slots=True)
class RecordKind:
    name: str  # as the report says it: "pauses", "reply records", ...
    read: Callable[[Path], Records]
    insert: Insert
    count: Insert
    user_of: Callable[[tuple[Any, ...]], int | None]  # whose record a row is (None: nobody's)


def _table(kind: str) -> tuple[Insert, Insert]:
    return functools.partial(insert_table, kind=kind), functools.partial(count_table, kind=kind)


def _nobody(_row: tuple[Any, ...]) -> None:
    return None


def _first_user(row: tuple[Any, ...]) -> int | None:
    value = row[0]
    return int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else None


def record_kinds() -> list[RecordKind]:
    return [
        RecordKind("privacy records", lambda folder: read_table(folder, "privacy"), *_table("privacy"), _first_user),
        RecordKind("reply records", read_replies, insert_replies, count_replies, _first_user),
        RecordKind("activity days", read_activity, insert_activity, count_activity, _first_user),
        RecordKind("memory switches", lambda folder: read_table(folder, "switches"), *_table("switches"), _nobody),
        RecordKind("community settings", lambda folder: read_table(folder, "community"), *_table("community"),
                   _nobody),
        RecordKind("message ledger entries", read_ledger, insert_ledger, count_ledger, lambda row: int(row[1])),
        # The key the imported fingerprints of forgotten facts were made with (a database that made its own keeps
        # its own: then those fingerprints no longer match, and what they guarded can be learned again).
        RecordKind("installation key", lambda folder: read_table(folder, "installation"), *_table("installation"),
                   _nobody),
    ]


async def insert_and_count(database: Database, kind: RecordKind, rows: list[tuple[Any, ...]]) -> tuple[int, int]:
    """Insert what is missing (one transaction) and count what the database holds of `rows` afterwards."""
    if not rows:
        return 0, 0

    async def work(conn: asyncpg.Connection) -> tuple[int, int]:
        added = int(await kind.insert(conn, rows))
        return added, int(await kind.count(conn, rows))

    return await database.run(work)

