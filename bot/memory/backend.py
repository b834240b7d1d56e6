"""The storage interface of the memory engine: what the service needs from wherever memory is kept.

Two implementations pass the same contract tests: files under `DATA_DIR` (the default, one process) and
PostgreSQL (`DATABASE_URL`, any number of processes sharing one database). The service talks only to these
protocols, so the rules it owns (forget is final, a paused user teaches nothing, a batch is settled exactly once)
hold on both.

A `Claim` ties an extraction to the pending turns it settles. The file journal serves one process, so its claims
always hold. In PostgreSQL a claim is a lease on rows: the store's `edit(..., settles=claim)` deletes the claimed
turns in the same transaction that saves the memory, and raises `ClaimLost` when they are gone (the user forgot
them, or another process took them over after the lease ran out), so a batch is applied exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.memory.models import ConversationKey, MemoryFile, Turn

if TYPE_CHECKING:
    from bot.memory.replies import ReplyRecord


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


class ClaimLost(Exception):
    """The claimed turns are gone: forgotten by their user, or taken over by another process."""


class UserMemoryStore(Protocol):
    """Each user's memory document, read cached and changed under a per-user lock that spans processes."""

    cache_hits: int
    cache_misses: int

    async def open(self) -> None: ...

    def epoch(self, user_id: int | str) -> int: ...

    async def load(self, user_id: int | str) -> MemoryFile: ...

    async def load_with_revision(self, user_id: int | str) -> tuple[MemoryFile, int]: ...

    def edit(
        self, user_id: int | str, *, settles: Claim | None = None
    ) -> AbstractAsyncContextManager[MemoryFile]: ...

    async def save(self, user_id: int | str, memory: MemoryFile) -> None: ...

    async def delete(self, user_id: int | str) -> bool: ...

    async def delete_copies(self, user_id: int | str) -> int: ...

    async def export_bytes(self, user_id: int | str) -> bytes: ...

    async def last_written(self) -> dict[int, float]: ...

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

    async def resume(self) -> list[PendingTurn]: ...

    def watch(self, on_taken: Callable[[list[PendingTurn]], None]) -> None:
        """Hand turns this process takes over later (from processes that die) to `on_taken`, from now on."""
        ...

    async def add(self, key: ConversationKey, turns: Sequence[Turn]) -> None: ...

    async def claim(self, key: ConversationKey, turns: Sequence[Turn]) -> Claim: ...

    async def done(self, user_id: int, turn_ids: list[str]) -> None: ...

    async def failed(self, user_id: int, turn_ids: list[str], *, permanent: bool) -> Failures: ...

    async def park(self, user_id: int, turn_ids: list[str]) -> None: ...

    async def purge(self, user_id: int, *, wiped: bool = False) -> None: ...

    async def pending_turns_of(self, user_id: int) -> list[PendingTurn]: ...

    async def active_since(self, user_id: int, since: datetime) -> bool:
        """Whether a turn of the user taken at or after `since` is still waiting (in any process): proof the user
        spoke, for the retention sweep, before any memory was written from it."""
        ...

    async def compact(self) -> bool: ...

    async def close(self) -> None: ...



class PauseStore(Protocol):
    """Who paused learning (`/memory pause`). `is_paused` is on the hot path: synchronous, from RAM."""

    @property
    def held(self) -> bool:
        """True while learning is held for everyone (a damaged pause list waiting for an operator)."""
        ...

    async def open(self) -> None: ...

    def paused_users(self) -> set[int]: ...

    def is_paused(self, user_id: int | str) -> bool: ...

    async def set_paused(self, user_id: int | str, paused: bool) -> bool: ...


class ModeStore(Protocol):
    """Timed incognito and fresh modes; reads are synchronous, from RAM."""

    async def open(self, now: datetime) -> None: ...

    def incognito_until(self, user_id: int | str, now: datetime) -> datetime | None: ...

    def fresh_until(self, user_id: int | str, now: datetime) -> datetime | str | None: ...

    def users(self) -> set[int]: ...

    async def set_incognito(self, user_id: int | str, until: datetime | None, now: datetime) -> None: ...

    async def set_fresh(self, user_id: int | str, until: datetime | str | None, now: datetime) -> None: ...

    async def clear(self, user_id: int | str, now: datetime) -> bool: ...


class ReplyStore(Protocol):
    """Which memory each reply used, for "What did you remember?"; the newest replies are kept, ids only."""

    async def open(self) -> None: ...

    async def count(self) -> int: ...

    async def get(self, message_id: int) -> ReplyRecord | None: ...

    async def record(
        self, message_ids: Iterable[int], user_id: int, sections: Iterable[str], fact_ids: Iterable[str]
    ) -> None: ...

    async def forget_user(self, user_id: int) -> int: ...


class ActivityStore(Protocol):
    """The day each user was last seen (retention). `note` is on the hot path: synchronous, in RAM."""

    async def open(self) -> None: ...

    def note(self, user_id: int, now: datetime) -> None: ...

    def last_seen(self, user_id: int) -> datetime | None: ...

    def users(self) -> list[int]: ...

    async def remove(self, user_id: int) -> None: ...

    async def save(self) -> None: ...

    def sweep_lock(self) -> AbstractAsyncContextManager[bool]:
        """Yields True for the one process that may run the retention sweep now."""
        ...
