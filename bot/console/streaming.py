"""The console's reply: streamed to the terminal as it arrives when the endpoint streams, else printed whole.

It uses the same model calls and display rules as Discord's streaming (`ChatModel.open_stream`, `shown_so_far`,
`may_show`), so trying an endpoint in the console shows how it streams: the words appear as they come, thinking is
never shown, and a model whose reasoning arrives as plain text is held back exactly as on Discord. The final text is
`visible_answer` of the whole answer, the same as a reply that was not streamed; when what was shown early is not
a start of it (rare: a tag that turned out to be thinking), the final text is printed again on its own line.
An endpoint that refuses streaming, or answers a stream request without one, gets whole answers from then on and
the console says so once; after the first streamed answer it says how long the first words and the whole answer
took, which is what shows whether an endpoint streams well.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from openai.types.chat import ChatCompletionMessageParam

from bot.chat.model import ChatModel, NotAStream, visible_answer
from bot.chat.streaming import shown_so_far
from bot.chat.thinking import may_show

PREFIX = "bot> "
NOT_STREAMING_NOTE = "(this endpoint does not stream; the console prints whole answers from now on)"

Write = Callable[[str], None]
"""Writes text to the terminal without adding a newline, and flushes it."""


@dataclass(frozen=True, slots=True)
class ConsoleReply:
    """The final text (what memory may learn), whether it was streamed, and for a streamed one how long the first
    visible words and the whole answer took (what tells whether the endpoint streams well)."""

    text: str
    streamed: bool
    first_words_seconds: float | None = None
    total_seconds: float | None = None

    def pace(self) -> str | None:
        """One line on how the answer streamed, or None for a whole answer."""
        if not self.streamed or self.total_seconds is None:
            return None
        if self.first_words_seconds is None:
            return (
                f"(streamed in {self.total_seconds:.1f} s, shown when complete: a model's first answer here shows "
                "whether it streams its reasoning as plain text, and nothing of that is ever shown)"
            )
        return (
            f"(streamed: first words after {self.first_words_seconds:.1f} s, the whole answer in "
            f"{self.total_seconds:.1f} s)"
        )


class PaceNotes:
    """Says how answers stream until one has been shown while it arrived, then stays quiet."""

    def __init__(self) -> None:
        self.done = False

    def after(self, reply: ConsoleReply) -> str | None:
        """The line to show after `reply`, if any."""
        if self.done:
            return None
        self.done = reply.first_words_seconds is not None
        return reply.pace()


class _Printer:
    """What has been written of one answer, so each piece of new text is written once."""

    def __init__(self, write: Write) -> None:
        self.write = write
        self.printed: str | None = None  # None: nothing written yet, not even the prefix
        self.started = time.monotonic()
        self.first_words: float | None = None  # seconds from the request to the first visible words

    def show(self, text: str) -> None:
        if not text:
            return
        if self.printed is None:
            self.write(PREFIX)
            self.printed = ""
            self.first_words = time.monotonic() - self.started
        if text.startswith(self.printed):
            self.write(text[len(self.printed):])
            self.printed = text

    def finish(self, final: str) -> None:
        if self.printed is not None and not final.startswith(self.printed):
            self.write(f"\n{PREFIX}{final}\n")
            return
        self.show(final)
        if self.printed is None:
            self.write(PREFIX)
        self.write("\n")


async def _streamed(
    chat: ChatModel, messages: Sequence[ChatCompletionMessageParam], write: Write
) -> ConsoleReply | None:
    """The answer streamed to the terminal, or None when the endpoint gave no stream (nothing was written)."""
    printer = _Printer(write)
    stream = await chat.open_stream(messages)
    if stream is None:
        return None
    raw = ""
    try:
        async for delta in stream.deltas():
            raw += delta
            if may_show(stream.reveal, raw):
                printer.show(shown_so_far(raw))
    except NotAStream:
        return None
    except BaseException:
        if printer.printed is not None:
            write("\n")  # the error line that follows starts on its own line
        raise
    final = visible_answer(raw)
    first_words = printer.first_words
    printer.finish(final)
    return ConsoleReply(final, True, first_words, time.monotonic() - printer.started)


async def console_reply(
    chat: ChatModel, messages: Sequence[ChatCompletionMessageParam], *, stream: bool, write: Write, say: Write
) -> ConsoleReply:
    """Write the model's answer to `messages` and return it; raises `openai.OpenAIError` as `ChatModel` does.

    With `stream` (STREAM_REPLIES) the answer is streamed while the endpoint streams; `say` gets the one line
    telling that it does not (after which `chat` is no longer asked to stream)."""
    if stream and chat.streaming_supported:
        streamed = await _streamed(chat, messages, write)
        if streamed is not None:
            return streamed
        chat.streaming_supported = False
        say(NOT_STREAMING_NOTE)
    answer = await chat.complete(messages)
    write(f"{PREFIX}{answer.text}\n")
    return ConsoleReply(answer.text, streamed=False)
