"""The small records of a data folder, for `import-files`: pauses, privacy modes, reply records, activity days and
the servers' memory switches.

Each file is read the way the bot reads it (its own loader, on a copy in a temporary folder where loading could
keep a damaged file aside or sweep temp files), so the import never changes the folder. Rows are inserted only
where missing (by user, by reply message ids, by server or channel), so an import run again adds nothing twice.

What cannot be carried over is said, never skipped silently. A privacy choice that cannot be read (a damaged pause
list, modes or switches file) makes the import incomplete, so the operator looks before the bots run on the
database; the reply records and activity days are only conveniences (the bot itself starts them afresh when they
are unreadable), so those are a note.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

from bot.memory.models import utc_now
from bot.memory.modes import UNTIL_RESUME, ModeRegistry
from bot.memory.pauses import PauseRegistry
from bot.memory.replies import REPLIES_KEPT, ReplyRecord
from bot.memory.retention import ACTIVITY_FILE
from bot.storage.ids import user_key
from bot.storage.pg.database import Database
from bot.storage.quarantine import copies_of
from bot.switches import SWITCHES_FILE, MemorySwitches, SwitchesFileError

PAUSES_FILE = "paused.json"
MODES_FILE = "modes.json"
REPLIES_FILE = "replies.json"

_T = TypeVar("_T")


@dataclass(slots=True)
class Records:
    """What one file gave: the rows to insert, and what could not be carried over."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    problem: str | None = None  # makes the import incomplete
    note: str | None = None  # said, but the import is complete without it


def _on_a_copy(path: Path, read: Callable[[Path], _T]) -> _T:
    """`read` applied to a private copy of `path` (which exists), so whatever loading does stays off the folder."""
    with tempfile.TemporaryDirectory(prefix="memory-bot-import-") as scratch:
        copy = Path(scratch) / path.name
        shutil.copyfile(path, copy)
        return read(copy)


def read_pauses(folder: Path) -> Records:
    path = folder / PAUSES_FILE
    records = Records()
    if path.is_file():

        def load(copy: Path) -> tuple[set[int], bool]:
            registry = PauseRegistry(copy)
            registry.load()
            return registry.paused_users(), registry.held

        paused, damaged = _on_a_copy(path, load)
        records.rows = [(uid,) for uid in sorted(paused)]
        if damaged:
            records.note = (
                f"{PAUSES_FILE} is damaged: the {len(paused):,} user ids still legible in it were imported as paused"
            )
    aside = copies_of(path)
    if aside:
        records.problem = (
            f"{len(aside)} damaged copies of {PAUSES_FILE} are kept aside ({aside[-1].name}); the bot holds learning "
            "for everyone while they exist: check them, delete them and run the import again"
        )
    return records


def read_modes(folder: Path, now: datetime) -> Records:
    path = folder / MODES_FILE
    records = Records()
    if not path.is_file():
        return records

    def load(copy: Path) -> Records:
        registry = ModeRegistry(copy)
        registry.load(now)
        if copies_of(copy):
            return Records(problem=f"{MODES_FILE} is unreadable: fix or remove it and run the import again")
        rows = []
        for uid in sorted(registry.users()):
            incognito = registry.incognito_until(uid, now)
            fresh = registry.fresh_until(uid, now)
            if incognito is None and fresh is None:
                continue  # ended
            rows.append((uid, incognito, fresh if isinstance(fresh, datetime) else None, fresh == UNTIL_RESUME))
        return Records(rows)

    return _on_a_copy(path, load)


def read_replies(folder: Path) -> Records:
    path = folder / REPLIES_FILE
    if not path.is_file():
        return Records()
    try:
        items = json.loads(path.read_bytes())["replies"]
        replies = [ReplyRecord.from_json(item) for item in items][-REPLIES_KEPT:]
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


def read_switches(folder: Path) -> Records:
    path = folder / SWITCHES_FILE
    if not path.is_file():
        return Records()
    switches = MemorySwitches(path)
    try:
        switches.load()
    except SwitchesFileError as error:
        return Records(problem=f"{error}; then run the import again")
    guilds, channels = switches.admin_choices()
    rows: list[tuple[Any, ...]] = [("guild", gid, s.learning, s.recall) for gid, s in sorted(guilds.items())]
    rows += [("channel", cid, learning, learning) for cid, learning in sorted(channels.items())]
    return Records(rows)


