"""The message ledger on files: which user each learned Discord message belongs to, under `DATA_DIR/message-ledger/`.

Append-only logs of small records (ids, place keys and times: never a word of the messages), one per group of
users (`<user id % SHARDS>.jsonl`), replayed into RAM at start. Forgetting a user rewrites their group's log at
once without them, so no byte of theirs is left and a burst of forgets (the retention sweep) rewrites small files,
not one big one; a log is also rewritten compacted when it holds mostly obsolete lines, at start and at shutdown.
- `{"op": "entry", "user": "...", "place": "...", "at": "...", "cited": bool, "ids": [...]}`: messages learned (or
  about to be) for the user in a place at a time; `cited` while a fact names them;
- `{"op": "cite", "user": "...", "at": "...", "cited": [...], "uncited": [...]}`: the user's facts now name, or no
  longer name, these messages;
- `{"op": "drop", "ids": [...]}`: deleted messages, handled;
- `{"op": "forget", "user": "..."}`: the user was forgotten (written only when the rewrite could not be);
- `{"op": "prune", "before": "..."}`: uncited entries learned before then go.
Each append is fsynced before it returns. A torn last line (a crash mid-append) is skipped at replay with a
warning; an append after one starts on a fresh line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from bot.memory.drivers.interfaces import LEDGER_RECENT, LedgerEntry
from bot.memory.models import iso, utc_now
from bot.storage.atomic import (
    ensure_writable_folder,
    json_bytes,
    make_private,
    private_opener,
    replace_file_sync,
    sweep_temp_files,
)

log = logging.getLogger(__name__)

LEDGER_FOLDER = "message-ledger"
SHARDS = 32
COMPACT_AFTER = 1024  # lines, at least: below this a log is never rewritten just for its size


class _Log:
    """One group's append-only file."""

    def __init__(self, path: Path, durable: bool) -> None:
        self.path = path
        self.durable = durable
        self.lines = 0
        self.appended = 0  # records appended since the last rewrite
        self.tail_clean = False
        self.lock = asyncio.Lock()

    def read(self) -> list[bytes]:
        make_private(self.path)
        try:
            return self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        if not records and not self.path.exists():
            return
        replace_file_sync(self.path, b"".join(map(_encode, records)), fsync=os.fsync if self.durable else None)
        self.lines, self.appended, self.tail_clean = len(records), 0, True

    def append(self, record: dict[str, Any]) -> None:
        data = _encode(record)
        with open(self.path, "a+b", opener=private_opener) as handle:
            if not self.tail_clean:  # a torn line must not swallow the record written after it
                handle.seek(0, os.SEEK_END)
                if handle.tell() > 0:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":
                        data = b"\n" + data
            self.tail_clean = False
            handle.write(data)
            handle.flush()
            if self.durable:
                os.fsync(handle.fileno())
        self.tail_clean = True
        self.lines += 1
        self.appended += 1


