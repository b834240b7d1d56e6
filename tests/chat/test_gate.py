"""ChatGate: bounded turns per process and per server, a first-come line that skips only servers at their bound,
a bounded line, a bounded wait, and turns never lost to a cancelled or timed-out waiter."""

from __future__ import annotations

import asyncio

import pytest

from bot.chat.concurrency import Busy, ChatGate, NoticeThrottle


async def hold(gate: ChatGate, guild: int | None, order: list[str], name: str, release: asyncio.Event) -> None:
    async with gate.turn(guild):
        order.append(name)
        await release.wait()


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_turns_are_bounded_per_process_and_per_server_and_given_in_arrival_order() -> None:
    gate = ChatGate(total=2, per_guild=1, queue_limit=10, max_wait=10)
    release = {name: asyncio.Event() for name in ("a1", "a2", "b1", "c1")}
    order: list[str] = []
    tasks = [asyncio.create_task(hold(gate, guild, order, name, release[name]))
             for guild, name in ((1, "a1"), (1, "a2"), (2, "b1"), (3, "c1"))]
    await settle()
    assert order == ["a1", "b1"]  # a2 waits for server 1's turn, c1 for the process's
    assert (gate.running, gate.waiting) == (2, 2)
    release["b1"].set()
    await settle()
    assert order == ["a1", "b1", "c1"]  # a2 came first but its server is still at its bound: c1 is not held up
    release["a1"].set()
    await settle()
    assert order == ["a1", "b1", "c1", "a2"]
    release["c1"].set()
    release["a2"].set()
    await asyncio.gather(*tasks)
    assert (gate.running, gate.waiting, gate._lanes) == (0, 0, {})
    assert gate.counters.peak_running == 2


async def test_a_full_line_refuses_at_once() -> None:
    gate = ChatGate(total=1, per_guild=1, queue_limit=1, max_wait=10)
    release = asyncio.Event()
    order: list[str] = []
    first = asyncio.create_task(hold(gate, 1, order, "first", release))
    second = asyncio.create_task(hold(gate, 1, order, "second", release))
    await settle()
    with pytest.raises(Busy) as refused:
        async with gate.turn(1):
            pass
    assert refused.value.waited == 0
    async with asyncio.timeout(5):  # DMs have their own line (and share only the process bound)
        dm = asyncio.create_task(hold(gate, None, order, "dm", release))
        await settle()
        assert gate.waiting == 2
    release.set()
    await asyncio.gather(first, second, dm)
    assert order == ["first", "second", "dm"]


async def test_a_long_wait_gives_up_and_a_cancelled_waiter_leaves_the_line() -> None:
    gate = ChatGate(total=1, per_guild=1, queue_limit=5, max_wait=0.05)
    release = asyncio.Event()
    order: list[str] = []
    first = asyncio.create_task(hold(gate, 1, order, "first", release))
    await settle()
    with pytest.raises(Busy) as late:
        async with gate.turn(1):
            pass
    assert late.value.waited >= 0.05
    waiter = asyncio.create_task(hold(gate, 2, order, "cancelled", release))
    await settle()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert gate.waiting == 0
    release.set()
    await first
    async with gate.turn(3):  # nothing leaked: the only turn is free again
        assert gate.running == 1
    assert gate.counters.refused == 1


def test_busy_notices_go_to_each_user_at_most_once_a_minute() -> None:
    notices = NoticeThrottle(60.0)
    assert notices.should_tell(1, now=0.0)
    assert not notices.should_tell(1, now=59.0)
    assert notices.should_tell(2, now=59.0)
    assert notices.should_tell(1, now=61.0)
