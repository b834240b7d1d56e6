"""`python -m bot migrate` and `python -m bot import-files DIR [--force]`: preparing the PostgreSQL database.

Both read DATABASE_URL and the pool settings, not the Discord token or the LLM settings, so the database can be
prepared before the rest is configured. What they did goes to stdout, one line each. A failure (no DATABASE_URL,
a malformed URL, a server that cannot be reached or refuses us, a schema newer than this code, an import that
does not add up) is one line on stderr and a non-zero exit, without a traceback and never with the URL's
password. Both are safe to run again: they do only what is still to do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from bot.config import Settings
from bot.logging_setup import configure_logging
from bot.memory.storage.pg.importer import (
    IMPORT_APPLICATION_NAME,
    ImportRefused,
    ImportReport,
    Tally,
    check_data_folder,
    import_files,
)
from bot.memory.storage.pg.schema import MIGRATIONS, migrate
from bot.storage.errors import SchemaError, StorageUnavailable
from bot.storage.pg.database import Database, database_secrets
from bot.storage.pg.migrations import applied_version

_T = TypeVar("_T")


class CommandFailed(Exception):
    """The command could not do its work; the message is one line for the operator, without secrets."""


def _database(settings: Settings, application_name: str) -> Database:
    assert settings.database_url is not None, "load_database_settings checks it"
    url = settings.database_url.get_secret_value()
    level = "DEBUG" if settings.log_level == "DEBUG" else "WARNING"  # stdout says what was done; the log, trouble
    configure_logging(level, secrets=database_secrets(url), log_prompts=settings.log_prompts)
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
    except (StorageUnavailable, SchemaError, ImportRefused) as error:
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


def import_files_command(settings: Settings, folder: Path, *, force: bool = False) -> int:
    """Move a data folder into the database (migrating it first); the files are left as they are. A database bots
    have used is refused unless `force`; users forgotten in it are never brought back."""

    async def work(database: Database) -> ImportReport:
        await _migrate(database)
        try:
            return await import_files(
                database, folder, force=force, progress=lambda line: print(line, flush=True)
            )
        except StorageUnavailable as error:
            raise StorageUnavailable(f"{error}; the files are unchanged: run the import again to finish it") from None

    try:
        check_data_folder(folder)  # before touching the database: a typo must not even migrate it
    except ImportRefused as error:
        raise CommandFailed(str(error)) from None
    report = _run(_database(settings, IMPORT_APPLICATION_NAME), work)
    for line in report_lines(report):
        print(line, flush=True)
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
