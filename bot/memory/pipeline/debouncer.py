"""Per-key debouncing of memory extraction.

One timer handle (`loop.call_at`) per key `(channel or thread id, user id)`. A new turn appends to its key's
pending batch and re-arms that key's timer; after `quiet_seconds` without a new turn the batch is handed to the
handler, once. A user who never pauses is bounded by `max_wait_seconds` from the batch's first turn. Keys are
independent: steady traffic from one user never postpones another (a single global timer would).

Batches of one user (from any of their keys) are handled one at a time, in the order they fired, so two
extractions of the same memory never race. A batch waiting for its user's previous one does not hold one of the
`max_concurrency` slots, so a user talking in many channels cannot starve everybody else.

Every task is referenced until it ends and its exception, if any, is logged at ERROR. A semaphore bounds concurrent
extractions so a burst of quiet keys cannot open hundreds of LLM calls at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bot.memory.models import ConversationKey, Turn

log = logging.getLogger(__name__)

BatchHandler = Callable[[ConversationKey, list[Turn]], Awaitable[None]]


@dataclass(slots=True)
class _Pending:
    first_at: float
    turns: list[Turn] = field(default_factory=list)
    handle: asyncio.TimerHandle | None = None


@dataclass(slots=True)
class _UserGate:
    """Serialises one user's batches; dropped when no batch of the user is running or waiting."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Debouncer:
    """Collects turns per key and hands each quiet burst to `handler` exactly once."""

    def __init__(
        self,
        handler: BatchHandler,
        *,
        quiet_seconds: float,
        max_wait_seconds: float,
        max_concurrency: int = 4,
    ) -> None:
        if quiet_seconds <= 0 or max_wait_seconds < quiet_seconds:
            raise ValueError("need 0 < quiet_seconds <= max_wait_seconds")
        if max_concurrency < 1:
            raise ValueError("need max_concurrency >= 1")
        self._handler = handler
        self.quiet_seconds = quiet_seconds
        self.max_wait_seconds = max_wait_seconds
        self.max_concurrency = max_concurrency
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._pending: dict[ConversationKey, _Pending] = {}
        self._running: dict[asyncio.Task[None], ConversationKey] = {}
        self._gates: dict[int, _UserGate] = {}
        self._idle = asyncio.Event()
        self._idle.set()

    # --- state ---------------------------------------------------------------------------------------------

    @property
    def pending_keys(self) -> int:
        return len(self._pending)

    @property
    def pending_turns(self) -> int:
        return sum(len(p.turns) for p in self._pending.values())

    @property
    def running(self) -> int:
        """Batches handed over and not finished yet (running, or waiting for a slot or for their user)."""
        return len(self._running)

    def has_pending_for(self, user_id: int) -> bool:
        return any(key.user_id == user_id for key in self._pending) or any(
            key.user_id == user_id for key in self._running.values()
        )

    def holds(self, user_id: int, turn_ids: set[str]) -> bool:
        """Whether one of these turns of the user is waiting in a batch (not yet handed to the extractor)."""
        return any(
            turn.turn_id in turn_ids
            for key, pending in self._pending.items() if key.user_id == user_id
            for turn in pending.turns
        )

    def waiting(self, key: ConversationKey) -> list[Turn]:
        """The key's turns waiting for their quiet period (not yet handed to the extractor), oldest first."""
        pending = self._pending.get(key)
        return list(pending.turns) if pending is not None else []

    async def wait_idle(self) -> None:
        """Until nothing is pending or running (tests await this instead of sleeping)."""
        await self._idle.wait()

    # --- input ---------------------------------------------------------------------------------------------

    def add(self, key: ConversationKey, turns: Sequence[Turn], *, first: bool = False) -> None:
        """Append turns to the key's batch and re-arm its timer (bounded by the max wait).

        `first=True` puts them before the turns already waiting: for a batch that is tried again, whose turns are
        older than anything that arrived meanwhile.
        """
        if not turns:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        pending = self._pending.get(key)
        if pending is None:
            pending = self._pending[key] = _Pending(first_at=now)
        elif pending.handle is not None:
            pending.handle.cancel()
        if first:
            pending.turns[:0] = turns
        else:
            pending.turns.extend(turns)
        due = min(now + self.quiet_seconds, pending.first_at + self.max_wait_seconds)
        pending.handle = loop.call_at(due, self._fire, key)
        self._idle.clear()

    def cancel_user(self, user_id: int) -> int:
        """Drop every pending batch of the user and cancel their running extractions; returns batches dropped."""
        dropped = 0
        for key in [key for key in self._pending if key.user_id == user_id]:
            pending = self._pending.pop(key)
            if pending.handle is not None:
                pending.handle.cancel()
            dropped += 1
        for task, key in list(self._running.items()):
            if key.user_id == user_id:
                task.cancel()
                dropped += 1
        self._update_idle()
        return dropped

    # --- output --------------------------------------------------------------------------------------------

    def _fire(self, key: ConversationKey) -> None:
        pending = self._pending.pop(key, None)
        if pending is None or not pending.turns:
            self._update_idle()
            return
        if pending.handle is not None:
            pending.handle.cancel()
        gate = self._gates.get(key.user_id)
        if gate is None:
            gate = self._gates[key.user_id] = _UserGate()
        gate.users += 1
        task = asyncio.get_running_loop().create_task(
            self._run(key, pending.turns, gate), name=f"extract:{key.label()}"
        )
        self._running[task] = key
        task.add_done_callback(self._finished)

    async def _run(self, key: ConversationKey, turns: list[Turn], gate: _UserGate) -> None:
        async with gate.lock, self._semaphore:
            await self._handler(key, turns)

    def _finished(self, task: asyncio.Task[None]) -> None:
        # A done callback, not a `finally` in `_run`: it also runs for a task cancelled before it ever started.
        key = self._running.pop(task, None)
        if key is not None and (gate := self._gates.get(key.user_id)) is not None:
            gate.users -= 1
            if gate.users <= 0:
                del self._gates[key.user_id]
        if not task.cancelled() and (error := task.exception()) is not None:
            label = key.label() if key else "?"
            log.error("memory update for %s failed", label, exc_info=error)
        self._update_idle()

    def _update_idle(self) -> None:
        if not self._pending and not self._running:
            self._idle.set()

    async def flush(self, timeout: float | None = None) -> bool:
        """Run every pending batch now and wait for all extractions; False if the timeout ran out first.

        Batches added while flushing (a handler re-queueing a batch, say) are run too, within the same timeout.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            for key in list(self._pending):
                self._fire(key)
            tasks = list(self._running)
            if not tasks:
                return True
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            _, not_done = await asyncio.wait(tasks, timeout=left)
            if not_done:
                return False

    async def close(self) -> None:
        """Cancel timers and running work without flushing (flush first when the work matters)."""
        for pending in self._pending.values():
            if pending.handle is not None:
                pending.handle.cancel()
        self._pending.clear()
        tasks = list(self._running)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._update_idle()
