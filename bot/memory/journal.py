"""Write-ahead journal of turns waiting for extraction, so a crash loses no acknowledged turn.

`DATA_DIR/pending.jsonl`, one JSON record per line, each appended and fsynced before the turn counts as taken:
- `{"op": "turn", "conv": "...", "user": "...", "turn": {...}}`: a turn entered the debouncer;
- `{"op": "done", "user": "...", "turnIds": [...]}`: its extraction was saved (or it was deliberately skipped);
- `{"op": "purge", "user": "..."}`: the user wiped their memory; nothing of theirs before this may come back.
At start the journal is replayed: turns neither done nor purged go back into the debouncer. The memory file records
the ids of turns already applied, in the same atomic write as the facts they produced, so a crash between saving
memory and writing "done" cannot apply a turn twice. A torn last line (crash mid-append) is skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.memory.atomic import fsync_dir
from bot.memory.models import ConversationKey, Turn

log = logging.getLogger(__name__)

JOURNAL_NAME = "pending.jsonl"


@dataclass(frozen=True, slots=True)
class PendingTurn:
    key: ConversationKey
    turn: Turn


class Journal:
    """Append-only, fsynced record of pending turns; compacted when mostly obsolete."""

    def __init__(self, path: Path, *, durable: bool = True, compact_after: int = 2000) -> None:
        self.path = path
        self._durable = durable
        self._compact_after = compact_after
        self._lock = asyncio.Lock()
        self._live: dict[str, PendingTurn] = {}
        self._lines = 0

    @property
    def pending(self) -> int:
        return len(self._live)

    def pending_for(self, user_id: int) -> int:
        return sum(1 for item in self._live.values() if item.key.user_id == user_id)

    # --- start-up ------------------------------------------------------------------------------------------

    def replay(self) -> list[PendingTurn]:
        """Read the journal, keep what is still pending, rewrite it compacted; returns pending turns in order."""
        live: dict[str, PendingTurn] = {}
        torn = 0
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            lines = []
        for raw in lines:
            try:
                record = json.loads(raw)
                self._apply(live, record)
            except (ValueError, KeyError, TypeError):
                torn += 1
        if torn:
            log.warning("journal: skipped %d unreadable records (a crash mid-append)", torn)
        self._live = live
        self._rewrite()
        return list(live.values())

    @staticmethod
    def _apply(live: dict[str, PendingTurn], record: dict[str, Any]) -> None:
        op = record["op"]
        if op == "turn":
            key = ConversationKey(int(record["conv"]), int(record["user"]))
            turn = Turn.from_json(record["turn"])
            live[turn.turn_id] = PendingTurn(key, turn)
        elif op == "done":
            for turn_id in record["turnIds"]:
                live.pop(str(turn_id), None)
        elif op == "purge":
            user = int(record["user"])
            for turn_id in [tid for tid, item in live.items() if item.key.user_id == user]:
                del live[turn_id]

    def _rewrite(self) -> None:
        """Atomically replace the journal with just the live records (temp + fsync + rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(self.path.name + ".compact")
        body = b"".join(self._encode(self._turn_record(item)) for item in self._live.values())
        with open(temp, "wb") as handle:
            handle.write(body)
            handle.flush()
            if self._durable:
                os.fsync(handle.fileno())
        os.replace(temp, self.path)
        if self._durable:
            fsync_dir(self.path.parent)
        self._lines = len(self._live)

    # --- appends -------------------------------------------------------------------------------------------

    @staticmethod
    def _encode(record: dict[str, Any]) -> bytes:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"

    @staticmethod
    def _turn_record(item: PendingTurn) -> dict[str, Any]:
        return {
            "op": "turn",
            "conv": str(item.key.conversation_id),
            "user": str(item.key.user_id),
            "turn": item.turn.to_json(),
        }

    def _append_sync(self, data: bytes) -> None:
        with open(self.path, "ab") as handle:
            handle.write(data)
            handle.flush()
            if self._durable:
                os.fsync(handle.fileno())

    async def _append(self, records: list[dict[str, Any]]) -> None:
        data = b"".join(self._encode(record) for record in records)
        async with self._lock:
            await asyncio.to_thread(self._append_sync, data)
            for record in records:
                self._apply(self._live, record)
            self._lines += len(records)
            if self._lines > self._compact_after and self._lines > 4 * len(self._live):
                await asyncio.to_thread(self._rewrite)

    async def add(self, key: ConversationKey, turns: list[Turn]) -> None:
        """Record turns as taken; returns once they are on disk."""
        await self._append([self._turn_record(PendingTurn(key, turn)) for turn in turns])

    async def done(self, user_id: int, turn_ids: list[str]) -> None:
        if turn_ids:
            await self._append([{"op": "done", "user": str(user_id), "turnIds": turn_ids}])

    async def purge(self, user_id: int) -> None:
        await self._append([{"op": "purge", "user": str(user_id)}])
