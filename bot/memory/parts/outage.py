"""A storage outage: the database is down or the disk is full. Learning waits for it instead of giving up.

What it promises, however long the outage lasts:
- a batch that could not be claimed, loaded or saved because the storage is unreachable waits here (`hold`), and
  goes back to the debouncer once the storage answers again: never given up while the process runs;
- a turn acknowledged while the queue could not take it is remembered as unstored (`unstored`) and written to the
  queue first when its batch runs again; at most `max_turns` such turns are kept in RAM, newer ones are refused
  (`full`) and the log says so once;
- the log says "unreachable" once when the outage begins and "reachable again" once when it ends, not once per
  message; `down` is what the health endpoint reports as degraded.

The end is found by a probe (`StorageBundle.probe`: a query, or a synced write in DATA_DIR), tried with a backoff
from `first_delay` to `max_delay`: a full disk sends no event when space comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from bot.memory.drivers.interfaces import Stale, TurnQueue
from bot.memory.models import ConversationKey, Turn
from bot.memory.rules.withhold import for_the_queue

log = logging.getLogger(__name__)

OUTAGE_TURNS_KEPT = 10_000
PROBE_FIRST_SECONDS = 0.25
PROBE_MAX_SECONDS = 5.0

Probe = Callable[[], Awaitable[None]]
Release = Callable[[ConversationKey, list[Turn]], None]


@dataclass(frozen=True, slots=True)
class OutageState:
    """What the health endpoint and the metrics read: plain values."""

    down: bool
    seconds: float  # how long the current outage has lasted (0 when up)
    outages: int  # since start
    batches_waiting: int
    turns_unstored: int
    turns_refused: int  # acknowledged-and-dropped past the bound, since start


class StorageOutage:
    def __init__(
        self,
        *,
        probe: Probe,
        release: Release,
        max_turns: int = OUTAGE_TURNS_KEPT,
        first_delay: float = PROBE_FIRST_SECONDS,
        max_delay: float = PROBE_MAX_SECONDS,
    ) -> None:
        self._probe = probe
        self._release = release
        self.max_turns = max_turns
        self.first_delay = first_delay
        self.max_delay = max_delay
        self._since: float | None = None
        self._outages = 0
        self._refused = 0
        self._said_full = False
        self._waiting: dict[ConversationKey, list[Turn]] = {}
        self._unstored: dict[str, int] = {}  # turn id -> user id, oldest first
        self._task: asyncio.Task[None] | None = None
        self._up = asyncio.Event()
        self._up.set()

    # --- state ---------------------------------------------------------------------------------------------

    @property
    def down(self) -> bool:
        return self._since is not None

    def state(self) -> OutageState:
        return OutageState(
            down=self.down,
            seconds=0.0 if self._since is None else time.monotonic() - self._since,
            outages=self._outages,
            batches_waiting=len(self._waiting),
            turns_unstored=len(self._unstored),
            turns_refused=self._refused,
        )

    async def wait_up(self) -> None:
        """Until the storage answers again and the waiting batches are back in the debouncer (tests await it)."""
        await self._up.wait()

    # --- the outage ----------------------------------------------------------------------------------------

    def begin(self, reason: str) -> None:
        """The storage failed: start (or continue) the outage and probe for its end. Logged once per outage."""
        if self._since is None:
            self._since = time.monotonic()
            self._outages += 1
            self._said_full = False
            self._up.clear()
            log.warning(
                "storage unreachable (%s): replies go on without memory; turns are kept and learned when it is back",
                reason,
            )
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch(), name="storage outage probe")

    def hold(self, key: ConversationKey, turns: Iterable[Turn]) -> None:
        """A batch the storage could not take: it waits for the end of the outage."""
        waiting = self._waiting.setdefault(key, [])
        known = {turn.turn_id for turn in waiting}
        waiting.extend(turn for turn in turns if turn.turn_id not in known)

    def full(self) -> bool:
        """Whether a new turn must be refused: the storage is down and `max_turns` unstored turns wait in RAM."""
        return self.down and len(self._unstored) >= self.max_turns

    def refused(self, turns: int) -> None:
        self._refused += turns
        if not self._said_full:
            self._said_full = True
            log.warning(
                "storage still unreachable: %d acknowledged turns wait in memory; newer turns are not learned",
                len(self._unstored),
            )

    def unstored(self, user_id: int, turn_ids: Iterable[str]) -> None:
        """These turns were acknowledged but the queue did not take them: write them before their batch runs."""
        for turn_id in turn_ids:
            self._unstored[turn_id] = user_id

    async def store(self, queue: TurnQueue, key: ConversationKey, turns: Iterable[Turn]) -> bool:
        """Write to the queue the turns of a batch it did not take when they arrived (before the batch is
        claimed); False when a forget refused them (`Stale`); the queue's `OSError` while it is still down."""
        unstored = [turn for turn in turns if turn.turn_id in self._unstored]
        if not unstored:
            return True
        try:
            await queue.add(key, for_the_queue(unstored, key.user_id))
        except Stale:
            refused = True
        else:
            refused = False
        for turn in unstored:  # written, or refused for good: a forget won
            self._unstored.pop(turn.turn_id, None)
        return not refused

    def forget_user(self, user_id: int) -> None:
        """A forget or pause: nothing of the user waits here any more (what the queue kept comes back from it)."""
        for key in [key for key in self._waiting if key.user_id == user_id]:
            del self._waiting[key]
        for turn_id in [turn_id for turn_id, owner in self._unstored.items() if owner == user_id]:
            del self._unstored[turn_id]

    def drain(self) -> list[tuple[ConversationKey, list[Turn]]]:
        """Take every waiting batch out (shutdown gives them one last try)."""
        waiting, self._waiting = self._waiting, {}
        return list(waiting.items())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _watch(self) -> None:
        delay = self.first_delay
        while True:
            await asyncio.sleep(delay)  # a backoff between probes, not a synchronisation
            try:
                await self._probe()
            except OSError:
                delay = min(delay * 2, self.max_delay)
                continue
            self._end()
            return

    def _end(self) -> None:
        started, self._since = self._since, None
        waiting, self._waiting = self._waiting, {}
        took = 0.0 if started is None else time.monotonic() - started
        log.info(
            "storage reachable again after %.1fs: %d batches (%d turns) tried again, %d turns to store",
            took, len(waiting), sum(map(len, waiting.values())), len(self._unstored),
        )
        for key, turns in waiting.items():
            self._release(key, turns)
        self._up.set()
