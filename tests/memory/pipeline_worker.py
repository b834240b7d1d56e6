"""A memory pipeline in a process of its own, for the SIGKILL tests: journal → debouncer → extractor → store.

    python -m tests.memory.pipeline_worker DATA_DIR BASE_URL FIRST_SEQ COUNT

or `run_in_child`, the same in a process forked from a server that imported this module once (what the kill test
does: a fresh interpreter spends over a second importing the engine, every time).

Replays what the journal holds, then feeds COUNT turns (ids `t<seq>`, text `token-<seq>`, users 1-5 in turn)
through `MemoryService.remember` and prints `ACK t<seq>` once each is durably taken. With COUNT 0 it only
replays and flushes, then prints `DONE` and exits: the test uses that to finish whatever the kills left pending.
"""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path

from openai import AsyncOpenAI

from bot.memory.models import ConversationKey, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy
from tests.support.engine import file_service, learn

USERS = 5


def user_for(seq: int) -> int:
    return seq % USERS + 1


async def main(data_dir: Path, base_url: str, first: int, count: int) -> None:
    client = AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=10)
    service = file_service(
        data_dir,
        MemoryExtractor(client, model="test-model", max_retries=2),
        MemoryPolicy(debounce_seconds=0.005, max_wait_seconds=0.05, min_confidence=0.5, max_facts=100_000),
    )
    await service.ops.open()
    for seq in range(first, first + count):
        uid = user_for(seq)
        turn = Turn("user", uid, f"user{uid}", f"I like token-{seq}", datetime.now(UTC), f"t{seq}")
        await learn(service, ConversationKey(100 + uid, uid), [turn])
        print(f"ACK t{seq}", flush=True)
        await asyncio.sleep(0.002)
    await service.ops.shutdown(30)
    await client.close()
    print("DONE", flush=True)


def run_in_child(out: Connection, data_dir: str, base_url: str, first: int, count: int) -> None:
    """`main` with its standard output on the pipe `out` (written to as a plain pipe) and its standard error
    discarded (a forked child)."""
    os.dup2(out.fileno(), 1)
    out.close()
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 (the process's own stdout)
    asyncio.run(main(Path(data_dir), base_url, first, count))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
