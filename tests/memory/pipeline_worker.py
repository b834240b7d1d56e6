"""A memory pipeline in a process of its own, for the SIGKILL tests: journal → debouncer → extractor → store.

    python -m tests.memory.pipeline_worker DATA_DIR BASE_URL FIRST_SEQ COUNT

Replays what the journal holds, then feeds COUNT turns (ids `t<seq>`, text `token-<seq>`, users 1-5 in turn)
through `MemoryService.remember` and prints `ACK t<seq>` once each is durably taken. With COUNT 0 it only
replays and flushes, then prints `DONE` and exits: the test uses that to finish whatever the kills left pending.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path

from openai import AsyncOpenAI

from bot.memory.extractor import MemoryExtractor
from bot.memory.models import ConversationKey, Turn
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
    await service.open()
    for seq in range(first, first + count):
        uid = user_for(seq)
        turn = Turn("user", uid, f"user{uid}", f"I like token-{seq}", datetime.now(UTC), f"t{seq}")
        await learn(service, ConversationKey(100 + uid, uid), [turn])
        print(f"ACK t{seq}", flush=True)
        await asyncio.sleep(0.002)
    await service.shutdown(30)
    await client.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
