"""Driving the memory engine directly in tests and benchmarks: turns in, through its doors.

`memory.learning.remember` takes chat messages (and filters them itself), so tests that think in turns hand them
over as the messages they would have been: a user turn as the user's message, an assistant turn as the bot's
reply. Message ids are the turns' ids when numeric, else a stable number derived from the id.

White-box tests reach the parts behind the doors through `parts(service)`, the one place outside the engine that
knows where the lobby keeps them; `wait_idle` and `sweep_history` are such reaches, named. `save_memory` plants a
whole memory through a store's `edit`, the only write the stores offer.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.memory.drivers.bundle import build_file_storage, build_postgres_storage
from bot.memory.drivers.interfaces import MemoryDocuments
from bot.memory.models import ConversationKey, IncomingMessage, Location, MemoryFile, Place, Turn, utc_now
from bot.memory.parts.learning import LearningTicket
from bot.memory.parts.retention import HistorySweep
from bot.memory.parts.retention import sweep_history as run_history_sweep
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.selector import FactSelector
from bot.memory.service import EngineParts, MemoryPolicy, MemoryService
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


def where_in(place: Place, conversation_id: int | None = None) -> Location:
    """A location in `place`: a DM, or a channel of its server (by default the channel numbered like the place)."""
    if place.kind == "dm":
        return Location.dm(conversation_id or 0)
    channel = place.id if conversation_id is None else conversation_id
    return Location(place, channel, guild_id=place.guild_id, channel_id=channel)


def where_of(key: ConversationKey) -> Location:
    """Where the turns of `key` were said: its conversation, in its place."""
    return where_in(key.place, key.conversation_id)


DM_HERE = Location.dm()


def parts(service: MemoryService) -> EngineParts:
    """The parts behind the lobby's doors, for white-box tests and benchmarks."""
    return service._parts


async def wait_idle(service: MemoryService) -> None:
    """Until no batch is waiting or being extracted (instead of sleeping), nor waiting for the storage to answer
    again after a failure (a loaded machine's pool timeout is one)."""
    learning = parts(service).learning
    while True:
        await learning.debouncer.wait_idle()
        if not learning.outage.down:
            return
        await learning.outage.wait_up()  # its batches go back to the debouncer first


async def wait_vectors(service: MemoryService) -> None:
    """Until the vector keeper has no user waiting for their facts' vectors (embeddings on)."""
    keeper = parts(service).keeper
    assert keeper is not None, "EMBEDDING_MODEL is not set"
    await keeper.idle()


async def wait_debouncer(service: MemoryService) -> None:
    """Until the debouncer has nothing pending or running, whatever waits for the storage (outage tests)."""
    await parts(service).learning.debouncer.wait_idle()


async def sweep_history(service: MemoryService, now: datetime | None = None) -> HistorySweep:
    """The daily sweep's second half alone: summary values past their day, stale ledger entries."""
    engine = parts(service)
    return await run_history_sweep(engine.storage, engine.writer, now or service.clock())


async def save_memory(memories: MemoryDocuments, user_id: int | str, memory: MemoryFile) -> None:
    """Make `memory` the user's whole memory, through `memories.edit`: the stores' one way to write a memory.

    A fixture's way to plant what a test starts from, so it passes no write gate and no forget generation. The
    draft takes a copy of every field (extra ones too), so later changes to `memory` stay out of the store; as
    with any edit, nothing is written when `memory` equals what is stored already."""
    replacement = memory.model_copy(deep=True)
    async with memories.edit(user_id) as draft:
        for name in MemoryFile.model_fields:
            setattr(draft, name, getattr(replacement, name))
        draft.__pydantic_extra__ = replacement.__pydantic_extra__


async def learn(
    service: MemoryService, key: ConversationKey, turns: Sequence[Turn], *, ticket: LearningTicket | None = None
) -> bool:
    """`memory.learning.remember` for these turns, with a ticket taken now unless one is given."""
    return await service.learning.remember(
        where_of(key),
        messages_of(turns),
        ticket=ticket or service.learning.ticket(key.user_id),
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
    engine = parts(service)
    await engine.learning.debouncer.close()
    await engine.storage.close()


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
