"""Chat features through the real bot's dispatch (`bot.dispatch("message", ...)` on the real MemoryBot) against the
test Chat Completions server: streaming, reasoning models, attachments, reply chains, auto-reply channels, replying
to a deleted message, and malformed answers."""

from __future__ import annotations

import base64
import itertools
import logging
from typing import Any

import discord
import pytest

from bot.chat.streaming import WRITING_MARK, reply_chunks
from bot.chat.thinking import ThinkingHabit
from cogs.chat import IMAGES_REFUSED_NOTE, LLM_ERROR_REPLY
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import (
    Harness,
    Sent,
    dispatch,
    extraction_input,
    http_error,
    make_attachment,
    make_member,
    make_user,
    next_id,
)
from tests.support.llm_server import raw_body, reject_features, reply

NO_MENTIONS = discord.AllowedMentions.none().to_dict()


def learned_texts(h: Harness) -> list[str]:
    return [turn["text"] for body in h.llm.extraction_requests for turn in extraction_input(body)["newTurns"]]


def every_text_shown(records: list[Sent]) -> list[str]:
    """Every content the bot ever showed in these messages: each post and each edit."""
    shown = []
    for record in records:
        shown.append(record.posted_content)
        shown.extend(edit.content for edit in record.edits)
    return shown


async def known_to_stream_plainly(h: Harness) -> None:
    """The chat model has answered before without streaming its reasoning: its replies stream from the first words
    (a model's very first reply is posted whole)."""
    assert h.resources.chat.thinking is not None
    await h.resources.chat.thinking.traits.record(h.resources.chat.model, ThinkingHabit.PLAIN)


def long_answer() -> str:
    prose = "\n\n".join(f"Paragraph {n}: " + "streamed words arrive in pieces. " * 14 for n in range(5))
    code = "```python\n" + "\n".join(f"print('line {n}')  # {'z' * 24}" for n in range(60)) + "\n```"
    return prose + "\n\n" + code + "\n\nThat is the whole answer."


# --- streaming ----------------------------------------------------------------------------------------------


async def test_a_streamed_reply_is_edited_at_most_once_per_interval_and_ends_on_the_full_answer(
    make_harness: MakeHarness,
) -> None:
    interval = 0.3
    h = await make_harness(stream_edit_seconds=interval, memory_max_turn_chars=20_000)
    await known_to_stream_plainly(h)
    s = make_scene(h)
    answer = long_answer()
    assert len(answer) > 5000
    h.llm.say(reply(answer, first_token_seconds=0.1, stream_seconds=2.4, chunks=40))
    message = h.discord.mention_bot(s.general, s.alice, "explain with a long example")
    await dispatch(h.bot, "message", message)

    [request] = h.llm.chat_requests
    assert request["stream"] is True
    records = h.discord.replies_to(message)
    assert [r.content for r in records] == reply_chunks(answer)  # exactly what a whole reply is sent as
    assert len(records) >= 3
    assert records[0].edits, "the first message was posted before the answer was complete"
    assert any(WRITING_MARK in text for text in every_text_shown(records))
    assert not any(WRITING_MARK in r.content for r in records)  # the mark is gone at the end
    for record in records:
        for content in [*(e.content for e in record.edits), record.content]:
            assert len(content) <= 2000
            assert content.count("```") % 2 == 0  # never a broken code block, even mid-stream
        assert record.kwargs["allowed_mentions"].to_dict() == NO_MENTIONS
        assert all(e.kwargs["allowed_mentions"].to_dict() == NO_MENTIONS for e in record.edits)
        times = [record.posted_at, *(e.at for e in record.edits)]
        gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
        assert all(gap >= interval * 0.95 for gap in gaps), gaps
    updates = sorted({round(e.at, 2) for r in records for e in r.edits})
    clusters = [t for n, t in enumerate(updates) if n == 0 or t - updates[n - 1] > interval / 2]
    assert all(b - a >= interval * 0.95 for a, b in itertools.pairwise(clusters))
    await h.settle()
    assert learned_texts(h)[-1] == answer  # memory learns the final text only


