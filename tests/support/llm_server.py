"""A real HTTP server that speaks the OpenAI Chat Completions protocol, for tests and benchmarks.

Mocking the ``openai`` client hides the bugs that matter most for the bot: retries, timeouts, status codes,
headers, streaming and junk answers all live in the HTTP layer. This server lets the real ``AsyncOpenAI``
client talk to 127.0.0.1 while a test scripts each answer.

It runs aiohttp in its own thread with its own event loop, so sync tests, async tests on any loop and
benchmark scripts all use it the same way::

    with ChatServer() as srv:
        srv.enqueue(reply("hi"), error(429, retry_after=1), stall(30))
        client = AsyncOpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
        ...
        srv.wait_for_requests(3)

Answers are taken from the queue (one per request), then from ``srv.responder`` if set, then
``srv.default`` (a valid "nothing to update" memory extraction).

Usage reports prompt caching the way OpenAI's API does (``usage.prompt_tokens_details.cached_tokens``), with the
server's token estimate (4 characters a token; see ``PrefixCache``): a request's cached tokens are the longest
prefix, in whole 128-token blocks, that an earlier request to the same model started with, and 0 below 1,024.

Run as a subprocess with ``python -m tests.support.llm_server --port 0 --script FILE``: it prints ``READY <port>`` and
serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import json
import signal
import socket
import sys
import threading
import time
import traceback
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, TypedDict

from aiohttp import web

HOST = "127.0.0.1"  # Loopback only: the server must never be reachable from, or reach, anything else.
DEFAULT_MODEL = "test-model"
REJECT_RESPONSE_FORMAT_MESSAGE = "response_format json_object is not supported"

__all__ = [
    "CACHE_BLOCK_TOKENS",
    "CACHE_MIN_TOKENS",
    "DEFAULT_MODEL",
    "ChatServer",
    "Drop",
    "ErrorResponse",
    "Gate",
    "Held",
    "PrefixCache",
    "RawBody",
    "RecordedRequest",
    "RejectFeatures",
    "RejectResponseFormat",
    "Reply",
    "Responder",
    "Response",
    "Stall",
    "approx_tokens",
    "drop",
    "dump_script",
    "error",
    "extraction",
    "extraction_payload",
    "held",
    "huge",
    "json_reply",
    "junk",
    "load_script",
    "prompt_text",
    "prompt_tokens",
    "raw_body",
    "reject_features",
    "reject_response_format_then",
    "reply",
    "response_from_dict",
    "stall",
    "truncated",
]


# --------------------------------------------------------------------------------------------------------
# Token estimate


def approx_tokens(text: str) -> int:
    """Four characters per token: close enough for budgets and benchmarks, and fully deterministic."""
    return len(text) // 4


def _message_text(content: object) -> str:
    """Text of a message's content, which may be a string, None, or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """Approximate prompt size: per message len(content)//4 + 4 (the role and framing overhead)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return 0
    return sum(approx_tokens(_message_text(m.get("content"))) + 4 for m in messages if isinstance(m, dict))


CHARS_PER_TOKEN = 4
CACHE_MIN_TOKENS = 1024  # OpenAI caches prompts of at least this many tokens...
CACHE_BLOCK_TOKENS = 128  # ...in blocks of this many
_ROLE_FRAME = 4 * CHARS_PER_TOKEN  # prompt_tokens counts 4 tokens of framing per message


def prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt as one string, as the prefix cache compares it: each message as its role in a 16-character frame
    followed by its text, so that ``approx_tokens`` of it matches ``prompt_tokens`` (up to rounding)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    return "".join(
        f"<|{message.get('role', '')}|>".ljust(_ROLE_FRAME)[:_ROLE_FRAME] + _message_text(message.get("content"))
        for message in messages
        if isinstance(message, dict)
    )


