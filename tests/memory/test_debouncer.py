"""Debouncer rules (docs/architecture.md): one call per quiet burst, re-arming, max wait, independent keys, per-user
cancellation, flush, bounded concurrency, logged failures, close. Timing is read from the loop clock, with
generous margins; synchronisation is by events and `wait_idle`, never by sleeping. The tests whose producer keeps
a pace (a turn every QUIET/2) run on a virtual clock (tests/virtual_time.py): on a loaded machine a real 25 ms
sleep can last longer than the quiet time, which would make the key "quiet" and the test fail for no fault."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest

from bot.memory.models import ConversationKey, Turn
from bot.memory.pipeline.debouncer import Debouncer
from tests.virtual_time import run_in_virtual_time

QUIET = 0.05
MARGIN = 0.01  # timers may fire up to the loop's clock resolution early


def turn(n: int, user: int = 1) -> Turn:
    return Turn("user", user, f"user{user}", f"message {n}", datetime(2024, 5, 1, tzinfo=UTC), str(n))


def texts(turns: list[Turn]) -> list[str]:
    return [t.text for t in turns]


class Recorder:
    """A handler recording (key, turns, loop time) per call; `on_call` may make it slow or fail."""

    def __init__(self, on_call: Callable[[ConversationKey, list[Turn]], Awaitable[None]] | None = None) -> None:
        self.calls: list[tuple[ConversationKey, list[Turn], float]] = []
        self.on_call = on_call
        self.called = asyncio.Event()

    async def __call__(self, key: ConversationKey, turns: list[Turn]) -> None:
        self.calls.append((key, list(turns), asyncio.get_running_loop().time()))
        self.called.set()
        if self.on_call is not None:
            await self.on_call(key, turns)

    def for_key(self, key: ConversationKey) -> list[tuple[ConversationKey, list[Turn], float]]:
        return [call for call in self.calls if call[0] == key]


A = ConversationKey(100, 1)
B = ConversationKey(100, 2)


async def test_a_burst_gives_one_call_with_all_turns_in_order() -> None:
    rec = Recorder()
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    for n in range(10):
        deb.add(A, [turn(n)])
    deb.add(A, [turn(10), turn(11)])
    assert rec.calls == []  # nothing before the quiet time
    await deb.wait_idle()
    assert len(rec.calls) == 1
    assert texts(rec.calls[0][1]) == [f"message {n}" for n in range(12)]


async def test_empty_add_is_ignored() -> None:
    rec = Recorder()
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    deb.add(A, [])
    assert deb.pending_keys == 0
    await deb.wait_idle()
    assert rec.calls == []


def test_a_new_turn_rearms_the_timer() -> None:
    run_in_virtual_time(_a_new_turn_rearms_the_timer())


async def _a_new_turn_rearms_the_timer() -> None:
    loop = asyncio.get_running_loop()
    rec = Recorder()
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    last_add = 0.0
    for n in range(6):  # each turn comes before the previous one's quiet time ran out
        deb.add(A, [turn(n)])
        last_add = loop.time()
        await asyncio.sleep(QUIET / 2)  # the producer's pace, not synchronisation
        assert rec.calls == [], "the handler ran although the key never went quiet"
    await deb.wait_idle()
    assert len(rec.calls) == 1
    _, turns, called_at = rec.calls[0]
    assert len(turns) == 6
    assert called_at >= last_add + QUIET - MARGIN  # quiet measured from the last turn, not the first
    # Six turns QUIET/2 apart span more than QUIET: without re-arming the first timer would have fired mid-burst.


def test_max_wait_bounds_a_key_that_never_pauses() -> None:
    run_in_virtual_time(_max_wait_bounds_a_key_that_never_pauses())


async def _max_wait_bounds_a_key_that_never_pauses() -> None:
    loop = asyncio.get_running_loop()
    rec = Recorder()
    max_wait = 0.2
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=max_wait)
    started = loop.time()
    produced_until = started + 4 * max_wait
    n = 0
    while loop.time() < produced_until:  # a turn every QUIET/2: the key is never quiet
        deb.add(A, [turn(n)])
        n += 1
        await asyncio.sleep(QUIET / 2)
    assert rec.calls, "a user who never pauses was never extracted"
    first_call = rec.calls[0][2]
    assert first_call >= started + max_wait - MARGIN
    assert first_call <= started + max_wait + 0.15  # generous: bounded by the max wait, not by the producer
    assert first_call < produced_until  # it ran while the producer was still going
    await deb.wait_idle()
    delivered = [t for _, turns, _ in rec.calls for t in turns]
    assert texts(delivered) == [f"message {i}" for i in range(n)]  # nothing lost or duplicated across batches


def test_keys_are_independent() -> None:
    run_in_virtual_time(_keys_are_independent())


async def _keys_are_independent() -> None:
    loop = asyncio.get_running_loop()
    rec = Recorder()
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=60)
    deb.add(A, [turn(0)])
    b_added = None
    n = 1
    while not rec.for_key(B):  # key A stays busy the whole time
        if n == 3:
            deb.add(B, [turn(1000, user=2)])
            b_added = loop.time()
        deb.add(A, [turn(n)])
        n += 1
        await asyncio.sleep(QUIET / 2)
        assert n < 200, "key B was never called while key A was busy"
    assert b_added is not None
    assert rec.for_key(A) == []  # A is still busy and not called
    b_called = rec.for_key(B)[0][2]
    assert b_called - b_added < QUIET + 0.15  # B went on its own quiet time, A's traffic did not delay it
    await deb.flush()
    assert len(rec.for_key(A)) == 1


async def test_cancel_user_drops_that_users_pending_batches_only() -> None:
    rec = Recorder()
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    a2 = ConversationKey(200, 1)  # the same user in another channel
    deb.add(A, [turn(1)])
    deb.add(a2, [turn(2)])
    deb.add(B, [turn(3, user=2)])
    assert deb.has_pending_for(1)
    assert deb.cancel_user(1) == 2
    assert not deb.has_pending_for(1)
    await deb.wait_idle()
    assert [call[0] for call in rec.calls] == [B]


async def test_cancel_user_cancels_that_users_running_handler_only() -> None:
    gate = asyncio.Event()
    started: dict[int, asyncio.Event] = {1: asyncio.Event(), 2: asyncio.Event()}
    outcome: dict[int, str] = {}

    async def slow(key: ConversationKey, turns: list[Turn]) -> None:
        started[key.user_id].set()
        try:
            await gate.wait()
            outcome[key.user_id] = "finished"
        except asyncio.CancelledError:
            outcome[key.user_id] = "cancelled"
            raise

    deb = Debouncer(Recorder(slow), quiet_seconds=QUIET, max_wait_seconds=10)
    deb.add(A, [turn(1)])
    deb.add(B, [turn(2, user=2)])
    await asyncio.wait_for(asyncio.gather(started[1].wait(), started[2].wait()), 5)
    assert deb.cancel_user(1) == 1
    gate.set()
    await deb.wait_idle()
    assert outcome == {1: "cancelled", 2: "finished"}


async def test_flush_runs_pending_now_and_awaits_it() -> None:
    done: list[str] = []

    async def handler(key: ConversationKey, turns: list[Turn]) -> None:
        await asyncio.sleep(0)
        done.extend(texts(turns))

    deb = Debouncer(Recorder(handler), quiet_seconds=60, max_wait_seconds=600)  # would wait a minute
    deb.add(A, [turn(1)])
    deb.add(B, [turn(2, user=2)])
    assert await asyncio.wait_for(deb.flush(), 5) is True
    assert sorted(done) == ["message 1", "message 2"]  # finished, not just started
    assert deb.pending_keys == 0 and deb.running == 0


async def test_flush_also_runs_batches_requeued_while_flushing() -> None:
    seen: list[list[str]] = []

    async def requeue_once(key: ConversationKey, turns: list[Turn]) -> None:
        seen.append(texts(turns))
        if len(seen) == 1:
            deb.add(key, turns, first=True)

    deb = Debouncer(requeue_once, quiet_seconds=60, max_wait_seconds=600)
    deb.add(A, [turn(1)])
    assert await asyncio.wait_for(deb.flush(), 5) is True
    assert seen == [["message 1"], ["message 1"]]


async def test_first_puts_requeued_turns_before_newer_ones() -> None:
    rec = Recorder()
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    deb.add(A, [turn(3)])
    deb.add(A, [turn(1), turn(2)], first=True)
    await deb.wait_idle()
    assert texts(rec.calls[0][1]) == ["message 1", "message 2", "message 3"]


async def test_flush_with_timeout_returns_false_when_the_handler_stalls() -> None:
    never = asyncio.Event()

    async def stall(key: ConversationKey, turns: list[Turn]) -> None:
        await never.wait()

    deb = Debouncer(Recorder(stall), quiet_seconds=60, max_wait_seconds=600)
    deb.add(A, [turn(1)])
    assert await asyncio.wait_for(deb.flush(timeout=0.05), 5) is False
    assert deb.running == 1  # still there: the caller decides (shutdown closes it)
    await deb.close()
    assert deb.running == 0


async def test_concurrency_is_bounded() -> None:
    limit = 3
    active = 0
    peak = 0
    gate = asyncio.Event()
    full = asyncio.Event()

    async def counting(key: ConversationKey, turns: list[Turn]) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        if active == limit:
            full.set()
        try:
            await gate.wait()
        finally:
            active -= 1

    rec = Recorder(counting)
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10, max_concurrency=limit)
    for user in range(1, 11):
        deb.add(ConversationKey(100, user), [turn(user, user=user)])
    await asyncio.wait_for(full.wait(), 5)
    for _ in range(20):  # give the other seven every chance to start (they must not)
        await asyncio.sleep(0)
    assert peak == limit
    assert len(rec.calls) == limit
    gate.set()
    await deb.wait_idle()
    assert len(rec.calls) == 10
    assert peak == limit


async def test_one_users_batches_run_one_at_a_time_without_taking_slots() -> None:
    """User 1 talks in two channels and their first extraction stalls: their second waits for it without
    holding a slot, so user 2 still gets extracted with max_concurrency=2."""
    release = asyncio.Event()
    order: list[str] = []
    active_for_user1 = 0

    async def handler(key: ConversationKey, turns: list[Turn]) -> None:
        nonlocal active_for_user1
        order.append(f"start {key.label()}")
        if key.user_id == 1:
            active_for_user1 += 1
            assert active_for_user1 == 1, "two extractions of one user ran at once"
            try:
                if key.conversation_id == 100:
                    await release.wait()
            finally:
                active_for_user1 -= 1
        order.append(f"end {key.label()}")

    rec = Recorder(handler)
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10, max_concurrency=2)
    deb.add(A, [turn(1)])  # user 1, channel 100: stalls
    await rec.called.wait()
    deb.add(ConversationKey(200, 1), [turn(2)])  # user 1, channel 200: must wait for the first
    await deb.flush(timeout=0.01)  # fire it now; it cannot finish
    deb.add(ConversationKey(300, 2), [turn(3, user=2)])
    assert await asyncio.wait_for(deb.flush(timeout=0.2), 5) is False
    assert "end 300:2" in order  # user 2 went through while user 1 was stuck
    assert "start 200:1" not in order
    release.set()
    await deb.wait_idle()
    assert order.index("end 100:1") < order.index("start 200:1")


async def test_a_handler_exception_is_logged_and_later_batches_still_run(caplog: pytest.LogCaptureFixture) -> None:
    async def fail_first(key: ConversationKey, turns: list[Turn]) -> None:
        if texts(turns) == ["message 1"]:
            raise RuntimeError("boom")

    rec = Recorder(fail_first)
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    with caplog.at_level(logging.ERROR, logger="bot.memory.pipeline.debouncer"):
        deb.add(A, [turn(1)])
        await deb.wait_idle()
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1
        assert "100:1" in errors[0].getMessage()
        assert errors[0].exc_info is not None and isinstance(errors[0].exc_info[1], RuntimeError)
        deb.add(A, [turn(2)])
        deb.add(B, [turn(3, user=2)])
        await deb.wait_idle()
    assert [texts(turns) for _, turns, _ in rec.calls] == [["message 1"], ["message 2"], ["message 3"]]
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1


async def test_close_cancels_everything() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def stall(key: ConversationKey, turns: list[Turn]) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    rec = Recorder(stall)
    deb = Debouncer(rec, quiet_seconds=QUIET, max_wait_seconds=10)
    deb.add(A, [turn(1)])
    await started.wait()
    deb.add(B, [turn(2, user=2)])  # pending, timer armed
    await asyncio.wait_for(deb.close(), 5)
    assert cancelled.is_set()
    assert deb.pending_keys == 0 and deb.running == 0
    await asyncio.wait_for(deb.wait_idle(), 1)
    calls_at_close = len(rec.calls)
    await asyncio.sleep(QUIET * 3)  # B's cancelled timer must not fire later
    assert len(rec.calls) == calls_at_close == 1


def test_invalid_settings_are_refused() -> None:
    async def handler(key: ConversationKey, turns: list[Turn]) -> None:
        return None

    with pytest.raises(ValueError):
        Debouncer(handler, quiet_seconds=0, max_wait_seconds=1)
    with pytest.raises(ValueError):
        Debouncer(handler, quiet_seconds=2, max_wait_seconds=1)
    with pytest.raises(ValueError):
        Debouncer(handler, quiet_seconds=1, max_wait_seconds=2, max_concurrency=0)
