"""Moving a file-backend data folder (`DATA_DIR`) into PostgreSQL: `python -m bot import-files DIR`.

Memory files and the journal's pending turns here; privacy records, reply records, activity days, memory
switches and community settings in `import_records`.

- The files are only read, never changed or deleted: they stay as the operator's backup. The journal is replayed
  from a copy in a temporary folder, because replaying rewrites (compacts) the file it reads.
- Resumable: every row is inserted with `ON CONFLICT DO NOTHING` on its natural key (a memory by user id, a pending
  turn by user and turn id), so running the import again, after an interruption or twice, adds only what is
  missing. A user whose row already holds a different document keeps the database's (it is never overwritten).
- Verified: at the end the rows in the database are counted against what was read from the files.
- A memory file that does not parse or validate is counted and left where it is; one the database refuses (text
  PostgreSQL cannot store) is counted too. Neither stops the import.
- Imported pending turns are unclaimed and dated when they were said, so the first bot process to start takes
  them over at once; their failure counts come along, so a batch that kept failing is not retried forever.
- An encrypted data folder (MEMORY_ENCRYPTION_KEY) is read with its codec and imported as plain rows; the
  database is then encrypted with `python -m bot encrypt-existing`.
- Bot processes must be stopped: with one connected, the import refuses to run, because a user's `/memory forget`
  in the database would otherwise be undone by the files' older copy.
- A database bots have used is refused too, unless told `--force`: "used" means a bot has started on it (its
  storage records that in the database, `bot_use`; `migrate` and `import-files` do not count; a database from an
  earlier version counts as used when it holds a forget or a pause, which only bots write). What users changed or
  deleted there since could otherwise come back from the files.
- Never, even with `--force`, is anything of a user who was forgotten in the database (`forgotten_users`: they
  made the bot forget everything, or retention deleted them) brought back: their memory, pending turns and
  records are left out, and counted.
- Each imported memory is due for upkeep at once (its summaries' earlier values are checked at the first daily
  sweep), and the data folder's message ledger comes along, so deletes on Discord keep finding what they taught.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import asyncpg
from pydantic import ValidationError

from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.drivers.import_records import RecordKind, insert_and_count, record_kinds
from bot.memory.drivers.interfaces import PendingTurn
from bot.memory.drivers.pg.upkeep import bot_use, forgotten_among
from bot.memory.models import MemoryFile
from bot.storage.atomic import json_bytes
from bot.storage.errors import InvalidUserId, StorageUnavailable
from bot.storage.file_codec import FileCodec
from bot.storage.ids import user_key
from bot.storage.pg.database import Database

log = logging.getLogger(__name__)

BOT_APPLICATION_NAME = "memory-bot"
"""The `application_name` of a running bot's connections (see `Database`)."""
IMPORT_APPLICATION_NAME = "memory-bot import-files"
MEMORY_BATCH = 100
TURN_BATCH = 500
PROGRESS_EVERY = 500
IMPORTED_ID_PREFIX = "imported-"

_T = TypeVar("_T")
Progress = Callable[[str], None]


class ImportRefused(Exception):
    """The import cannot start (bots are connected, the folder is not a data folder); one line for the operator."""


@dataclass(slots=True)
class Tally:
    """What happened to one kind of record: read from the files, and where each ended up."""

    read: int = 0
    added: int = 0  # inserted by this run
    already: int = 0  # the database held the same already (an earlier run)
    kept_different: int = 0  # the database held something else, which was kept
    refused: int = 0  # the database refused it (left in the files only)
    in_database: int = 0  # of those read, how many the database holds at the end

    @property
    def complete(self) -> bool:
        return self.in_database == self.read


@dataclass(slots=True)
class ImportReport:
    users: Tally = field(default_factory=Tally)
    turns: Tally = field(default_factory=Tally)
    records: dict[str, Tally] = field(default_factory=dict)  # privacy records, reply records, ... (see import_records)
    unreadable_files: int = 0
    parked_turns: int = 0  # parked in the journal (failed too often): not imported
    forgotten: set[int] = field(default_factory=set)  # users forgotten in the database: left out
    forced: bool = False  # imported over a database bots have used
    problems: list[str] = field(default_factory=list)  # what could not be carried over and must be looked at
    notes: list[str] = field(default_factory=list)  # what was not carried over, harmlessly

    @property
    def complete(self) -> bool:
        tallies = [self.users, self.turns, *self.records.values()]
        return all(tally.complete for tally in tallies) and not self.problems


