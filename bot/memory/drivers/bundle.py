"""Everything the engine keeps for one process, built once per backend and shared by the app, the tests and the
benchmarks alike.

`build_file_storage` (files under DATA_DIR, one process) and `build_postgres_storage` (PostgreSQL, any number of
processes) are the only places the parts are assembled. Each returns a `StorageBundle`: the forget generations, the
memory documents, the queue of pending turns, the privacy records, the memory switches, the reply records, the
activity days, the servers' community settings, the tokens spent (budgets), the message ledger (whose memory each
learned message taught) and the upkeep schedule. Every part can forget one user, so forgetting everything and
retention loop over the bundle (`forget_user`) instead of naming parts: a part added here is forgotten with the
rest. On PostgreSQL the bundle also records who was forgotten, for `import-files`.

Given a master key (MEMORY_ENCRYPTION_KEY), each builder makes the codec that seals memory and pending turns with
a key per user (`bot.storage.file_codec`, `bot.storage.pg.codec`) and hands it to the memory store and the queue:
the codec opens first (it refuses a wrong or missing key before anything is read), and a forget destroys the
user's key right after their pending turns, so their memory is unreadable, backups included, before it is deleted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bot.memory.drivers.files.activity import ACTIVITY_FILE, ActivityLog
from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.drivers.files.ledger import LEDGER_FOLDER, FileLedger
from bot.memory.drivers.files.legacy import convert_privacy, convert_switches
from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.drivers.files.replies import REPLIES_FILE, ReplyLog
from bot.memory.drivers.files.upkeep import UPKEEP_FILE, FileUpkeep
from bot.memory.drivers.files.usage import USAGE_FILE, FileUsageLog
from bot.memory.drivers.interfaces import (
    ActivityStore,
    ForgottenUsers,
    Generations,
    MemoryDocuments,
    MessageLedger,
    Part,
    ReplyStore,
    TurnQueue,
    UpkeepSchedule,
    UsageStore,
    UserPart,
)
from bot.memory.drivers.pg.activity import PostgresActivityLog
from bot.memory.drivers.pg.generations import PostgresGenerations, lock_user
from bot.memory.drivers.pg.ledger import PostgresLedger
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.replies import PostgresReplyLog
from bot.memory.drivers.pg.schema import migrate
from bot.memory.drivers.pg.turns import PostgresTurnQueue
from bot.memory.drivers.pg.upkeep import PostgresForgotten, PostgresUpkeep
from bot.memory.drivers.pg.usage import PostgresUsageLog
from bot.memory.records.community_settings import CommunityBook
from bot.memory.records.installation import InstallationKeys
from bot.memory.records.privacy_modes import PrivacyBook
from bot.memory.records.switches import SwitchBoard
from bot.storage.atomic import AtomicWriter
from bot.storage.file_codec import FileCodec
from bot.storage.pg.codec import PostgresCodec
from bot.storage.pg.database import Database
from bot.storage.pg.processes import ProcessRegistry
from bot.storage.pg.records import PostgresRecords
from bot.storage.records import FileRecords, OnDamaged, RecordTable
from bot.storage.sealing import MasterKey
from bot.storage.space import probe_writable

log = logging.getLogger(__name__)

PRIVACY_FILE = "privacy.json"
SWITCHES_FILE = "memory-switches.json"
MODEL_TRAITS_FILE = "model-traits.json"
COMMUNITY_FILE = "community-settings.json"
INSTALLATION_FILE = "installation.json"


@dataclass(slots=True)
class StorageBundle:
    """One process's storage. `learned` parts hold what the bot learned or was told; `settings` parts hold what
    the user chose (privacy) and what they spent today (budgets): forgetting everything clears the first,
    retention both. A user's token counts stay through their own forget, or a forget would reset their budget;
    a server's counts belong to the server."""

    kind: Literal["files", "postgres"]
    where: str  # for the start-up line: never a password
    generations: Generations
    memories: MemoryDocuments
    turns: TurnQueue
    privacy: PrivacyBook
    switches: SwitchBoard
    replies: ReplyStore
    activity: ActivityStore
    model_traits: RecordTable  # what each chat model does with its reasoning (no user's data)
    community: CommunityBook  # what each server's admins chose: persona, model, who may talk (no user's data)
    usage: UsageStore  # tokens spent per user and server per UTC day
    ledger: MessageLedger
    upkeep: UpkeepSchedule
    installation: InstallationKeys  # the key of the fingerprints of forgotten facts (no user's data)
    codec: FileCodec | PostgresCodec  # seals memory and pending turns with a key per user (or nothing)
    forgotten: ForgottenUsers | None = None  # who was forgotten (PostgreSQL: what `import-files` must not restore)
    database: Database | None = None
    probe_folder: tuple[Path, AtomicWriter] | None = None  # files: where a write must succeed again (`probe`)
    _opened: list[Part] = field(default_factory=list)

    @property
    def learned(self) -> list[UserPart]:
        """The parts that hold what was learned from or said by a user, in the order a forget clears them: the
        queue first (nothing pending can be learned after the memory is gone), then the user's data key (whatever
        a later step could not delete is unreadable already), then memory, then the records."""
        return [self.turns, self.codec, self.memories, self.replies, self.activity, self.ledger, self.upkeep]

    @property
    def settings(self) -> list[UserPart]:
        return [self.privacy, self.usage]

    def _all(self) -> list[Part]:
        optional: list[Part] = [self.forgotten] if self.forgotten is not None else []
        return [
            self.codec, self.generations, self.privacy, self.switches, self.model_traits, self.community,
            self.installation,
            self.memories, self.replies, self.activity, self.usage, self.ledger, self.upkeep, *optional, self.turns,
        ]

    async def open(self) -> None:
        """Connect (PostgreSQL: open the pool, apply pending migrations) and open every part."""
        if self.database is not None:
            await self.database.open()
            await self.database.run(migrate, transaction=False)
        for part in self._all():
            await part.open()
            self._opened.append(part)

    async def close(self) -> None:
        """Close every part opened (the queue releases what it still holds), then the database."""
        opened, self._opened = self._opened, []
        for part in reversed(opened):
            try:
                await part.close()
            except OSError as error:
                log.warning("storage: %s did not close cleanly (%s)", type(part).__name__, error)
        if self.database is not None:
            await self.database.close()

    async def probe(self) -> None:
        """Return when the storage takes work again, raise `OSError` while it does not: PostgreSQL answers a
        query, or DATA_DIR takes a synced write (a full disk has space again). Ends a storage outage."""
        if self.database is not None:
            await self.database.execute("SELECT 1")
        elif self.probe_folder is not None:
            await probe_writable(*self.probe_folder)

    async def forget_user(self, user_id: int, *, settings: bool = False) -> None:
        """Delete what every part holds of the user (and their privacy choices too with `settings`), after noting
        that they were forgotten where that is kept."""
        if self.forgotten is not None:
            await self.forgotten.record(user_id)
        for part in self.learned + (self.settings if settings else []):
            await part.forget_user(user_id)


