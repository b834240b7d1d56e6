"""StreamingReply with a controllable clock: the edit interval, the 2,000-character limit and code fences on every
update, the final text, thinking held back mid-stream, failed edits, and errors mid-answer."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.chat.model import visible_answer
from bot.chat.streaming import WRITING_MARK, StreamingReply, reply_chunks, shown_so_far
from bot.chat.thinking import Reveal

INTERVAL = 1.0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)


@dataclass
class Op:
    at: float
    kind: str  # "post", "edit", "delete"
    index: int
    text: str


@dataclass
class Sink:
    clock: Clock
    ops: list[Op] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    fail_edit: int | None = None  # fail the n-th edit (1-based)
    edits: int = 0

    async def post(self, text: str, *, first: bool) -> int:
        assert len(text) <= 2000
        assert first == (not self.final), "the first message of the reply, and only it, answers the user"
        self.messages.append(text)
        self.ops.append(Op(self.clock(), "post", len(self.messages) - 1, text))
        return len(self.messages) - 1

    async def edit(self, message: int, text: str) -> None:
        self.edits += 1
        if self.fail_edit in (self.edits, -1):  # -1: every edit fails
            raise RuntimeError("edit refused")
        assert len(text) <= 2000
        self.messages[message] = text
        self.ops.append(Op(self.clock(), "edit", message, text))

    async def delete(self, message: int) -> None:
        self.messages[message] = ""
        self.ops.append(Op(self.clock(), "delete", message, ""))

    @property
    def final(self) -> list[str]:
        return [m for m in self.messages if m]


async def paced(pieces: Sequence[str], clock: Clock, gap: float) -> AsyncIterator[str]:
    for piece in pieces:
        clock.now += gap
        yield piece
        await asyncio.sleep(0)


def pieces_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def check_updates(sink: Sink) -> None:
    """Edits never closer than the interval (per message and per update), every text within limits."""
    edit_times = sorted({op.at for op in sink.ops if op.kind == "edit"})
    assert all(b - a >= INTERVAL - 1e-9 for a, b in itertools.pairwise(edit_times))
    for op in sink.ops:
        assert len(op.text) <= 2000
        if op.text.endswith(WRITING_MARK):  # a message still being written renders its code block closed
            assert op.text.count("```") % 2 == 0, op.text[-80:]


async def stream(
    text: str, *, size: int = 37, gap: float = 0.13, fail_edit: int | None = None, reveal: Reveal = Reveal.LIVE
) -> Sink:
    clock = Clock()
    sink = Sink(clock, fail_edit=fail_edit)
    streamer = StreamingReply(
        sink, interval=INTERVAL, empty_text="(empty)", clock=clock, sleep=clock.sleep, first_post_grace=0,
        reveal=reveal,
    )
    result = await streamer.run(paced(pieces_of(text, size), clock, gap))
    assert result.text == visible_answer(text)
    return sink


def long_text() -> str:
    prose = "\n\n".join(f"Paragraph {n}. " + "Some words that keep coming. " * 15 for n in range(4))
    code = "```js\n" + "\n".join(f"console.log({n}); // {'q' * 30}" for n in range(70)) + "\n```"
    return prose + "\n\n" + code + "\n\nDone."


async def test_updates_respect_the_interval_and_the_limits_and_end_on_the_final_chunks() -> None:
    text = long_text()
    sink = await stream(text)
    check_updates(sink)
    assert sink.final == reply_chunks(text)
    assert len(sink.final) >= 3
    assert any(WRITING_MARK in op.text for op in sink.ops)
    assert not any(WRITING_MARK in m for m in sink.final)
    assert sum(op.kind == "edit" for op in sink.ops) >= 5  # it really streamed


async def test_the_first_post_comes_with_the_first_text_not_after_an_interval() -> None:
    clock = Clock()
    sink = Sink(clock)
    streamer = StreamingReply(sink, interval=INTERVAL, empty_text="(empty)", clock=clock, sleep=clock.sleep)
    started = asyncio.Event()

    async def slow() -> AsyncIterator[str]:
        yield "Hello, "
        started.set()
        await asyncio.sleep(0.5)  # real time: longer than the first-post grace
        yield "world."

    await streamer.run(slow())
    assert sink.ops[0].kind == "post" and sink.ops[0].text == "Hello," + WRITING_MARK
    assert sink.final == ["Hello, world."]


async def test_a_failed_edit_still_ends_on_the_final_text() -> None:
    text = long_text()
    sink = await stream(text, fail_edit=2)
    assert sink.final == reply_chunks(text)
    check_updates(sink)


async def test_when_no_edit_works_the_reply_is_posted_again_as_a_reply() -> None:
    sink = await stream("Hello there, " * 10 + "world.", size=20, fail_edit=-1)
    assert sink.final == ["Hello there, " * 9 + "Hello there, world."]
    assert [op.kind for op in sink.ops] == ["post", "delete", "post"]  # the new post answers the user (Sink checks)


async def test_thinking_is_held_back_while_streaming() -> None:
    text = "<think>" + "secret reasoning " * 40 + "</think>The visible answer, " + "at length. " * 30
    sink = await stream(text, size=5)
    assert not any("secret" in op.text or "<th" in op.text for op in sink.ops)
    assert sink.final == [visible_answer(text)]


LONE_CLOSER_ANSWER = "secret reasoning, " * 40 + "</think>The visible answer, " + "at length. " * 60


async def test_a_lone_closer_stream_shows_its_reasoning_under_live_reveal() -> None:
    """The leak the reveal rules exist for: a server that strips the opener streams reasoning as plain text."""
    sink = await stream(LONE_CLOSER_ANSWER, size=5)
    assert any("secret" in op.text for op in sink.ops)
    assert sink.final == [visible_answer(LONE_CLOSER_ANSWER)]


async def test_after_closer_shows_nothing_before_the_closer_then_streams_the_answer() -> None:
    sink = await stream(LONE_CLOSER_ANSWER, size=5, reveal=Reveal.AFTER_CLOSER)
    assert not any("secret" in op.text for op in sink.ops)
    assert sink.ops[0].kind == "post" and sink.ops[0].text.endswith(WRITING_MARK)  # the answer still streams
    assert any(op.kind == "edit" for op in sink.ops)
    assert sink.final == [visible_answer(LONE_CLOSER_ANSWER)]


async def test_after_closer_without_any_closer_posts_the_answer_whole() -> None:
    text = "A plain answer this time, " * 30
    sink = await stream(text, size=5, reveal=Reveal.AFTER_CLOSER)
    assert [op.kind for op in sink.ops] == ["post"]
    assert sink.final == [visible_answer(text)]


async def test_whole_reveal_posts_only_the_final_text() -> None:
    sink = await stream(LONE_CLOSER_ANSWER, size=5, reveal=Reveal.WHOLE)
    assert [op.kind for op in sink.ops] == ["post"]
    assert sink.final == [visible_answer(LONE_CLOSER_ANSWER)]


@pytest.mark.parametrize("partial", ["Answer <", "Answer <thi", "Answer </think", "Answer <THINK"])
def test_a_half_received_tag_is_not_shown(partial: str) -> None:
    assert shown_so_far(partial) == "Answer"


async def test_an_error_mid_answer_removes_the_mark_and_is_raised() -> None:
    clock = Clock()
    sink = Sink(clock)
    streamer = StreamingReply(sink, interval=INTERVAL, empty_text="(empty)", clock=clock, sleep=clock.sleep)

    async def broken() -> AsyncIterator[str]:
        yield "Part of an answer"
        await asyncio.sleep(0.3)
        raise ConnectionError("dropped")

    with pytest.raises(ConnectionError):
        await streamer.run(broken())
    assert sink.final == ["Part of an answer"]


async def test_an_empty_answer_gets_the_empty_text() -> None:
    sink = await stream("<think>only thinking</think>   ")
    assert sink.final == ["(empty)"]


texts = st.lists(
    st.one_of(
        st.text(alphabet="abc xyz.\n", min_size=1, max_size=300),
        st.just("\n```python\n"), st.just("\n```\n"), st.just("<think>hidden</think>"),
    ),
    max_size=30,
).map("".join)


@settings(deadline=None, max_examples=40)
@given(text=texts, size=st.integers(1, 400), repeat=st.integers(1, 12))
def test_any_answer_streams_to_exactly_its_chunks(text: str, size: int, repeat: int) -> None:
    text = text * repeat
    sink = asyncio.run(stream(text, size=size, gap=0.4))
    check_updates(sink)
    assert sink.final == (reply_chunks(visible_answer(text)) or ["(empty)"])
