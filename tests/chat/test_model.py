"""ChatModel against the test Chat Completions server: thinking removed, reasoning-model parameters, image refusal,
stream refusal, and every malformed answer turned into `UnusableAnswer` (an `openai.OpenAIError`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from bot.chat.model import ChatModel, NotAStream, UnusableAnswer
from tests.support.llm_server import ChatServer, error, raw_body, reject_features, reply

MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
WITH_IMAGE: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": [{"type": "text", "text": "look"},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}
]


@pytest.fixture
async def client(chat_server: ChatServer) -> AsyncIterator[AsyncOpenAI]:
    client = AsyncOpenAI(base_url=chat_server.base_url, api_key="test", max_retries=0)
    yield client
    await client.close()


def model(client: AsyncOpenAI, **kwargs: object) -> ChatModel:
    return ChatModel(client, model="m", max_tokens=100, **kwargs)  # type: ignore[arg-type]


async def test_thinking_and_reasoning_content_are_not_part_of_the_answer(
    chat_server: ChatServer, client: AsyncOpenAI
) -> None:
    chat_server.enqueue(reply("<think>hmm</think>\n Visible. ", reasoning="long reasoning"))
    assert await model(client).reply(MESSAGES) == "Visible."


async def test_max_completion_tokens_is_learned_once_and_temperature_dropped(
    chat_server: ChatServer, client: AsyncOpenAI
) -> None:
    chat_server.responder = lambda body: reject_features(reply("ok"), "max_tokens", "temperature")
    chat = model(client, temperature=0.5)
    assert await chat.reply(MESSAGES) == "ok"
    assert await chat.reply(MESSAGES) == "ok"
    bodies = [r["body"] for r in chat_server.requests]
    assert [("max_tokens" in b, "temperature" in b) for b in bodies] == [
        (True, True), (False, True), (False, False), (False, False)
    ]
    assert bodies[-1]["max_completion_tokens"] == 100


async def test_an_explicit_max_tokens_setting_is_kept_even_when_refused(
    chat_server: ChatServer, client: AsyncOpenAI
) -> None:
    chat_server.responder = lambda body: reject_features(reply("ok"), "max_tokens")
    with pytest.raises(openai.BadRequestError):
        await model(client, limit_field="max_tokens").reply(MESSAGES)
    assert len(chat_server.requests) == 1


async def test_refused_images_are_retried_without_them(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.responder = lambda body: reject_features(reply("text only"), "images")
    answer = await model(client).complete(WITH_IMAGE)
    assert (answer.text, answer.images_dropped) == ("text only", True)
    assert chat_server.requests[-1]["body"]["messages"][0]["content"] == [{"type": "text", "text": "look"}]


async def test_an_error_that_is_not_about_images_is_not_retried(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.enqueue(error(401), reply("never"))
    with pytest.raises(openai.AuthenticationError):
        await model(client).complete(WITH_IMAGE)
    assert len(chat_server.requests) == 1


async def test_a_refused_stream_is_remembered(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.responder = lambda body: reject_features(reply("whole"), "stream")
    chat = model(client)
    assert await chat.open_stream(MESSAGES) is None
    assert await chat.open_stream(MESSAGES) is None
    assert len(chat_server.requests) == 1


async def test_a_stream_yields_content_only(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.enqueue(reply("<think>x</think>Streamed text.", reasoning="thinking"))
    stream = await model(client).open_stream(MESSAGES)
    assert stream is not None
    assert "".join([d async for d in stream.deltas()]) == "<think>x</think>Streamed text."


async def test_a_plain_body_for_a_stream_request_is_not_a_stream(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.enqueue(raw_body(b'{"choices":[{"message":{"content":"hi"}}]}'))
    stream = await model(client).open_stream(MESSAGES)
    assert stream is not None
    with pytest.raises(NotAStream):
        _ = [d async for d in stream.deltas()]


@pytest.mark.parametrize(
    "body",
    [
        raw_body(b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
        raw_body(b'{"choices":null}'),
        raw_body(b"[1, 2]"),
        raw_body(b"not json at all"),
        raw_body(b'{"choices":[{"message":{"content":{"nested":true}}}]}'),
        raw_body(b'{"choices":[]}'),
    ],
    ids=["html", "null-choices", "list", "not-json", "object-content", "no-choices"],
)
async def test_malformed_answers_raise_unusable_answer(
    chat_server: ChatServer, client: AsyncOpenAI, body: object
) -> None:
    chat_server.enqueue(body)  # type: ignore[arg-type]
    with pytest.raises(UnusableAnswer):
        await model(client).reply(MESSAGES)
    assert issubclass(UnusableAnswer, openai.OpenAIError)


async def test_null_usage_counts_are_fine(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.enqueue(raw_body(
        b'{"choices":[{"message":{"content":"fine"}}],"usage":{"prompt_tokens":null,"completion_tokens":null}}'
    ))
    assert await model(client).reply(MESSAGES) == "fine"
    chat = model(client)
    chat_server.enqueue(raw_body(
        b'{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":"many",'
        b'"prompt_tokens_details":{"cached_tokens":-3}}}'
    ))
    assert await chat.reply(MESSAGES) == "ok"
    assert (chat.usage.prompt_tokens, chat.usage.cached_tokens) == (0, 0)  # junk counts as nothing


LONG: list[ChatCompletionMessageParam] = [{"role": "system", "content": "Be brief. " * 600}]


async def test_usage_and_cached_tokens_add_up_for_whole_and_streamed_answers(
    chat_server: ChatServer, client: AsyncOpenAI
) -> None:
    chat_server.default = reply("fine")
    chat = model(client)
    await chat.reply([*LONG, {"role": "user", "content": "first"}])
    assert chat.usage.reported == 1 and chat.usage.prompt_tokens == chat_server.requests[-1]["prompt_tokens"]
    assert chat.usage.cached_tokens == 0
    stream = await chat.open_stream([*LONG, {"role": "user", "content": "second"}])
    assert stream is not None
    assert "".join([d async for d in stream.deltas()]) == "fine"
    assert chat_server.requests[-1]["body"]["stream_options"] == {"include_usage": True}
    assert chat.usage.reported == 2
    assert chat.usage.cached_tokens == chat_server.requests[-1]["cached_tokens"] >= 1024  # the shared system prompt
    assert chat.usage.prompt_tokens == sum(r["prompt_tokens"] for r in chat_server.requests)


async def test_an_endpoint_refusing_stream_options_still_streams(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.responder = lambda body: reject_features(reply("streamed"), "stream_options")
    chat = model(client)
    for _ in range(2):
        stream = await chat.open_stream(MESSAGES)
        assert stream is not None
        assert "".join([d async for d in stream.deltas()]) == "streamed"
    assert chat.streaming_supported and not chat.stream_usage_supported
    assert ["stream_options" in r["body"] for r in chat_server.requests] == [True, False, False]  # asked once
    assert chat.usage.reported == 0
    assert stream is not None and stream.tokens is None  # this endpoint never says: the budgets estimate


# --- tokens each call spent (for the daily budgets), and a model per server -----------------------------------


async def test_each_answer_carries_the_tokens_the_endpoint_reported(
    chat_server: ChatServer, client: AsyncOpenAI
) -> None:
    chat_server.enqueue(reply("Twelve chars"), reply("Streamed and counted."))
    chat = model(client)
    answer = await chat.complete(MESSAGES)
    assert answer.tokens is not None and answer.tokens.completion == 3 and answer.tokens.prompt > 0
    stream = await chat.open_stream(MESSAGES)
    assert stream is not None and stream.tokens is None  # known once the closing usage chunk arrived
    _ = [d async for d in stream.deltas()]
    assert stream.tokens is not None and stream.tokens.completion == 5
    assert chat.usage.completion_tokens == 8  # the process's total, for the metrics


async def test_no_usage_reported_means_no_tokens(chat_server: ChatServer, client: AsyncOpenAI) -> None:
    chat_server.enqueue(raw_body(b'{"choices":[{"message":{"content":"fine"}}]}'))
    answer = await model(client).complete(MESSAGES)
    assert answer.text == "fine" and answer.tokens is None


async def test_another_model_learns_what_its_endpoint_refuses_on_its_own(
    chat_server: ChatServer, client: AsyncOpenAI
) -> None:
    chat_server.responder = lambda body: (
        reject_features(reply("ok"), "max_tokens") if body.get("model") == "reasoner" else reply("ok")
    )
    chat = model(client, temperature=0.3)
    other = chat.for_model("reasoner")
    assert chat.for_model("reasoner") is other and other.for_model("m") is chat and chat.for_model("m") is chat
    assert await other.reply(MESSAGES) == "ok" and await chat.reply(MESSAGES) == "ok"
    bodies = [r["body"] for r in chat_server.requests]
    assert [(b["model"], "max_tokens" in b, b.get("temperature")) for b in bodies] == [
        ("reasoner", True, 0.3), ("reasoner", False, 0.3), ("m", True, 0.3)
    ]
    assert other.usage is chat.usage and chat.usage.reported == 2  # one total for the metrics