# --- writing -------------------------------------------------------------------------------------------------


async def insert_pauses(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    found = await conn.fetch(
        "INSERT INTO paused_users (user_id) SELECT * FROM unnest($1::bigint[]) ON CONFLICT DO NOTHING RETURNING 1",
        [uid for uid, in rows],
    )
    return len(found)


async def count_pauses(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    return int(
        await conn.fetchval("SELECT count(*) FROM paused_users WHERE user_id = ANY($1::bigint[])", [u for u, in rows])
    )


async def insert_modes(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    found = await conn.fetch(
        "INSERT INTO user_modes (user_id, incognito_until, fresh_until, fresh_until_resume)"
        " SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[], $4::boolean[])"
        " ON CONFLICT DO NOTHING RETURNING 1",
        *(list(column) for column in zip(*rows, strict=True)),
    )
    return len(found)


async def count_modes(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    return int(
        await conn.fetchval("SELECT count(*) FROM user_modes WHERE user_id = ANY($1::bigint[])", [r[0] for r in rows])
    )


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


def _split_switches(rows: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    return [r[1:] for r in rows if r[0] == "guild"], [r[1:3] for r in rows if r[0] == "channel"]


async def insert_switches(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    guilds, channels = _split_switches(rows)
    added = await conn.fetch(
        "INSERT INTO guild_switches (guild_id, learning, recall)"
        " SELECT * FROM unnest($1::bigint[], $2::boolean[], $3::boolean[]) ON CONFLICT DO NOTHING RETURNING 1",
        [g for g, _, _ in guilds],
        [learning for _, learning, _ in guilds],
        [recall for _, _, recall in guilds],
    )
    added += await conn.fetch(
        "INSERT INTO channel_switches (channel_id, learning)"
        " SELECT * FROM unnest($1::bigint[], $2::boolean[]) ON CONFLICT DO NOTHING RETURNING 1",
        [c for c, _ in channels],
        [learning for _, learning in channels],
    )
    return len(added)


async def count_switches(conn: asyncpg.Connection, rows: list[tuple[Any, ...]]) -> int:
    guilds, channels = _split_switches(rows)
    in_guilds = await conn.fetchval(
        "SELECT count(*) FROM guild_switches WHERE guild_id = ANY($1::bigint[])", [g for g, *_ in guilds]
    )
    in_channels = await conn.fetchval(
        "SELECT count(*) FROM channel_switches WHERE channel_id = ANY($1::bigint[])", [c for c, _ in channels]
    )
    return int(in_guilds) + int(in_channels)


Insert = Callable[[asyncpg.Connection, list[tuple[Any, ...]]], Any]


@dataclass(frozen=True, slots=True)
class RecordKind:
    name: str  # as the report says it: "pauses", "reply records", ...
    read: Callable[[Path], Records]
    insert: Insert
    count: Insert


def record_kinds(now: datetime | None = None) -> list[RecordKind]:
    moment = now or utc_now()
    return [
        RecordKind("pauses", read_pauses, insert_pauses, count_pauses),
        RecordKind("privacy modes", lambda folder: read_modes(folder, moment), insert_modes, count_modes),
        RecordKind("reply records", read_replies, insert_replies, count_replies),
        RecordKind("activity days", read_activity, insert_activity, count_activity),
        RecordKind("memory switches", read_switches, insert_switches, count_switches),
    ]


async def insert_and_count(database: Database, kind: RecordKind, rows: list[tuple[Any, ...]]) -> tuple[int, int]:
    """Insert what is missing (one transaction) and count what the database holds of `rows` afterwards."""
    if not rows:
        return 0, 0

    async def work(conn: asyncpg.Connection) -> tuple[int, int]:
        added = int(await kind.insert(conn, rows))
        return added, int(await kind.count(conn, rows))

    return await database.run(work)

