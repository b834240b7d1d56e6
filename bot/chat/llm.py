"""The one `AsyncOpenAI` client of the process, shared by replies (`bot.chat.model`) and memory extraction."""

from __future__ import annotations

import logging

from openai import AsyncOpenAI

from bot.config import Settings

log = logging.getLogger(__name__)


def build_client(settings: Settings) -> AsyncOpenAI:
    """Built once in `main()` and shared: one connection pool for replies and extraction.

    The client itself does not retry: each caller sets its own `max_retries` (`with_options`): the extractor a
    few (`MEMORY_EXTRACTION_RETRIES`; a batch can wait), the chat path one quick retry (a person is waiting).
    """
    return AsyncOpenAI(
        api_key=settings.api_key_value(),
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout_seconds,
        max_retries=0,
    )
