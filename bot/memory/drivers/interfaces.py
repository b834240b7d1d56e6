"""The storage interface of the memory engine: one protocol per kind of record, each with a file driver and a
PostgreSQL driver that pass the same contract tests, assembled into one `StorageBundle` (see `bundle.py`).

Every part can `forget_user`: forgetting everything and retention loop over the bundle instead of naming parts.

Two guarantees live here because the storage is where they are checked atomically:
- **The forget generation** (`Generations`): one counter per user, bumped at the start of every forget and of every
  pause. Work carries the generation it started under; a write of memory (`MemoryDocuments.edit`), of a pending
  turn (`TurnQueue.add`) or of a reply record (`ReplyStore.record`) under an older one is refused (`Stale`), inside
  the same lock or transaction as the write, so work started before a forget never writes after it.
- **A claim** ties an extraction to the pending turns it settles. The file journal serves one process, so its claims
  always hold. In PostgreSQL a claim is a lease on rows: `edit(..., settles=claim)` deletes the claimed turns in the
  transaction that saves the memory, and raises `ClaimLost` when they are gone (forgotten, or taken over by another
  process after the lease ran out), so a batch is applied exactly once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Protocol

from bot.memory.drivers.days import Seen
from bot.memory.drivers.tally import Kind, Spent, Subject
from bot.memory.errors import ClaimLost, Stale
from bot.memory.models import ConversationKey, MemoryFile, Turn


@dataclass(frozen=True, slots=True)
class PendingTurn:
    key: ConversationKey
    turn: Turn


@dataclass(slots=True)
class Failures:
    """Failed extraction attempts of a turn, across restarts."""

    permanent: int = 0
    transient: int = 0


@dataclass(frozen=True, slots=True)
class Claim:
    """The turns of one batch this process may extract now; `owner` is None where no one else could take them."""

    user_id: int
    turns: tuple[Turn, ...]
    owner: str | None = None

    @property
    def turn_ids(self) -> list[str]:
        return [turn.turn_id for turn in self.turns if turn.turn_id]


@dataclass(frozen=True, slots=True)
class ReplyRecord:
    """Which memory one reply used: its message ids, the user it answered, summary refs and fact ids (no text)."""

    message_ids: tuple[int, ...]
    user_id: int
    sections: tuple[str, ...]
    fact_ids: tuple[str, ...]


REPLIES_KEPT = 1000  # reply records kept (all processes together), newest first


class Generations(Protocol):
    """The forget generation of every user: `current` is read on the hot path (RAM), `bump` is durable."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    def current(self, user_id: int) -> int: ...

    async def bump(self, user_id: int) -> int:
        """Start a new generation (before a forget or a pause does anything); returns it."""
        ...

    async def forget_user(self, user_id: int) -> None:
        """Nothing: a generation holds no words, and forgetting it would make older work valid again."""
        ...


class MemoryDocuments(Protocol):
    """Each user's memory document, read cached and changed under a per-user lock that spans processes."""

    cache_hits: int
    cache_misses: int

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def load(self, user_id: int | str) -> MemoryFile: ...

    async def load_with_revision(self, user_id: int | str) -> tuple[MemoryFile, int]: ...

    def edit(
        self, user_id: int | str, *, generation: int | None = None, settles: Claim | None = None
    ) -> AbstractAsyncContextManager[MemoryFile]:
        """Read-modify-write under the user's lock: yields a private copy, saved if the body changed it.
        `Stale` (before the body runs) when `generation` is not the user's current one."""
        ...

    async def forget_user(self, user_id: int) -> bool:
        """Delete the user's memory and every copy of it; True when there was any."""
        ...

    async def delete_copies(self, user_id: int | str) -> int: ...

    def take_unreadable(self, user_id: int) -> bool:
        """True once after the user's memory was found unreadable and kept aside for the operator (the user
        then starts empty and should be told), False until that happens again."""
        ...

    async def export_bytes(self, user_id: int | str) -> bytes: ...

    def written(self) -> AsyncIterator[list[tuple[int, float]]]:
        """Every user with memory and when it was last written (POSIX seconds), in pages in user id order: the
        retention sweep's evidence that memory was learned recently, read a page at a time."""
        ...

    async def last_written(self) -> dict[int, float]:
        """`written` whole, in one dict (tools and checks; the sweep reads it page by page)."""
        ...

    async def user_ids(self) -> list[int]: ...