@dataclass(frozen=True, slots=True)
class _Document:
    user_id: int
    doc: str
    written_at: float  # the file's modification time: the retention sweep's "last written"


# --- reading the files ---------------------------------------------------------------------------------------


def memory_files(folder: Path) -> list[tuple[int, Path]]:
    """`(user id, path)` of each memory file `<user id>.json` (canonical decimal names only, as the file store
    reads them), in user id order. Copies kept aside and temp files are not memory files."""
    found = []
    for path in folder.glob("*.json"):
        try:
            uid = user_key(path.stem)
        except InvalidUserId:
            continue
        if str(uid) == path.stem and path.is_file():
            found.append((uid, path))
    return sorted(found)


def read_document(uid: int, path: Path, codec: FileCodec | None = None) -> _Document | None:
    """The memory file as the document the database stores, or None when it does not parse or validate."""
    try:
        raw = path.read_bytes()
        written_at = path.stat().st_mtime
        value = (codec or FileCodec(path.parent, None)).open_json(uid, "memory", json.loads(raw))
        memory = MemoryFile.model_validate(value)
    except (OSError, ValueError, ValidationError, RecursionError) as error:
        log.warning("memory file of user %s is unreadable (%s); not imported", uid, type(error).__name__)
        return None
    return _Document(uid, json_bytes(memory.model_dump(mode="json")).decode(), written_at)


def read_journal(path: Path, codec: FileCodec | None = None) -> tuple[list[PendingTurn], Journal]:
    """The pending turns of a journal, replayed from a copy (replaying compacts the file it reads); the replayed
    journal comes along for the turns' failure counts. No file: nothing pending."""
    with tempfile.TemporaryDirectory(prefix="memory-bot-import-") as scratch:
        copy = Path(scratch) / JOURNAL_NAME
        with contextlib.suppress(FileNotFoundError):
            shutil.copyfile(path, copy)
        journal = Journal(copy, FileGenerations(), durable=False, codec=codec)
        return journal.replay(), journal


def with_ids(turns: Sequence[PendingTurn]) -> list[PendingTurn]:
    """Every turn with an id: one written without (by an old version) gets an id derived from its content and its
    position among such turns, the same at every run, so importing again cannot add it twice."""
    named = []
    anonymous = 0
    for item in turns:
        if not item.turn.turn_id:
            record = json_bytes([item.key.user_id, item.key.conversation_id, item.key.place.key, item.turn.to_json()])
            digest = hashlib.sha256(record + b"\0" + str(anonymous).encode()).hexdigest()[:24]
            anonymous += 1
            item = PendingTurn(item.key, dataclasses.replace(item.turn, turn_id=IMPORTED_ID_PREFIX + digest))
        named.append(item)
    return named


def _storable_user(user_id: int) -> bool:
    try:
        user_key(user_id)
    except InvalidUserId:
        log.warning("a pending turn of user %s cannot be stored (not a Discord user id)", user_id)
        return False
    return True


def _batches(items: Sequence[_T], size: int) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- writing the database ------------------------------------------------------------------------------------

_INSERT_MEMORIES = """
WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::float8[]) AS t(user_id, doc, written_at)
), added AS (
    INSERT INTO memories (user_id, doc, revision, updated_at)
    SELECT user_id, doc::jsonb, nextval('memory_revisions'), to_timestamp(written_at) FROM input
    ON CONFLICT (user_id) DO NOTHING
    RETURNING user_id
)
SELECT input.user_id, added.user_id IS NOT NULL AS added, coalesce(m.doc = input.doc::jsonb, false) AS same
FROM input LEFT JOIN added USING (user_id) LEFT JOIN memories AS m USING (user_id)
"""
# `memories AS m` is read as of the statement's start, so it holds only rows an earlier run or a bot wrote.

_INSERT_TURNS = """
INSERT INTO pending_turns
    (user_id, turn_id, conversation_id, place, turn, received_at, permanent_failures, transient_failures)
SELECT user_id, turn_id, conversation_id, place::jsonb, turn::jsonb, least(said_at, now()), permanent, transient
FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::timestamptz[], $7::int[], $8::int[])
    WITH ORDINALITY AS t(user_id, turn_id, conversation_id, place, turn, said_at, permanent, transient, n)
ORDER BY n
ON CONFLICT (user_id, turn_id) DO NOTHING
RETURNING 1
"""