async def test_a_failed_edit_mid_stream_still_completes_the_reply(make_harness: MakeHarness) -> None:
    h = await make_harness(stream_edit_seconds=0.2, memory_max_turn_chars=20_000)
    await known_to_stream_plainly(h)
    s = make_scene(h)
    answer = long_answer()
    h.llm.say(reply(answer, stream_seconds=1.5, chunks=30))
    failed: list[str] = []

    def fail_first_edit(record: Sent, content: str) -> BaseException | None:
        if not failed:
            failed.append(content)
            return http_error(500, "Internal Server Error")
        return None

    h.discord.edit_error = fail_first_edit
    message = h.discord.message(s.alice_dm, s.alice_user, "a long one please")
    await dispatch(h.bot, "message", message)
    assert failed, "an edit was attempted and failed"
    assert [r.content for r in h.discord.replies_to(message)] == reply_chunks(answer)
    assert h.discord.reply_text(message).count("That is the whole answer.") == 1
    await h.settle()
    assert learned_texts(h)[-1] == answer


async def test_a_server_that_refuses_streaming_gets_one_whole_message_and_is_not_asked_again(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness()
    s = make_scene(h)
    h.llm.chat_reply = lambda body: reject_features(reply("One whole answer."), "stream")
    first = h.discord.message(s.alice_dm, s.alice_user, "hello")
    await dispatch(h.bot, "message", first)
    assert [r.content for r in h.discord.replies_to(first)] == ["One whole answer."]
    assert h.discord.replies_to(first)[0].edits == []
    assert [body.get("stream") for body in h.llm.chat_requests] == [True, None]
    second = h.discord.message(s.alice_dm, s.alice_user, "again")
    await dispatch(h.bot, "message", second)
    assert h.discord.reply_text(second) == "One whole answer."
    assert [body.get("stream") for body in h.llm.chat_requests] == [True, None, None]


async def test_a_server_that_ignores_stream_and_answers_plain_json_still_gets_answered(scene: Scene) -> None:
    h = scene.h
    plain = (b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,'
             b'"message":{"role":"assistant","content":"Plain answer."},"finish_reason":"stop"}]}')
    h.llm.say(raw_body(plain), raw_body(plain))
    message = h.discord.message(scene.alice_dm, scene.alice_user, "hi")
    await dispatch(h.bot, "message", message)
    assert h.discord.reply_text(message) == "Plain answer."
    second = h.discord.message(scene.alice_dm, scene.alice_user, "again")
    await dispatch(h.bot, "message", second)
    assert h.discord.reply_text(second) == "Happy to help with that!"
    assert [body.get("stream") for body in h.llm.chat_requests] == [True, None, None]  # remembered


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_thinking_is_never_shown_or_learned(make_harness: MakeHarness, stream: bool) -> None:
    h = await make_harness(stream_replies=stream, stream_edit_seconds=0.2)
    s = make_scene(h)
    content = "<think>plan: secret-thought-1 and more secret-thought-2</think>\n\nThe answer is 42."
    h.llm.say(reply(content, reasoning="secret-reasoning-3", stream_seconds=1.0, chunks=12))
    message = h.discord.message(s.alice_dm, s.alice_user, "what is the answer?")
    await dispatch(h.bot, "message", message)
    records = h.discord.replies_to(message)
    assert [r.content for r in records] == ["The answer is 42."]
    assert not any("secret" in text or "think>" in text for text in every_text_shown(records))
    await h.settle()
    assert learned_texts(h) == ["what is the answer?", "The answer is 42."]


# --- reasoning models ---------------------------------------------------------------------------------------


async def test_a_reasoning_model_that_refuses_max_tokens_and_temperature_is_answered(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(chat_temperature=0.7)
    s = make_scene(h)
    h.llm.chat_reply = lambda body: reject_features(reply("Reasoned answer."), "max_tokens", "temperature")
    first = h.discord.message(s.alice_dm, s.alice_user, "think about it")
    await dispatch(h.bot, "message", first)
    assert h.discord.reply_text(first) == "Reasoned answer."
    second = h.discord.message(s.alice_dm, s.alice_user, "and again")
    await dispatch(h.bot, "message", second)
    assert h.discord.reply_text(second) == "Reasoned answer."
    bodies = h.llm.chat_requests
    last = bodies[-1]
    assert "max_tokens" not in last and last["max_completion_tokens"] == h.settings.chat_max_tokens
    assert "temperature" not in last
    assert len(bodies) == 4  # three tries for the first reply (learning both refusals), one for the second


async def test_temperature_is_sent_only_when_configured(make_harness: MakeHarness) -> None:
    h = await make_harness()
    s = make_scene(h)
    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, "hi"))
    assert "temperature" not in h.llm.chat_requests[0]
    configured = await make_harness(chat_temperature=0.3, chat_token_parameter="max_completion_tokens",
                                    data_dir=h.settings.data_dir.parent / "other")
    s2 = make_scene(configured)
    await dispatch(configured.bot, "message", configured.discord.message(s2.alice_dm, s2.alice_user, "hi"))
    body = configured.llm.chat_requests[-1]
    assert body["temperature"] == 0.3 and "max_tokens" not in body and "max_completion_tokens" in body