class PrefixCache:
    """The prompt prefixes requests began with, per model, in blocks of ``block_chars`` characters, the way an
    endpoint's prefix cache keeps them: a block is reusable only after every block before it (a chain of hashes).

    ``match(model, text)`` says how many leading characters of ``text`` an earlier text of that model shared, in
    whole blocks, and then remembers ``text``. Not thread-safe: the server calls it on its own loop."""

    def __init__(self, block_chars: int = CACHE_BLOCK_TOKENS * CHARS_PER_TOKEN) -> None:
        self.block_chars = block_chars
        self._seen: dict[str, set[bytes]] = {}

    def match(self, model: str, text: str) -> int:
        seen = self._seen.setdefault(model, set())
        digest = b""
        matched = 0
        still_matching = True
        for start in range(0, len(text) - self.block_chars + 1, self.block_chars):
            block = text[start : start + self.block_chars].encode()
            digest = hashlib.blake2b(digest + block, digest_size=16).digest()
            if still_matching and digest in seen:
                matched = start + self.block_chars
            else:
                still_matching = False
                seen.add(digest)
        return matched

    def cached_tokens(self, model: str, body: Mapping[str, Any], prompt_tokens: int) -> int:
        """OpenAI's ``cached_tokens`` for this request (and remember its prompt): the shared prefix in whole
        128-token blocks, 0 when the prompt or the prefix is under 1,024 tokens."""
        tokens = self.match(model, prompt_text(body)) // CHARS_PER_TOKEN
        if prompt_tokens < CACHE_MIN_TOKENS or tokens < CACHE_MIN_TOKENS:
            return 0
        return min(prompt_tokens, tokens - tokens % CACHE_BLOCK_TOKENS)

    def clear(self) -> None:
        self._seen.clear()


# --------------------------------------------------------------------------------------------------------
# Responses


@dataclass(frozen=True)
class _Exchange:
    """What a response needs to know about the request it answers."""

    request: web.Request
    body: Mapping[str, Any]
    prompt_tokens: int
    stopping: asyncio.Event
    default: Response
    cached_tokens: int = 0

    @property
    def model(self) -> str:
        return str(self.body.get("model") or DEFAULT_MODEL)

    @property
    def streaming(self) -> bool:
        return self.body.get("stream") is True


class Response(ABC):
    """One scripted answer. Subclasses are small frozen dataclasses, so scripts can be compared and dumped."""

    kind: ClassVar[str]

    @abstractmethod
    async def render(self, ex: _Exchange) -> web.StreamResponse:
        """Answer the request (or refuse to)."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, read back by ``response_from_dict`` (the script-file format)."""


def _json_response(
    payload: object, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=json.dumps(payload).encode(), status=status, content_type="application/json", headers=headers
    )


async def _pause(ex: _Exchange, seconds: float) -> None:
    """Wait `seconds`, or less if the server is stopping (so a paced answer never holds up stop())."""
    if seconds > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ex.stopping.wait(), seconds)


