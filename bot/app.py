"""Building the shared resources once (discord.py's advanced_startup pattern): settings in, one of each out.

The Discord bot and the terminal console both start from `build_resources`, so they run the very same memory
pipeline: one `AsyncOpenAI` client, one store, one queue of pending turns, one debouncer (inside the service).
The storage is chosen here and nowhere else: files under DATA_DIR by default, PostgreSQL when DATABASE_URL is set
(then several processes share it; see docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from openai import AsyncOpenAI

from bot.chat.llm import build_client
from bot.chat.model import ChatModel
from bot.chat.thinking import RecordModelTraits, ThinkingGuard
from bot.config import Settings
from bot.memory.drivers.bundle import StorageBundle, build_file_storage, build_postgres_storage
from bot.memory.errors import RecordsUnreadable, SchemaError, StorageUnavailable
from bot.memory.pipeline.embeddings import Embedder, EmbeddingMismatch, EmbeddingSettings
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.selector import FactSelector
from bot.memory.service import MemoryPolicy, MemoryService
from bot.ops.metrics import BotMetrics
from bot.storage.atomic import ensure_writable_folder
from bot.storage.errors import EncryptionRefused
from bot.storage.pg.database import Database
from bot.storage.sealing import MasterKey


class DataDirError(Exception):
    """The storage cannot be used (DATA_DIR: missing permissions, a file in the way; the database: unreachable,
    a schema newer than this version), or the embedding model answers vectors of another length than
    EMBEDDING_DIMENSIONS; the message is one line for the admin, without secrets."""


@dataclass(slots=True)
class Resources:
    settings: Settings
    client: AsyncOpenAI
    chat: ChatModel
    memory: MemoryService
    metrics: BotMetrics
    embedding_client: AsyncOpenAI | None = None

    async def aclose(self) -> None:
        """Close the LLM clients (the memory's storage closes with `memory.shutdown`)."""
        await self.client.close()
        if self.embedding_client is not None:
            await self.embedding_client.close()


def policy_from(settings: Settings) -> MemoryPolicy:
    return MemoryPolicy(
        debounce_seconds=settings.memory_debounce_seconds,
        max_wait_seconds=settings.memory_max_wait_seconds,
        max_concurrent_extractions=settings.memory_max_concurrent_extractions,
        top_k=settings.memory_top_k,
        max_facts=settings.memory_max_facts,
        max_places=settings.memory_max_places,
        min_confidence=settings.memory_min_confidence,
        duplicate_similarity=settings.memory_duplicate_similarity,
        token_budget=settings.memory_token_budget,
        retention_days=settings.memory_retention_days,
        scope=settings.memory_scope,
        max_turn_chars=settings.memory_max_turn_chars,
        user_daily_tokens=settings.user_daily_tokens,
        guild_daily_tokens=settings.guild_daily_tokens,
    )


def database_from(settings: Settings) -> Database | None:
    """The database DATABASE_URL names (not connected yet), or None for files."""
    if settings.database_url is None:
        return None
    return Database(
        settings.database_url.get_secret_value(),
        size=settings.database_pool_size,
        statement_timeout=settings.database_statement_timeout_seconds,
    )


def lease_seconds(settings: Settings, extractor: MemoryExtractor) -> float:
    """How long a claimed batch is this process's alone: MEMORY_LEASE_SECONDS, or one whole extraction round
    (every attempt timing out, the longest backoff) plus a minute for the save."""
    if settings.memory_lease_seconds is not None:
        return settings.memory_lease_seconds
    return extractor.longest_attempts_seconds(settings.llm_timeout_seconds) + 60.0


def master_key_from(settings: Settings) -> MasterKey | None:
    """MEMORY_ENCRYPTION_KEY, ready to wrap data keys, or None when memory is not to be encrypted."""
    if settings.memory_encryption_key is None:
        return None
    return MasterKey.parse(settings.memory_encryption_key.get_secret_value())


def storage_from(settings: Settings, extractor: MemoryExtractor) -> StorageBundle:
    """The storage bundle the settings ask for: PostgreSQL when DATABASE_URL is set, else files under DATA_DIR."""
    database = database_from(settings)
    guilds, channels = settings.memory_disabled_guild_ids, settings.memory_disabled_channel_ids
    key = master_key_from(settings)
    if database is None:
        return build_file_storage(
            settings.data_dir,
            cache_size=settings.memory_cache_users,
            disabled_guilds=guilds,
            disabled_channels=channels,
            encryption_key=key,
        )
    lease = lease_seconds(settings, extractor)
    return build_postgres_storage(
        database,
        lease_seconds=lease,
        # Nobody claimed a turn this long after it arrived: the process holding it in its debouncer is gone (a
        # live one claims within the max wait, plus one round while the user's previous batch finishes).
        orphan_seconds=settings.memory_max_wait_seconds + lease,
        cache_size=settings.memory_cache_users,
        disabled_guilds=guilds,
        disabled_channels=channels,
        encryption_key=key,
    )


def embedder_from(settings: Settings) -> tuple[AsyncOpenAI, Embedder] | None:
    """The embedding model EMBEDDING_MODEL names, with a client of its own (its endpoint and key may differ from
    the chat model's), or None when it is not set."""
    if settings.embedding_model is None:
        return None
    client = AsyncOpenAI(
        api_key=settings.embedding_key_value(),
        base_url=settings.effective_embedding_base_url,
        timeout=settings.embedding_timeout_seconds,
        max_retries=0,
    )
    chosen = EmbeddingSettings(
        model=settings.embedding_model,
        dimensions=settings.embedding_dimensions,
        timeout_seconds=settings.embedding_timeout_seconds,
        query_prefix=settings.embedding_query_prefix,
        passage_prefix=settings.embedding_passage_prefix,
        send_input_type=settings.embedding_input_type,
    )
    return client, Embedder(client, chosen)


def build_resources(settings: Settings) -> Resources:
    """Create everything shared; nothing touches the network or the disk until `start_memory`."""
    client = build_client(settings)
    embedding = embedder_from(settings)
    extractor = MemoryExtractor(
        client,
        model=settings.effective_memory_model,
        max_retries=settings.memory_extraction_retries,
    )
    storage = storage_from(settings, extractor)
    memory = MemoryService(
        storage=storage,
        extractor=extractor,
        selector=FactSelector(
            top_k=settings.memory_top_k, cache_size=settings.memory_cache_users, stale_days=settings.memory_stale_days
        ),
        policy=policy_from(settings),
        embedder=embedding[1] if embedding else None,
    )
    chat = ChatModel(
        client, model=settings.chat_model, max_tokens=settings.chat_max_tokens, temperature=settings.chat_temperature,
        limit_field=settings.chat_token_parameter,
        thinking=ThinkingGuard(
            RecordModelTraits(storage.model_traits), thinking_models=settings.thinking_models
        ),
    )
    return Resources(
        settings=settings, client=client, chat=chat, memory=memory, metrics=BotMetrics(memory, chat_usage=chat.usage),
        embedding_client=embedding[0] if embedding else None,
    )


async def start_memory(resources: Resources) -> int:
    """Connect the storage (with PostgreSQL: open the pool and apply pending migrations), prepare DATA_DIR and
    resume pending turns; returns how many. `DataDirError` with one line when the storage is unusable (also when
    MEMORY_ENCRYPTION_KEY is missing or wrong for the memory there)."""
    try:
        # With PostgreSQL, DATA_DIR still holds the heartbeat and the command-sync state, just no memory.
        ensure_writable_folder(resources.settings.data_dir)
        return await resources.memory.ops.open()
    except (RecordsUnreadable, SchemaError, StorageUnavailable, EncryptionRefused, EmbeddingMismatch) as error:
        raise DataDirError(str(error)) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DataDirError(f"DATA_DIR {resources.settings.data_dir} is not usable: {reason}") from None
