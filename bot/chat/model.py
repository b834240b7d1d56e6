"""The chat-reply calls to the Chat Completions endpoint: one answer, or a stream of text.

Endpoints differ, and a reply must work on all of them:
- reasoning models (OpenAI's o-series and gpt-5 family) reject `max_tokens` and any temperature but the default:
  the token limit goes as `max_completion_tokens` when configured or once the endpoint has said so (remembered),
  and a temperature is sent only when one is configured (and dropped, remembered, if the endpoint refuses it);
- a server without vision refuses image parts: the request is retried once without them and the answer says so;
- a server without streaming refuses `stream` (or answers a plain body): `open_stream` returns None and the
  caller asks for one answer instead; streams ask for a closing usage chunk (`stream_options`), unless the
  endpoint refuses that (remembered);
- thinking (`<think>` blocks, `reasoning_content`) is never part of the answer; with a `ThinkingGuard`, each answer
  teaches what the model does with its reasoning (a lone `</think>`) and each stream carries how much of it may be
  shown while it arrives (`ChatStream.reveal`, see `bot.chat.thinking`);
- a proxy's HTML page, a JSON `null` where a list belongs or missing fields raise `UnusableAnswer`, an
  `openai.OpenAIError`, so one `except openai.OpenAIError` covers every way a reply can fail.
The tokens each endpoint reports (`usage`, with the prompt tokens it served from its prompt cache) add up in
`ChatModel.usage`, which the metrics read; each answer also carries its own (`tokens`, None when the endpoint
reported none), which the daily budgets count. `for_model` gives the same calls to another model (a server's
choice), with its own adaptations and the same `usage`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from bot.chat.thinking import Reveal, ThinkingGuard
from bot.memory.pipeline.parsing import strip_thinking

log = logging.getLogger(__name__)

LimitField = Literal["auto", "max_tokens", "max_completion_tokens"]
_REJECTION_STATUSES = (400, 422)


class UnusableAnswer(openai.OpenAIError):
    """The endpoint answered, but not with a chat completion (HTML from a proxy, wrong JSON shape)."""


class NotAStream(Exception):
    """A stream request was answered without a single stream event (a server that ignores `stream`)."""


@dataclass(frozen=True, slots=True)
class CallTokens:
    """The tokens the endpoint reported for one call (`usage`)."""

    prompt: int
    completion: int

    @property
    def total(self) -> int:
        return self.prompt + self.completion


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def tokens_of(usage: Any) -> CallTokens | None:
    """A response's or a stream's `usage` as counts; None when there is none (a malformed count counts as 0)."""
    if usage is None:
        return None
    return CallTokens(_count(getattr(usage, "prompt_tokens", None)), _count(getattr(usage, "completion_tokens", None)))


@dataclass(frozen=True, slots=True)
class Answer:
    """A finished answer: the visible text, whether the images had to be left out for this endpoint, and the
    tokens the endpoint reported for it (None: it reported none)."""

    text: str
    images_dropped: bool = False
    tokens: CallTokens | None = None


@dataclass(slots=True)
class TokenUsage:
    """What the endpoint reported for the reply calls: prompt tokens, how many of them it served from its prompt
    cache (`usage.prompt_tokens_details.cached_tokens`; 0 where an endpoint does not say) and completion tokens.
    A missing or malformed `usage` counts as nothing."""

    reported: int = 0  # calls that reported a usage
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0

    def add(self, usage: Any) -> None:
        if usage is None:
            return
        prompt = _count(getattr(usage, "prompt_tokens", None))
        self.reported += 1
        self.prompt_tokens += prompt
        details = getattr(usage, "prompt_tokens_details", None)
        self.cached_tokens += min(prompt, _count(getattr(details, "cached_tokens", None)))
        self.completion_tokens += _count(getattr(usage, "completion_tokens", None))


def visible_answer(raw: str) -> str:
    """What users see and memory learns of a model's raw content: no thinking, no surrounding blank space."""
    return strip_thinking(raw).strip()


def has_images(messages: Sequence[ChatCompletionMessageParam]) -> bool:
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]  # type: ignore[union-attr]
    )


