"""What the reply path keeps per user is bounded: one selection index per user and place, in the selector's own
bounded cache, and nothing beside it; forgetting a user drops every index of theirs, in every place, however long
ago it was built. (The figures at 200,000 users: `python -m bench.recall_state`.) And what a reply waits for is
bounded: a few facts are fitted on the loop, more on the reply path's own thread, never behind learning's work."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from openai import AsyncOpenAI

from bot.memory.doors import ForgetEverything
from bot.memory.models import Fact, MemoryFile, Place
from bot.memory.parts.recall import INLINE_FIT_FACTS
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.selector import FactSelector
from bot.memory.service import MemoryPolicy, MemoryService
from tests.support.engine import file_service, parts, save_memory, where_in

FIRST = 612345678900000000
USERS = 40
CACHE = 8
GUILD = 5151
PLACES = [Place.dm(), Place.guild(GUILD), Place.channel(6161, GUILD)]


def memory_in_places() -> MemoryFile:
    return MemoryFile(facts=[
        Fact(id=f"fact_0000000{n}", content=f"Plays chess on {place.key}", confidence=0.9, place=place.key)
        for n, place in enumerate(PLACES)
    ])


async def reply(service: MemoryService, user: int, place: Place) -> str:
    prompt = await service.recall.prompt(user, ["chess?"], user_label="Ana", where=where_in(place))
    return prompt.text


async def test_selection_indexes_stay_bounded_and_a_forget_drops_all_of_a_users(tmp_path: Path) -> None:
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused", max_retries=0)  # never called
    selector = FactSelector(cache_size=CACHE)
    service = file_service(tmp_path, MemoryExtractor(client, model="m"), MemoryPolicy(), selector=selector,
                           durable=False)
    await service.ops.open()
    try:
        early = FIRST
        await save_memory(parts(service).storage.memories, early, memory_in_places())
        for place in PLACES:
            assert "Plays chess" in await reply(service, early, place)
        for user in range(FIRST + 1, FIRST + USERS):  # many users get server replies after the early one
            await save_memory(parts(service).storage.memories, user, memory_in_places())
            await reply(service, user, PLACES[1 + user % 2])
            assert selector.cached <= CACHE

        last = FIRST + USERS - 1
        for place in PLACES:
            await reply(service, last, place)
        assert {key for key in selector._cache if key.startswith(str(last))} == {
            str(last), f"{last}@guild:{GUILD}", f"{last}@channel:6161"
        }
        await service.user(last).forget(ForgetEverything())
        assert not [key for key in selector._cache if key.split("@")[0] == str(last)]
        assert [key for key in selector._cache if key.split("@")[0] == str(early)] == []  # aged out long ago
        assert await reply(service, last, PLACES[1]) == ""  # and nothing to select from any more
    finally:
        await service.ops.shutdown(5)
        await client.close()


async def test_a_reply_never_waits_behind_learnings_cpu_work(tmp_path: Path) -> None:
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused", max_retries=0)  # never called
    selector = FactSelector()
    fitted_on: dict[int, str] = {}
    build = selector.build

    def recording(facts: list[Fact], *args: object, **kwargs: object) -> object:
        fitted_on[len(facts)] = threading.current_thread().name
        return build(facts, *args, **kwargs)  # type: ignore[arg-type]

    selector.build = recording  # type: ignore[method-assign,assignment]
    service = file_service(tmp_path, MemoryExtractor(client, model="m"), MemoryPolicy(), selector=selector,
                           durable=False)
    await service.ops.open()
    few, many = INLINE_FIT_FACTS, INLINE_FIT_FACTS + 20
    for user, count in ((FIRST, few), (FIRST + 1, many)):
        await save_memory(parts(service).storage.memories, user, MemoryFile(facts=[
            Fact(id=f"fact_{n:08x}", content=f"Plays chess on board {n} with friend {n}", confidence=0.9)
            for n in range(count)
        ]))
    release = threading.Event()
    busy = asyncio.ensure_future(parts(service).learning._off_loop(release.wait, 30))  # an extraction at the cap
    try:
        for user in (FIRST, FIRST + 1):  # both come back while learning's thread is held
            assert "Plays chess" in await asyncio.wait_for(reply(service, user, Place.dm()), 20)
        assert not busy.done()
    finally:
        release.set()
        await busy
        await service.ops.shutdown(5)
    assert fitted_on[few] == threading.main_thread().name  # on the loop: less than a thread's hop costs
    assert fitted_on[many].startswith("recall-cpu")