@dataclass(frozen=True)
class Reply(Response):
    """A normal completion whose ``choices[0].message.content`` is ``content`` (streamed if asked).

    ``reasoning`` is sent as ``reasoning_content`` (a reasoning model's thinking, before the content when
    streamed). Pacing, like a real model: the first content token comes ``first_token_seconds`` after the request
    and the rest over ``stream_seconds`` in ``chunks`` pieces; a non-streamed answer comes after both.
    """

    content: str
    finish_reason: str = "stop"
    reasoning: str = ""
    first_token_seconds: float = 0.0
    stream_seconds: float = 0.0
    chunks: int = 64
    kind: ClassVar[str] = "reply"

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        usage = _usage(ex.prompt_tokens, approx_tokens(self.content), ex.cached_tokens)
        if ex.streaming:
            return await self._stream(ex, completion_id, created, usage)
        await _pause(ex, self.first_token_seconds + self.stream_seconds)
        message: dict[str, Any] = {"role": "assistant", "content": self.content, "refusal": None}
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        return _json_response(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": ex.model,
                "system_fingerprint": "fp_test",
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "logprobs": None,
                        "finish_reason": self.finish_reason,
                    }
                ],
                "usage": usage,
            }
        )

    async def _stream(
        self, ex: _Exchange, completion_id: str, created: int, usage: dict[str, Any]
    ) -> web.StreamResponse:
        """Server-sent events, like the real API: a role chunk, content chunks, a finish chunk, [DONE]."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(ex.request)

        async def send(choices: list[dict[str, Any]], **extra: object) -> None:
            chunk = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": ex.model,
                "system_fingerprint": "fp_test",
                "choices": choices,
                **extra,
            }
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())

        def choice(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}

        await send([choice({"role": "assistant", "content": ""})])
        if self.reasoning:
            await send([choice({"reasoning_content": self.reasoning})])
        await _pause(ex, self.first_token_seconds)
        size = max(16, -(-len(self.content) // max(1, self.chunks)))  # at most `chunks` content chunks
        pieces = [self.content[start : start + size] for start in range(0, len(self.content), size)]
        gap = self.stream_seconds / max(1, len(pieces) - 1)
        started = time.monotonic()
        for number, piece in enumerate(pieces):
            # Paced against the start, not the previous piece: a loaded machine's late wake-ups do not add up.
            await _pause(ex, started + number * gap - time.monotonic())
            await send([choice({"content": piece})])
        await send([choice({}, self.finish_reason)])
        options = ex.body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            await send([], usage=usage)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "content": self.content, "finish_reason": self.finish_reason,
            "reasoning": self.reasoning, "first_token_seconds": self.first_token_seconds,
            "stream_seconds": self.stream_seconds, "chunks": self.chunks,
        }


def _usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


@dataclass(frozen=True)
class ErrorResponse(Response):
    """An HTTP error; ``body`` is sent as JSON if it is a dict, verbatim if str/bytes."""

    status: int
    body: dict[str, Any] | str | bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    kind: ClassVar[str] = "error"

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        if isinstance(self.body, dict):
            return _json_response(self.body, self.status, self.headers)
        data = self.body.encode() if isinstance(self.body, str) else self.body
        return web.Response(body=data, status=self.status, headers=self.headers, content_type="text/plain")

    def to_dict(self) -> dict[str, Any]:
        body = self.body.decode("utf-8", "surrogateescape") if isinstance(self.body, bytes) else self.body
        return {"kind": self.kind, "status": self.status, "body": body, "headers": dict(self.headers)}


@dataclass(frozen=True)
class Stall(Response):
    """Waits ``seconds`` then answers ``then`` (the server default if None). Released at once by stop()."""

    seconds: float
    then: Response | None = None
    kind: ClassVar[str] = "stall"

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ex.stopping.wait(), self.seconds)
        if ex.stopping.is_set():
            return await error(503, message="test server is stopping").render(ex)
        return await (self.then or ex.default).render(ex)

    def to_dict(self) -> dict[str, Any]:
        then = self.then.to_dict() if self.then else None
        return {"kind": self.kind, "seconds": self.seconds, "then": then}


class Gate:
    """A latch the test opens: answers wrapped in `held(gate, then)` wait at it until `open()`.

    The server's thread waits and the test's loop opens, so it is thread-safe; `reached(n)` lets the test await,
    without sleeping, the moment n requests are held (a reply "still being written", an extraction "in flight").
    Stopping the server releases every held request with a 503, so a forgotten gate never hangs a test.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = False
        self._arrived = 0
        self._held: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._watchers: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._open

    @property
    def arrived(self) -> int:
        """How many requests have reached the gate so far (held, or passed once it was open)."""
        with self._lock:
            return self._arrived

    def open(self) -> None:
        """Let every held request (and every later one) through. Idempotent."""
        with self._lock:
            self._open = True
            held, self._held = self._held, []
        for loop, future in held:
            with contextlib.suppress(RuntimeError):  # the server's loop has closed
                loop.call_soon_threadsafe(_resolve, future)

    async def reached(self, n: int = 1, timeout: float = 10.0) -> None:
        """Wait (on the caller's loop) until at least `n` requests have reached the gate."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        watcher = (n, loop, future)
        with self._lock:
            if self._arrived >= n:
                return
            self._watchers.append(watcher)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise TimeoutError(f"expected {n} requests at the gate within {timeout}s, got {self.arrived}") from None
        finally:
            with self._lock:
                if watcher in self._watchers:
                    self._watchers.remove(watcher)

    async def _pass(self, stopping: asyncio.Event) -> bool:
        """Called on the server's loop for one request: True once the gate opens, False if the server stops."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._arrived += 1
            if self._open:
                future.set_result(None)
            else:
                self._held.append((loop, future))
            for n, watcher_loop, watcher in self._watchers:
                if n <= self._arrived:
                    with contextlib.suppress(RuntimeError):
                        watcher_loop.call_soon_threadsafe(_resolve, watcher)
        stop = asyncio.ensure_future(stopping.wait())
        either: set[asyncio.Future[Any]] = {future, stop}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        return future.done()


