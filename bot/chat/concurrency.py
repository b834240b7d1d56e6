"""A bound on concurrent replies: at most `total` per process and `per_guild` per server, the rest wait in line.

An auto-reply channel under a raid, or many people at once, would otherwise open one model stream and one history
fetch per message, all at the same time: the endpoint slows every one of them down, and Discord's rate limits
bite. Each reply takes a turn (`ChatGate.turn`) around everything it costs; a message that finds no free turn
waits in line, first come first served, skipping only waiters whose server is at its own bound (so one busy server
never holds up the others). A line is bounded: a message that arrives when `queue_limit` messages of its server (or
of DMs) already wait, or that has waited `max_wait` seconds, gets `Busy` and is not answered, and the caller tells
the user. DMs share only the process bound.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


class Busy(Exception):
    """No turn for this message: the line was full (`waited` is 0) or it waited too long."""

    def __init__(self, waited: float) -> None:
        super().__init__("too many replies in progress")
        self.waited = waited


@dataclass(eq=False)
class _Waiter:
    lane: int | None
    future: asyncio.Future[None]


@dataclass
class _Lane:
    running: int = 0
    waiting: int = 0


@dataclass
class GateCounters:
    """What the gate has done since start (for logs and benchmarks)."""

    admitted: int = 0
    waited: int = 0
    refused: int = 0
    peak_running: int = 0
    peak_waiting: int = 0


@dataclass
class ChatGate:
    total: int
    per_guild: int
    queue_limit: int
    max_wait: float
    counters: GateCounters = field(default_factory=GateCounters)

    def __post_init__(self) -> None:
        self._running = 0
        self._lanes: dict[int | None, _Lane] = {}
        self._line: deque[_Waiter] = deque()

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._line)

    def _lane_limit(self, lane: int | None) -> int:
        return self.total if lane is None else self.per_guild

    def _fits(self, lane: int | None) -> bool:
        state = self._lanes.get(lane)
        running = state.running if state is not None else 0
        return self._running < self.total and running < self._lane_limit(lane)

    def _start(self, lane: int | None) -> None:
        self._running += 1
        self._lanes.setdefault(lane, _Lane()).running += 1
        self.counters.admitted += 1
        self.counters.peak_running = max(self.counters.peak_running, self._running)

    def _finish(self, lane: int | None) -> None:
        self._running -= 1
        state = self._lanes[lane]
        state.running -= 1
        self._forget_if_idle(lane)
        self._wake()

    def _forget_if_idle(self, lane: int | None) -> None:
        state = self._lanes.get(lane)
        if state is not None and state.running == 0 and state.waiting == 0:
            del self._lanes[lane]

    def _wake(self) -> None:
        """Hand free turns to the first waiters that fit, in arrival order (the turn is theirs before they run)."""
        if self._running >= self.total:
            return
        for waiter in list(self._line):
            if self._running >= self.total:
                break
            if waiter.future.done() or not self._fits(waiter.lane):
                continue
            self._line.remove(waiter)
            self._lanes[waiter.lane].waiting -= 1
            self._start(waiter.lane)
            waiter.future.set_result(None)

    async def _acquire(self, guild_id: int | None) -> None:
        if self._fits(guild_id):
            self._start(guild_id)
            return
        lane = self._lanes.setdefault(guild_id, _Lane())
        if lane.waiting >= self.queue_limit:
            self.counters.refused += 1
            raise Busy(0.0)
        waiter = _Waiter(guild_id, asyncio.get_running_loop().create_future())
        self._line.append(waiter)
        lane.waiting += 1
        self.counters.waited += 1
        self.counters.peak_waiting = max(self.counters.peak_waiting, len(self._line))
        started = time.monotonic()
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), self.max_wait)
        except BaseException as error:
            if waiter.future.done() and not waiter.future.cancelled():
                self._finish(guild_id)  # the turn came as we gave up: pass it on
            else:
                waiter.future.cancel()
                self._line.remove(waiter)
                lane.waiting -= 1
                self._forget_if_idle(guild_id)
            if isinstance(error, TimeoutError):
                self.counters.refused += 1
                raise Busy(time.monotonic() - started) from None
            raise

    @asynccontextmanager
    async def turn(self, guild_id: int | None) -> AsyncIterator[Turn]:
        """Hold one of the process's turns (and one of the server's) for the body, or until `Turn.release` (once the
        model has answered: Discord's last edit needs no turn); `Busy` when there is none."""
        await self._acquire(guild_id)
        held = Turn(self, guild_id)
        try:
            yield held
        finally:
            held.release()


class Turn:
    """One reply's turn; `release` gives it back early (idempotent)."""

    def __init__(self, gate: ChatGate, lane: int | None) -> None:
        self._gate = gate
        self._lane = lane
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._gate._finish(self._lane)


class NoticeThrottle:
    """At most one "busy" notice per user per `seconds`: a raid must not double the bot's messages."""

    def __init__(self, seconds: float, *, max_users: int = 10_000) -> None:
        self.seconds = seconds
        self._last: dict[int, float] = {}
        self._max_users = max_users

    def should_tell(self, user_id: int, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        last = self._last.get(user_id)
        if last is not None and now - last < self.seconds:
            return False
        if len(self._last) >= self._max_users:
            self._last = {uid: at for uid, at in self._last.items() if now - at < self.seconds}
        self._last[user_id] = now
        return True