def without_images(messages: Sequence[ChatCompletionMessageParam]) -> list[ChatCompletionMessageParam]:
    """The same messages with image parts removed (a message left with text parts only keeps those)."""
    result: list[ChatCompletionMessageParam] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = [p for p in content if not (isinstance(p, dict) and p.get("type") == "image_url")]
            message = {**message, "content": parts}  # type: ignore[assignment]
        result.append(message)
    return result


def _error_text(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return f"{inner.get('message', '')} {inner.get('param', '')} {inner.get('code', '')}".lower()
    return str(error.message).lower()


def _rejects(error: openai.APIStatusError, word: str) -> bool:
    return error.status_code in _REJECTION_STATUSES and word in _error_text(error)


Learn = Callable[[str, bool], Awaitable[None]]


class ChatStream:
    """The raw content deltas of one streamed answer, thinking included (the display filters it; the final text is
    `visible_answer` of the whole). Reasoning fields (`reasoning_content`, `reasoning`) are skipped. `reveal` says
    how much may be shown while it arrives; `learn(raw, complete)` is told what came, at the end or on failure."""

    def __init__(
        self,
        stream: openai.AsyncStream[Any],
        *,
        images_dropped: bool,
        reveal: Reveal = Reveal.LIVE,
        learn: Learn | None = None,
        usage: TokenUsage | None = None,
    ) -> None:
        self._stream = stream
        self.images_dropped = images_dropped
        self.reveal = reveal
        self._learn = learn
        self.chunks = 0
        self._usage = usage if usage is not None else TokenUsage()
        self.tokens: CallTokens | None = None  # from the closing usage chunk, when the endpoint sends one

    async def deltas(self) -> AsyncIterator[str]:
        raw: list[str] = []
        complete = False
        try:
            async for chunk in self._stream:
                self.chunks += 1
                if (usage := getattr(chunk, "usage", None)) is not None:  # the closing chunk, when asked for
                    self._usage.add(usage)
                    self.tokens = tokens_of(usage)
                text = _delta_text(chunk)
                if text:
                    raw.append(text)
                    yield text
            complete = True
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as error:
            raise UnusableAnswer(f"malformed stream chunk ({type(error).__name__})") from error
        finally:
            await self._stream.close()
            if self._learn is not None and (raw or complete) and self.chunks:
                await self._learn("".join(raw), complete)
        if self.chunks == 0:
            raise NotAStream


def _delta_text(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None)
    if not choices:
        return ""  # the usage chunk, keep-alives
    delta = getattr(choices[0], "delta", None)
    content = getattr(delta, "content", None)
    return content if isinstance(content, str) else ""


def _completion_text(response: Any) -> str:
    """The content of a non-streamed answer; `UnusableAnswer` for anything that is not a chat completion."""
    try:
        choices = response.choices
        if not choices:
            raise UnusableAnswer("the answer has no choices")
        content = choices[0].message.content
    except (AttributeError, TypeError, IndexError, KeyError) as error:
        raise UnusableAnswer(f"not a chat completion ({type(response).__name__})") from error
    if content is not None and not isinstance(content, str):
        raise UnusableAnswer("the answer's content is not text")
    return content or ""


def _log_usage(model: str, response: Any) -> None:
    usage = getattr(response, "usage", None)
    log.info(
        "reply: model=%s prompt_tokens=%s cached_tokens=%s completion_tokens=%s",
        model, getattr(usage, "prompt_tokens", None),
        getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None),
        getattr(usage, "completion_tokens", None),
    )