@dataclass(frozen=True)
class Held(Response):
    """Waits at `gate` until the test opens it, then answers `then`. Not part of the script-file format (a gate
    lives in the test's process): `to_dict` names the kind only."""

    gate: Gate
    then: Response
    kind: ClassVar[str] = "held"

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        if not await self.gate._pass(ex.stopping):
            return await error(503, message="test server is stopping").render(ex)
        return await self.then.render(ex)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "then": self.then.to_dict()}


@dataclass(frozen=True)
class RawBody(Response):
    """Protocol-level junk: exactly these bytes, with this status and content type."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    kind: ClassVar[str] = "raw_body"

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        return web.Response(body=self.body, status=self.status, headers={"Content-Type": self.content_type})

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "body_base64": base64.b64encode(self.body).decode(),
            "status": self.status,
            "content_type": self.content_type,
        }


@dataclass(frozen=True)
class Drop(Response):
    """Closes the connection without a byte of answer, as a crashed or restarted server would."""

    kind: ClassVar[str] = "drop"

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        if ex.request.transport is not None:
            ex.request.transport.abort()
        # With the transport gone aiohttp sees a vanished client and silently discards this response.
        return web.Response(status=599)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}


@dataclass(frozen=True)
class RejectResponseFormat(Response):
    """Like a server without JSON mode: 400 if the request has ``response_format``, else ``then``.

    In the queue it stays at the head while it rejects, so a client's fallback retry (without
    ``response_format``) gets ``then``.
    """

    then: Response
    rejection: Response = field(default_factory=lambda: error(400, message=REJECT_RESPONSE_FORMAT_MESSAGE))
    kind: ClassVar[str] = "reject_response_format_then"

    def rejects(self, body: Mapping[str, Any]) -> bool:
        return body.get("response_format") is not None

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        return await (self.rejection if self.rejects(ex.body) else self.then).render(ex)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "then": self.then.to_dict(), "rejection": self.rejection.to_dict()}


REJECTIONS = {
    "stream": "stream is not supported by this server",
    "images": "image input is not supported - this model has no vision projector",
    "max_tokens": "Unsupported parameter: 'max_tokens' is not supported with this model. "
    "Use 'max_completion_tokens' instead.",
    "temperature": "Unsupported value: 'temperature' does not support 0.7 with this model. "
    "Only the default (1) value is supported.",
    "stream_options": "Unrecognized request argument supplied: stream_options",
}


def _has_images(body: Mapping[str, Any]) -> bool:
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in messages if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
    )


@dataclass(frozen=True)
class RejectFeatures(Response):
    """Like a server without some features: 400 (with the wording real servers use) for a request that uses one
    of ``features`` ("stream", "images", "max_tokens", "temperature", "stream_options"), ``then`` otherwise.
    Reusable: one instance can answer every request (as ``ScriptedLLM.chat_reply`` or a responder)."""

    then: Response
    features: tuple[str, ...]
    kind: ClassVar[str] = "reject_features"

    def rejected(self, body: Mapping[str, Any]) -> str | None:
        uses = {
            "stream": body.get("stream") is True,
            "images": _has_images(body),
            "max_tokens": "max_tokens" in body,
            "temperature": "temperature" in body,
            "stream_options": "stream_options" in body,
        }
        return next((feature for feature in self.features if uses.get(feature)), None)

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        feature = self.rejected(ex.body)
        if feature is None:
            return await self.then.render(ex)
        param = feature if feature in ("max_tokens", "temperature", "stream_options") else None
        code = {"max_tokens": "unsupported_parameter", "temperature": "unsupported_value"}.get(feature)
        body = {"error": {"message": REJECTIONS[feature], "type": "invalid_request_error", "param": param,
                          "code": code}}
        return await error(400, body).render(ex)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "then": self.then.to_dict(), "features": list(self.features)}


# Factories: the vocabulary tests are written in.


def reply(
    content: str,
    *,
    finish_reason: str = "stop",
    reasoning: str = "",
    first_token_seconds: float = 0.0,
    stream_seconds: float = 0.0,
    chunks: int = 64,
) -> Reply:
    """A normal completion with this message content (see `Reply` for reasoning and pacing)."""
    return Reply(content, finish_reason, reasoning, first_token_seconds, stream_seconds, chunks)


def reject_features(then: Response, *features: str) -> RejectFeatures:
    """400 for requests using any of ``features`` (see `RejectFeatures`), ``then`` otherwise."""
    unknown = set(features) - set(REJECTIONS)
    if unknown:
        raise ValueError(f"unknown features {sorted(unknown)}; expected some of {sorted(REJECTIONS)}")
    return RejectFeatures(then, tuple(features))


def json_reply(obj: object) -> Reply:
    """A completion whose content is ``obj`` as JSON."""
    return Reply(json.dumps(obj))


_SECTIONS = {
    "work": ("user", "workContext"),
    "personal": ("user", "personalContext"),
    "top": ("user", "topOfMind"),
    "recent": ("history", "recentMonths"),
    "earlier": ("history", "earlierContext"),
    "background": ("history", "longTermBackground"),
}

FactSpec = tuple[str, str] | tuple[str, str, float] | Mapping[str, Any]


def extraction_payload(
    *,
    work: str | None = None,
    personal: str | None = None,
    top: str | None = None,
    recent: str | None = None,
    earlier: str | None = None,
    background: str | None = None,
    facts: Iterable[FactSpec] = (),
    remove: Iterable[str] = (),
) -> dict[str, Any]:
    """The memory-extraction JSON (the shape in docs/architecture.md). A given summary means shouldUpdate true.

    Facts are ``(content, category[, confidence=0.9])`` tuples, or dicts passed through untouched so tests
    can send odd or malformed facts.
    """
    given = {
        "work": work,
        "personal": personal,
        "top": top,
        "recent": recent,
        "earlier": earlier,
        "background": background,
    }
    payload: dict[str, Any] = {"user": {}, "history": {}}
    for name, (group, key) in _SECTIONS.items():
        summary = given[name]
        payload[group][key] = {"summary": summary or "", "shouldUpdate": summary is not None}
    payload["newFacts"] = [_fact(spec) for spec in facts]
    payload["factsToRemove"] = list(remove)
    return payload


def _fact(spec: FactSpec) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        return dict(spec)
    content, category, *rest = spec
    return {"content": content, "category": category, "confidence": rest[0] if rest else 0.9}


def extraction(
    *,
    work: str | None = None,
    personal: str | None = None,
    top: str | None = None,
    recent: str | None = None,
    earlier: str | None = None,
    background: str | None = None,
    facts: Iterable[FactSpec] = (),
    remove: Iterable[str] = (),
) -> Reply:
    """A completion carrying a memory extraction; see ``extraction_payload`` for the arguments."""
    return json_reply(
        extraction_payload(
            work=work,
            personal=personal,
            top=top,
            recent=recent,
            earlier=earlier,
            background=background,
            facts=facts,
            remove=remove,
        )
    )


def error(
    status: int,
    body: dict[str, Any] | str | bytes | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    message: str | None = None,
    retry_after: float | None = None,
) -> ErrorResponse:
    """An HTTP error with an OpenAI-style error body unless ``body`` is given.

    ``retry_after`` adds the ``Retry-After`` header that rate limits (429) and overloads (503) carry.
    """
    if body is None:
        body = {
            "error": {
                "message": message or f"test server error {status}",
                "type": _ERROR_TYPES.get(status, "server_error"),
                "param": None,
                "code": None,
            }
        }
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["Retry-After"] = f"{retry_after:g}"
    return ErrorResponse(status, body, all_headers)


def stall(seconds: float, then: Response | None = None) -> Stall:
    """Hold the request ``seconds`` (to trigger client timeouts), then answer ``then`` or the default."""
    return Stall(seconds, then)


def held(gate: Gate, then: Response | None = None) -> Held:
    """Hold the request at `gate` until the test opens it, then answer ``then`` (an empty extraction by default)."""
    return Held(gate, then or extraction())


def raw_body(body: bytes | str, status: int = 200, content_type: str = "application/json") -> RawBody:
    """Exactly these bytes as the HTTP body: for answers that break the protocol itself."""
    return RawBody(body.encode() if isinstance(body, str) else body, status, content_type)


def junk(
    text: str = "<html><body>502 Bad Gateway</body></html>", *, content_type: str = "text/html"
) -> RawBody:
    """A 200 whose body is not a completion at all, like a proxy's error page.

    For a valid completion whose *content* is junk, use ``reply("not json")``.
    """
    return raw_body(text, 200, content_type)


def truncated(obj: object = None, *, keep: float = 0.5) -> Reply:
    """A completion cut off mid-JSON (finish_reason "length"), as when max_tokens runs out.

    ``obj`` is serialised (a str is cut as is); the default is an extraction with one fact.
    """
    if obj is None:
        obj = extraction_payload(work="Writes Go microservices", facts=[("Writes Go", "work")])
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return Reply(text[: max(1, min(len(text) - 1, int(len(text) * keep)))], finish_reason="length")


def huge(n_bytes: int, *, fill: str = "x") -> Reply:
    """A completion whose content is ``n_bytes`` long (one-byte ``fill``), to test size limits."""
    return Reply((fill * n_bytes)[:n_bytes])


def drop() -> Drop:
    """Close the connection without answering."""
    return Drop()


def reject_response_format_then(then: Response | None = None) -> RejectResponseFormat:
    """400 for requests with ``response_format``, ``then`` (default: an empty extraction) otherwise."""
    return RejectResponseFormat(then or extraction())


_FACTORIES: dict[str, Callable[..., Response]] = {
    "reply": reply,
    "json_reply": json_reply,
    "extraction": extraction,
    "error": error,
    "stall": stall,
    "raw_body": raw_body,
    "junk": junk,
    "truncated": truncated,
    "huge": huge,
    "drop": drop,
    "reject_response_format_then": reject_response_format_then,
    "reject_features": lambda then, features: reject_features(then, *features),
}


def response_from_dict(data: Mapping[str, Any]) -> Response:
    """Build a response from its script form: ``{"kind": <factory name>, **factory keyword arguments}``.

    Nested responses (``then``, ``rejection``) use the same form; ``raw_body`` also takes ``body_base64``.
    """
    kwargs = dict(data)
    kind = kwargs.pop("kind", None)
    if kind not in _FACTORIES:
        raise ValueError(f"unknown response kind {kind!r}; expected one of {sorted(_FACTORIES)}")
    for key in ("then", "rejection"):
        if isinstance(kwargs.get(key), Mapping):
            kwargs[key] = response_from_dict(kwargs[key])
    if "body_base64" in kwargs:
        kwargs["body"] = base64.b64decode(kwargs.pop("body_base64"))
    if kind == "reject_response_format_then" and "rejection" in kwargs:
        return RejectResponseFormat(kwargs["then"], kwargs["rejection"])
    return _FACTORIES[kind](**kwargs)


def load_script(path: str | Path) -> list[Response]:
    """Read a script: one JSON response per line; blank lines and ``#`` comments are skipped."""
    responses = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            responses.append(response_from_dict(json.loads(line)))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: bad script line: {exc}") from exc
    return responses


