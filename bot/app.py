"""Building the shared resources once (discord.py's advanced_startup pattern): settings in, one of each out.

The Discord bot and the terminal console both start from `build_resources`, so they run the very same memory
pipeline: one `AsyncOpenAI` client, one store, one journal, one debouncer (inside the service).
"""

from __future__ import annotations

from dataclasses import dataclass

from openai import AsyncOpenAI

from bot.chat.model import ChatModel
from bot.config import Settings
from bot.llm import build_client
from bot.memory.extractor import MemoryExtractor
from bot.memory.journal import JOURNAL_NAME, Journal
from bot.memory.pauses import PauseRegistry
from bot.memory.retention import ACTIVITY_FILE, ActivityLog
from bot.memory.selector import FactSelector
from bot.memory.service import MemoryPolicy, MemoryService
from bot.memory.store import MemoryStore
from bot.metrics import BotMetrics
from bot.switches import SWITCHES_FILE, MemorySwitches, SwitchesFileError


class DataDirError(Exception):
    """DATA_DIR cannot be used (missing permissions, a file in the way); the message is one line for the admin."""


@dataclass(slots=True)
class Resources:
    settings: Settings
    client: AsyncOpenAI
    chat: ChatModel
    memory: MemoryService
    switches: MemorySwitches
    metrics: BotMetrics

    async def aclose(self) -> None:
        await self.client.close()


def policy_from(settings: Settings) -> MemoryPolicy:
    return MemoryPolicy(
        debounce_seconds=settings.memory_debounce_seconds,
        max_wait_seconds=settings.memory_max_wait_seconds,
        max_concurrent_extractions=settings.memory_max_concurrent_extractions,
        top_k=settings.memory_top_k,
        max_facts=settings.memory_max_facts,
        min_confidence=settings.memory_min_confidence,
        duplicate_similarity=settings.memory_duplicate_similarity,
        token_budget=settings.memory_token_budget,
        retention_days=settings.memory_retention_days,
        scope=settings.memory_scope,
    )


def build_resources(settings: Settings) -> Resources:
    """Create everything shared; nothing touches the network or the disk until `start_memory`."""
    client = build_client(settings)
    extractor = MemoryExtractor(
        client,
        model=settings.effective_memory_model,
        max_retries=settings.memory_extraction_retries,
    )
    memory = MemoryService(
        store=MemoryStore(settings.memory_dir, cache_size=settings.memory_cache_users),
        extractor=extractor,
        selector=FactSelector(top_k=settings.memory_top_k, cache_size=settings.memory_cache_users),
        journal=Journal(settings.data_dir / JOURNAL_NAME),
        pauses=PauseRegistry(settings.data_dir / "paused.json"),
        policy=policy_from(settings),
        activity=ActivityLog(settings.data_dir / ACTIVITY_FILE),
    )
    chat = ChatModel(
        client, model=settings.chat_model, max_tokens=settings.chat_max_tokens, temperature=settings.chat_temperature,
        limit_field=settings.chat_token_parameter,
    )
    switches = MemorySwitches(
        settings.data_dir / SWITCHES_FILE,
        disabled_guilds=settings.memory_disabled_guild_ids,
        disabled_channels=settings.memory_disabled_channel_ids,
    )
    return Resources(
        settings=settings, client=client, chat=chat, memory=memory, switches=switches, metrics=BotMetrics(memory)
    )


def start_memory(resources: Resources) -> int:
    """Prepare DATA_DIR and resume journaled turns (needs a running loop); `DataDirError` when unusable."""
    try:
        resources.switches.load()
        return resources.memory.start()
    except SwitchesFileError as error:
        raise DataDirError(str(error)) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DataDirError(f"DATA_DIR {resources.settings.data_dir} is not usable: {reason}") from None
