"""One bot process's memory engine on a shared PostgreSQL database, driven line by line, for the multi-process
tests. Built by the real composition root (`build_resources` + `start_memory`), as the bot builds it.

    python -m tests.memory.pg_engine_worker DATABASE_URL LLM_BASE_URL DATA_DIR LEASE_SECONDS
        [--debounce S] [--max-wait S] [--liveness BEAT,STALE]

(`--debounce` and `--max-wait` default to 0.05 and 0.5 s; `--liveness` shortens the process liveness timings.)
Reads JSON commands on stdin, answers on stdout (logs go to stderr):
    {"op": "remember", "user": U, "conv": C, "id": "t1", "text": "..."}  -> ACK t1 (the turn is durably taken)
    {"op": "forget", "user": U}                                           -> FORGOT U
    {"op": "delete", "ids": ["t1"]}            -> DELETED <turns dropped> <facts retracted> (Discord deleted them)
    {"op": "flush"}                                                       -> FLUSHED <batches saved so far>
    {"op": "beat"}                  -> BEAT <times this process found itself presumed dead> (after one beat now)
    {"op": "exit"}                                                        -> DONE (after a clean shutdown)
It prints READY <resumed turns> once open, CLAIMED <user> <turn ids> whenever it claims a batch (before
extracting), and TAKEN <turn ids> whenever it takes over turns another process left (at start or later).

    python -m tests.memory.pg_engine_worker --updates DATABASE_URL FIRST_USER USERS PER_USER TAG

Instead runs PER_USER read-modify-write updates (each adds fact `TAG-<n>`) on each of USERS users from FIRST_USER,
16 at a time, through the store, and prints UPDATED <count>.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

from bot.app import build_resources, start_memory
from bot.config import Settings
from bot.memory.doors import ForgetEverything
from bot.memory.drivers.interfaces import PendingTurn
from bot.memory.drivers.pg.memories import PostgresMemoryStore
from bot.memory.drivers.pg.turns import PostgresTurnQueue
from bot.memory.models import ConversationKey, Fact, Place, Turn
from bot.storage.pg.database import Database
from tests.support.engine import learn, message_id_of, parts

FILLER = "and keeps notes about the migration of the billing service, the on-call rota and the quarterly review; "


def update_fact(tag: str, n: int) -> Fact:
    content = f"{tag}-{n} " + FILLER * 2
    return Fact(id=f"{tag}-{n}", content=content[:200], category="context", confidence=0.9,
                createdAt="2026-11-30T10:00:00+00:00", source="test")


async def run_updates(url: str, first: int, users: int, per_user: int, tag: str) -> None:
    database = Database(url, size=8)
    await database.open()
    store = PostgresMemoryStore(database)
    work = [(first + u, n) for n in range(per_user) for u in range(users)]
    slots = asyncio.Semaphore(16)

    async def one(uid: int, n: int) -> None:
        async with slots, store.edit(uid) as draft:
            draft.facts.append(update_fact(f"{tag}-{uid}", n))

    await asyncio.gather(*(one(uid, n) for uid, n in work))
    await database.close()
    print(f"UPDATED {len(work)}", flush=True)


async def run_engine(
    url: str, base_url: str, data_dir: Path, lease: float, *, debounce: float = 0.05, max_wait: float = 0.5,
    liveness: tuple[float, float] | None = None,
) -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        discord_token="test-token",
        openai_base_url=base_url,
        database_url=url,
        data_dir=data_dir,
        memory_debounce_seconds=debounce,
        memory_max_wait_seconds=max_wait,
        memory_extraction_retries=0,
        memory_lease_seconds=lease,
        memory_min_confidence=0.5,
        llm_timeout_seconds=60,
    )
    resources = build_resources(settings)
    service = resources.memory
    queue = parts(service).storage.turns
    assert queue is not None
    original_claim = queue.claim

    async def claim_and_tell(key: ConversationKey, turns: list[Turn]):  # type: ignore[no-untyped-def]
        claim = await original_claim(key, turns)
        if claim.turns:
            print(f"CLAIMED {key.user_id} {' '.join(claim.turn_ids)}", flush=True)
        return claim

    queue.claim = claim_and_tell  # type: ignore[method-assign]
    assert isinstance(queue, PostgresTurnQueue)
    original_take_over = queue.take_over

    async def take_over_and_tell() -> list[PendingTurn]:
        taken = await original_take_over()
        if taken:
            print(f"TAKEN {' '.join(item.turn.turn_id for item in taken)}", flush=True)
        return taken

    queue.take_over = take_over_and_tell  # type: ignore[method-assign]
    if liveness is not None:
        queue.processes.beat_seconds, queue.processes.stale_seconds = liveness
        queue.sweep_seconds = liveness[0]
    resumed = await start_memory(resources)
    print(f"READY {resumed}", flush=True)
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = json.loads(line)
        op = command["op"]
        if op == "remember":
            uid = int(command["user"])
            turn = Turn("user", uid, "ana", command["text"], datetime.now(UTC), command["id"])
            await learn(service, ConversationKey(int(command["conv"]), uid, Place.dm()), [turn])
            print(f"ACK {command['id']}", flush=True)
        elif op == "forget":
            await service.user(int(command["user"])).forget(ForgetEverything())
            print(f"FORGOT {command['user']}", flush=True)
        elif op == "delete":
            report = await service.events.deleted([message_id_of(turn_id) for turn_id in command["ids"]])
            print(f"DELETED {report.turns} {report.facts}", flush=True)
        elif op == "flush":
            await service.ops.flush(30)
            print(f"FLUSHED {parts(service).learning.stats.batches_saved}", flush=True)
        elif op == "beat":
            await queue.processes.beat()
            print(f"BEAT {queue.processes.presumed_dead}", flush=True)
        elif op == "exit":
            break
    await service.ops.shutdown(10)
    await resources.aclose()
    print("DONE", flush=True)


def main(argv: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if argv[0] == "--updates":
        url, first, users, per_user, tag = argv[1:6]
        asyncio.run(run_updates(url, int(first), int(users), int(per_user), tag))
    else:
        url, base_url, data_dir, lease = argv[:4]
        options = dict(zip(argv[4::2], argv[5::2], strict=True))
        liveness = options.get("--liveness")
        asyncio.run(run_engine(
            url, base_url, Path(data_dir), float(lease),
            debounce=float(options.get("--debounce", 0.05)), max_wait=float(options.get("--max-wait", 0.5)),
            liveness=None if liveness is None else (float(liveness.split(",")[0]), float(liveness.split(",")[1])),
        ))


if __name__ == "__main__":
    main(sys.argv[1:])
