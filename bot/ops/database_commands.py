"""`python -m bot migrate` and `python -m bot import-files DIR [--force]`: preparing the PostgreSQL database; and
`python -m bot encrypt-existing` and `python -m bot rotate-key`: encrypting a store in place and re-wrapping its
keys under a new MEMORY_ENCRYPTION_KEY (files under DATA_DIR, or the database when DATABASE_URL is set).

They read DATABASE_URL (or DATA_DIR), the pool settings and MEMORY_ENCRYPTION_KEY, not the Discord token or the
LLM settings, so the storage can be prepared before the rest is configured. What they did goes to stdout, one line
each. A failure (no DATABASE_URL or key, a malformed URL, a server that cannot be reached or refuses us, a schema
newer than this code, an import that does not add up, a key that does not fit the store) is one line on stderr and a
non-zero exit, without a traceback and never with the URL's password or a key. All are safe to run again: they do
only what is still to do. The encryption commands refuse to run while a bot uses the store (another process holding
DATA_DIR's lock, a bot connected to the database), and hold DATA_DIR's lock while they run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from bot.config import Settings
from bot.logging_setup import configure_logging
from bot.memory.drivers.encryption import (
    EncryptReport,
    encrypt_files,
    encrypt_postgres,
    file_codec,
    rotate_files,
    rotate_postgres,
)
from bot.memory.drivers.import_files import (
    IMPORT_APPLICATION_NAME,
    ImportRefused,
    ImportReport,
    Tally,
    check_data_folder,
    connected_bots,
    import_files,
)
from bot.memory.drivers.pg.schema import MIGRATIONS, migrate
from bot.storage.errors import EncryptionRefused, SchemaError, StorageUnavailable
from bot.storage.file_codec import MARK_FILE, FileCodec, read_mark
from bot.storage.folder_lock import FolderInUse, lock_folder
from bot.storage.pg.database import Database, database_secrets
from bot.storage.pg.migrations import applied_version
from bot.storage.sealing import KEY_ADVICE, MasterKey

_T = TypeVar("_T")


class CommandFailed(Exception):
    """The command could not do its work; the message is one line for the operator, without secrets."""


def _secrets(settings: Settings, *extra: str) -> list[str]:
    found = [*extra]
    if settings.database_url is not None:
        found += database_secrets(settings.database_url.get_secret_value())
    if settings.memory_encryption_key is not None:
        found.append(settings.memory_encryption_key.get_secret_value())
    return found


def _quiet_logging(settings: Settings, *extra_secrets: str) -> None:
    level = "DEBUG" if settings.log_level == "DEBUG" else "WARNING"  # stdout says what was done; the log, trouble
    configure_logging(level, secrets=_secrets(settings, *extra_secrets), log_prompts=settings.log_prompts)


def _database(settings: Settings, application_name: str) -> Database:
    assert settings.database_url is not None, "load_database_settings checks it"
    url = settings.database_url.get_secret_value()
    _quiet_logging(settings)
    return Database(
        url,
        size=min(settings.database_pool_size, 2),
        statement_timeout=settings.database_statement_timeout_seconds,
        application_name=application_name,
    )


def _run(database: Database, work: Callable[[Database], Awaitable[_T]]) -> _T:
    async def main() -> _T:
        await database.open()
        try:
            return await work(database)
        finally:
            await database.close()

    try:
        return asyncio.run(main())
    except (StorageUnavailable, SchemaError, ImportRefused, EncryptionRefused) as error:
        raise CommandFailed(str(error)) from None


async def _migrate(database: Database) -> None:
    names = {migration.version: migration.name for migration in MIGRATIONS}
    applied = await database.run(migrate, transaction=False)
    for version in applied:
        print(f"applied migration {version}: {names[version]}", flush=True)
    version = await database.run(applied_version, transaction=False)
    print(f"schema is at version {version}{'' if applied else ' (up to date)'}", flush=True)


def migrate_command(settings: Settings) -> int:
    """Create or upgrade the schema: apply each pending migration once, in order."""
    _run(_database(settings, "memory-bot migrate"), _migrate)
    return 0


def _tally_line(what: str, tally: Tally) -> str:
    parts = [f"{tally.added:,} added", f"{tally.already:,} already there"]
    if tally.kept_different:
        parts.append(f"{tally.kept_different:,} kept as the database has them (different from the files)")
    if tally.refused:
        parts.append(f"{tally.refused:,} refused by the database (the log says why)")
    return f"{what}: {tally.read:,} read; " + ", ".join(parts)


def report_lines(report: ImportReport) -> list[str]:
    lines = [_tally_line("users", report.users), _tally_line("pending turns", report.turns)]
    lines += [_tally_line(name, tally) for name, tally in report.records.items() if tally.read]
    lines += report.notes
    if report.unreadable_files:
        lines.append(
            f"{report.unreadable_files:,} memory files could not be read (the log names their users): "
            "left in place, not imported"
        )
    if report.parked_turns:
        lines.append(f"{report.parked_turns:,} parked pending turns (failed too often) were not imported")
    if report.forgotten:
        lines.append(
            f"{len(report.forgotten):,} users forgotten in this database were left out (their memory, pending turns "
            "and records): they are never brought back"
        )
    if report.forced:
        lines.append("imported with --force into a database bots have used")
    counted = [("users", report.users), ("pending turns", report.turns)]
    counted += [(name, tally) for name, tally in report.records.items() if tally.read]
    totals = [f"{tally.read:,} {name} ({tally.in_database:,} in the database)" for name, tally in counted]
    lines.append("imported " + ", ".join(totals))
    return lines


def _folder_codec(settings: Settings, folder: Path) -> FileCodec:
    """How to read the folder: with MEMORY_ENCRYPTION_KEY when its memory is encrypted (checked like a start)."""
    if read_mark(folder / MARK_FILE) is None:
        return file_codec(folder, None)  # plain: read as it is (checking would mark the folder)
    key = settings.memory_encryption_key
    codec = file_codec(folder, None if key is None else MasterKey.parse(key.get_secret_value()))
    codec.check()  # refuses a missing or wrong key, a missing key store
    return codec


def import_files_command(settings: Settings, folder: Path, *, force: bool = False) -> int:
    """Move a data folder into the database (migrating it first); the files are left as they are. A database bots
    have used is refused unless `force`; users forgotten in it are never brought back."""

    async def work(database: Database) -> ImportReport:
        await _migrate(database)
        if await database.fetchval("SELECT EXISTS (SELECT 1 FROM memory_encryption)"):
            raise ImportRefused(
                "memory in this database is encrypted: import the files before `python -m bot encrypt-existing`"
            )
        try:
            return await import_files(
                database, folder, force=force, progress=lambda line: print(line, flush=True), codec=codec
            )
        except StorageUnavailable as error:
            raise StorageUnavailable(f"{error}; the files are unchanged: run the import again to finish it") from None

    try:
        check_data_folder(folder)  # before touching the database: a typo must not even migrate it
        codec = _folder_codec(settings, folder)
    except (ImportRefused, EncryptionRefused, StorageUnavailable) as error:
        raise CommandFailed(str(error)) from None
    report = _run(_database(settings, IMPORT_APPLICATION_NAME), work)
    for line in report_lines(report):
        print(line, flush=True)
    if codec.encrypting:
        print("the files were encrypted: run `python -m bot encrypt-existing` to encrypt the database", flush=True)
    if report.problems:
        raise CommandFailed("the import is incomplete: " + "; ".join(report.problems))
    if not report.complete:
        raise CommandFailed(
            f"the import is incomplete: {report.users.in_database:,} of {report.users.read:,} users and "
            f"{report.turns.in_database:,} of {report.turns.read:,} pending turns are in the database"
            + "".join(
                f", {tally.in_database:,} of {tally.read:,} {name}"
                for name, tally in report.records.items()
                if not tally.complete
            )
        )
    return 0


# --- encryption at rest --------------------------------------------------------------------------------------


def _master_key(settings: Settings) -> MasterKey:
    if settings.memory_encryption_key is None:
        raise CommandFailed(f"MEMORY_ENCRYPTION_KEY is not set: the key to encrypt memory with, {KEY_ADVICE}")
    return MasterKey.parse(settings.memory_encryption_key.get_secret_value())


async def _no_bot_on_database(database: Database) -> None:
    await database.run(migrate, transaction=False)
    bots = await connected_bots(database)
    if bots:
        raise CommandFailed(f"{bots} bot connection(s) are using this database: stop every bot process first")


def _on_files(settings: Settings, work: Callable[[], _T]) -> _T:
    """`work` holding DATA_DIR's lock, so no bot (nor a second run) uses the folder meanwhile."""
    try:
        held = lock_folder(settings.data_dir)
    except FolderInUse as error:
        raise CommandFailed(str(error)) from None
    except OSError as error:
        raise CommandFailed(
            f"DATA_DIR {settings.data_dir} is not usable: {error.strerror or type(error).__name__}"
        ) from None
    try:
        return work()
    except (EncryptionRefused, StorageUnavailable) as error:
        raise CommandFailed(str(error)) from None
    except OSError as error:
        raise CommandFailed(
            f"DATA_DIR {settings.data_dir} is not usable: {error.strerror or type(error).__name__}; "
            "nothing is lost, run the command again once it is fixed"
        ) from None
    finally:
        held.release()