class ChatModel:
    """Generates replies; shared by the chat cog and the console, so both make exactly the same calls."""

    def __init__(
        self,
        client: AsyncOpenAI,
        *,
        model: str,
        max_tokens: int,
        temperature: float | None = None,
        limit_field: LimitField = "auto",
        thinking: ThinkingGuard | None = None,
    ) -> None:
        self._client = client
        self.thinking = thinking
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.limit_field: str = "max_tokens" if limit_field == "auto" else limit_field
        self._learn_limit_field = limit_field == "auto"
        self.streaming_supported = True
        self.stream_usage_supported = True
        self.usage = TokenUsage()
        self._configured: dict[str, Any] = {
            "max_tokens": max_tokens, "temperature": temperature, "limit_field": limit_field, "thinking": thinking,
        }
        self._siblings: dict[str, ChatModel] = {model: self}

    def for_model(self, name: str) -> ChatModel:
        """The same calls to model `name`, configured as this one was; each model learns on its own what its
        endpoint refuses (one may want `max_completion_tokens`, another streams without usage)."""
        sibling = self._siblings.get(name)
        if sibling is None:
            sibling = ChatModel(self._client, model=name, **self._configured)
            sibling._siblings = self._siblings
            sibling.usage = self.usage  # one total for the metrics, whatever the model
            self._siblings[name] = sibling
        return sibling

    def _params(self, messages: Sequence[ChatCompletionMessageParam]) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": list(messages), self.limit_field: self.max_tokens}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params

    async def _create(self, messages: Sequence[ChatCompletionMessageParam], **extra: Any) -> tuple[Any, bool]:
        """One request, adapted to what the endpoint refuses: the response and whether images were dropped."""
        images_dropped = False
        for _ in range(5):  # each adaptation happens at most once
            try:
                response = await self._client.with_options(max_retries=1).chat.completions.create(
                    **self._params(messages), **extra
                )
            except (ValueError, TypeError) as error:  # the SDK decoding a body that is not JSON
                raise UnusableAnswer(f"the answer could not be decoded ({type(error).__name__})") from error
            except openai.APIStatusError as error:
                if "stream_options" in extra and _rejects(error, "stream_options"):
                    log.warning("model %s refuses stream_options; streaming without a usage chunk", self.model)
                    self.stream_usage_supported = False
                    extra = {key: value for key, value in extra.items() if key != "stream_options"}
                    continue
                if self._learn_limit_field and self.limit_field == "max_tokens" and _rejects(error, "max_tokens"):
                    log.warning("model %s refuses max_tokens; using max_completion_tokens from now on", self.model)
                    self.limit_field = "max_completion_tokens"
                    continue
                if self.temperature is not None and _rejects(error, "temperature"):
                    log.warning("model %s refuses the configured temperature; sending none from now on", self.model)
                    self.temperature = None
                    continue
                if not images_dropped and error.status_code in _REJECTION_STATUSES and has_images(messages):
                    log.warning("model %s refused a request with images; retrying without them", self.model)
                    messages = without_images(messages)
                    images_dropped = True
                    continue
                raise
            return response, images_dropped
        raise UnusableAnswer("the endpoint refused every form of the request")

    async def complete(self, messages: Sequence[ChatCompletionMessageParam]) -> Answer:
        """One whole answer; raises `openai.OpenAIError` (including `UnusableAnswer`) when there is none."""
        response, images_dropped = await self._create(messages)
        text = _completion_text(response)
        _log_usage(self.model, response)
        await self._learn(text, True)
        self.usage.add(getattr(response, "usage", None))
        return Answer(visible_answer(text), images_dropped, tokens_of(getattr(response, "usage", None)))

    async def _learn(self, raw: str, complete: bool) -> None:
        if self.thinking is not None:
            await self.thinking.learn(self.model, raw, complete=complete)

    def reveal(self) -> Reveal:
        """How much of this model's next streamed answer may be shown while it arrives."""
        return Reveal.LIVE if self.thinking is None else self.thinking.reveal_for(self.model)

    async def reply(self, messages: Sequence[ChatCompletionMessageParam]) -> str:
        """The visible answer text of one whole answer."""
        return (await self.complete(messages)).text

    async def open_stream(self, messages: Sequence[ChatCompletionMessageParam]) -> ChatStream | None:
        """A streamed answer, or None when this endpoint does not stream (remembered: it is not asked again)."""
        if not self.streaming_supported:
            return None
        extra: dict[str, Any] = {"stream": True}
        if self.stream_usage_supported:
            extra["stream_options"] = {"include_usage": True}
        try:
            stream, images_dropped = await self._create(messages, **extra)
        except openai.APIStatusError as error:
            if _rejects(error, "stream"):
                log.warning("model %s refuses streaming; sending whole answers from now on", self.model)
                self.streaming_supported = False
                return None
            raise
        if not isinstance(stream, openai.AsyncStream):
            raise UnusableAnswer("the endpoint did not answer with a stream")
        return ChatStream(
            stream, images_dropped=images_dropped, reveal=self.reveal(), learn=self._learn, usage=self.usage
        )
