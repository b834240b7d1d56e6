"""The one `AsyncOpenAI` client of the process, shared by replies (`bot.chat.model`) and memory extraction."""

from __future__ import annotations

import logging

from openai import AsyncOpenAI

from bot.config import Settings

log = logging.getLogger(__name__)


def build_client(settings: Settings) -> AsyncOpenAI:
    """Built once in `main()` and shared: one connection pool for replies and extraction.

    The SDK's own retries are off for extraction (the extractor retries with its own backoff and logging) but a
    single quick retry is useful for replies, so the chat path passes `max_retries` per call.
    """
    return AsyncOpenAI(
        api_key=settings.api_key_value(),
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout_seconds,
        max_retries=0,
    )