def _refused(error: StorageUnavailable) -> bool:
    """The database rejected the data itself (as opposed to the connection failing): retrying cannot help."""
    cause = error.__cause__
    return isinstance(cause, asyncpg.PostgresError) and not isinstance(
        cause, asyncpg.exceptions.PostgresConnectionError | asyncpg.exceptions.OperatorInterventionError
    )


async def _insert_memories(database: Database, documents: Sequence[_Document], tally: Tally) -> None:
    async def work(conn: asyncpg.Connection, rows: Sequence[_Document]) -> list[asyncpg.Record]:
        found: list[asyncpg.Record] = await conn.fetch(
            _INSERT_MEMORIES,
            [d.user_id for d in rows],
            [d.doc for d in rows],
            [d.written_at for d in rows],
        )
        return found

    try:
        results = await database.run(lambda conn: work(conn, documents))
    except StorageUnavailable as error:
        if not _refused(error):
            raise
        if len(documents) == 1:
            log.warning("memory of user %s was refused by the database (%s)", documents[0].user_id, error)
            tally.refused += 1
            return
        for document in documents:  # find the one the database refuses; import the others
            await _insert_memories(database, [document], tally)
        return
    for row in results:
        if row["added"]:
            tally.added += 1
        elif row["same"]:
            tally.already += 1
        else:
            tally.kept_different += 1


async def _insert_turns(database: Database, turns: Sequence[PendingTurn], journal: Journal, tally: Tally) -> None:
    failures = [journal.failures(item.key.user_id, [item.turn.turn_id]) for item in turns]
    columns = (
        [user_key(item.key.user_id) for item in turns],
        [item.turn.turn_id for item in turns],
        [item.key.conversation_id for item in turns],
        [json.dumps(item.key.place.to_json()) for item in turns],
        [json_bytes(item.turn.to_json()).decode() for item in turns],
        [item.turn.at for item in turns],
        [f.permanent for f in failures],
        [f.transient for f in failures],
    )
    try:
        rows = await database.run(lambda conn: conn.fetch(_INSERT_TURNS, *columns))
    except StorageUnavailable as error:
        if not _refused(error):
            raise
        if len(turns) == 1:
            log.warning("a pending turn of user %s was refused by the database (%s)", turns[0].key.user_id, error)
            tally.refused += 1
            return
        for item in turns:
            await _insert_turns(database, [item], journal, tally)
        return
    tally.added += len(rows)
    tally.already += len(turns) - len(rows)


async def connected_bots(database: Database) -> int:
    """Bot processes connected to this database now (other than this import)."""
    count = await database.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        " AND application_name = $1",
        BOT_APPLICATION_NAME,
    )
    return int(count)


# --- the import ----------------------------------------------------------------------------------------------


def check_data_folder(folder: Path) -> None:
    """Refuse a path that is not a bot's data folder (a typo must not import an empty folder 'successfully')."""
    if not folder.is_dir():
        raise ImportRefused(f"{folder} is not a folder")
    if not (folder / "memory").is_dir() and not (folder / JOURNAL_NAME).is_file():
        raise ImportRefused(f"{folder} holds no memory/ folder and no {JOURNAL_NAME}: is it the bot's DATA_DIR?")


async def import_files(
    database: Database,
    folder: Path,
    *,
    force: bool = False,
    progress: Progress = lambda _: None,
    codec: FileCodec | None = None,
) -> ImportReport:
    """Import the data folder into the (migrated) database; see the module docstring. Raises `ImportRefused`
    when it cannot start and `StorageUnavailable` when the database fails part-way (run it again to resume)."""
    check_data_folder(folder)
    bots = await connected_bots(database)
    if bots:
        raise ImportRefused(
            f"{bots} bot connection(s) are using this database: stop every bot process before importing "
            "(an import while they run could bring back memory a user has since forgotten)"
        )
    used = await bot_use(database)
    if used is not None and not force:
        raise ImportRefused(
            f"bots have used this database (first on {used[0]:%Y-%m-%d}, last on {used[1]:%Y-%m-%d}): the files "
            "could bring back what users changed or deleted since; to import anyway, run it again with --force "
            "(users forgotten there are never brought back)"
        )
    report = ImportReport(forced=used is not None)
    await _import_memories(database, folder / "memory", report, progress, codec)
    await _import_turns(database, folder / JOURNAL_NAME, report, progress, codec)
    for kind in record_kinds():
        await _import_records(database, folder, kind, report)
    return report