# --- malformed answers and deleted messages ------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_an_html_answer_gets_one_friendly_message_one_log_line_and_the_users_turn_is_learned(
    make_harness: MakeHarness, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(stream_replies=stream)
    s = make_scene(h)
    html = raw_body(b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")
    h.llm.say(*[html] * (2 if stream else 1))  # streamed: the stream request, then the whole-answer fallback
    message = h.discord.message(s.alice_dm, s.alice_user, "I adopted a greyhound called Pixel")
    with caplog.at_level(logging.INFO):
        await dispatch(h.bot, "message", message)
    assert h.discord.reply_text(message) == LLM_ERROR_REPLY
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 1 and failures[0].exc_info is None and failures[0].name == "cogs.chat"
    assert "Traceback" not in caplog.text and "greyhound" not in caplog.text
    await h.settle()
    assert learned_texts(h) == ["I adopted a greyhound called Pixel"]  # never the failure text
    later = h.discord.message(s.alice_dm, s.alice_user, "are you back?")
    await dispatch(h.bot, "message", later)
    assert h.discord.reply_text(later) == "Happy to help with that!"
    assert h.llm.chat_requests[-1].get("stream") is (True if stream else None)  # a passing error page changes nothing


async def test_null_usage_counts_do_not_break_a_reply(
    make_harness: MakeHarness, capsys: pytest.CaptureFixture[str]
) -> None:
    h = await make_harness(stream_replies=False)
    s = make_scene(h)
    h.llm.say(raw_body(
        b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":'
        b'{"role":"assistant","content":"Fine answer."},"finish_reason":"stop"}],'
        b'"usage":{"prompt_tokens":null,"completion_tokens":null,"total_tokens":null}}'
    ))
    message = h.discord.message(s.alice_dm, s.alice_user, "hello")
    await dispatch(h.bot, "message", message)
    assert h.discord.reply_text(message) == "Fine answer."
    assert "Logging error" not in capsys.readouterr().err


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_a_message_deleted_while_the_bot_thinks_still_gets_its_reply(
    make_harness: MakeHarness, stream: bool
) -> None:
    h = await make_harness(stream_replies=stream)
    s = make_scene(h)
    message = h.discord.mention_bot(s.general, s.alice, "I'm learning the cello")
    h.llm.on_chat = lambda body: h.discord.delete(message)
    await dispatch(h.bot, "message", message)
    [sent] = h.discord.replies_to(message)
    assert sent.content == "Happy to help with that!"
    assert sent.kwargs["reference"].fail_if_not_exists is False
    await h.settle()
    assert learned_texts(h) == ["I'm learning the cello", "Happy to help with that!"]


# --- auto-reply channels ------------------------------------------------------------------------------------


async def test_auto_reply_channels_and_their_threads_are_answered_without_a_mention(
    make_harness: MakeHarness,
) -> None:
    auto_id = next_id()
    h = await make_harness(auto_reply_channel_ids=frozenset({auto_id}), rate_limit_messages=3)
    s = make_scene(h)
    auto = h.discord.text_channel(s.guild, auto_id, name="ask-the-bot")
    thread = h.discord.thread(auto)
    other = h.discord.text_channel(s.guild)
    robot = make_member(make_user(name="OtherBot", bot=True), s.guild)
    in_auto = h.discord.message(auto, s.alice, "how do I boil an egg?")
    in_thread = h.discord.message(thread, s.alice, "and a soft one?")
    elsewhere = h.discord.message(other, s.alice, "just chatting")
    from_bot = h.discord.message(auto, robot, "beep")
    for message in (in_auto, in_thread, elsewhere, from_bot):
        await dispatch(h.bot, "message", message)
    assert [len(h.discord.replies_to(m)) for m in (in_auto, in_thread, elsewhere, from_bot)] == [1, 1, 0, 0]
    assert len(h.llm.chat_requests) == 2
    over = [h.discord.message(auto, s.alice, f"question {n}") for n in range(3)]
    for message in over:
        await dispatch(h.bot, "message", message)
    assert len(h.llm.chat_requests) == 3  # the rate limit (3 per window) still applies
    assert "faster" in h.discord.reply_text(over[1])


# --- attachments --------------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
JPEG = b"\xff\xd8\xff\xe0" + b"\x01" * 64


def last_user_content(h: Harness, request: int = -1) -> Any:
    return h.llm.chat_requests[request]["messages"][-1]["content"]


async def test_images_go_to_a_vision_model_as_data_urls_within_the_count_and_size_limits(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(vision=True, vision_max_images=2, vision_max_image_bytes=1000)
    s = make_scene(h)
    huge = make_attachment("huge.png", PNG, "image/png", size=5000)
    images = [make_attachment("cat.png", PNG, "image/png"), huge, make_attachment("dog.jpg", JPEG, None),
              make_attachment("bird.webp", PNG, "image/webp")]
    message = h.discord.message(s.alice_dm, s.alice_user, "what are these?", attachments=images)
    await dispatch(h.bot, "message", message)
    content = last_user_content(h)
    assert isinstance(content, list)
    urls = [part["image_url"]["url"] for part in content if part["type"] == "image_url"]
    assert urls == [f"data:image/png;base64,{base64.b64encode(PNG).decode()}",
                    f"data:image/jpeg;base64,{base64.b64encode(JPEG).decode()}"]
    huge.read.assert_not_awaited()  # too large: never downloaded
    text = content[0]["text"]
    assert "huge.png (over 1 KB)" in text and "bird.webp (more than 2 images)" in text
    notes = [r.content for r in h.discord.bot_messages(s.alice_dm) if r.content.startswith("-#")]
    assert notes == ["-# Not read: huge.png (over 1 KB); bird.webp (more than 2 images)."]


async def test_a_server_that_refuses_images_is_asked_again_without_them_and_the_user_is_told(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(vision=True)
    s = make_scene(h)
    h.llm.chat_reply = lambda body: reject_features(reply("From the text alone: hello!"), "images")
    message = h.discord.message(s.alice_dm, s.alice_user, "look", attachments=[make_attachment("a.png", PNG)])
    await dispatch(h.bot, "message", message)
    assert h.discord.replies_to(message)[0].content == "From the text alone: hello!"
    assert IMAGES_REFUSED_NOTE in h.discord.reply_text(message)
    first, second = h.llm.chat_requests
    assert any(part["type"] == "image_url" for part in first["messages"][-1]["content"])
    assert all(part["type"] != "image_url" for part in second["messages"][-1]["content"])


async def test_without_vision_images_are_named_but_not_downloaded(scene: Scene) -> None:
    h = scene.h
    image = make_attachment("photo.png", PNG, "image/png")
    message = h.discord.message(scene.alice_dm, scene.alice_user, "see?", attachments=[image])
    await dispatch(h.bot, "message", message)
    content = last_user_content(h)
    assert isinstance(content, str) and "photo.png" in content
    image.read.assert_not_awaited()


async def test_text_attachments_are_read_into_the_prompt_and_never_into_memory(make_harness: MakeHarness) -> None:
    h = await make_harness(text_attachment_max_bytes=2000, text_attachment_max_files=3)
    s = make_scene(h)
    files = [
        make_attachment("notes.md", "# Plan\nattached-token-7781 ✓".encode(), "text/markdown; charset=utf-8"),
        make_attachment("legacy.txt", "caf\xe9 cr\xe8me".encode("cp1252"), "text/plain"),
        make_attachment("big.log", b"x" * 3000, "text/plain"),
        make_attachment("blob.py", b"\x00\x01\x02binary\x00", None),
        make_attachment("archive.zip", b"PK\x03\x04", "application/zip"),
        make_attachment("gone.txt", b"", "text/plain", size=10, fail=http_error(404, "Not Found")),
    ]
    message = h.discord.message(s.alice_dm, s.alice_user, "summarise my files", attachments=files)
    await dispatch(h.bot, "message", message)
    content = last_user_content(h)
    assert content.startswith("Alice: summarise my files")
    assert '<attachment name="notes.md">\n# Plan\nattached-token-7781 ✓\n</attachment>' in content
    assert "café crème" in content
    for skipped in ("big.log (over 2 KB)", "blob.py (not a text file)", "archive.zip (not a text file or an image)",
                    "gone.txt (could not be downloaded)"):
        assert skipped in content
    files[2].read.assert_not_awaited()
    await h.settle()
    assert learned_texts(h) == ["summarise my files", "Happy to help with that!"]
    for path in h.settings.data_dir.rglob("*"):
        if path.is_file():
            assert b"attached-token-7781" not in path.read_bytes(), path


async def test_more_text_files_than_the_limit_are_left_out_and_named(make_harness: MakeHarness) -> None:
    h = await make_harness(text_attachment_max_files=1)
    s = make_scene(h)
    files = [make_attachment("a.txt", b"first file"), make_attachment("b.txt", b"second file")]
    message = h.discord.message(s.alice_dm, s.alice_user, "two files", attachments=files)
    await dispatch(h.bot, "message", message)
    content = last_user_content(h)
    assert "first file" in content and "second file" not in content and "b.txt (more than 1 file)" in content


# --- reply chains -------------------------------------------------------------------------------------------


async def test_a_reply_chain_longer_than_the_bound_brings_its_nearest_messages_into_the_context(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(history_messages=4, reply_chain_messages=3)
    s = make_scene(h)
    me = h.discord.me
    previous = h.discord.message(s.general, s.bob, "chain-0 what's the best pizza dough?")
    for n in range(1, 6):
        author = me if n % 2 else s.bob
        previous = h.discord.reply_to(s.general, author, previous, f"chain-{n} answer number {n}", resolved=n % 2 == 0)
    for n in range(10):
        h.discord.message(s.general, s.bob, f"filler {n}")
    message = h.discord.reply_to(s.general, s.alice, previous, "so which flour, then?")
    await dispatch(h.bot, "message", message)
    texts = [m["content"] for m in h.llm.chat_requests[0]["messages"][1:]]
    assert texts[:3] == ["chain-3 answer number 3", "Bobby: chain-4 answer number 4", "chain-5 answer number 5"]
    assert not any("chain-2" in t or "chain-0" in t for t in texts)  # beyond the bound
    assert [t for t in texts[3:] if "filler" in t] == [f"Bobby: filler {n}" for n in range(6, 10)]
    assert texts[-1] == "Alice: so which flour, then?"
    fetches = s.general.fetch_message.await_count
    again = h.discord.reply_to(s.general, s.alice, previous, "or rye?")
    await dispatch(h.bot, "message", again)
    assert s.general.fetch_message.await_count == fetches  # the chain comes from the cache


async def test_the_reply_chain_is_bounded_by_characters(make_harness: MakeHarness) -> None:
    h = await make_harness(history_messages=0, reply_chain_messages=10, reply_chain_chars=120)
    s = make_scene(h)
    previous = h.discord.message(s.general, s.bob, "root " + "r" * 60)
    for n in range(4):
        previous = h.discord.reply_to(s.general, s.bob, previous, f"link-{n} " + "l" * 40)
    message = h.discord.reply_to(s.general, s.alice, previous, f"<@{h.discord.me.id}> and?",
                                 mentions=[make_member(h.discord.me, s.guild)])
    await dispatch(h.bot, "message", message)
    texts = [m["content"] for m in h.llm.chat_requests[0]["messages"][1:-1]]
    assert texts == [f"Bobby: link-2 {'l' * 40}", f"Bobby: link-3 {'l' * 40}"]
    assert sum(len(t) for t in texts) <= 120
