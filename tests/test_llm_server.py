"""The fake OpenAI server must look real to the real ``openai`` client, or tests built on it prove nothing."""

from __future__ import annotations

import asyncio
import json
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.support.llm_server import (
    CACHE_BLOCK_TOKENS,
    CACHE_MIN_TOKENS,
    REJECT_RESPONSE_FORMAT_MESSAGE,
    ChatServer,
    Gate,
    PrefixCache,
    Reply,
    drop,
    dump_script,
    error,
    extraction,
    held,
    huge,
    json_reply,
    junk,
    load_script,
    prompt_text,
    raw_body,
    reject_response_format_then,
    reply,
    stall,
    truncated,
)

pytest_plugins = ["tests.conftest_llm"]

ROOT = Path(__file__).resolve().parents[1]
MESSAGES: list[ChatCompletionMessageParam] = [
    {"role": "system", "content": "You are terse."},  # 14 chars -> 3 + 4
    {"role": "user", "content": "What is the capital of France?"},  # 30 chars -> 7 + 4
]
EXPECTED_PROMPT_TOKENS = 18


def make_client(base_url: str, timeout: float = 5.0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=timeout)


@pytest.fixture
async def client(chat_server: ChatServer) -> AsyncIterator[openai.AsyncOpenAI]:
    async with make_client(chat_server.base_url) as c:
        yield c


async def ask(client: openai.AsyncOpenAI, **kwargs: Any) -> str | None:
    completion = await client.chat.completions.create(model="test-model", messages=MESSAGES, **kwargs)
    content: str | None = completion.choices[0].message.content
    return content