async def _not_forgotten(database: Database, report: ImportReport, users: Sequence[int]) -> set[int]:
    """The users of `users` who were forgotten in the database (noted in the report): to be left out."""
    valid = [user for user in users if _valid_user(user)]
    gone = await forgotten_among(database, valid) if valid else set()
    report.forgotten |= gone
    return gone


def _valid_user(user_id: int) -> bool:
    try:
        user_key(user_id)
    except InvalidUserId:
        return False
    return True


async def _import_records(database: Database, folder: Path, kind: RecordKind, report: ImportReport) -> None:
    records = await asyncio.to_thread(kind.read, folder)
    owners = [kind.user_of(row) for row in records.rows]
    gone = await _not_forgotten(database, report, [user for user in owners if user is not None])
    records.rows = [row for row, user in zip(records.rows, owners, strict=True) if user not in gone]
    tally = report.records[kind.name] = Tally(read=len(records.rows))
    added, tally.in_database = await insert_and_count(database, kind, records.rows)
    tally.added, tally.already = added, tally.read - added
    report.problems += [records.problem] if records.problem else []
    report.notes += [records.note] if records.note else []


def _read_documents(files: Sequence[tuple[int, Path]], codec: FileCodec | None) -> list[_Document | None]:
    return [read_document(uid, path, codec) for uid, path in files]


async def _import_memories(
    database: Database, folder: Path, report: ImportReport, progress: Progress, codec: FileCodec | None
) -> None:
    files = await asyncio.to_thread(memory_files, folder) if folder.is_dir() else []
    readable: list[int] = []
    done = 0
    for batch in _batches(files, MEMORY_BATCH):
        documents = await asyncio.to_thread(_read_documents, batch, codec)
        good = [document for document in documents if document is not None]
        report.unreadable_files += len(documents) - len(good)
        gone = await _not_forgotten(database, report, [document.user_id for document in good])
        good = [document for document in good if document.user_id not in gone]
        report.users.read += len(good)
        readable += [document.user_id for document in good]
        if good:
            await _insert_memories(database, good, report.users)
            await database.execute(  # earlier summary values in the files: checked at the first daily sweep
                "INSERT INTO memory_upkeep (user_id, due_at) SELECT u, '1970-01-01T00:00:00Z'"
                " FROM unnest($1::bigint[]) AS u ON CONFLICT (user_id) DO NOTHING",
                [document.user_id for document in good],
            )
        before, done = done, done + len(batch)
        if done // PROGRESS_EVERY > before // PROGRESS_EVERY:
            progress(f"memory: {done:,} of {len(files):,} files done")
    report.users.in_database = int(
        await database.fetchval("SELECT count(*) FROM memories WHERE user_id = ANY($1::bigint[])", readable)
    )


async def _import_turns(
    database: Database, path: Path, report: ImportReport, progress: Progress, codec: FileCodec | None
) -> None:
    pending, journal = await asyncio.to_thread(read_journal, path, codec)
    gone = await _not_forgotten(database, report, sorted({item.key.user_id for item in pending}))
    pending = [item for item in pending if item.key.user_id not in gone]
    turns = [item for item in with_ids(pending) if _storable_user(item.key.user_id)]
    report.parked_turns = journal.parked
    report.turns.read = len(pending)
    report.turns.refused = len(pending) - len(turns)
    for batch in _batches(turns, TURN_BATCH):
        await _insert_turns(database, batch, journal, report.turns)
    if len(turns) >= PROGRESS_EVERY:
        progress(f"pending turns: {len(turns):,} done")
    report.turns.in_database = int(
        await database.fetchval(
            "SELECT count(*) FROM pending_turns AS p"
            " JOIN unnest($1::bigint[], $2::text[]) AS t(user_id, turn_id) USING (user_id, turn_id)",
            [user_key(item.key.user_id) for item in turns],
            [item.turn.turn_id for item in turns],
        )
    )