class FileLedger:
    def __init__(self, folder: Path, *, durable: bool = True) -> None:
        self._compaction_failing = False
        self.folder = folder
        self._logs = [_Log(folder / f"{n}.jsonl", durable) for n in range(SHARDS)]
        self._entries: dict[str, LedgerEntry] = {}
        self._by_user: dict[int, set[str]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def messages(self) -> list[str]:
        """Every message the ledger knows (for `import-files`)."""
        return list(self._entries)

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def open(self) -> None:
        await asyncio.to_thread(self._replay)

    def _replay(self) -> None:
        ensure_writable_folder(self.folder)
        sweep_temp_files(self.folder)
        skipped = 0
        for shard in self._logs:
            for raw in shard.read():
                try:
                    self._apply(json.loads(raw))
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                    skipped += 1
        if skipped:
            log.warning("message ledger: skipped %d unreadable records (a crash mid-append)", skipped)
        for n in range(SHARDS):
            try:
                self._rewrite(n)
            except OSError as error:  # not fatal: the file holds every record; appends start on a fresh line
                log.warning("message ledger: could not compact at start (%s)", error.strerror or error)

    async def close(self) -> None:
        for n, shard in enumerate(self._logs):
            if shard.appended:
                async with shard.lock:
                    await self._compact(n)

    # --- records -------------------------------------------------------------------------------------------

    def _apply(self, record: dict[str, Any]) -> None:
        """Apply one record to RAM; an unreadable one (an unknown op among them) raises."""
        op = record["op"]
        handler = self._APPLY.get(op) if isinstance(op, str) else None
        if handler is None:
            raise ValueError(f"unknown op {op!r}")
        handler(self, record)

    def _apply_entry(self, record: dict[str, Any]) -> None:
        user, at = int(record["user"]), datetime.fromisoformat(str(record["at"]))
        for message in _ids(record["ids"]):
            self._put(message, LedgerEntry(user, str(record["place"]), at, bool(record["cited"])))

    def _apply_cite(self, record: dict[str, Any]) -> None:
        """A message newly cited keeps where and when it was learned (unknown: no place, learned now); one no longer
        cited is marked so only when it is this user's."""
        user, at = int(record["user"]), datetime.fromisoformat(str(record["at"]))
        for message in _ids(record["cited"]):
            known = self._entries.get(message)
            self._put(message, LedgerEntry(user, known.place if known else "", known.learned_at if known else at, True))
        for message in _ids(record["uncited"]):
            known = self._entries.get(message)
            if known is not None and known.user_id == user:
                self._put(message, LedgerEntry(user, known.place, known.learned_at, False))

    def _apply_forget(self, record: dict[str, Any]) -> None:
        for message in list(self._by_user.get(int(record["user"]), ())):
            self._remove(message)

    def _apply_drop(self, record: dict[str, Any]) -> None:
        for message in _ids(record["ids"]):
            self._remove(message)

    def _apply_prune(self, record: dict[str, Any]) -> None:
        before = datetime.fromisoformat(str(record["before"]))
        for message in [m for m, e in self._entries.items() if not e.cited and e.learned_at < before]:
            self._remove(message)

    _APPLY: ClassVar[dict[str, Callable[[FileLedger, dict[str, Any]], None]]] = {
        "entry": _apply_entry,
        "cite": _apply_cite,
        "forget": _apply_forget,
        "drop": _apply_drop,
        "prune": _apply_prune,
    }

    def _put(self, message: str, entry: LedgerEntry) -> None:
        self._remove(message)
        self._entries[message] = entry
        self._by_user.setdefault(entry.user_id, set()).add(message)

    def _remove(self, message: str) -> None:
        entry = self._entries.pop(message, None)
        if entry is None:
            return
        mine = self._by_user.get(entry.user_id)
        if mine is not None:
            mine.discard(message)
            if not mine:
                del self._by_user[entry.user_id]

    def _rewrite(self, n: int) -> None:
        groups: dict[tuple[int, str, datetime, bool], list[str]] = {}
        for user, messages in self._by_user.items():
            if user % SHARDS != n:
                continue
            for message in sorted(messages):
                entry = self._entries[message]
                groups.setdefault((user, entry.place, entry.learned_at, entry.cited), []).append(message)
        self._logs[n].rewrite([
            {"op": "entry", "user": str(user), "place": place, "at": iso(at), "cited": cited, "ids": ids}
            for (user, place, at, cited), ids in groups.items()
        ])

    async def _compact(self, n: int) -> None:
        """Rewrite log `n` (its lock held); a failure is logged: every record in it is already durable."""
        try:
            await asyncio.to_thread(self._rewrite, n)
        except OSError as error:  # said once per run of failures (a full disk fails every try)
            level = logging.DEBUG if self._compaction_failing else logging.WARNING
            self._compaction_failing = True
            log.log(level, "message ledger: compaction failed (%s); will retry", error.strerror or error)
            return
        self._compaction_failing = False

    async def _write(self, n: int, record: dict[str, Any]) -> None:
        """Append `record` to log `n` durably, then apply it (a failed append changes nothing in RAM)."""
        shard = self._logs[n]
        async with shard.lock:
            await asyncio.to_thread(shard.append, record)
            self._apply(record)
            if shard.lines > COMPACT_AFTER and shard.lines > len(self._entries) // SHARDS:
                await self._compact(n)

    # --- the ledger ----------------------------------------------------------------------------------------

    async def note(self, user_id: int, place: str, message_ids: Sequence[str], at: datetime) -> None:
        if message_ids:
            await self._write(user_id % SHARDS, {
                "op": "entry", "user": str(user_id), "place": place, "at": iso(at), "cited": True,
                "ids": list(message_ids),
            })

    async def cite(self, user_id: int, *, cited: Collection[str], uncited: Collection[str]) -> None:
        mine = self._by_user.get(user_id, set())
        newly = [m for m in cited if m not in mine or not self._entries[m].cited]
        no_longer = [m for m in uncited if m in mine and self._entries[m].cited]
        if newly or no_longer:
            await self._write(user_id % SHARDS, {
                "op": "cite", "user": str(user_id), "at": iso(utc_now()), "cited": newly, "uncited": no_longer,
            })

    async def lookup(self, message_ids: Collection[str]) -> dict[str, LedgerEntry]:
        return {m: self._entries[m] for m in message_ids if m in self._entries}

    async def drop(self, message_ids: Collection[str]) -> None:
        by_log: dict[int, list[str]] = {}
        for message in message_ids:
            entry = self._entries.get(message)
            if entry is not None:
                by_log.setdefault(entry.user_id % SHARDS, []).append(message)
        for n, messages in by_log.items():
            await self._write(n, {"op": "drop", "ids": messages})

    async def prune(self, now: datetime) -> int:
        before = now - LEDGER_RECENT
        stale = {e.user_id % SHARDS for e in self._entries.values() if not e.cited and e.learned_at < before}
        count = sum(1 for e in self._entries.values() if not e.cited and e.learned_at < before)
        for n in sorted(stale):
            await self._write(n, {"op": "prune", "before": iso(before)})
        return count

    async def forget_user(self, user_id: int) -> None:
        """Forget the user's entries: their group's log is rewritten without them before this returns."""
        if user_id not in self._by_user:
            return
        n = user_id % SHARDS
        async with self._logs[n].lock:
            for message in list(self._by_user.get(user_id, ())):
                self._remove(message)
            try:
                await asyncio.to_thread(self._rewrite, n)
            except OSError:  # the ids stay on disk until the next rewrite; a restart must still not bring them back
                await asyncio.to_thread(self._logs[n].append, {"op": "forget", "user": str(user_id)})


def _ids(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise TypeError("ids must be a list")
    return [str(item) for item in value]


def _encode(record: dict[str, Any]) -> bytes:
    return json_bytes(record, compact=True) + b"\n"
