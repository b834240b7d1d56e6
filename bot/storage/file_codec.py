"""Sealing for the file drivers: the key store in a folder of its own, the store's mark, and the codec the memory
files and the journal seal and open their records with (see `sealing.py` for the scheme).

- The key store is `DATA_DIR/keys/`: `store.json` names it, and `<user id>.key` holds that user's data key,
  wrapped by the master key. It is a folder of its own so that it can live on its own volume and be backed up on
  its own: a backup holding both the data and the wrapped keys would outlive a forget.
- `DATA_DIR/encryption.json` marks the data as sealed (see `StoreMark`); `open` checks the mark against the key and
  the key store before anything is read, and marks an empty store when a key is first given.
- Without a master key the codec seals nothing and leaves records as they are, so unencrypted data folders are
  unchanged; it refuses (`KeyUnusable`) to read a sealed record rather than take it for an empty one.
- Keys are read once and kept in RAM (an LRU); creating one is durable (fsynced) before anything is sealed with
  it. The journal's compaction runs in a worker thread, so the cache is guarded by a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.storage.atomic import ensure_writable_folder, fsync_dir, json_bytes, make_private, replace_file_sync
from bot.storage.errors import KeyDestroyed, KeyUnusable
from bot.storage.ids import is_snowflake_text, validate_user_id
from bot.storage.lru import LruCache
from bot.storage.sealing import (
    DataKey,
    MasterKey,
    StoreMark,
    b64,
    new_store_id,
    rotation_mark,
    sealed_ref,
    start_decision,
    unb64,
)

MARK_FILE = "encryption.json"
KEYS_FOLDER = "keys"
STORE_FILE = "store.json"
KEY_SUFFIX = ".key"
SEALED = "sealed"  # a sealed JSON value is written as {"sealed": "<base64 blob>"}


@dataclass(frozen=True, slots=True)
class WrappedKey:
    ref: bytes
    master: str  # fingerprint of the master key that wrapped it
    wrapped: bytes


def read_mark(path: Path) -> StoreMark | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return StoreMark.from_json(json.loads(raw))
    except (ValueError, KeyError, TypeError) as error:
        raise KeyUnusable(f"{path} is unreadable ({type(error).__name__}): restore it from a backup") from None


def write_mark(path: Path, mark: StoreMark, *, durable: bool = True) -> None:
    replace_file_sync(path, json_bytes(mark.to_json(), indent=2), fsync=os.fsync if durable else None)


class FileKeyStore:
    """Wrapped data keys, one small file per user, written atomically; deleting one is durable."""

    def __init__(self, folder: Path, *, durable: bool = True) -> None:
        self.folder = folder
        self._fsync: Callable[[int], None] | None = os.fsync if durable else None

    def store_id(self) -> str | None:
        try:
            record = json.loads((self.folder / STORE_FILE).read_bytes())
        except FileNotFoundError:
            return None
        except ValueError:
            raise KeyUnusable(f"{self.folder / STORE_FILE} is unreadable: restore the key store") from None
        return str(record["store"]) if isinstance(record, dict) and "store" in record else None

    def create(self, store_id: str) -> None:
        ensure_writable_folder(self.folder)
        replace_file_sync(self.folder / STORE_FILE, json_bytes({"store": store_id}), fsync=self._fsync)

    def prepare(self) -> None:
        """Make the folder and its files private (they are created so, an older copy may not be)."""
        if self.folder.is_dir():
            make_private(self.folder)
            for path in self.folder.iterdir():
                make_private(path)

    def users(self) -> list[str]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        stems = (name.removesuffix(KEY_SUFFIX) for name in names if name.endswith(KEY_SUFFIX))
        return sorted(stem for stem in stems if is_snowflake_text(stem))

    def used(self) -> bool:
        return bool(self.users())

    def _path(self, uid: str) -> Path:
        return self.folder / f"{uid}{KEY_SUFFIX}"

    def read(self, uid: str) -> WrappedKey | None:
        try:
            record = json.loads(self._path(uid).read_bytes())
            return WrappedKey(bytes.fromhex(record["ref"]), str(record["master"]), unb64(record["wrapped"]))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):
            raise KeyUnusable(f"the data key of user {uid} is unreadable: restore the key store") from None

    def write(self, uid: str, key: WrappedKey) -> None:
        record = {"ref": key.ref.hex(), "master": key.master, "wrapped": b64(key.wrapped)}
        replace_file_sync(self._path(uid), json_bytes(record), fsync=self._fsync)

    def delete(self, uid: str) -> bool:
        try:
            self._path(uid).unlink()
        except FileNotFoundError:
            return False
        if self._fsync is not None:
            fsync_dir(self.folder)
        return True


class FileCodec:
    """What the memory files and the journal seal and open their users' records with. One per data folder."""

    def __init__(
        self,
        data_dir: Path,
        master: MasterKey | None,
        *,
        durable: bool = True,
        cache_size: int = 1024,
        data: Sequence[Path] = (),
    ) -> None:
        self.data_dir = data_dir
        self._data = tuple(data)
        self.master = master
        self.keys = FileKeyStore(data_dir / KEYS_FOLDER, durable=durable)
        self.mark_path = data_dir / MARK_FILE
        self._durable = durable
        self._cache: LruCache[str, DataKey] = LruCache(cache_size)
        self._lock = threading.Lock()

    @property
    def encrypting(self) -> bool:
        return self.master is not None

    @property
    def where(self) -> str:
        return f"files in {self.data_dir}"

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Check the key against the data folder's mark and the key store (`EncryptionRefused` with one line);
        mark an empty folder when a key is given for the first time."""
        await asyncio.to_thread(self.check)

    def check(self) -> None:
        mark = read_mark(self.mark_path)
        decision = start_decision(
            where=self.where, keys_where=str(self.keys.folder), key=self.master, mark=mark,
            key_store=self.keys.store_id(), key_store_used=self.keys.used(), has_data=self.holds_data(),
        )
        if decision == "new":
            assert self.master is not None
            store = self.keys.store_id()
            if store is None:
                store = new_store_id()
                self.keys.create(store)
            write_mark(self.mark_path, StoreMark(store, self.master.fingerprint), durable=self._durable)
        if decision != "plain":
            self.keys.prepare()

    def holds_data(self) -> bool:
        """Anything users said or the bot learned, sealed or not, in the paths the builder named: a folder with a
        file named by a user id (a memory file or a copy kept aside), or a file that is not empty (the journal)."""
        for path in self._data:
            if path.is_dir():
                with contextlib.suppress(FileNotFoundError), os.scandir(path) as entries:
                    if any(is_snowflake_text(entry.name.partition(".")[0]) for entry in entries):
                        return True
            elif path.is_file() and path.stat().st_size > 0:
                return True
        return False

    async def close(self) -> None:
        """Nothing to close: every key is written when it is made."""

    async def forget_user(self, user_id: int) -> None:
        """Destroy the user's data key: every copy of their sealed records, wherever it is kept, stays sealed."""
        uid = validate_user_id(user_id)
        if self.master is not None:  # without one, the start check made sure no key exists
            await asyncio.to_thread(self._destroy, uid)

    def _destroy(self, uid: str) -> None:
        with self._lock:
            self._cache.discard(uid)
            self.keys.delete(uid)

    # --- keys ----------------------------------------------------------------------------------------------

    async def ready(self, user_id: int | str) -> None:
        """Make sure the user has a data key before something of theirs is sealed (a new key is written durably,
        off the event loop)."""
        if self.master is not None:
            uid = validate_user_id(user_id)
            with self._lock:
                known = self._cache.get(uid)
            if known is None:
                await asyncio.to_thread(self._key, uid, True)

    def _key(self, uid: str, create: bool) -> DataKey | None:
        assert self.master is not None
        with self._lock:
            cached = self._cache.get(uid)
            if cached is not None:
                return cached
            stored = self.keys.read(uid)
            if stored is not None:
                key = self.master.unwrap(int(uid), stored.ref, stored.wrapped)
            elif create:
                key = DataKey.new()
                self.keys.write(uid, WrappedKey(key.ref, self.master.fingerprint, self.master.wrap(int(uid), key)))
            else:
                return None
            return self._cache.put(uid, key)

    # --- records -------------------------------------------------------------------------------------------

    def seal_json(self, user_id: int | str, purpose: str, value: Any) -> Any:
        """`value` as it is written: itself without a master key, else `{"sealed": ...}`."""
        if self.master is None:
            return value
        uid = validate_user_id(user_id)
        key = self._key(uid, True)
        assert key is not None
        return {SEALED: b64(key.seal(int(uid), purpose, json_bytes(value, compact=True)))}

    def open_json(self, user_id: int | str, purpose: str, value: Any) -> Any:
        """The value a record holds: a plain value as it is, a sealed one opened (`KeyDestroyed` when its key is
        gone, `SealedDamaged` when it does not open, `KeyUnusable` without a master key)."""
        if not is_sealed_json(value):
            return value
        if self.master is None:
            raise KeyUnusable(f"{self.where} holds encrypted memory: MEMORY_ENCRYPTION_KEY is needed to read it")
        uid = validate_user_id(user_id)
        blob = unb64(value[SEALED])
        key = self._key(uid, False)
        if key is None or key.ref != sealed_ref(blob):
            raise KeyDestroyed("sealed with a data key that no longer exists (its user was forgotten)")
        return json.loads(key.open(int(uid), purpose, blob))

    def seal_bytes(self, user_id: int | str, purpose: str, data: bytes) -> bytes:
        """Raw bytes (a copy kept aside) as a sealed JSON file."""
        return json_bytes(self.seal_json(user_id, purpose, {"bytes": b64(data)}))

    # --- rotation ------------------------------------------------------------------------------------------

    def rotate(self, old: MasterKey, new: MasterKey) -> tuple[int, int]:
        """Re-wrap every data key from `old` to `new` (resumable: keys already re-wrapped are counted, not touched),
        then mark the store as using `new`; returns (re-wrapped now, already re-wrapped)."""
        mark = read_mark(self.mark_path)
        rotating = rotation_mark(where=self.where, mark=mark, old=old, new=new)
        if rotating is None:
            return 0, len(self.keys.users())
        write_mark(self.mark_path, rotating, durable=self._durable)
        done = already = 0
        for uid in self.keys.users():
            stored = self.keys.read(uid)
            if stored is None:
                continue  # forgotten meanwhile
            if stored.master == new.fingerprint:
                already += 1
                continue
            key = old.unwrap(int(uid), stored.ref, stored.wrapped)
            self.keys.write(uid, WrappedKey(key.ref, new.fingerprint, new.wrap(int(uid), key)))
            done += 1
        write_mark(self.mark_path, StoreMark(rotating.store, new.fingerprint), durable=self._durable)
        return done, already



def is_sealed_json(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and SEALED in value