def build_file_storage(
    data_dir: Path,
    *,
    cache_size: int = 1024,
    durable: bool = True,
    writer: AtomicWriter | None = None,
    journal_options: Mapping[str, Any] | None = None,
    disabled_guilds: frozenset[int] = frozenset(),
    disabled_channels: frozenset[int] = frozenset(),
    encryption_key: MasterKey | None = None,
) -> StorageBundle:
    """Files under `data_dir` (one process). Nothing is read or written until `open`. `durable=False` skips the
    fsyncs (tests and benchmarks); `writer` (the memory files' writer) and `journal_options` (the journal's own
    keywords) are seams for tests that inject disk faults."""
    small = AtomicWriter(durable=durable)
    generations = FileGenerations()
    codec = FileCodec(
        data_dir, encryption_key, durable=durable, cache_size=cache_size,
        data=(data_dir / "memory", data_dir / JOURNAL_NAME),
    )
    privacy_table = _ConvertingRecords(
        data_dir / PRIVACY_FILE, lambda: convert_privacy(data_dir, data_dir / PRIVACY_FILE), on_damaged="aside",
        writer=small,
    )
    switches_path = data_dir / SWITCHES_FILE
    switches_table = _ConvertingRecords(
        switches_path, lambda: convert_switches(switches_path), on_damaged="refuse", writer=small
    )
    memories = MemoryStore(
        data_dir / "memory", generations, writer=writer or small, cache_size=cache_size, codec=codec
    )
    return StorageBundle(
        kind="files",
        where=f"files in {data_dir}",
        generations=generations,
        memories=memories,
        turns=Journal(
            data_dir / JOURNAL_NAME, generations, **{"durable": durable, "codec": codec, **(journal_options or {})}
        ),
        privacy=PrivacyBook(privacy_table),
        switches=SwitchBoard(switches_table, disabled_guilds=disabled_guilds, disabled_channels=disabled_channels),
        replies=ReplyLog(data_dir / REPLIES_FILE, generations, writer=small),
        activity=ActivityLog(data_dir / ACTIVITY_FILE, writer=small),
        # Unreadable: kept aside and started empty, the safe reading (every model's next reply is held whole).
        model_traits=FileRecords(data_dir / MODEL_TRAITS_FILE, on_damaged="aside", writer=small),
        # Unreadable: refuse to start, as for the switches: a server's restrictions must never silently lapse.
        community=CommunityBook(FileRecords(data_dir / COMMUNITY_FILE, on_damaged="refuse", writer=small)),
        usage=FileUsageLog(data_dir / USAGE_FILE, writer=small),
        ledger=FileLedger(data_dir / LEDGER_FOLDER, durable=durable),
        upkeep=FileUpkeep(data_dir / UPKEEP_FILE, memories.user_ids, writer=small),
        # Unreadable: refuse to start: fingerprints made with a new key would no longer match the old ones.
        installation=InstallationKeys(FileRecords(data_dir / INSTALLATION_FILE, on_damaged="refuse", writer=small)),
        codec=codec,
        probe_folder=(data_dir / "memory", writer or small),
    )


