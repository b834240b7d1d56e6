"""A turn enters the debouncer on arrival, before its queue write lands (the quiet time follows the user's pace,
not the disk's or the database's). A batch that fires first must wait for its turns to land before it claims
them: on PostgreSQL a claim made before the insert finds no row and the batch would end having learned nothing,
leaving the turns to a much later takeover sweep. Here the queue write is held open on purpose."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from tests.memory.test_deletes import USER, Engine, engine  # noqa: F401  (the fixture: every backend, sealed or not)
from tests.support.engine import parts


async def test_a_batch_that_fires_before_its_turns_are_queued_waits_for_them(engine: Engine) -> None:  # noqa: F811
    turns = parts(engine.service).storage.turns
    add, release = turns.add, asyncio.Event()
    writes_begun = asyncio.Event()

    async def slow_add(key: Any, queued: Sequence[Any]) -> None:
        writes_begun.set()
        await release.wait()  # a loaded disk or database: the write lands well after the quiet time
        await add(key, queued)

    turns.add = slow_add  # type: ignore[method-assign]
    saying = asyncio.create_task(engine.exchange("I grow tomatoes on my balcony"))
    await writes_begun.wait()
    debouncer = parts(engine.service).learning.debouncer
    await asyncio.wait_for(_until_running(debouncer), 30)  # the batch has fired while its turns are not queued
    release.set()
    await saying
    turns.add = add  # type: ignore[method-assign]
    await engine.settle()
    assert await engine.facts() == ["Said: I grow tomatoes on my balcony"]
    assert await turns.pending_turns_of(USER) == []


async def _until_running(debouncer: Any) -> None:
    while not debouncer.running:
        await asyncio.sleep(0.01)