class TurnQueue(Protocol):
    """Turns waiting for extraction, durable before a turn counts as taken (the file journal, or table rows)."""

    @property
    def pending(self) -> int: ...

    @property
    def parked(self) -> int: ...

    @property
    def taken_over(self) -> int:
        """Turns this process took over from processes that died or shut down (0 where there are no others)."""
        ...

    async def open(self) -> None: ...

    async def resume(self) -> list[PendingTurn]: ...

    def watch(self, on_taken: Callable[[list[PendingTurn]], None]) -> None:
        """Hand turns this process takes over later (from processes that die) to `on_taken`, from now on."""
        ...

    async def add(self, key: ConversationKey, turns: Sequence[Turn]) -> None:
        """Record turns as taken (durable on return); `Stale` when their generation is not the user's current."""
        ...

    async def claim(self, key: ConversationKey, turns: Sequence[Turn]) -> Claim: ...

    async def done(self, user_id: int, turn_ids: list[str]) -> None: ...

    async def failed(self, user_id: int, turn_ids: list[str], *, permanent: bool) -> Failures: ...

    async def park(self, user_id: int, turn_ids: list[str]) -> None: ...

    async def keep_only(
        self, user_id: int, keep: Callable[[PendingTurn], bool], generation: int
    ) -> tuple[list[PendingTurn], int]:
        """After a forget: delete the user's pending and parked turns but those `keep` accepts, which continue under
        `generation` (held by this process); returns them, oldest first, and how many were deleted."""
        ...

    async def forget_user(self, user_id: int) -> None:
        """Delete every pending or parked turn of the user, whoever holds it, from the disk itself."""
        ...

    async def drop_messages(self, message_ids: Collection[str]) -> dict[int, list[str]]:
        """Delete the pending and parked turns of these Discord messages (every text of an edited one) and the
        bot's replies to them, whoever holds them, from the disk itself; returns the turn ids dropped, by user. A
        claim on one of them is void: the save that would settle it raises `ClaimLost`."""
        ...

    async def pending_turns_of(self, user_id: int) -> list[PendingTurn]:
        """The user's turns still waiting (not parked), oldest first, in any process."""
        ...

    async def active_since(self, user_id: int, since: datetime) -> bool:
        """Whether a turn of the user taken at or after `since` is still waiting (in any process): proof the user
        spoke, for the retention sweep, before any memory was written from it."""
        ...

    async def compact(self) -> bool: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """Whose memory one Discord message taught, where, and when it was learned (no text)."""

    user_id: int
    place: str
    learned_at: datetime
    cited: bool  # a fact names it as a source (or may: set before the save, corrected after it)


LEDGER_RECENT = timedelta(hours=24)  # how long an entry is kept after its message was learned, cited or not


class MessageLedger(Protocol):
    """Which user each learned Discord message belongs to, so a delete that names only the message and its channel
    finds the memory it taught, in any process. Ids, places and times only. An entry is written before the
    extraction that learns the message is saved, and kept while a fact cites the message or for `LEDGER_RECENT`
    after it was learned (what it put in a summary can still be undone then), whichever is longer; forgetting the
    user deletes theirs, and a deleted message's entry goes once its memory is cleaned."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def note(self, user_id: int, place: str, message_ids: Sequence[str], at: datetime) -> None:
        """These messages of the user are about to be learned in `place`: entries marked cited until `cite` says
        otherwise (a crash before then keeps an entry too long, never too short)."""
        ...

    async def cite(self, user_id: int, *, cited: Collection[str], uncited: Collection[str]) -> None:
        """After a change of the user's memory: `cited` are sources of its facts now, `uncited` no longer are."""
        ...

    async def lookup(self, message_ids: Collection[str]) -> dict[str, LedgerEntry]: ...

    async def drop(self, message_ids: Collection[str]) -> None:
        """Forget the entries of these (deleted) messages."""
        ...

    async def prune(self, now: datetime) -> int:
        """Delete uncited entries older than `LEDGER_RECENT`; returns how many."""
        ...

    async def forget_user(self, user_id: int) -> None: ...