def build_postgres_storage(
    database: Database,
    *,
    lease_seconds: float,
    orphan_seconds: float,
    cache_size: int = 1024,
    disabled_guilds: frozenset[int] = frozenset(),
    disabled_channels: frozenset[int] = frozenset(),
    processes: ProcessRegistry | None = None,
    encryption_key: MasterKey | None = None,
) -> StorageBundle:
    """PostgreSQL (any number of processes). Nothing connects until `open`. `processes` (this process's liveness
    row, opened and closed with the queue of pending turns) is a seam for tests that shorten its timings."""
    processes = processes or ProcessRegistry(database)
    codec = PostgresCodec(
        database, encryption_key, lock_user=lock_user, data_tables=("memories", "pending_turns"), cache_size=cache_size
    )
    return StorageBundle(
        kind="postgres",
        where=f"PostgreSQL at {database.where}",
        generations=PostgresGenerations(database),
        memories=PostgresMemoryStore(database, cache_size=cache_size, codec=codec),
        turns=PostgresTurnQueue(
            database, lease_seconds=lease_seconds, orphan_seconds=orphan_seconds, processes=processes, codec=codec
        ),
        privacy=PrivacyBook(PostgresRecords(database, "privacy")),
        switches=SwitchBoard(
            PostgresRecords(database, "switches"), disabled_guilds=disabled_guilds, disabled_channels=disabled_channels
        ),
        replies=PostgresReplyLog(database),
        activity=PostgresActivityLog(database, processes),
        model_traits=PostgresRecords(database, "model-traits"),
        community=CommunityBook(PostgresRecords(database, "community")),
        usage=PostgresUsageLog(database),
        ledger=PostgresLedger(database),
        upkeep=PostgresUpkeep(database),
        installation=InstallationKeys(PostgresRecords(database, "installation")),
        forgotten=PostgresForgotten(database),
        codec=codec,
        database=database,
    )


class _ConvertingRecords(FileRecords):
    """A records file that first converts what an earlier version wrote (see `files/legacy.py`)."""

    def __init__(
        self, path: Path, convert: Callable[[], object], *, on_damaged: OnDamaged, writer: AtomicWriter
    ) -> None:
        super().__init__(path, on_damaged=on_damaged, writer=writer)
        self._convert = convert

    async def open(self) -> None:
        await asyncio.to_thread(self._convert)
        await super().open()
