"""Write-ahead journal of turns waiting for extraction, so a crash loses no acknowledged turn.

`DATA_DIR/pending.jsonl`, one JSON record per line, each appended and fsynced before the turn counts as taken:
- `{"op": "turn", "conv": "...", "user": "...", "turn": {...}}`: a turn entered the debouncer;
- `{"op": "done", "user": "...", "turnIds": [...]}`: its extraction was saved (or it was deliberately skipped);
- `{"op": "purge", "user": "..."}`: the user wiped their memory; nothing of theirs before this may come back.
A turn is identified by (user, turn id), so a "done" of one user never clears another user's turn. Turns need an
id to be marked done; one without an id stays pending until its user's next purge.
At start the journal is replayed: turns neither done nor purged go back into the debouncer. The memory file records
the ids of turns already applied, in the same atomic write as the facts they produced, so a crash between saving
memory and writing "done" cannot apply a turn twice.
A crash mid-append leaves at most a torn last line, and a failed write at most a torn line of a record that was
never acknowledged: replay skips unreadable lines with a warning, and an append never glues a new record onto a
torn one (it starts a fresh line first), so no acknowledged record is ever lost with it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.memory.atomic import Fsync, json_bytes, replace_file_sync, sweep_temp_files
from bot.memory.models import ConversationKey, Turn

log = logging.getLogger(__name__)

JOURNAL_NAME = "pending.jsonl"

_LiveKey = tuple[int, str]  # (user id, turn id)


@dataclass(frozen=True, slots=True)
class PendingTurn:
    key: ConversationKey
    turn: Turn


class Journal:
    """Append-only, fsynced record of pending turns; compacted when mostly obsolete.

    `fsync` is a seam (tests inject ENOSPC/EIO through it); `durable=False` skips fsyncs (tests and benchmarks).
    A failed append raises and changes nothing in memory; a failed compaction is only logged (it is housekeeping).
    """

    def __init__(self, path: Path, *, durable: bool = True, compact_after: int = 2000, fsync: Fsync = os.fsync) -> None:
        self.path = path
        self._durable = durable
        self._fsync = fsync
        self._compact_after = compact_after
        self._lock = asyncio.Lock()
        self._waiting: list[tuple[list[dict[str, Any]], asyncio.Future[None]]] = []
        self._live: dict[_LiveKey, PendingTurn] = {}
        self._lines = 0
        self._anonymous = itertools.count()
        self._tail_clean = False  # known to end with a newline (or be empty/missing)?

    @property
    def pending(self) -> int:
        return len(self._live)

    def pending_for(self, user_id: int) -> int:
        return sum(1 for item in self._live.values() if item.key.user_id == user_id)

    def pending_turns_of(self, user_id: int) -> list[PendingTurn]:
        """The user's turns not yet done, oldest first (what `/memory forget minutes:` sorts through)."""
        return [item for item in self._live.values() if item.key.user_id == user_id]

    # --- start-up ------------------------------------------------------------------------------------------

    def replay(self) -> list[PendingTurn]:
        """Read the journal, keep what is still pending, rewrite it compacted; returns pending turns in order."""
        live: dict[_LiveKey, PendingTurn] = {}
        torn = 0
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            lines = []
        for raw in lines:
            try:
                record = json.loads(raw)
                self._apply(live, record)
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                torn += 1
        if torn:
            log.warning("journal: skipped %d unreadable records (a crash mid-append)", torn)
        self._live = live
        self._lines = len(lines)
        sweep_temp_files(self.path.parent, target=self.path.name)  # a compaction a crash interrupted
        try:
            self._rewrite()
        except OSError as error:
            # Not fatal: the file still holds every live record; appends will start on a fresh line.
            log.warning("journal: could not compact at start (%s); keeping it as it is", error.strerror or error)
        return list(live.values())

    def _apply(self, live: dict[_LiveKey, PendingTurn], record: dict[str, Any]) -> None:
        op = record["op"]
        if op == "turn":
            key = ConversationKey(int(record["conv"]), int(record["user"]))
            turn = Turn.from_json(record["turn"])
            turn_id = turn.turn_id or f"\0anonymous-{next(self._anonymous)}"
            live[(key.user_id, turn_id)] = PendingTurn(key, turn)
        elif op == "done":
            user = int(record["user"])
            turn_ids = record["turnIds"]
            if not isinstance(turn_ids, list):
                raise TypeError("turnIds must be a list")
            for turn_id in turn_ids:
                live.pop((user, str(turn_id)), None)
        elif op == "purge":
            user = int(record["user"])
            for gone in [live_key for live_key in live if live_key[0] == user]:
                del live[gone]

    def _rewrite(self) -> None:
        """Atomically replace the journal with just the live records (temp + fsync + rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = b"".join(self._encode(self._turn_record(item)) for item in self._live.values())
        replace_file_sync(self.path, body, fsync=self._fsync if self._durable else None)
        self._lines = len(self._live)
        self._tail_clean = True

    # --- appends -------------------------------------------------------------------------------------------

    @staticmethod
    def _encode(record: dict[str, Any]) -> bytes:
        return json_bytes(record, compact=True) + b"\n"

    @staticmethod
    def _turn_record(item: PendingTurn) -> dict[str, Any]:
        return {
            "op": "turn",
            "conv": str(item.key.conversation_id),
            "user": str(item.key.user_id),
            "turn": item.turn.to_json(),
        }

    def _append_sync(self, data: bytes) -> None:
        with open(self.path, "a+b") as handle:
            if not self._tail_clean:
                # A torn line (crash or failed write mid-append) must not swallow the record written after it.
                handle.seek(0, os.SEEK_END)
                if handle.tell() > 0:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":
                        data = b"\n" + data
            handle.write(data)
            handle.flush()
            if self._durable:
                self._fsync(handle.fileno())

    async def _append(self, records: list[dict[str, Any]]) -> None:
        """Append records durably; returns once they are on disk.

        Group commit: records that arrive while a write is under way wait for it and then go to disk together in
        one write and one fsync, so a burst of thousands of turns costs a handful of fsyncs, not thousands.
        The commit itself cannot be cancelled half-way (a cancelled caller still finds its records written).
        """
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((records, future))
        async with self._lock:
            if not future.done():
                batch, self._waiting = self._waiting, []
                commit = asyncio.ensure_future(self._commit(batch))
                try:
                    await asyncio.shield(commit)
                except asyncio.CancelledError:
                    await asyncio.wait({commit})
                    raise
        await future

    async def _commit(self, batch: list[tuple[list[dict[str, Any]], asyncio.Future[None]]]) -> None:
        """Write a batch of waiting appends with one write and one fsync, then settle every waiter."""
        records = [record for group, _ in batch for record in group]
        data = b"".join(self._encode(record) for record in records)
        try:
            await asyncio.to_thread(self._append_sync, data)
        except Exception as error:  # noqa: BLE001 (every waiter must hear of any failure, or it waits forever)
            self._tail_clean = False  # part of `data` may have reached the file
            for _, waiter in batch:
                if not waiter.done():
                    waiter.set_exception(error)
            return
        self._tail_clean = True
        for record in records:
            self._apply(self._live, record)
        self._lines += len(records)
        for _, waiter in batch:
            if not waiter.done():
                waiter.set_result(None)
        if self._lines > self._compact_after and self._lines > 4 * len(self._live):
            try:
                await asyncio.to_thread(self._rewrite)
            except OSError as error:
                # The records are appended and durable; compaction is only housekeeping, retried later.
                log.warning("journal: compaction failed (%s); will retry", error.strerror or error)

    async def add(self, key: ConversationKey, turns: list[Turn]) -> None:
        """Record turns as taken; returns once they are on disk."""
        await self._append([self._turn_record(PendingTurn(key, turn)) for turn in turns])

    async def done(self, user_id: int, turn_ids: list[str]) -> None:
        """Record that these turns of the user need no more work; returns once that is on disk."""
        if turn_ids:
            await self._append([{"op": "done", "user": str(user_id), "turnIds": turn_ids}])

    async def compact(self) -> None:
        """Rewrite the journal with only the live records, so the bytes of purged turns leave the disk now."""
        async with self._lock:
            await asyncio.to_thread(self._rewrite)

    async def purge(self, user_id: int) -> None:
        """Drop everything pending for the user (a `/memory forget`); returns once that is on disk."""
        await self._append([{"op": "purge", "user": str(user_id)}])
