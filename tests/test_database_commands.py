"""`python -m bot migrate` and `python -m bot import-files DIR`, run as real processes against a real PostgreSQL.

Each database is fresh and empty (the `postgres_url` fixture). Every URL carries a password (the test server
trusts 127.0.0.1 and ignores it), so each test can check that no output ever shows it. The data folders are
realistic: users at the fact cap with facts of 150-300 characters, a journal written by the real `Journal` with
turns done, failed, parked, purged and one without an id, and unreadable memory files.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from bot.memory.drivers.bundle import COMMUNITY_FILE, SWITCHES_FILE, build_file_storage, build_postgres_storage
from bot.memory.drivers.files.activity import ACTIVITY_FILE, ActivityLog
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.drivers.files.ledger import LEDGER_FOLDER, FileLedger
from bot.memory.drivers.files.legacy import MODES_FILE, PAUSES_FILE
from bot.memory.drivers.files.replies import REPLIES_FILE, ReplyLog
from bot.memory.drivers.import_files import IMPORTED_ID_PREFIX
from bot.memory.drivers.interfaces import PendingTurn, ReplyRecord
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.schema import LATEST_VERSION, MIGRATIONS
from bot.memory.drivers.pg.turns import PostgresTurnQueue
from bot.memory.models import ConversationKey, MemoryFile, Place, Turn
from bot.storage.atomic import json_bytes
from bot.storage.pg.database import Database
from bot.storage.pg.migrations import apply_migrations
from tests.memory.realistic import memory_at_cap
from tests.test_process import clean_env, run_bot_command

PASSWORD = "pw-Zq8vK3mXr7LtN2"  # the trusting test server ignores it; no output may show it
CHANNEL = 900000000000000001
GUILD = 910000000000000001
_T = TypeVar("_T")


def with_password(url: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username or 'postgres'}:{PASSWORD}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def bot(args: Sequence[str], cwd: Path, url: str | None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` with DATABASE_URL alone (no Discord token, no LLM settings); never shows the password."""
    env = clean_env(**({"DATABASE_URL": url} if url is not None else {}))
    done = run_bot_command(args, cwd, env, timeout=timeout)
    assert PASSWORD not in done.stdout + done.stderr
    return done


def one_error_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert done.returncode != 0
    lines = done.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{done.stderr}"
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


def query(url: str, work: Callable[[asyncpg.Connection], Awaitable[_T]]) -> _T:
    async def run() -> _T:
        conn = await asyncpg.connect(url)
        try:
            return await work(conn)
        finally:
            await conn.close()

    return asyncio.run(run())


def with_database(url: str, work: Callable[[Database], Awaitable[_T]]) -> _T:
    async def run() -> _T:
        database = Database(url, size=2)
        await database.open()
        try:
            return await work(database)
        finally:
            await database.close()

    return asyncio.run(run())


# --- migrate -------------------------------------------------------------------------------------------------


def test_migrate_creates_the_schema_then_has_nothing_to_do(postgres_url: str, tmp_path: Path) -> None:
    url = with_password(postgres_url)
    first = bot(["migrate"], tmp_path, url)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        *(f"applied migration {m.version}: {m.name}" for m in MIGRATIONS),
        f"schema is at version {LATEST_VERSION}",
    ]
    assert first.stderr == ""

    async def schema(conn: asyncpg.Connection) -> tuple[list[Any], list[Any]]:
        versions = await conn.fetch("SELECT version, name, applied_at FROM schema_version ORDER BY version")
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        return [tuple(row) for row in versions], [row["tablename"] for row in tables]

    versions, tables = query(postgres_url, schema)
    assert [(v, n) for v, n, _ in versions] == [(m.version, m.name) for m in MIGRATIONS]
    assert {"memories", "pending_turns", "schema_version"} <= set(tables)

    again = bot(["migrate"], tmp_path, url)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [f"schema is at version {LATEST_VERSION} (up to date)"]
    assert query(postgres_url, schema) == (versions, tables)  # nothing applied twice, nothing re-dated


