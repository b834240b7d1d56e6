"""The one `AsyncOpenAI` client of the process, and the chat-reply call made through it."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

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


class ChatModel:
    """Generates replies. Kept tiny so the chat cog and the console share exactly the same call."""

    def __init__(self, client: AsyncOpenAI, *, model: str, max_tokens: int, temperature: float) -> None:
        self._client = client
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature

    async def reply(self, messages: Sequence[ChatCompletionMessageParam]) -> str:
        """The model's answer text; raises the SDK's errors (the caller turns them into a friendly message)."""
        response = await self._client.with_options(max_retries=1).chat.completions.create(
            model=self.model,
            messages=list(messages),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        if response.usage is not None:
            log.info(
                "reply: model=%s prompt_tokens=%d completion_tokens=%d",
                self.model, response.usage.prompt_tokens, response.usage.completion_tokens,
            )
        content = response.choices[0].message.content if response.choices else None
        return (content or "").strip()
