"""Per-user memory files: `DATA_DIR/memory/<user id>.json`, read cached, written atomically under a per-user lock.

- Reads are cached and revalidated with one `stat` (mtime, size and inode: an atomic replacement always makes a
  new inode, even within the filesystem's timestamp granularity), so the reply path does not parse JSON.
- Read-modify-write happens in `async with store.edit(uid) as memory:` under that user's lock: 100 concurrent
  updates to one user all land. Nothing is written when the body raises or changes nothing.
- With MEMORY_ENCRYPTION_KEY a file holds the document sealed with its user's key (`bot.storage.file_codec`);
  one whose key was destroyed (its user forgot) reads as unreadable.
- A file that does not parse or validate is renamed aside (`<uid>.json.corrupt-<timestamp>`), never overwritten,
  and the user starts empty: the bytes stay for an admin to inspect.
- User ids must be decimal Discord snowflakes, so no id can name a path outside the folder.
- Deleting a user's memory (`/memory forget`) removes their file and any corrupt copies kept aside for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiofiles
from pydantic import ValidationError

from bot.memory.drivers.documents import DocumentStore
from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.interfaces import Claim
from bot.memory.models import MemoryFile
from bot.storage.atomic import (
    AtomicWriter,
    ensure_writable_folder,
    fsync_dir,
    json_bytes,
    make_private,
    sweep_temp_files,
)
from bot.storage.file_codec import FileCodec
from bot.storage.ids import is_snowflake_text, validate_user_id
from bot.storage.lru import LruCache
from bot.storage.quarantine import copies_of, move_aside

log = logging.getLogger(__name__)

@dataclass(slots=True)
class _Cached:
    stamp: tuple[int, int, int]  # (mtime_ns, size, inode) of the file it was read from; _MISSING when none
    memory: MemoryFile
    revision: int


_MISSING = (-1, -1, -1)
WRITTEN_PAGE = 5_000  # users per page of `written`


def _stamp(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


class MemoryStore(DocumentStore):
    """The only code that touches memory files. One instance per process, shared by everyone."""

    def __init__(
        self,
        folder: Path,
        generations: FileGenerations | None = None,
        *,
        writer: AtomicWriter | None = None,
        cache_size: int = 1024,
        codec: FileCodec | None = None,
    ) -> None:
        super().__init__()
        self.folder = folder
        self.codec = codec or FileCodec(folder.parent, None)  # seals the files with MEMORY_ENCRYPTION_KEY
        self.generations = generations or FileGenerations()  # alone: its own; in a bundle: the shared one
        self._writer = writer or AtomicWriter()
        self._cache: LruCache[str, _Cached] = LruCache(cache_size)
        self._revisions = itertools.count(1)

    def prepare(self) -> None:
        """Create the folder, check it is writable, make it and its files private (an older version created them
        readable by others), and sweep temp files a crash left behind."""
        ensure_writable_folder(self.folder)
        make_private(self.folder.parent)
        tightened = sum(make_private(path) for path in self.folder.iterdir() if path.is_file())
        if tightened:
            log.info("made %d memory files readable by the bot's user only", tightened)
        removed = sweep_temp_files(self.folder)
        if removed:
            log.info("removed %d temp files left by an interrupted write", removed)

    async def open(self) -> None:
        """`prepare`, for the storage interface (the files need no connection)."""
        self.prepare()

    async def close(self) -> None:
        """Nothing to close: every write is complete when it returns."""

    def path_for(self, user_id: int | str) -> Path:
        return self.folder / f"{validate_user_id(user_id)}.json"

    def lock_for(self, user_id: int | str) -> asyncio.Lock:
        return self._lock_for(validate_user_id(user_id))

    # --- reading -------------------------------------------------------------------------------------------

    async def load_with_revision(self, user_id: int | str) -> tuple[MemoryFile, int]:
        """Memory plus a number that changes whenever the memory does (the selector caches by it)."""
        uid = validate_user_id(user_id)
        hit = self._fresh_cache_entry(uid)
        if hit is not None:
            self.cache_hits += 1
            return hit.memory, hit.revision
        self.cache_misses += 1
        async with self.lock_for(uid):
            entry = await self._load_locked(uid)
        return entry.memory, entry.revision

    def _fresh_cache_entry(self, uid: str) -> _Cached | None:
        entry = self._cache.peek(uid)
        if entry is None:
            return None
        try:
            stamp = _stamp(os.stat(self.folder / f"{uid}.json"))
        except FileNotFoundError:
            stamp = _MISSING
        if stamp != entry.stamp:
            return None
        self._cache.get(uid)  # now the newest
        return entry

    async def _load_locked(self, uid: str) -> _Cached:
        hit = self._fresh_cache_entry(uid)
        if hit is not None:
            return hit
        path = self.folder / f"{uid}.json"
        try:
            async with aiofiles.open(path, "rb") as handle:
                stamp = _stamp(os.fstat(handle.fileno()))  # of the very file we read, not of a later one
                raw = await handle.read()
        except FileNotFoundError:
            return self._remember(uid, MemoryFile(), _MISSING)
        try:
            memory = MemoryFile.model_validate(self.codec.open_json(uid, "memory", json.loads(raw)))
        except (ValueError, ValidationError, RecursionError) as error:
            aside = await asyncio.to_thread(move_aside, path)
            if aside is not None:
                log.warning(
                    "memory file of user %s is unreadable (%s); kept aside as %s", uid, type(error).__name__, aside.name
                )
                self.mark_unreadable(uid)
            return self._remember(uid, MemoryFile(), _MISSING)
        return self._remember(uid, memory, stamp)

    def _remember(self, uid: str, memory: MemoryFile, stamp: tuple[int, int, int]) -> _Cached:
        return self._cache.put(uid, _Cached(stamp, memory, next(self._revisions)))

    # --- writing -------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def edit(
        self, user_id: int | str, *, generation: int | None = None, settles: Claim | None = None
    ) -> AsyncIterator[MemoryFile]:
        """Read-modify-write under the user's lock. Yields a private copy; saves it if the body changed it.

        `generation` is checked when the lock is taken and again just before the write: a forget that began while
        the body ran (it bumps the generation first, then waits for this lock) wins, and nothing is written
        (`Stale`). `settles` is accepted for the storage interface: one process owns the files, so its claims
        always hold, and the journal records the turns done after the save."""
        uid = validate_user_id(user_id)
        async with self.lock_for(uid):
            self._check(uid, generation)
            current = (await self._load_locked(uid)).memory
            draft = current.model_copy(deep=True)
            yield draft
            if draft.model_dump() != current.model_dump():
                self._check(uid, generation)
                await self._save_locked(uid, draft)

    def _check(self, uid: str, generation: int | None) -> None:
        if generation is not None:
            self.generations.ensure_current("memory write", int(uid), generation)

    async def _save_locked(self, uid: str, memory: MemoryFile) -> None:
        path = self.folder / f"{uid}.json"
        await self.codec.ready(uid)
        document = self.codec.seal_json(uid, "memory", memory.model_dump(mode="json"))
        await self._writer.write(path, json_bytes(document, indent=2))
        self._remember(uid, memory.model_copy(deep=True), _stamp(os.stat(path)))

    async def delete(self, user_id: int | str) -> bool:
        """Remove the user's memory file, the corrupt copies kept aside for them and any temp file of theirs a
        crash left; True when anything was there to remove. Durable (the folder is fsynced)."""
        uid = validate_user_id(user_id)
        async with self.lock_for(uid):
            self._remember(uid, MemoryFile(), _MISSING)
            return await asyncio.to_thread(self._delete_files, uid)

    async def delete_copies(self, user_id: int | str) -> int:
        """Remove the copies kept aside as unreadable and any stray temp file of the user (after they forgot part
        of their memory: those bytes may hold it); returns how many."""
        uid = validate_user_id(user_id)
        async with self.lock_for(uid):
            return await asyncio.to_thread(self._delete_copies, uid)

    def _delete_copies(self, uid: str) -> int:
        name = f"{uid}.json"
        removed = 0
        for path in copies_of(self.folder / name):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        removed += sweep_temp_files(self.folder, target=name)
        if removed:
            fsync_dir(self.folder)
        return removed

    def _delete_files(self, uid: str) -> bool:
        name = f"{uid}.json"
        removed = False
        for path in [self.folder / name, *copies_of(self.folder / name)]:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed = True
        removed = sweep_temp_files(self.folder, target=name) > 0 or removed
        if removed:
            fsync_dir(self.folder)
        return removed

    async def written(self) -> AsyncIterator[list[tuple[int, float]]]:
        """The newest modification time of each user's memory file or its kept-aside copies (the retention
        sweep's evidence that memory was learned recently), in pages in user id order."""
        ordered = sorted((await self.last_written()).items())
        for start in range(0, len(ordered), WRITTEN_PAGE):
            yield ordered[start : start + WRITTEN_PAGE]

    async def last_written(self) -> dict[int, float]:
        """user id -> the newest modification time of their memory file or its kept-aside copies."""
        return await asyncio.to_thread(self._scan, True)

    async def user_ids(self) -> list[int]:
        """Every user with a memory file, in id order (for imports)."""
        return sorted(await asyncio.to_thread(self._scan, False))

    def _scan(self, with_copies: bool) -> dict[int, float]:
        newest: dict[int, float] = {}
        try:
            entries = os.scandir(self.folder)
        except FileNotFoundError:
            return newest
        with entries:
            for entry in entries:
                head, dot, rest = entry.name.partition(".")
                if not dot or not is_snowflake_text(head):
                    continue
                if not (rest == "json" or (with_copies and rest.startswith("json.corrupt-"))):
                    continue
                try:
                    mtime = entry.stat(follow_symlinks=False).st_mtime
                except FileNotFoundError:
                    continue
                user_id = int(head)
                newest[user_id] = max(newest.get(user_id, 0.0), mtime)
        return newest