def test_migrate_refuses_a_schema_newer_than_the_bot(postgres_url: str, tmp_path: Path) -> None:
    assert bot(["migrate"], tmp_path, with_password(postgres_url)).returncode == 0
    query(
        postgres_url,
        lambda conn: conn.execute(
            "INSERT INTO schema_version (version, name) VALUES ($1, 'from a newer bot')", LATEST_VERSION + 1
        ),
    )
    done = bot(["migrate"], tmp_path, with_password(postgres_url))
    assert done.returncode == 1
    one_error_line(done, f"version {LATEST_VERSION + 1}", "newer than this bot", "upgrade the bot")
    assert done.stdout == ""
    count = query(postgres_url, lambda conn: conn.fetchval("SELECT count(*) FROM schema_version"))
    assert count == LATEST_VERSION + 1


def test_migrate_needs_only_database_url_and_loads_neither_discord_nor_the_llm_client(
    postgres_url: str, tmp_path: Path
) -> None:
    env = clean_env(DATABASE_URL=with_password(postgres_url))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", "migrate"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    assert "asyncpg" in imported
    assert not imported & {"discord", "openai", "sklearn", "aiohttp"}


@pytest.mark.parametrize(
    ("make_url", "status", "needles"),
    [
        (None, 2, ("DATABASE_URL is not set",)),
        (lambda port: f"mysql://u:{PASSWORD}@127.0.0.1:{port}/x", 2, ("DATABASE_URL", "postgresql://")),
        (lambda port: f"postgresql://u:{PASSWORD}@127.0.0.1:99999/x", 1, ("DATABASE_URL is not a valid",)),
        (lambda port: f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/no_such_db", 1, ("does not exist",)),
    ],
    ids=["unset", "not-postgres", "bad-port", "no-such-database"],
)
def test_migrate_failures_are_one_line_without_the_password(
    postgres_server: Any, tmp_path: Path, make_url: Callable[[int], str] | None, status: int, needles: tuple[str, ...]
) -> None:
    url = None if make_url is None else make_url(postgres_server.port)
    done = bot(["migrate"], tmp_path, url)
    assert done.returncode == status
    one_error_line(done, *needles)


def test_migrate_against_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        done = bot(["migrate"], tmp_path, f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/memory")
    assert done.returncode == 1
    one_error_line(done, "cannot connect to PostgreSQL at 127.0.0.1:", "/memory")


# --- a realistic data folder ---------------------------------------------------------------------------------


def write_memory(folder: Path, user: int, memory: MemoryFile | bytes, *, mtime: float | None = None) -> Path:
    path = folder / "memory" / f"{user}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = memory if isinstance(memory, bytes) else json_bytes(memory.model_dump(mode="json"), indent=2)
    path.write_bytes(raw)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def fill_journal(folder: Path, users: Sequence[int]) -> None:
    """Turns in every kind of place; some done, one user purged, failures counted, one turn parked, and a turn
    written without an id (by an old version): what a stopped bot leaves behind."""

    async def fill() -> None:
        journal = Journal(folder / JOURNAL_NAME, durable=False)
        journal.replay()
        said = datetime.now(UTC) - timedelta(minutes=30)
        places = [Place.dm(), Place.guild(GUILD), Place.channel(CHANNEL + 7, GUILD)]
        for index, user in enumerate(users):
            key = ConversationKey(CHANNEL + index % 3, user, places[index % 3])
            turns = [
                Turn("user", user, f"user{index}", f"Message {n} of user {index}: I am learning Rust at night.",
                     said + timedelta(seconds=n), f"t-{user}-{n}")
                for n in range(3)
            ]
            await journal.add(key, turns)
        await journal.done(users[0], [f"t-{users[0]}-0"])
        await journal.forget_user(users[1])
        await journal.failed(users[2], [f"t-{users[2]}-0", f"t-{users[2]}-1"], permanent=False)
        await journal.failed(users[2], [f"t-{users[2]}-0"], permanent=True)
        await journal.park(users[3], [f"t-{users[3]}-2"])
        anonymous = Turn("user", users[4], "old", "A turn journaled by an old version, without an id.", said)
        await journal.add(ConversationKey(CHANNEL, users[4]), [anonymous])
        await journal.close()

    asyncio.run(fill())


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under `folder`: its bytes, modification time and mode."""
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_mode)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


USERS = [100000000000000000 + n for n in range(1, 41)]
UNREADABLE = 199999999999999901
INVALID = 199999999999999902


@pytest.fixture
def data_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    base = datetime(2025, 5, 1, tzinfo=UTC).timestamp()
    for index, user in enumerate(USERS):
        write_memory(folder, user, memory_at_cap(100, seed=index + 1), mtime=base + index * 86400)
    write_memory(folder, UNREADABLE, b'{"version": "2", "facts": [{"id": "x", "cont')  # torn by a crash
    write_memory(folder, INVALID, b'{"facts": "not a list"}')
    (folder / "memory" / f"{USERS[0]}.json.corrupt-20250101T000000000000Z").write_bytes(b"kept aside")
    (folder / "memory" / "notes.json").write_text("{}")
    fill_journal(folder, USERS[:8])
    return folder


def expected_turns(folder: Path) -> list[PendingTurn]:
    """The pending turns of the folder's journal, replayed from a copy."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / JOURNAL_NAME
        copy.write_bytes((folder / JOURNAL_NAME).read_bytes())
        return Journal(copy, durable=False).replay()


def import_lines(users: int, turns: int, *, added: tuple[int, int], unreadable: int = 2, parked: int = 1) -> list[str]:
    return [
        f"users: {users:,} read; {added[0]:,} added, {users - added[0]:,} already there",
        f"pending turns: {turns:,} read; {added[1]:,} added, {turns - added[1]:,} already there",
        *([f"{unreadable:,} memory files could not be read (the log names their users): left in place, not imported"]
          if unreadable else []),
        *([f"{parked:,} parked pending turns (failed too often) were not imported"] if parked else []),
        f"imported {users:,} users ({users:,} in the database), {turns:,} pending turns ({turns:,} in the database)",
    ]


def test_import_files_moves_a_folder_in_verifies_it_and_leaves_the_files_alone(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    before = snapshot(data_folder)
    pending = expected_turns(data_folder)
    assert len(pending) == 8 * 3 - 1 - 3 - 1 + 1  # one done, one user purged, one parked, one without an id

    done = bot(["import-files", str(data_folder)], tmp_path, with_password(postgres_url))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        *(f"applied migration {m.version}: {m.name}" for m in MIGRATIONS),
        f"schema is at version {LATEST_VERSION}",
        *import_lines(len(USERS), len(pending), added=(len(USERS), len(pending))),
    ]
    # The unreadable files are named (by user id) in the log, and left where they were, as was everything else.
    assert str(UNREADABLE) in done.stderr and str(INVALID) in done.stderr and "Traceback" not in done.stderr
    assert snapshot(data_folder) == before

    async def check(database: Database) -> None:
        store = PostgresMemoryStore(database)
        assert await store.user_ids() == USERS
        for user in USERS:
            on_disk = MemoryFile.model_validate_json((data_folder / "memory" / f"{user}.json").read_bytes())
            assert (await store.load(user)).model_dump() == on_disk.model_dump()
            assert len(on_disk.facts) == 100 and all(150 <= len(f.content) <= 300 for f in on_disk.facts)
        written = await store.last_written()
        base = datetime(2025, 5, 1, tzinfo=UTC).timestamp()
        assert {user: round(written[user]) for user in USERS} == {u: base + i * 86400 for i, u in enumerate(USERS)}

        queue = PostgresTurnQueue(database, lease_seconds=60, orphan_seconds=600)
        imported: list[PendingTurn] = []
        for user in USERS[:8]:
            imported += await queue.pending_turns_of(user)
        by_key = {(item.key.user_id, item.turn.turn_id): item for item in imported}
        for item in pending:
            if item.turn.turn_id:
                assert by_key.pop((item.key.user_id, item.turn.turn_id)) == item
        (anonymous,) = by_key.values()  # the turn without an id got a stable one
        assert anonymous.turn.turn_id.startswith(IMPORTED_ID_PREFIX)
        assert anonymous.turn.text == "A turn journaled by an old version, without an id."
        counts = await database.fetch(  # the failure counts came along
            "SELECT turn_id, permanent_failures, transient_failures FROM pending_turns WHERE user_id = $1"
            " ORDER BY turn_id",
            USERS[2],
        )
        expected = [(1, 1), (0, 1), (0, 0)]
        assert [tuple(row) for row in counts] == [(f"t-{USERS[2]}-{n}", *c) for n, c in enumerate(expected)]
        # Unclaimed and dated when said: the first bot to start takes them over at once.
        taken = await PostgresTurnQueue(database, lease_seconds=60, orphan_seconds=600).resume()
        assert len(taken) == len(pending)

    with_database(postgres_url, check)


def test_import_files_twice_imports_nothing_twice(postgres_url: str, data_folder: Path, tmp_path: Path) -> None:
    url = with_password(postgres_url)
    turns = len(expected_turns(data_folder))
    assert bot(["import-files", str(data_folder)], tmp_path, url).returncode == 0

    async def state(conn: asyncpg.Connection) -> tuple[list[Any], list[Any]]:
        memories = await conn.fetch("SELECT user_id, revision, updated_at FROM memories ORDER BY user_id")
        pending = await conn.fetch("SELECT user_id, turn_id, seq FROM pending_turns ORDER BY seq")
        return [tuple(row) for row in memories], [tuple(row) for row in pending]

    first = query(postgres_url, state)
    again = bot(["import-files", str(data_folder)], tmp_path, url)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        f"schema is at version {LATEST_VERSION} (up to date)",
        *import_lines(len(USERS), turns, added=(0, 0)),
    ]
    assert query(postgres_url, state) == first  # not a row added or rewritten


def test_an_import_killed_mid_way_finishes_on_the_next_run_with_exact_counts(
    postgres_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "big"
    users = [300000000000000000 + n for n in range(2000)]
    documents = [json_bytes(memory_at_cap(100, seed=s).model_dump(mode="json"), indent=2) for s in range(1, 6)]
    for index, user in enumerate(users):
        write_memory(folder, user, documents[index % len(documents)])
    fill_journal(folder, users[:100])
    turns = len(expected_turns(folder))
    before = snapshot(folder)
    url = with_password(postgres_url)

    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "import-files", str(folder)],
        cwd=tmp_path, env=clean_env(DATABASE_URL=url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if line.startswith("memory: 500 of 2,000 files done"):
            process.send_signal(signal.SIGKILL)
            break
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL, seen
    part = query(postgres_url, lambda conn: conn.fetchval("SELECT count(*) FROM memories"))
    assert 500 <= part < len(users)
    assert query(postgres_url, lambda conn: conn.fetchval("SELECT count(*) FROM pending_turns")) == 0

    done = bot(["import-files", str(folder)], tmp_path, url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"schema is at version {LATEST_VERSION} (up to date)",
        *(f"memory: {n:,} of 2,000 files done" for n in (500, 1000, 1500, 2000)),
        *import_lines(len(users), turns, added=(len(users) - part, turns), unreadable=0),
    ]
    assert snapshot(folder) == before

    async def rows(conn: asyncpg.Connection) -> tuple[int, int, int]:
        count = await conn.fetchval("SELECT count(*) FROM memories")
        digests = await conn.fetchval("SELECT count(DISTINCT md5(doc::text)) FROM memories")
        pending = await conn.fetchval("SELECT count(*) FROM pending_turns")
        return int(count), int(digests), int(pending)

    assert query(postgres_url, rows) == (len(users), len(documents), turns)


def test_import_refuses_while_a_bot_is_connected(postgres_url: str, data_folder: Path, tmp_path: Path) -> None:
    async def with_a_bot_connected(conn: asyncpg.Connection) -> subprocess.CompletedProcess[str]:
        bot_conn = await asyncpg.connect(postgres_url, server_settings={"application_name": "memory-bot"})
        try:
            args = ["import-files", str(data_folder)]
            return await asyncio.to_thread(bot, args, tmp_path, with_password(postgres_url))
        finally:
            await bot_conn.close()

    done = query(postgres_url, with_a_bot_connected)
    assert done.returncode == 1
    one_error_line(done, "1 bot connection(s)", "stop every bot process before importing")
    assert query(postgres_url, lambda conn: conn.fetchval("SELECT count(*) FROM memories")) == 0


def test_import_counts_what_the_database_refuses_and_imports_the_rest(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    """A NUL character is valid JSON text but PostgreSQL cannot store it: that user stays in the files, the rest
    goes in, and the import says it is incomplete."""
    refused = USERS[5]
    memory = MemoryFile.model_validate_json((data_folder / "memory" / f"{refused}.json").read_bytes())
    memory.facts[0].content = "Has a NUL \x00 in the middle of this fact, which PostgreSQL's jsonb cannot hold at all."
    write_memory(data_folder, refused, memory)
    done = bot(["import-files", str(data_folder)], tmp_path, with_password(postgres_url))
    assert done.returncode == 1
    users_line = f"users: {len(USERS):,} read; {len(USERS) - 1:,} added, 0 already there, 1 refused by the database"
    assert f"{users_line} (the log says why)" in done.stdout.splitlines()
    assert f"imported {len(USERS):,} users ({len(USERS) - 1:,} in the database)" in done.stdout
    error = [line for line in done.stderr.splitlines() if line.startswith("memory-bot:")]
    turns = len(expected_turns(data_folder))
    assert error == [
        f"memory-bot: the import is incomplete: {len(USERS) - 1:,} of {len(USERS):,} users and "
        f"{turns:,} of {turns:,} pending turns are in the database"
    ]
    assert f"memory of user {refused} was refused by the database" in done.stderr
    assert "text PostgreSQL cannot store" in done.stderr and "Traceback" not in done.stderr
    ids = query(postgres_url, lambda conn: conn.fetch("SELECT user_id FROM memories ORDER BY user_id"))
    assert [row["user_id"] for row in ids] == [user for user in USERS if user != refused]


def test_import_files_of_a_path_that_is_no_data_folder_is_one_line(postgres_url: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for target, needle in ((tmp_path / "missing", "is not a folder"), (tmp_path / "empty", "is it the bot's DATA_DIR")):
        done = bot(["import-files", str(target)], tmp_path, with_password(postgres_url))
        assert done.returncode == 1
        one_error_line(done, needle)
        assert done.stdout == ""
    # Nothing was done to the database either (not even migrated).
    assert query(postgres_url, lambda conn: conn.fetchval("SELECT to_regclass('schema_version') IS NULL"))


# --- the small records -----------------------------------------------------------------------------------------


def fill_records(folder: Path) -> datetime:
    """Privacy choices as an earlier version wrote them (`paused.json`, `modes.json`: the import converts them), and
    reply records, activity days, memory switches and community settings written by the bot's own classes."""
    now = datetime.now(UTC).replace(microsecond=0)
    (folder / PAUSES_FILE).write_text(json.dumps({"users": [str(user) for user in USERS[:3]]}))
    modes = {
        str(USERS[3]): {"incognitoUntil": (now + timedelta(minutes=30)).isoformat()},
        str(USERS[4]): {"freshUntil": "resume"},
        str(USERS[5]): {"freshUntil": (now + timedelta(hours=2)).isoformat()},
    }
    (folder / MODES_FILE).write_text(json.dumps({"users": modes}))

    async def fill() -> None:
        replies = ReplyLog(folder / REPLIES_FILE)
        for n, user in enumerate(USERS[:10]):
            record = ReplyRecord(
                (800000000000000000 + 2 * n, 800000000000000001 + 2 * n), user, ("topOfMind",), (f"fact_{n:03x}00000",)
            )
            await replies.record(record, generation=0)
        activity = ActivityLog(folder / ACTIVITY_FILE)
        for n, user in enumerate(USERS):
            activity.note(user, now - timedelta(days=n))
        await activity.save()
        switches = build_file_storage(folder).switches
        await switches.set_guild(GUILD, learning=False, recall=True)
        await switches.set_guild(GUILD + 1, learning=False, recall=False)
        await switches.set_channel(CHANNEL, learning=False)
        community = build_file_storage(folder).community
        await community.open()
        await community.set_prompt(GUILD, None, "Speak like a pirate.")
        await community.set_model(GUILD, CHANNEL, "gpt-4o")

    asyncio.run(fill())
    return now


def test_import_files_brings_the_small_records_along_once(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    now = fill_records(data_folder)
    before = snapshot(data_folder)
    url = with_password(postgres_url)
    done = bot(["import-files", str(data_folder)], tmp_path, url)
    assert done.returncode == 0, done.stderr
    counts = {
        "privacy records": 6, "reply records": 10, "activity days": len(USERS), "memory switches": 3,
        "community settings": 2,
    }
    lines = done.stdout.splitlines()
    for name, count in counts.items():
        assert f"{name}: {count:,} read; {count:,} added, 0 already there" in lines
    assert lines[-1].endswith(
        ", ".join(f"{count:,} {name} ({count:,} in the database)" for name, count in counts.items())
    )
    assert snapshot(data_folder) == before

    async def rows(conn: asyncpg.Connection) -> dict[str, list[tuple[Any, ...]]]:
        tables = {
            "privacy": "SELECT key::bigint, value::text FROM records WHERE kind = 'privacy' ORDER BY 1",
            "replies": "SELECT user_id, message_ids, sections, fact_ids FROM reply_records ORDER BY reply_id",
            "activity": "SELECT user_id, last_day FROM user_activity ORDER BY 1",
            "switches": "SELECT key, value::text FROM records WHERE kind = 'switches' ORDER BY 1",
            "community": "SELECT key, value::text FROM records WHERE kind = 'community' ORDER BY 1",
        }
        return {name: [tuple(row) for row in await conn.fetch(sql)] for name, sql in tables.items()}

    first = query(postgres_url, rows)
    privacy = {user: json.loads(value) for user, value in first["privacy"]}
    assert privacy == {
        **{user: {"paused": True} for user in USERS[:3]},
        USERS[3]: {"incognitoUntil": (now + timedelta(minutes=30)).isoformat()},
        USERS[4]: {"freshUntil": "resume"},
        USERS[5]: {"freshUntil": (now + timedelta(hours=2)).isoformat()},
    }
    assert first["replies"][0] == (USERS[0], [800000000000000000, 800000000000000001], ["topOfMind"], ["fact_00000000"])
    assert [row[0] for row in first["replies"]] == USERS[:10]
    assert first["activity"] == [(user, (now - timedelta(days=n)).date()) for n, user in enumerate(USERS)]
    assert {key: json.loads(value) for key, value in first["switches"]} == {
        f"guild:{GUILD}": {"learning": False, "recall": True},
        f"guild:{GUILD + 1}": {"learning": False, "recall": False},
        f"channel:{CHANNEL}": {"learning": False},
    }
    assert {key: json.loads(value) for key, value in first["community"]} == {
        f"guild:{GUILD}": {"prompt": "Speak like a pirate."},
        f"channel:{CHANNEL}": {"guild": str(GUILD), "model": "gpt-4o"},
    }

    again = bot(["import-files", str(data_folder)], tmp_path, url)
    assert again.returncode == 0, again.stderr
    for name, count in counts.items():
        assert f"{name}: {count:,} read; 0 added, {count:,} already there" in again.stdout.splitlines()
    assert query(postgres_url, rows) == first


def test_an_unreadable_privacy_file_makes_the_import_incomplete(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    fill_records(data_folder)
    (data_folder / MODES_FILE).write_bytes(b'{"users": {"1": ')
    (data_folder / SWITCHES_FILE).write_bytes(b"[")
    (data_folder / REPLIES_FILE).write_bytes(b"not json")
    done = bot(["import-files", str(data_folder)], tmp_path, with_password(postgres_url))
    assert done.returncode == 1
    assert f'{REPLIES_FILE} is unreadable: not imported (it only serves "What did you remember?")' in done.stdout
    error = one_line_of(done.stderr)
    assert error.startswith("memory-bot: the import is incomplete: ")
    assert "a damaged copy of the privacy records is kept aside" in error
    assert f"{SWITCHES_FILE} is unreadable" in error
    assert "privacy records: 3 read; 3 added" in done.stdout  # the rest went in (the pauses)
    assert (data_folder / MODES_FILE).read_bytes() == b'{"users": {"1": '  # and the files stayed as they were
    assert sorted(path.name for path in data_folder.iterdir()) == sorted(
        [JOURNAL_NAME, "memory", PAUSES_FILE, MODES_FILE, REPLIES_FILE, ACTIVITY_FILE, SWITCHES_FILE, COMMUNITY_FILE]
    )


def one_line_of(stderr: str) -> str:
    """The command's own error line (log lines may come before it)."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("memory-bot:")]
    assert "Traceback" not in stderr
    return line


# --- a database bots have used ---------------------------------------------------------------------------------


def run_a_bot(url: str, forget: Sequence[int] = ()) -> None:
    """A bot starts on the database (its storage, built as the app builds it) and some users forget everything."""

    async def work(database: Database) -> None:
        bundle = build_postgres_storage(database, lease_seconds=60, orphan_seconds=600)
        await bundle.open()
        try:
            for user in forget:
                await bundle.generations.bump(user)
                await bundle.forget_user(user)
        finally:
            await bundle.close()

    with_database(url, work)


def test_import_refuses_a_database_bots_have_used_unless_forced_and_never_brings_back_the_forgotten(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    url = with_password(postgres_url)
    fill_records(data_folder)
    assert bot(["import-files", str(data_folder)], tmp_path, url).returncode == 0  # no bot yet: allowed
    gone = [USERS[0], USERS[2]]  # one with pending turns, a privacy record and reply records
    run_a_bot(postgres_url, forget=gone)

    def state(conn: asyncpg.Connection) -> Awaitable[list[Any]]:
        return conn.fetch(
            "SELECT 'memory', user_id FROM memories UNION ALL SELECT 'turn', user_id FROM pending_turns"
            " UNION ALL SELECT 'privacy', key::bigint FROM records WHERE kind = 'privacy'"
            " UNION ALL SELECT 'reply', user_id FROM reply_records UNION ALL SELECT 'day', user_id FROM user_activity"
            " ORDER BY 1, 2"
        )

    before = query(postgres_url, state)
    assert not any(row[1] in gone for row in before if row[0] != "privacy")  # their privacy choices stay theirs
    refused = bot(["import-files", str(data_folder)], tmp_path, url)
    one_error_line(refused, "bots have used this database", "--force")
    assert query(postgres_url, state) == before

    forced = bot(["import-files", str(data_folder), "--force"], tmp_path, url)
    assert forced.returncode == 0, forced.stderr
    lines = forced.stdout.splitlines()
    assert "2 users forgotten in this database were left out (their memory, pending turns and records): they are" \
           " never brought back" in lines
    assert "imported with --force into a database bots have used" in lines
    after = query(postgres_url, state)
    assert after == before  # not their memory, turns, replies or days; everyone else's rows kept as they were


def test_a_database_from_an_earlier_version_counts_as_used_when_bots_wrote_forgets_or_pauses(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    async def an_older_schema(conn: asyncpg.Connection) -> None:
        await apply_migrations(conn, MIGRATIONS[:3])
        await conn.execute("INSERT INTO user_generations (user_id, generation) VALUES ($1, 1)", USERS[0])

    query(postgres_url, an_older_schema)
    refused = bot(["import-files", str(data_folder)], tmp_path, with_password(postgres_url))
    one_error_line(refused, "bots have used this database", "--force")


def test_the_message_ledger_comes_along_and_imported_memories_are_due_for_upkeep(
    postgres_url: str, data_folder: Path, tmp_path: Path
) -> None:
    async def note() -> None:
        ledger = FileLedger(data_folder / LEDGER_FOLDER, durable=False)
        await ledger.open()
        await ledger.note(USERS[5], "guild:9", ["1300000000000000001", "1300000000000000002"],
                          datetime(2026, 3, 1, tzinfo=UTC))
        await ledger.cite(USERS[5], cited=[], uncited=["1300000000000000002"])
        await ledger.close()

    asyncio.run(note())
    done = bot(["import-files", str(data_folder)], tmp_path, with_password(postgres_url))
    assert done.returncode == 0, done.stderr
    assert "message ledger entries: 2 read; 2 added, 0 already there" in done.stdout.splitlines()
    rows = query(postgres_url, lambda conn: conn.fetch(
        "SELECT message_id, user_id, place, cited FROM message_ledger ORDER BY 1"))
    assert [tuple(row) for row in rows] == [
        (1300000000000000001, USERS[5], "guild:9", True), (1300000000000000002, USERS[5], "guild:9", False),
    ]
    due = query(postgres_url, lambda conn: conn.fetch("SELECT user_id FROM memory_upkeep ORDER BY 1"))
    assert [row[0] for row in due] == USERS