async def test_reply_round_trips_content_usage_and_is_recorded(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    chat_server.enqueue(reply("Paris."))
    completion = await client.chat.completions.create(model="some-model", messages=MESSAGES)

    assert completion.choices[0].message.content == "Paris."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "some-model"
    assert completion.id.startswith("chatcmpl-")
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == EXPECTED_PROMPT_TOKENS
    assert completion.usage.total_tokens == EXPECTED_PROMPT_TOKENS + completion.usage.completion_tokens
    [recorded] = chat_server.requests
    assert recorded["body"]["messages"] == MESSAGES
    assert recorded["prompt_tokens"] == EXPECTED_PROMPT_TOKENS
    assert recorded["headers"]["authorization"] == "Bearer test"
    assert recorded["path"] == "/v1/chat/completions"


async def test_json_reply_and_extraction_parse(chat_server: ChatServer, client: openai.AsyncOpenAI) -> None:
    chat_server.enqueue(
        json_reply({"a": [1, 2]}),
        extraction(work="Writes Go", facts=[("Prefers short answers", "preference", 0.8)], remove=["fact_1"]),
    )

    assert json.loads(await ask(client) or "") == {"a": [1, 2]}
    answer = json.loads(await ask(client) or "")
    assert answer["user"]["workContext"] == {"summary": "Writes Go", "shouldUpdate": True}
    assert answer["user"]["topOfMind"] == {"summary": "", "shouldUpdate": False}
    assert set(answer["history"]) == {"recentMonths", "earlierContext", "longTermBackground"}
    assert answer["newFacts"] == [
        {"content": "Prefers short answers", "category": "preference", "confidence": 0.8}
    ]
    assert answer["factsToRemove"] == ["fact_1"]


async def test_default_is_an_empty_extraction_and_responder_fills_in_after_the_queue(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    default = json.loads(await ask(client) or "")
    sections = [*default["user"].values(), *default["history"].values()]
    assert len(sections) == 6
    assert not any(s["shouldUpdate"] for s in sections)
    assert default["newFacts"] == []
    assert default["factsToRemove"] == []

    chat_server.responder = lambda body: reply(f"{len(body['messages'])} messages")
    chat_server.enqueue(reply("queued first"))
    assert await ask(client) == "queued first"
    assert await ask(client) == "2 messages"
    chat_server.responder = lambda body: None  # declines: the default answers
    assert json.loads(await ask(client) or "") == default


async def test_server_error_raises_internal_server_error(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    chat_server.enqueue(error(500, message="boom"))
    with pytest.raises(openai.InternalServerError) as caught:
        await ask(client)
    assert caught.value.status_code == 500
    assert "boom" in caught.value.message


async def test_rate_limit_raises_and_delivers_retry_after(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    chat_server.enqueue(error(429, retry_after=7), error(429, headers={"Retry-After": "2"}))
    for expected in ("7", "2"):
        with pytest.raises(openai.RateLimitError) as caught:
            await ask(client)
        assert caught.value.response.headers["retry-after"] == expected


async def test_stall_times_the_client_out_and_stop_does_not_wait_for_it() -> None:
    server = ChatServer().start()
    try:
        server.enqueue(stall(60))
        async with make_client(server.base_url, timeout=0.3) as slow_client:
            with pytest.raises(openai.APITimeoutError):
                await ask(slow_client)
    finally:
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 1.5
    assert not server.running


async def test_stall_answers_after_the_delay(chat_server: ChatServer, client: openai.AsyncOpenAI) -> None:
    chat_server.enqueue(stall(0.2, reply("late")))
    started = time.monotonic()
    assert await ask(client) == "late"
    assert time.monotonic() - started >= 0.2


async def test_held_answers_wait_for_the_gate_and_the_test_can_await_their_arrival(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    gate = Gate()
    chat_server.enqueue(held(gate, reply("first")), held(gate, reply("second")))
    tasks = [asyncio.create_task(ask(client)) for _ in range(2)]
    try:
        await gate.reached(2)
        assert gate.arrived == 2 and not any(task.done() for task in tasks)
        with pytest.raises(TimeoutError, match="expected 3 requests at the gate"):
            await gate.reached(3, timeout=0.05)
        gate.open()
        assert sorted(str(answer) for answer in await asyncio.gather(*tasks)) == ["first", "second"]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    chat_server.enqueue(held(gate, reply("open already")))
    assert await ask(client) == "open already"  # an open gate holds nothing


async def test_stop_releases_a_held_answer_with_a_503() -> None:
    server = ChatServer().start()
    gate = Gate()
    try:
        server.enqueue(held(gate))
        async with make_client(server.base_url) as c:
            task = asyncio.create_task(ask(c))
            await gate.reached(1)
            started = time.monotonic()
            await asyncio.get_running_loop().run_in_executor(None, server.stop)
            assert time.monotonic() - started < 1.5
            with pytest.raises(openai.InternalServerError):
                await task
    finally:
        server.stop()


async def test_drop_raises_connection_error_and_server_keeps_serving(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    chat_server.enqueue(drop(), reply("still here"))
    with pytest.raises(openai.APIConnectionError):
        await ask(client)
    assert await ask(client) == "still here"


async def test_streaming_yields_the_content_and_usage(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    content = "A streamed answer that is long enough to arrive in several chunks. " * 3
    chat_server.enqueue(reply(content))
    stream = await client.chat.completions.create(
        model="test-model", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    pieces, finish, usage = [], None, None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        usage = chunk.usage or usage
    assert "".join(pieces) == content
    assert len(pieces) > 3
    assert finish == "stop"
    assert usage is not None
    assert usage.prompt_tokens == EXPECTED_PROMPT_TOKENS


async def test_reject_response_format_then_supports_a_fallback_retry(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    chat_server.enqueue(reject_response_format_then(reply("plain mode")))
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(client, response_format={"type": "json_object"})
    assert REJECT_RESPONSE_FORMAT_MESSAGE in caught.value.message
    assert chat_server.queued == 1  # still waiting for the retry without response_format
    assert await ask(client) == "plain mode"
    assert chat_server.queued == 0


async def test_junk_bodies_reach_the_client(chat_server: ChatServer, client: openai.AsyncOpenAI) -> None:
    """Pins how the client treats junk, which is what the bot's LLM wrapper must guard against."""
    chat_server.enqueue(junk("<html>oops</html>"), raw_body(b"{not json"))
    # With a non-JSON content type the client hands back the raw text instead of a completion.
    answer: object = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert answer == "<html>oops</html>"
    with pytest.raises(ValueError, match="property name"):
        await ask(client)


async def test_truncated_and_huge_contents(chat_server: ChatServer, client: openai.AsyncOpenAI) -> None:
    chat_server.enqueue(truncated(), huge(300_000))
    completion = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert completion.choices[0].finish_reason == "length"
    cut = completion.choices[0].message.content or ""
    assert cut.startswith('{"user"')
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut)
    assert len(await ask(client) or "") == 300_000


async def test_await_requests_synchronises_without_sleeping(
    chat_server: ChatServer, client: openai.AsyncOpenAI
) -> None:
    chat_server.enqueue(stall(5), stall(5))  # held open: the records must appear on arrival, not on answer
    tasks = [asyncio.create_task(ask(client)) for _ in range(2)]
    try:
        records = await chat_server.await_requests(2, timeout=3)
        assert len(records) == 2
        assert not any(t.done() for t in tasks)
        with pytest.raises(TimeoutError, match="expected 3 requests"):
            await chat_server.await_requests(3, timeout=0.05)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_wait_for_requests_blocks_until_requests_arrive(chat_server: ChatServer) -> None:
    """A sync test, with the client on another thread's event loop."""
    chat_server.enqueue(reply("one"), reply("two"))
    answers: list[str | None] = []

    async def talk() -> None:
        async with make_client(chat_server.base_url) as c:
            answers.extend([await ask(c), await ask(c)])

    worker = threading.Thread(target=asyncio.run, args=(talk(),))
    worker.start()
    records = chat_server.wait_for_requests(2, timeout=5)
    worker.join(5)
    assert [r["body"]["model"] for r in records] == ["test-model", "test-model"]
    assert answers == ["one", "two"]
    with pytest.raises(TimeoutError):
        chat_server.wait_for_requests(3, timeout=0.05)


async def test_paths_without_v1_models_listing_and_clear(chat_server: ChatServer) -> None:
    async with make_client(f"http://127.0.0.1:{chat_server.port}") as bare:
        chat_server.enqueue(reply("ok"))
        assert await ask(bare) == "ok"
        assert [m.id async for m in bare.models.list()] == ["test-model"]
    assert chat_server.requests[0]["path"] == "/chat/completions"
    chat_server.enqueue(reply("unused"))
    chat_server.clear()
    assert chat_server.requests == []
    assert chat_server.queued == 0


async def test_restart_keeps_the_port(chat_server: ChatServer, client: openai.AsyncOpenAI) -> None:
    port = chat_server.port
    chat_server.stop()
    with pytest.raises(openai.APIConnectionError):
        await ask(client)
    chat_server.start()
    chat_server.enqueue(reply("back"))
    assert chat_server.port == port
    assert await ask(client) == "back"


def test_script_round_trip(tmp_path: Path) -> None:
    script = [
        reply("hi", finish_reason="length"),
        extraction(top="Moving house", facts=[("Has a cat", "personal")]),
        error(429, retry_after=1.5),
        error(503, body="plain text"),
        stall(0.5, then=drop()),
        raw_body(b"\xff\x00 not utf-8", status=502, content_type="text/plain"),
        reject_response_format_then(truncated()),
    ]
    path = tmp_path / "script.jsonl"
    dump_script(path, script)
    assert load_script(path) == script


def test_subprocess_mode_serves_the_script_until_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('# comment\n{"kind": "reply", "content": "from a script"}\n\n', encoding="utf-8")
    command = [sys.executable, "-m", "tests.support.llm_server", "--port", "0", "--script", str(script)]
    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            with selectors.DefaultSelector() as selector:
                selector.register(proc.stdout, selectors.EVENT_READ)
                assert selector.select(timeout=10), "no READY line within 10s"
            word, port = proc.stdout.readline().split()
            assert word == "READY"

            async def talk() -> list[str | None]:
                async with make_client(f"http://127.0.0.1:{port}/v1") as c:
                    return [await ask(c), await ask(c)]

            scripted, default = asyncio.run(talk())
            assert scripted == "from a script"
            assert json.loads(default or "")["newFacts"] == []

            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=5)
            assert proc.returncode == 0
            assert "served 2 requests" in stderr
        finally:
            if proc.poll() is None:
                proc.kill()


def test_reply_is_a_plain_dataclass() -> None:
    """Factories return comparable values, so scripts can be built, compared and dumped."""
    assert reply("x") == Reply("x")
    assert huge(10) == Reply("x" * 10)


# --- prompt caching, reported as OpenAI does -----------------------------------------------------------------

LONG_SYSTEM = "You are a careful assistant. " * 300  # 8,700 characters: about 2,175 tokens by the 4-character rule


def conversation(*turns: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "system", "content": LONG_SYSTEM}, *({"role": "user", "content": t} for t in turns)]


async def cached_tokens_of(client: openai.AsyncOpenAI, messages: list[ChatCompletionMessageParam],
                           model: str = "test-model") -> tuple[int, int]:
    completion = await client.chat.completions.create(model=model, messages=messages)
    assert completion.usage is not None and completion.usage.prompt_tokens_details is not None
    return completion.usage.prompt_tokens, completion.usage.prompt_tokens_details.cached_tokens or 0


async def test_cached_tokens_are_the_earlier_shared_prefix_in_128_token_blocks(
    client: openai.AsyncOpenAI, chat_server: ChatServer
) -> None:
    chat_server.default = reply("ok")
    _, first_cached = await cached_tokens_of(client, conversation("hello"))
    assert first_cached == 0  # nothing seen before
    total, cached = await cached_tokens_of(client, conversation("hello", "and a second question"))
    shared = len(prompt_text({"messages": conversation("hello")})) // 4
    assert cached % CACHE_BLOCK_TOKENS == 0 and CACHE_MIN_TOKENS <= cached <= shared < total
    assert shared - cached < CACHE_BLOCK_TOKENS  # every whole block of the shared prefix counts
    assert chat_server.requests[-1]["cached_tokens"] == cached
    # A change at the start leaves nothing to reuse; another model has its own cache.
    assert (await cached_tokens_of(client, [{"role": "system", "content": "X" + LONG_SYSTEM}]))[1] == 0
    assert (await cached_tokens_of(client, conversation("hello"), model="other-model"))[1] == 0
    assert (await cached_tokens_of(client, conversation("hello"), model="other-model"))[1] > 0


async def test_short_prompts_are_never_cached(client: openai.AsyncOpenAI, chat_server: ChatServer) -> None:
    chat_server.default = reply("ok")
    short = [{"role": "system", "content": "x" * 3000}, {"role": "user", "content": "hi"}]
    for _ in range(2):
        assert (await cached_tokens_of(client, short))[1] == 0  # identical, but under 1,024 tokens


async def test_a_stream_reports_cached_tokens_in_its_usage_chunk(
    client: openai.AsyncOpenAI, chat_server: ChatServer
) -> None:
    chat_server.default = reply("streamed answer")
    await cached_tokens_of(client, conversation("hello"))
    stream = await client.chat.completions.create(
        model="test-model", messages=conversation("hello", "more"), stream=True,
        stream_options={"include_usage": True},
    )
    usage = None
    async for chunk in stream:
        usage = chunk.usage or usage
    assert usage is not None and usage.prompt_tokens_details is not None
    assert (usage.prompt_tokens_details.cached_tokens or 0) >= CACHE_MIN_TOKENS


def test_prefix_cache_counts_only_whole_blocks_from_the_start() -> None:
    cache = PrefixCache(block_chars=4)
    assert cache.match("m", "abcdefghij") == 0
    assert cache.match("m", "abcdefgXij") == 4  # the second block differs: only the first is reused
    assert cache.match("m", "abcdefgh") == 8
    assert cache.match("m", "Xbcdefgh") == 0
    assert cache.match("n", "abcdefgh") == 0