class UpkeepSchedule(Protocol):
    """When each user's memory next holds something the bot must remove on its own (earlier summary values past
    their day), so the daily sweep visits those users only. A time per user, no text; none for most users."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def plan(self, user_id: int, due: datetime | None) -> None:
        """Visit the user at `due` (None: nothing to do)."""
        ...

    async def due(self, now: datetime) -> list[int]:
        """The users due by `now`."""
        ...

    async def forget_user(self, user_id: int) -> None: ...


class ForgottenUsers(Protocol):
    """The ids of users who made the bot forget everything (or whom retention deleted), with the day: what
    `import-files` must never bring back into this database. Ids only."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def record(self, user_id: int) -> None: ...

    async def among(self, user_ids: Collection[int]) -> set[int]: ...


class ReplyStore(Protocol):
    """Which memory each reply used, for "What did you remember?"; the newest replies are kept, ids only."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def count(self) -> int: ...

    async def get(self, message_id: int) -> ReplyRecord | None: ...

    async def record(self, record: ReplyRecord, *, generation: int) -> None:
        """Keep `record`; `Stale` when `generation` is no longer the user's (they forgot while it was written)."""
        ...

    async def forget_user(self, user_id: int) -> int: ...


class ActivityStore(Protocol):
    """The day each user was last seen (retention). `note` is on the hot path: synchronous, in RAM. Where processes
    share the store, none holds every user's day: reads go to the store."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    def note(self, user_id: int, now: datetime) -> None: ...

    async def last_seen(self, user_id: int) -> datetime | None:
        """The end of the last day the user was seen (UTC), or None when never recorded."""
        ...

    def seen(self) -> AsyncIterator[list[Seen]]:
        """Every recorded user with the end of their last day, in pages in user id order (the retention sweep).
        Where processes share the store it lists what was saved: save first."""
        ...

    async def forget_user(self, user_id: int) -> None: ...

    async def save(self) -> None: ...

    def sweep_lock(self) -> AbstractAsyncContextManager[bool]:
        """Yields True for the one process that may run the retention sweep now."""
        ...


class UsageStore(Protocol):
    """Tokens spent per user and per server per UTC day (budgets). `add` and `spent` are on the hot path: RAM
    only; `save` (every few seconds and at close) makes the counting durable and, where processes share the
    storage, brings in theirs."""

    totals: Counter[str]

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    def add(
        self, kind: Kind, *, user_id: int, guild_id: int | None, tokens: int, estimated: bool, now: datetime
    ) -> None: ...

    def spent(self, subject: Subject, day: date) -> Spent: ...

    async def save(self, now: datetime | None = None) -> None: ...

    async def forget_user(self, user_id: int) -> None: ...


class Part(Protocol):
    """What every part of the bundle can do: open and close."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...


class UserPart(Part, Protocol):
    """A part that holds something of a user, and can forget it."""

    async def forget_user(self, user_id: int) -> Any: ...


def section_refs_ok(refs: Iterable[str], known: frozenset[str]) -> tuple[str, ...]:
    """The refs (`name` or `name@place`) whose name is one of `known`: a reader drops what it cannot show."""
    return tuple(ref for ref in refs if ref.partition("@")[0] in known)


__all__ = [
    "LEDGER_RECENT",
    "REPLIES_KEPT",
    "ActivityStore",
    "Claim",
    "ClaimLost",
    "Failures",
    "ForgottenUsers",
    "Generations",
    "LedgerEntry",
    "MemoryDocuments",
    "MessageLedger",
    "Part",
    "PendingTurn",
    "ReplyRecord",
    "ReplyStore",
    "Stale",
    "TurnQueue",
    "UpkeepSchedule",
    "UserPart",
]
