"""Driving the memory engine directly in tests and benchmarks: turns in, through the front door.

`MemoryService.remember` takes chat messages (and filters them itself), so tests that think in turns hand them
over as the messages they would have been: a user turn as the user's message, an assistant turn as the bot's
reply. Message ids are the turns' ids when numeric, else a stable number derived from the id.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.memory.drivers.bundle import build_file_storage, build_postgres_storage
from bot.memory.models import ConversationKey, IncomingMessage, Place, SwitchTarget, Turn, utc_now
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.selector import FactSelector
from bot.memory.service import LearningTicket, MemoryPolicy, MemoryService
from bot.storage.pg.database import Database

BOT_ID = 42


def message_id_of(turn_id: str) -> int:
    if turn_id.isdigit():
        return int(turn_id)
    return (1 << 40) + zlib.crc32(turn_id.encode())


def messages_of(turns: Sequence[Turn]) -> list[IncomingMessage]:
    return [
        IncomingMessage(
            message_id=message_id_of(turn.turn_id) if turn.turn_id else (1 << 41) + index,
            author_id=BOT_ID if turn.role == "assistant" else turn.author_id,
            author_name=turn.author_name,
            content=turn.text,
            created_at=turn.at,
            is_self=turn.role == "assistant",
        )
        for index, turn in enumerate(turns)
    ]


def target_of(key: ConversationKey) -> SwitchTarget:
    """Where the memory switches of `key` apply: DMs for a DM place, else its server's channel."""
    if key.place.kind == "dm":
        return SwitchTarget.dm(key.conversation_id)
    return SwitchTarget(key.place.guild_id, key.conversation_id)


async def learn(
    service: MemoryService, key: ConversationKey, turns: Sequence[Turn], *, ticket: LearningTicket | None = None
) -> bool:
    """`service.remember` for these turns, with a ticket taken now unless one is given."""
    return await service.remember(
        key,
        messages_of(turns),
        ticket=ticket or service.learning_ticket(key.user_id),
        target=target_of(key),
        bot_id=BOT_ID,
    )


def file_service(
    data: Path,
    extractor: MemoryExtractor,
    policy: MemoryPolicy,
    *,
    clock: Callable[[], datetime] = utc_now,
    selector: FactSelector | None = None,
    **storage_options: Any,
) -> MemoryService:
    """A MemoryService over the file storage in `data`, built by the one file builder (not opened yet)."""
    return MemoryService(
        storage=build_file_storage(data, **storage_options),
        extractor=extractor,
        selector=selector or FactSelector(),
        policy=policy,
        clock=clock,
    )


async def close_service(service: MemoryService) -> None:
    """Stop without flushing (as a crash would: pending turns stay on disk), then close the storage."""
    await service.learning.debouncer.close()
    await service.storage.close()


def target_for(place: Place) -> SwitchTarget:
    """A switch target in `place`: DMs for the DM place, else a channel of its server."""
    if place.kind == "dm":
        return SwitchTarget.dm()
    return SwitchTarget(place.guild_id, place.id)


DM_TARGET = SwitchTarget.dm()


def postgres_service(
    database: Database,
    extractor: MemoryExtractor,
    policy: MemoryPolicy,
    *,
    clock: Callable[[], datetime] = utc_now,
    lease_seconds: float = 60.0,
    orphan_seconds: float = 3600.0,
    **storage_options: Any,
) -> MemoryService:
    """A MemoryService over PostgreSQL, built by the one PostgreSQL builder (not opened yet)."""
    return MemoryService(
        storage=build_postgres_storage(
            database, lease_seconds=lease_seconds, orphan_seconds=orphan_seconds, **storage_options
        ),
        extractor=extractor,
        selector=FactSelector(),
        policy=policy,
        clock=clock,
    )
