"""Pending turns as rows: durable before a turn counts as taken, claimed with a lease before extraction.

- `add` inserts the turns held by this process for `orphan_seconds` (its debouncer keeps them until the user goes
  quiet, at most the max wait, plus a round while the user's previous batch finishes).
- `claim` leases a batch's rows to this process for `lease_seconds` (`FOR UPDATE SKIP LOCKED`: a row another
  process is claiming is skipped, never waited for); only claimed turns are extracted.
- The store settles a claim by deleting its rows in the transaction that saves the memory (see `memories.py`):
  only rows still leased to this process are settled, so a batch is applied once even when two processes both
  believed they held it.
- `take_over` claims rows whose holder is gone: a process whose liveness row went stale (it died: taken over
  within `stale_seconds` plus one sweep, however long its hold) or whose hold ran out (it lives but is stuck). A
  background task in every process runs it, so the turns of a dead process are finished by another, or by itself
  once restarted. A process that shuts down cleanly releases what it still holds and removes its liveness row, for
  the next one to take at once. Liveness is `bot.storage.pg.processes`.
- `forget_user` and `keep_only` delete the user's rows outright, claimed or not, so a `/memory forget` in one
  process cancels work another has claimed: that process's save then finds its claim gone and discards its result.
  Every row carries the forget generation its turn arrived under, and `add` refuses turns of an older generation
  than the user's (checked under the user's lock): a message that reached another process just before the user
  forgot or paused is not learned after it, however long its reply took.
- With MEMORY_ENCRYPTION_KEY a turn is sealed with its user's key into `sealed` (bytea) and `turn` is NULL
  (`bot.storage.pg.codec`); a row whose key was destroyed cannot be read again and is deleted when met.
- Failures are counted on the rows; a parked row keeps its text for `PARKED_RETENTION` (for an operator) and is then
  deleted by the same background task.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from bot.memory.drivers.interfaces import Claim, Failures, PendingTurn
from bot.memory.drivers.pg.generations import ensure_current, lock_user
from bot.memory.models import ConversationKey, Place, Turn
from bot.storage.errors import StorageUnavailable
from bot.storage.ids import user_key
from bot.storage.pg.codec import PostgresCodec
from bot.storage.pg.database import Database
from bot.storage.pg.processes import ProcessRegistry

log = logging.getLogger(__name__)

PARKED_RETENTION = timedelta(days=1)
TAKEOVER_BATCH = 500

TakenOver = Callable[[list[PendingTurn]], None]


class PostgresTurnQueue:
    def __init__(
        self,
        database: Database,
        *,
        lease_seconds: float,
        orphan_seconds: float,
        sweep_seconds: float | None = None,
        processes: ProcessRegistry | None = None,
        codec: PostgresCodec | None = None,
    ) -> None:
        self.database = database
        self.codec = codec or PostgresCodec(database, None, lock_user=lock_user, data_tables=())
        self.processes = processes or ProcessRegistry(database)
        self.lease_seconds = lease_seconds
        self.orphan_seconds = orphan_seconds
        self.sweep_seconds = (
            sweep_seconds
            if sweep_seconds is not None
            else min(max(1.0, min(lease_seconds, 60.0) / 4), self.processes.beat_seconds)
        )
        self._pending = 0
        self._parked = 0
        self._taken_over = 0
        self._on_taken: TakenOver | None = None
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def owner(self) -> str:
        """This process's name on the rows it holds (its liveness row's)."""
        return self.processes.owner

    @property
    def pending(self) -> int:
        """Turns waiting in the whole database (all processes), as of the last sweep."""
        return self._pending

    @property
    def parked(self) -> int:
        return self._parked

    @property
    def taken_over(self) -> int:
        return self._taken_over

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Register this process as alive before it holds anything (the schema is migrated with the database)."""
        await self.processes.open()

    async def resume(self) -> list[PendingTurn]:
        """Turns a dead or stopped process left (its liveness row stale or gone, a hold that ran out or was
        released), now claimed by this one."""
        taken = await self.take_over()
        await self._housekeeping()
        return taken

    def watch(self, on_taken: TakenOver) -> None:
        """Start the background sweep; turns it takes over are handed to `on_taken` (the debouncer)."""
        self._on_taken = on_taken
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever(), name="pending-takeover")

    async def _sweep_forever(self) -> None:
        """Take over, then tidy, every `sweep_seconds`, for as long as the process runs: a failed round is logged
        and the next one tries again (what was taken over is handed on before tidying can fail)."""
        while True:
            await asyncio.sleep(self.sweep_seconds)
            try:
                taken = await self.take_over()
                if taken and self._on_taken is not None:
                    self._on_taken(taken)
                await self._housekeeping()
            except StorageUnavailable as error:
                log.warning("pending turns: sweep failed (%s); will retry", error)
            except Exception as error:  # the sweep must outlive any one bad round
                log.error("pending turns: sweep failed (%s); will retry", type(error).__name__, exc_info=error)

    async def close(self) -> None:
        """Stop the sweep, release what this process still holds (a shutdown whose flush ran out of time) and
        remove its liveness row, so another process, or this one restarted, takes it at once."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        try:
            await self.database.execute(
                "UPDATE pending_turns SET lease_until = now() - interval '1 millisecond'"
                " WHERE lease_owner = $1 AND parked_at IS NULL",
                self.owner,
            )
        except StorageUnavailable as error:
            log.warning("pending turns: could not release this process's turns (%s); they are taken over later",
                        error)
        await self.processes.close()

    async def _housekeeping(self) -> None:
        async def work(conn: asyncpg.Connection) -> tuple[int, int, int]:
            expired = await conn.fetchval(
                "WITH gone AS (DELETE FROM pending_turns WHERE parked_at < now() - $1::interval RETURNING 1)"
                " SELECT count(*) FROM gone",
                PARKED_RETENTION,
            )
            counts = await conn.fetchrow(
                "SELECT count(*) FILTER (WHERE parked_at IS NULL) AS pending,"
                " count(*) FILTER (WHERE parked_at IS NOT NULL) AS parked FROM pending_turns"
            )
            return int(expired), int(counts["pending"]), int(counts["parked"])

        expired, self._pending, self._parked = await self.database.run(work)
        if expired:
            log.info("pending turns: deleted %d parked turns after %s", expired, PARKED_RETENTION)

    # --- the queue -----------------------------------------------------------------------------------------

    async def add(self, key: ConversationKey, turns: Sequence[Turn]) -> None:
        """Insert the turns held by this process; `Stale` (nothing inserted) when they are from before their user's
        latest forget or pause, checked under the user's lock, so a forget in any process wins."""
        if not turns:
            return
        uid = user_key(key.user_id)
        place = json.dumps(key.place.to_json())
        hold = timedelta(seconds=self.orphan_seconds)
        generations = {turn.generation for turn in turns}

        async def work(conn: asyncpg.Connection) -> None:
            await lock_user(conn, uid)
            await ensure_current(conn, "pending turns", uid, *generations)
            rows = [
                (uid, turn.turn_id, key.conversation_id, place,
                 *await self.codec.encode(conn, uid, "turn", json.dumps(turn.to_json())), self.owner, hold,
                 turn.generation)
                for turn in turns
            ]
            await conn.executemany(
                "INSERT INTO pending_turns"
                " (user_id, turn_id, conversation_id, place, turn, sealed, lease_owner, lease_until, generation)"
                " VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, now() + $8::interval, $9)"
                " ON CONFLICT (user_id, turn_id) DO NOTHING",
                rows,
            )

        await self.database.run(work)
        self._pending += len(turns)

    async def claim(self, key: ConversationKey, turns: Sequence[Turn]) -> Claim:
        """Lease the batch's rows that are free (ours, unclaimed, with an expired lease, or held by a dead process);
        the returned claim holds only those turns: the others are settled, forgotten, or being extracted elsewhere."""
        uid = user_key(key.user_id)
        ids = [turn.turn_id for turn in turns if turn.turn_id]
        rows = await self.database.run(
            lambda conn: conn.fetch(
                "WITH free AS (SELECT user_id, turn_id FROM pending_turns"
                "   WHERE user_id = $1 AND turn_id = ANY($2::text[]) AND parked_at IS NULL"
                "   AND (lease_owner = $3 OR lease_owner IS NULL OR lease_until IS NULL OR lease_until < now()"
                "     OR NOT EXISTS (SELECT 1 FROM processes WHERE owner = lease_owner"
                "       AND last_seen > now() - $5::interval))"
                "   FOR UPDATE SKIP LOCKED)"
                " UPDATE pending_turns AS p SET lease_owner = $3, lease_until = now() + $4::interval"
                " FROM free WHERE p.user_id = free.user_id AND p.turn_id = free.turn_id RETURNING p.turn_id",
                uid,
                ids,
                self.owner,
                timedelta(seconds=self.lease_seconds),
                self.processes.stale,
            )
        )
        claimed = {row["turn_id"] for row in rows}
        return Claim(key.user_id, tuple(turn for turn in turns if turn.turn_id in claimed), self.owner)

    async def take_over(self) -> list[PendingTurn]:
        """Claim turns abandoned by a dead or stuck process, oldest first."""
        rows = await self.database.run(
            lambda conn: conn.fetch(
                "WITH free AS (SELECT user_id, turn_id FROM pending_turns"
                "   WHERE parked_at IS NULL AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until < now()"
                "     OR NOT EXISTS (SELECT 1 FROM processes WHERE owner = lease_owner"
                "       AND last_seen > now() - $4::interval))"
                "   ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)"
                " UPDATE pending_turns AS p SET lease_owner = $1, lease_until = now() + $2::interval"
                " FROM free WHERE p.user_id = free.user_id AND p.turn_id = free.turn_id"
                " RETURNING p.user_id, p.turn_id, p.conversation_id, p.place::text, p.turn::text, p.sealed, p.seq,"
                " p.generation",
                self.owner,
                timedelta(seconds=self.orphan_seconds),
                TAKEOVER_BATCH,
                self.processes.stale,
            )
        )
        taken = await self._pending_turns(None, sorted(rows, key=lambda row: row["seq"]))
        if taken:
            self._taken_over += len(taken)
            log.info("pending turns: took over %d turns abandoned by another process", len(taken))
        return taken

    async def done(self, user_id: int, turn_ids: list[str]) -> None:
        """Delete settled turns this process holds (a batch skipped without a save settles here)."""
        if not turn_ids:
            return
        await self.database.execute(
            "DELETE FROM pending_turns WHERE user_id = $1 AND turn_id = ANY($2::text[]) AND lease_owner = $3",
            user_key(user_id),
            turn_ids,
            self.owner,
        )

    async def failed(self, user_id: int, turn_ids: list[str], *, permanent: bool) -> Failures:
        if not turn_ids:
            return Failures()
        row = await self.database.run(
            lambda conn: conn.fetchrow(
                "WITH counted AS (UPDATE pending_turns SET"
                "   permanent_failures = permanent_failures + $3::int,"
                "   transient_failures = transient_failures + (1 - $3::int)"
                "   WHERE user_id = $1 AND turn_id = ANY($2::text[]) RETURNING permanent_failures, transient_failures)"
                " SELECT coalesce(max(permanent_failures), 0) AS p, coalesce(max(transient_failures), 0) AS t"
                " FROM counted",
                user_key(user_id),
                turn_ids,
                int(permanent),
            )
        )
        return Failures(int(row["p"]), int(row["t"]))

    async def park(self, user_id: int, turn_ids: list[str]) -> None:
        if not turn_ids:
            return
        await self.database.execute(
            "UPDATE pending_turns SET parked_at = now(), lease_owner = NULL, lease_until = NULL"
            " WHERE user_id = $1 AND turn_id = ANY($2::text[])",
            user_key(user_id),
            turn_ids,
        )

    async def forget_user(self, user_id: int) -> None:
        """Delete every pending or parked turn of the user, whoever holds it: a process extracting them finds its
        claim gone at save time and discards its result."""
        await self.database.execute("DELETE FROM pending_turns WHERE user_id = $1", user_key(user_id))

    async def keep_only(
        self, user_id: int, keep: Callable[[PendingTurn], bool], generation: int
    ) -> tuple[list[PendingTurn], int]:
        """Delete the user's turns but those `keep` accepts; those continue under `generation`, held by this process
        (a claim another process holds on them is void: its save finds them gone)."""
        uid = user_key(user_id)
        kept: list[PendingTurn] = []

        async def work(conn: asyncpg.Connection) -> int:
            await lock_user(conn, uid)
            rows = await conn.fetch(
                "SELECT user_id, conversation_id, place::text, turn::text, sealed, seq, turn_id, generation"
                " FROM pending_turns WHERE user_id = $1 AND parked_at IS NULL ORDER BY seq FOR UPDATE",
                uid,
            )
            keep_ids = []
            kept.clear()
            for row in rows:
                item = await self._opened(conn, row)
                if item is not None and keep(item):
                    keep_ids.append(row["turn_id"])
                    kept.append(PendingTurn(item.key, dataclasses.replace(item.turn, generation=generation)))
            gone = await conn.fetchval(
                "WITH gone AS (DELETE FROM pending_turns WHERE user_id = $1"
                " AND NOT (turn_id = ANY($2::text[]) AND parked_at IS NULL) RETURNING 1) SELECT count(*) FROM gone",
                uid,
                keep_ids,
            )
            await conn.execute(
                "UPDATE pending_turns SET generation = $3, lease_owner = $4, lease_until = now() + $5::interval"
                " WHERE user_id = $1 AND turn_id = ANY($2::text[])",
                uid,
                keep_ids,
                generation,
                self.owner,
                timedelta(seconds=self.orphan_seconds),
            )
            return int(gone)

        dropped = await self.database.run(work)
        return kept, dropped

    async def drop_messages(self, message_ids: Collection[str]) -> dict[int, list[str]]:
        """Delete the rows of these messages (every text of an edited one) and of the bot's replies to them,
        pending or parked, whoever holds them: a process extracting one finds its claim gone at save time."""
        wanted = sorted(set(message_ids))

        async def work(conn: asyncpg.Connection) -> dict[int, list[str]]:
            rows = await conn.fetch(
                "DELETE FROM pending_turns WHERE split_part(turn_id, '.', 1) = ANY($1::text[])"
                " RETURNING user_id, turn_id",
                wanted,
            )
            dropped: dict[int, list[str]] = {}
            for row in rows:
                dropped.setdefault(int(row["user_id"]), []).append(str(row["turn_id"]))
            if dropped:  # the bot's replies to them (the link is inside the turn)
                others = await conn.fetch(
                    "SELECT user_id, conversation_id, place::text, turn::text, sealed, seq, generation, turn_id"
                    " FROM pending_turns WHERE user_id = ANY($1::bigint[]) FOR UPDATE",
                    list(dropped),
                )
                replies = []
                for row in others:
                    opened = await self._opened(conn, row)
                    if opened is not None and opened.turn.reply_to in set(wanted):
                        replies.append(row)
                if replies:
                    await conn.execute(
                        "DELETE FROM pending_turns AS p USING unnest($1::bigint[], $2::text[]) AS t(user_id, turn_id)"
                        " WHERE p.user_id = t.user_id AND p.turn_id = t.turn_id",
                        [row["user_id"] for row in replies],
                        [row["turn_id"] for row in replies],
                    )
                for row in replies:
                    dropped.setdefault(int(row["user_id"]), []).append(str(row["turn_id"]))
            return dropped

        return await self.database.run(work)

    async def pending_turns_of(self, user_id: int) -> list[PendingTurn]:
        rows = await self.database.fetch(
            "SELECT user_id, turn_id, conversation_id, place::text, turn::text, sealed, seq, generation"
            " FROM pending_turns WHERE user_id = $1 AND parked_at IS NULL ORDER BY seq",
            user_key(user_id),
        )
        return await self._pending_turns(None, rows)

    async def active_since(self, user_id: int, since: datetime) -> bool:
        found = await self.database.fetchval(
            "SELECT EXISTS (SELECT 1 FROM pending_turns WHERE user_id = $1"
            " AND coalesce((turn->>'at')::timestamptz, received_at) >= $2)",
            user_key(user_id),
            since,
        )
        return bool(found)

    async def compact(self) -> bool:
        """Rows are deleted when settled: nothing lingers to compact."""
        return True

    async def _opened(self, conn: asyncpg.Connection | None, row: Any) -> PendingTurn | None:
        """The row's turn, opened; None when it can never be read again (sealed with a destroyed key, damaged)."""
        try:
            text = await self.codec.decode(conn, int(row["user_id"]), "turn", row["turn"], row["sealed"])
        except ValueError as error:
            log.warning("a pending turn of user %s is unreadable (%s)", row["user_id"], type(error).__name__)
            return None
        return _pending_turn(row, text or "null")

    async def _pending_turns(self, conn: asyncpg.Connection | None, rows: Sequence[Any]) -> list[PendingTurn]:
        """The rows' turns; rows that can never be read again are deleted (a forgotten user's, from a restored
        copy), so they are not taken over again and again."""
        turns, unreadable = [], []
        for row in rows:
            item = await self._opened(conn, row)
            if item is None:
                unreadable.append((int(row["user_id"]), row["turn_id"]))
            else:
                turns.append(item)
        if unreadable:
            await self.database.run(lambda conn: conn.executemany(
                "DELETE FROM pending_turns WHERE user_id = $1 AND turn_id = $2", unreadable
            ))
        return turns


def _pending_turn(row: Any, text: str) -> PendingTurn:
    place = Place.from_json(json.loads(row["place"]))
    key = ConversationKey(int(row["conversation_id"]), int(row["user_id"]), place)
    turn = Turn.from_json(json.loads(text))
    return PendingTurn(key, dataclasses.replace(turn, generation=int(row["generation"])))