def encrypt_existing_command(settings: Settings) -> int:
    """Encrypt the memory and pending turns of the store in place (files, or the database with DATABASE_URL)."""
    key = _master_key(settings)
    report: EncryptReport
    if settings.database_url is None:
        _quiet_logging(settings)
        report = _on_files(settings, lambda: encrypt_files(settings.data_dir, key))
    else:

        async def work(database: Database) -> EncryptReport:
            await _no_bot_on_database(database)
            return await encrypt_postgres(database, key)

        report = _run(_database(settings, "memory-bot encrypt-existing"), work)
    for line in report.lines():
        print(line, flush=True)
    return 0


def rotate_key_command(settings: Settings, new_key_text: str) -> int:
    """Re-wrap every user's data key under a new master key; the operator then puts the new key in
    MEMORY_ENCRYPTION_KEY. The data itself is not rewritten."""
    old = _master_key(settings)
    try:
        new = MasterKey.parse(new_key_text)
    except ValueError as error:
        raise CommandFailed(f"the new key {error}") from None
    if settings.database_url is None:
        _quiet_logging(settings, new_key_text)
        done, already = _on_files(settings, lambda: rotate_files(settings.data_dir, old, new))
        where = f"files in {settings.data_dir}"
    else:

        async def work(database: Database) -> tuple[int, int]:
            await _no_bot_on_database(database)
            return await rotate_postgres(database, old, new)

        database = _database(settings, "memory-bot rotate-key")
        _quiet_logging(settings, new_key_text)
        done, already = _run(database, work)
        where = f"PostgreSQL at {database.where}"
    print(f"data keys in {where}: {done:,} re-wrapped with the new key now, {already:,} already were", flush=True)
    print(
        "now set MEMORY_ENCRYPTION_KEY to the new key before starting the bot, and destroy the old key once no "
        "backup of the key store made with it is needed",
        flush=True,
    )
    return 0
