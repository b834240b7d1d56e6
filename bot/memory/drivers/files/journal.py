"""Write-ahead journal of turns waiting for extraction, so a crash loses no acknowledged turn.

`DATA_DIR/pending.jsonl`, one JSON record per line, each appended and fsynced before the turn counts as taken:
- `{"op": "turn", "conv": "...", "user": "...", "place": "...", "turn": {...}}`: a turn entered the debouncer
  (`place` is `dm`, `guild:<id>` or `channel:<id>` with its server in `"guild"`, a DM turn when missing, the reading
  that can never reach a public channel; `"turn"` is `{"sealed": ...}` with MEMORY_ENCRYPTION_KEY);
- `{"op": "done", "user": "...", "turnIds": [...]}`: its extraction was saved (or it was deliberately skipped);
- `{"op": "purge", "user": "..."}`: the user wiped their memory; nothing of theirs before this may come back;
- `{"op": "failed", "user": "...", "turnIds": [...], "permanent": bool}`: one extraction of these turns failed;
- `{"op": "parked", "user": "...", "turnIds": [...], "at": "..."}`: these turns failed too often and are no longer
  tried; their text is kept for `PARKED_RETENTION`, then dropped. A turn is identified by (user, turn id).

The journal holds users' raw words, so it keeps them no longer than it must: a purge, a forget or a deleted
message rewrites the file at once (atomically) without those turns, and turns marked done are dropped by a
compaction at most `DONE_COMPACTION_DELAY` seconds later. Failure counts live in the file, so a batch that can
never succeed is parked after a bounded number of attempts across restarts, not replayed at every start forever.

At start the journal is replayed: turns neither done, purged nor parked go back into the debouncer. The memory file
records the ids of turns applied, in the write of the facts they produced: a crash before "done" applies none twice.
A crash mid-append leaves at most a torn last line, and a failed write at most a torn line of a record that was
never acknowledged: replay keeps unreadable lines aside (`pending.jsonl.corrupt-<time>`, dropped after
`PARKED_RETENTION` or when their user forgets) with a warning, and an append never glues a new record onto a torn
one (it starts a fresh line first).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import logging
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.memory.drivers.files.generations import FileGenerations
from bot.memory.drivers.files.torn import drop_old_copies, purge_user_from_copies
from bot.memory.drivers.interfaces import Claim, Failures, PendingTurn
from bot.memory.models import ConversationKey, Place, Turn, iso, utc_now
from bot.memory.rules.sources import message_of
from bot.storage.atomic import Fsync, json_bytes, make_private, private_opener, replace_file_sync, sweep_temp_files
from bot.storage.file_codec import FileCodec
from bot.storage.quarantine import copies_of, copy_aside
from bot.storage.soon import Soon

log = logging.getLogger(__name__)

JOURNAL_NAME = "pending.jsonl"
DONE_COMPACTION_DELAY = 1.0
PARKED_RETENTION = timedelta(days=1)

_LiveKey = tuple[int, str]  # (user id, turn id)


@dataclass(frozen=True, slots=True)
class _Parked:
    item: PendingTurn
    at: str  # ISO time it was parked


class Journal:
    """Append-only, fsynced record of pending turns; compacted when mostly obsolete, after a purge, and shortly
    after turns are done.

    `fsync` is a seam (tests inject ENOSPC/EIO through it); `durable=False` skips fsyncs (tests and benchmarks).
    A failed append raises and changes nothing in memory; a failed compaction is only logged (it is housekeeping).
    """

    def __init__(
        self,
        path: Path,
        generations: FileGenerations | None = None,
        *,
        durable: bool = True,
        compact_after: int = 2000,
        fsync: Fsync = os.fsync,
        done_compaction_delay: float = DONE_COMPACTION_DELAY,
        codec: FileCodec | None = None,
    ) -> None:
        self._compaction_failing = False
        self.path = path
        self._codec = codec or FileCodec(path.parent, None)  # seals each turn with MEMORY_ENCRYPTION_KEY
        self.generations = generations or FileGenerations()  # alone: its own; in a bundle: the shared one
        self._durable = durable
        self._fsync = fsync
        self._compact_after = compact_after
        self._lock = asyncio.Lock()
        self._waiting: list[tuple[list[dict[str, Any]], asyncio.Future[None]]] = []
        self._live: dict[_LiveKey, PendingTurn] = {}
        self._failures: dict[_LiveKey, Failures] = {}
        self._parked: dict[_LiveKey, _Parked] = {}
        self._lines = 0
        self._dead = 0  # lines whose turns are done, purged or dropped: what a compaction removes
        self._anonymous = itertools.count()
        self._tail_clean = False  # known to end with a newline (or be empty/missing)?
        self._in_file: set[int] = set()  # users whose turns the file may hold (since the last rewrite)
        self._compaction = Soon(self._compaction_due, done_compaction_delay, name="journal-compaction")

    @property
    def pending(self) -> int:
        return len(self._live)

    def pending_for(self, user_id: int) -> int:
        return sum(1 for item in self._live.values() if item.key.user_id == user_id)

    async def active_since(self, user_id: int, since: datetime) -> bool:
        return any(
            item.key.user_id == user_id and item.turn.at >= since
            for item in [*self._live.values(), *(parked.item for parked in self._parked.values())]
        )

    async def pending_turns_of(self, user_id: int) -> list[PendingTurn]:
        """The user's turns not yet done, oldest first (what `/memory forget minutes:` sorts through)."""
        return [item for item in self._live.values() if item.key.user_id == user_id]

    @property
    def taken_over(self) -> int:
        """One process owns the journal: nothing is ever taken over from another."""
        return 0

    @property
    def parked(self) -> int:
        return len(self._parked)

    def failures(self, user_id: int, turn_ids: list[str]) -> Failures:
        """The most failed attempts of any of these turns (a batch fails as a whole)."""
        found = [self._failures[(user_id, t)] for t in turn_ids if (user_id, t) in self._failures]
        return Failures(max((f.permanent for f in found), default=0), max((f.transient for f in found), default=0))

    # --- start-up ------------------------------------------------------------------------------------------

    async def resume(self) -> list[PendingTurn]:
        """`replay`, for the storage interface."""
        return await asyncio.to_thread(self.replay)

    def replay(self) -> list[PendingTurn]:
        """Read the journal, keep what is still pending, rewrite it compacted; returns pending turns in order."""
        self._live, self._failures, self._parked = {}, {}, {}
        torn: list[bytes] = []
        skipped = 0
        make_private(self.path.parent)
        make_private(self.path)
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            lines = []
        for raw in lines:
            try:
                record = json.loads(raw)
                self._apply(record)
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                skipped += 1
                if raw.strip(b"\x00 \t"):  # a power cut's run of NULs holds nothing worth keeping
                    torn.append(raw)
        if skipped:
            aside = copy_aside(self.path, b"\n".join(torn) + b"\n") if torn else None
            log.warning(
                "journal: skipped %d unreadable records (a crash mid-append)%s",
                skipped, f"; kept aside as {aside.name}" if aside else "",
            )
        self._lines = len(lines)
        sweep_temp_files(self.path.parent, target=self.path.name)  # a compaction a crash interrupted
        try:
            self._rewrite()
        except OSError as error:
            # Not fatal: the file still holds every live record; appends will start on a fresh line.
            log.warning("journal: could not compact at start (%s); keeping it as it is", error.strerror or error)
        return list(self._live.values())

    def _apply(self, record: dict[str, Any]) -> None:
        """Replay one record into RAM; an unreadable one raises (`replay` keeps it aside), an unknown op changes
        nothing."""
        op = record["op"]
        if op == "turn":
            self._apply_turn(record)
            return
        user = int(record["user"])
        if op == "purge":
            self._apply_purge(user)
            return
        keys = _turn_keys(user, record["turnIds"])
        if op == "done":
            self._apply_done(keys)
        elif op == "failed":
            self._apply_failed(keys, permanent=bool(record["permanent"]))
        elif op == "parked":
            self._apply_parked(keys, str(record["at"]))

    def _apply_turn(self, record: dict[str, Any]) -> None:
        key = ConversationKey(int(record["conv"]), int(record["user"]), Place.from_json(record))
        turn = Turn.from_json(self._codec.open_json(key.user_id, "turn", record["turn"]))
        # The generation is not written: a replayed turn continues under its user's current one (see
        # `FileGenerations`), a turn appended now already carries it.
        turn = dataclasses.replace(turn, generation=self.generations.current(key.user_id))
        turn_id = turn.turn_id or f"\0anonymous-{next(self._anonymous)}"
        self._live[(key.user_id, turn_id)] = PendingTurn(key, turn)
        self._in_file.add(key.user_id)

    def _apply_purge(self, user: int) -> None:
        mine = [live_key for live_key in [*self._live, *self._parked] if live_key[0] == user]
        for gone in mine:
            self._drop(gone)
        self._dead += len(mine) + 1

    def _apply_done(self, keys: list[_LiveKey]) -> None:
        for live_key in keys:
            if live_key in self._live:
                self._drop(live_key)
                self._dead += 1
        self._dead += 1

    def _apply_failed(self, keys: list[_LiveKey], *, permanent: bool) -> None:
        for live_key in keys:
            if live_key in self._live:
                counts = self._failures.setdefault(live_key, Failures())
                counts.permanent += permanent
                counts.transient += not permanent

    def _apply_parked(self, keys: list[_LiveKey], at: str) -> None:
        datetime.fromisoformat(at)  # a record we could not expire is an unreadable one
        for live_key in keys:
            if live_key in self._live:
                self._parked[live_key] = _Parked(self._live.pop(live_key), at)

    def _drop(self, live_key: _LiveKey) -> None:
        self._live.pop(live_key, None)
        self._failures.pop(live_key, None)
        self._parked.pop(live_key, None)

    def _expire_parked(self, now: datetime) -> int:
        cutoff = iso(now - PARKED_RETENTION)
        expired = [live_key for live_key, parked in self._parked.items() if parked.at < cutoff]
        for live_key in expired:
            self._drop(live_key)
        return len(expired)

    def _rewrite(self) -> None:
        """Atomically replace the journal with just the live and parked records (temp + fsync + rename), and drop
        unreadable records kept aside longer than `PARKED_RETENTION`."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        expired = self._expire_parked(utc_now())
        if expired:
            log.info("journal: deleted %d parked turns after %s", expired, PARKED_RETENTION)
        body = [self._encode(self._turn_record(item)) for item in self._live.values()]
        for (user, turn_id), counts in self._failures.items():
            for permanent, times in ((True, counts.permanent), (False, counts.transient)):
                record = {"op": "failed", "user": str(user), "turnIds": [turn_id], "permanent": permanent}
                body.extend([self._encode(record)] * times)
        for (user, turn_id), parked in self._parked.items():
            body.append(self._encode(self._turn_record(parked.item)))
            body.append(self._encode({"op": "parked", "user": str(user), "turnIds": [turn_id], "at": parked.at}))
        replace_file_sync(self.path, b"".join(body), fsync=self._fsync if self._durable else None)
        self._in_file = {user for user, _ in [*self._live, *self._parked]}
        self._lines = len(body)
        self._dead = 0
        self._tail_clean = True
        drop_old_copies(self.path, PARKED_RETENTION)

    # --- appends -------------------------------------------------------------------------------------------

    @staticmethod
    def _encode(record: dict[str, Any]) -> bytes:
        return json_bytes(record, compact=True) + b"\n"

    def _turn_record(self, item: PendingTurn) -> dict[str, Any]:
        return {
            "op": "turn",
            "conv": str(item.key.conversation_id),
            "user": str(item.key.user_id),
            **item.key.place.to_json(),
            "turn": self._codec.seal_json(item.key.user_id, "turn", item.turn.to_json()),
        }

    def _append_sync(self, data: bytes) -> None:
        with open(self.path, "a+b", opener=private_opener) as handle:
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
        """Append records durably; returns once they are on disk. Group commit: records that arrive while a write
        is under way go to disk together in the next write and fsync, so a burst costs a handful of fsyncs. The
        commit cannot be cancelled half-way (a cancelled caller still finds its records written)."""
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
            self._apply(record)
        self._lines += len(records)
        for _, waiter in batch:
            if not waiter.done():
                waiter.set_result(None)
        if self._lines > self._compact_after and self._lines > 4 * len(self._live):
            await self._rewrite_logged()

    async def _rewrite_logged(self) -> bool:
        """Compact (the caller holds the lock); a failure is logged, not raised: the appended records are durable
        and compaction is housekeeping, retried later."""
        try:
            await asyncio.to_thread(self._rewrite)
        except OSError as error:  # said once per run of failures (a full disk fails every try)
            level = logging.DEBUG if self._compaction_failing else logging.WARNING
            self._compaction_failing = True
            log.log(level, "journal: compaction failed (%s); will retry", error.strerror or error)
            return False
        self._compaction_failing = False
        return True

    async def compact(self) -> bool:
        """Rewrite the journal now with only what is still pending or parked; True when it succeeded."""
        async with self._lock:
            return await self._rewrite_logged()

    def _schedule_compaction(self) -> None:
        """Compact within `DONE_COMPACTION_DELAY` seconds: applied turns must not linger on disk."""
        self._compaction.ask()

    async def _compaction_due(self) -> None:
        if self._dead or self._parked:
            await self.compact()

    async def close(self) -> None:
        """Finish housekeeping: drop what is done now rather than at the next start."""
        await self._compaction.close()
        if self._dead:
            await self.compact()

    async def open(self) -> None:
        """Nothing to connect: `resume` reads the file."""

    async def add(self, key: ConversationKey, turns: Sequence[Turn]) -> None:
        """Record turns as taken; returns once they are on disk. `Stale` (nothing written) for turns from before
        their user's latest forget or pause."""
        self.generations.ensure_current("pending turns", key.user_id, *(turn.generation for turn in turns))
        await self._codec.ready(key.user_id)
        await self._append([self._turn_record(PendingTurn(key, turn)) for turn in turns])

    def watch(self, on_taken: Callable[[list[PendingTurn]], None]) -> None:
        """One process owns the journal: no other process's turns are ever taken over."""

    async def claim(self, key: ConversationKey, turns: Sequence[Turn]) -> Claim:
        """One process owns the journal: every turn of a batch is its to extract."""
        return Claim(key.user_id, tuple(turns))

    async def done(self, user_id: int, turn_ids: list[str]) -> None:
        """Record that these turns of the user need no more work; returns once that is on disk. Their text leaves
        the file at the next compaction, at most `DONE_COMPACTION_DELAY` seconds away."""
        if turn_ids:
            await self._append([{"op": "done", "user": str(user_id), "turnIds": turn_ids}])
            self._schedule_compaction()

    async def failed(self, user_id: int, turn_ids: list[str], *, permanent: bool) -> Failures:
        """Count one failed extraction of these turns (durably); returns their failures so far."""
        if turn_ids:
            await self._append([{"op": "failed", "user": str(user_id), "turnIds": turn_ids, "permanent": permanent}])
        return self.failures(user_id, turn_ids)

    async def park(self, user_id: int, turn_ids: list[str]) -> None:
        """Stop trying these turns; their text is deleted after `PARKED_RETENTION`."""
        if turn_ids:
            await self._append([{"op": "parked", "user": str(user_id), "turnIds": turn_ids, "at": iso(utc_now())}])

    async def forget_user(self, user_id: int) -> None:
        """Drop everything pending or parked for the user from the file itself, and their records from unreadable
        lines kept aside; returns once that is on disk.

        The journal is rewritten at once (atomically) without them. Should that fail, a purge record is appended
        instead, so a restart still never brings them back, and the next compaction removes the text.
        """
        async with self._lock:
            await self._purge_locked(user_id)

    async def _purge_locked(self, user_id: int) -> None:
        if user_id not in self._in_file and not copies_of(self.path):
            return  # not a byte of theirs in the journal: nothing to rewrite
        self._apply({"op": "purge", "user": str(user_id)})
        if user_id in self._in_file and not await self._rewrite_logged():
            await asyncio.to_thread(self._append_sync, self._encode({"op": "purge", "user": str(user_id)}))
            self._lines += 1
        await asyncio.to_thread(purge_user_from_copies, self.path, user_id)

    async def keep_only(
        self, user_id: int, keep: Callable[[PendingTurn], bool], generation: int
    ) -> tuple[list[PendingTurn], int]:
        """Drop the user's pending and parked turns but those `keep` accepts, which continue under `generation`
        (in RAM: the file does not hold generations). The file is rewritten without the others before this
        returns; should that fail, "done" records for them are appended instead."""
        async with self._lock:
            kept: list[PendingTurn] = []
            dropped: list[str] = []
            for live_key in [k for k in [*self._live, *self._parked] if k[0] == user_id]:
                item = self._live.get(live_key) or self._parked[live_key].item
                if live_key in self._live and keep(item):
                    restamped = PendingTurn(item.key, dataclasses.replace(item.turn, generation=generation))
                    self._live[live_key] = restamped
                    kept.append(restamped)
                else:
                    self._drop(live_key)
                    dropped.append(live_key[1])
                    self._dead += 1
            await self._persist_drop({user_id: dropped} if dropped else {})
            await asyncio.to_thread(purge_user_from_copies, self.path, user_id)
        return kept, len(dropped)

    async def _persist_drop(self, dropped: dict[int, list[str]]) -> None:
        """The file loses the dropped turns now (a rewrite); should that fail, "done" records stand for them."""
        if dropped and not await self._rewrite_logged():
            records = [{"op": "done", "user": str(user), "turnIds": ids} for user, ids in dropped.items()]
            await asyncio.to_thread(self._append_sync, b"".join(self._encode(record) for record in records))
            self._lines += len(records)

    async def drop_messages(self, message_ids: Collection[str]) -> dict[int, list[str]]:
        """Drop the turns of these messages (every text of an edited one), and the bot's replies to them, pending
        or parked, from the file itself (see `_persist_drop`); returns the turn ids dropped, by user."""
        wanted = set(message_ids)
        async with self._lock:
            dropped: dict[int, list[str]] = {}
            for live_key in [*self._live, *self._parked]:
                item = self._live.get(live_key) or self._parked[live_key].item
                if message_of(live_key[1]) in wanted or item.turn.reply_to in wanted:
                    self._drop(live_key)
                    self._dead += 1
                    dropped.setdefault(live_key[0], []).append(live_key[1])
            await self._persist_drop(dropped)
            for user in dropped:
                await asyncio.to_thread(purge_user_from_copies, self.path, user)
        return dropped


def _turn_keys(user: int, turn_ids: Any) -> list[_LiveKey]:
    """The turns a record names, as (user, turn id); a record whose `turnIds` is no list is unreadable."""
    if not isinstance(turn_ids, list):
        raise TypeError("turnIds must be a list")
    return [(user, str(turn_id)) for turn_id in turn_ids]