def dump_script(path: str | Path, responses: Iterable[Response]) -> None:
    """Write responses as a script file, for ``python -m tests.support.llm_server --script``."""
    lines = [json.dumps(r.to_dict()) + "\n" for r in responses]
    Path(path).write_text("".join(lines), encoding="utf-8")


# --------------------------------------------------------------------------------------------------------
# The server


class RecordedRequest(TypedDict):
    """One chat-completion request as the server saw it."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # names lower-cased
    prompt_tokens: int
    cached_tokens: int  # what the usage reported as cached (see PrefixCache)
    received_at: float  # time.monotonic(), for timing assertions and benchmarks


Responder = Callable[[dict[str, Any]], Response | None]


class ChatServer:
    """OpenAI-compatible chat server on 127.0.0.1, in a background thread. Thread-safe throughout."""

    def __init__(self, *, port: int = 0, shutdown_timeout: float = 2.0) -> None:
        self._requested_port = port
        self._port: int | None = None
        self._shutdown_timeout = shutdown_timeout
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._queue: deque[Response] = deque()
        self._models: dict[str, None] = {}  # insertion-ordered set
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self.prefix_cache = PrefixCache()
        """The prompt prefixes seen so far (what ``cached_tokens`` is computed from)."""
        self.default: Response = extraction()
        """Answer used when the queue is empty and no responder answers."""
        self.responder: Responder | None = None
        """Called with the request body when the queue is empty; may return None to use ``default``."""
        self.offered_models: list[str] | None = None
        """What ``GET /v1/models`` lists, like a local server's installed models; None: the models requested."""

    # -- lifecycle ---------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("ChatServer has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        """What to pass as ``AsyncOpenAI(base_url=...)``."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 10.0) -> ChatServer:
        """Bind and serve. After stop(), starting again reuses the same port (to test reconnection)."""
        if self.running:
            raise RuntimeError("ChatServer is already running")
        sock = self._bind()
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(sock, ready, failure), name=f"ChatServer:{self._port}", daemon=True
        )
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError("ChatServer did not start in time")
        if failure:
            self._thread.join(timeout)
            raise RuntimeError("ChatServer failed to start") from failure[0]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Release stalled requests, close connections and the loop. Idempotent; never hangs."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError(f"ChatServer thread did not stop within {timeout}s")
        self._thread = self._loop = self._stopping = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _bind(self) -> socket.socket:
        """Bind ourselves (rather than letting aiohttp) so the port is known before the thread starts."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, self._port if self._port is not None else self._requested_port))
        except OSError:
            sock.close()
            raise
        sock.listen(128)
        sock.setblocking(False)
        self._port = sock.getsockname()[1]
        return sock

    def _run(self, sock: socket.socket, ready: threading.Event, failure: list[BaseException]) -> None:
        try:
            asyncio.run(self._serve(sock, ready))
        except BaseException as exc:  # report start-up failures to start(), whatever they are
            if ready.is_set():  # it was serving: nobody is waiting for `failure`, so say it here
                traceback.print_exc()
            failure.append(exc)
            sock.close()
        finally:
            ready.set()

    async def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for path in ("/v1/chat/completions", "/chat/completions"):
            app.router.add_post(path, self._handle_chat)
        for path in ("/v1/models", "/models"):
            app.router.add_get(path, self._handle_models)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=self._shutdown_timeout)
        await runner.setup()
        try:
            await web.SockSite(runner, sock).start()
            ready.set()
            await self._stopping.wait()
        finally:
            await runner.cleanup()

    # -- scripting ---------------------------------------------------------------------------------------

    def enqueue(self, *responses: Response) -> None:
        """Queue answers, consumed in order, one per request."""
        with self._cond:
            self._queue.extend(responses)

    @property
    def queued(self) -> int:
        """How many queued answers are still unused."""
        with self._cond:
            return len(self._queue)

    def clear(self) -> None:
        """Forget queued answers, recorded requests and cached prefixes (default and responder are kept)."""
        with self._cond:
            self._queue.clear()
            self._requests.clear()
            self._models.clear()
            self.prefix_cache.clear()

    def _next_response(self, body: dict[str, Any]) -> Response:
        with self._cond:
            if self._queue:
                head = self._queue[0]
                if not (isinstance(head, RejectResponseFormat) and head.rejects(body)):
                    self._queue.popleft()
                return head
        if self.responder is not None:
            answer = self.responder(body)
            if answer is not None:
                return answer
        return self.default

    # -- recording ---------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the chat requests received so far, oldest first."""
        with self._cond:
            return list(self._requests)

    @property
    def models(self) -> list[str]:
        """Models named in requests, in order of first use."""
        with self._cond:
            return list(self._models)

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least ``n`` requests have arrived, so tests synchronise without sleeping."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests within {timeout}s, got {len(self._requests)}")
            return list(self._requests)

    async def await_requests(self, n: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Async ``wait_for_requests`` that never blocks the caller's event loop (or its executor)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        waiter = (n, loop, future)
        with self._cond:
            if len(self._requests) >= n:
                return list(self._requests)
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise TimeoutError(f"expected {n} requests within {timeout}s, got {len(self.requests)}") from None
        finally:
            with self._cond:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        return self.requests

    def _record(self, request: web.Request, body: dict[str, Any], tokens: int, cached: int) -> None:
        entry: RecordedRequest = {
            "method": request.method,
            "path": request.path,
            "body": body,
            "headers": {k.lower(): v for k, v in request.headers.items()},
            "prompt_tokens": tokens,
            "cached_tokens": cached,
            "received_at": time.monotonic(),
        }
        with self._cond:
            self._requests.append(entry)
            self._models[str(body.get("model") or DEFAULT_MODEL)] = None
            self._cond.notify_all()
            count = len(self._requests)
            for n, loop, future in self._waiters:
                if n <= count:
                    with contextlib.suppress(RuntimeError):  # the waiter's loop has closed
                        loop.call_soon_threadsafe(_resolve, future)

    # -- handlers ----------------------------------------------------------------------------------------

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _json_response(
                {"error": {"message": "body is not a JSON object", "type": "invalid_request_error"}}, 400
            )
        tokens = prompt_tokens(body)
        with self._cond:
            cached = self.prefix_cache.cached_tokens(str(body.get("model") or DEFAULT_MODEL), body, tokens)
        self._record(request, body, tokens, cached)
        assert self._stopping is not None
        try:
            response = self._next_response(body)
        except Exception as exc:  # a broken responder is a test bug: show it, answer 500
            traceback.print_exc()
            response = error(500, message=f"test server responder failed: {exc!r}")
        return await response.render(_Exchange(request, body, tokens, self._stopping, self.default, cached))

    async def _handle_models(self, request: web.Request) -> web.StreamResponse:
        offered = self.models if self.offered_models is None else self.offered_models
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in offered]
        return _json_response({"object": "list", "data": data})


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# --------------------------------------------------------------------------------------------------------
# Subprocess mode


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT, for tests that run the bot (or a benchmark) in another process."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.llm_server", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: pick a free one)")
    parser.add_argument("--script", type=Path, help="JSON lines of responses, answered in order")
    args = parser.parse_args(argv)

    server = ChatServer(port=args.port)
    if args.script is not None:
        server.enqueue(*load_script(args.script))
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: done.set())
    with server:
        print(f"READY {server.port}", flush=True)
        while not done.wait(0.5):
            pass
    print(f"served {len(server.requests)} requests", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
