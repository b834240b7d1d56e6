"""Streaming a reply into Discord messages: post early, edit at a bounded rate, end on exactly the final text.

The first message is posted as soon as visible text exists (after a short grace, so a fast answer is posted whole
instead of posted and edited at once). From then on the shown messages are brought up to date at most once per
`interval` seconds: each update edits a message at most once and posts the messages that are new. The text is laid
out with the same splitter as a whole reply (`reply_chunks`), so long answers move to a new message before
Discord's 2,000 characters and code blocks are closed and reopened at each cut. The message still being written
shows a "still writing" mark in its readers' language (after a temporary closing fence when it ends inside a code
block); the limit leaves room for both.

Thinking is never shown: text inside an unclosed `<think>` block and a half-received tag are held back, and
`reveal` (`bot.chat.thinking.Reveal`) holds back more for models that stream their reasoning as plain text: nothing
before a closing tag (`AFTER_CLOSER`), or nothing until the answer is complete (`WHOLE`, a model's first answer);
the final text is `visible_answer` of the whole answer, the same as an answer that was not streamed.

A failed edit never costs the reply: live updates stop, and at the end the messages that cannot be brought to their
final text are replaced by new ones (the stale ones deleted where possible).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from bot.chat.model import visible_answer
from bot.chat.splitting import DISCORD_LIMIT, ends_in_code_block, split_message
from bot.chat.thinking import Reveal, may_show
from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech, every_translation

log = logging.getLogger(__name__)

STILL_WRITING = N_("… still writing")
WRITING_MARK = "\n-# " + STILL_WRITING  # in English; a reply's own mark is in its readers' language
MARK_ROOM = 48  # characters left for the mark in any language (tests/test_i18n.py checks each fits)
_TEMPORARY_CLOSE = "\n```"
REPLY_LIMIT = DISCORD_LIMIT - len(_TEMPORARY_CLOSE) - MARK_ROOM
FIRST_POST_GRACE_SECONDS = 0.1
_TAG_PREFIXES = tuple(
    tag[:n] for tag in ("<think>", "</think>", "<thinking>", "</thinking>") for n in range(1, len(tag))
)

M = TypeVar("M")


def _kind(error: BaseException) -> str:
    status = getattr(error, "status", None)
    return type(error).__name__ + (f", HTTP {status}" if status else "")


def reply_chunks(text: str) -> list[str]:
    """The messages a reply is sent as, streamed or not (so both end on the same messages)."""
    return split_message(text, REPLY_LIMIT)


def shown_so_far(raw: str) -> str:
    """The visible part of a partial answer: no thinking, no half-received tag at the end."""
    lowered = raw[-12:].lower()
    for prefix in sorted(_TAG_PREFIXES, key=len, reverse=True):
        if lowered.endswith(prefix):
            raw = raw[: len(raw) - len(prefix)]
            break
    return visible_answer(raw)


def writing_mark(speech: Speech = ENGLISH_SPEECH) -> str:
    """The "still writing" mark under a message being written, in its readers' language."""
    return "\n-# " + speech.tr(STILL_WRITING)


def without_writing_mark(text: str) -> str:
    """`text` without the mark of a reply still being streamed, whatever language it was written in."""
    for mark in sorted(every_translation(STILL_WRITING), key=len, reverse=True):
        if text.endswith("\n-# " + mark):
            return text[: -len("\n-# " + mark)]
    return text


def with_mark(chunk: str, mark: str = WRITING_MARK) -> str:
    """The message still being written: closed code block, then the "still writing" mark."""
    return chunk + (_TEMPORARY_CLOSE if ends_in_code_block(chunk) else "") + mark


class MessageSink(Protocol[M]):
    """Where a reply goes: the `first` post answers the user's message, later ones follow it."""

    async def post(self, text: str, *, first: bool) -> M: ...

    async def edit(self, message: M, text: str) -> None: ...

    async def delete(self, message: M) -> None: ...


@dataclass
class StreamedReply(Generic[M]):
    """What was sent: the final text (what memory may learn) and the messages holding it, in order."""

    text: str
    messages: list[M] = field(default_factory=list)


class StreamingReply(Generic[M]):
    """Shows one streamed answer in Discord messages through `sink`; see the module docstring for the rules."""

    def __init__(
        self,
        sink: MessageSink[M],
        *,
        interval: float,
        empty_text: str,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        first_post_grace: float = FIRST_POST_GRACE_SECONDS,
        reveal: Reveal = Reveal.LIVE,
        mark: str = WRITING_MARK,
    ) -> None:
        self._sink = sink
        self._mark = mark
        self._reveal = reveal
        self._interval = interval
        self._empty_text = empty_text
        self._clock = clock
        self._sleep = sleep
        self._grace = first_post_grace
        self._messages: list[M] = []
        self._shown: list[str] = []
        self._last_update: float | None = None
        self._live = True  # false after a failed edit: the rest is shown at the end

    @property
    def started(self) -> bool:
        """Whether anything has been posted (after that, an error must be reported as a follow-up)."""
        return bool(self._messages)

    async def run(
        self, deltas: AsyncIterator[str], *, on_complete: Callable[[], None] | None = None
    ) -> StreamedReply[M]:
        """Consume the answer, keep Discord up to date, and end on the final text. Raises the stream's error.
        `on_complete` is called once the whole answer has arrived, before the last edits."""
        raw: list[str] = []
        arrived = asyncio.Event()

        async def read() -> None:
            async for delta in deltas:
                raw.append(delta)
                arrived.set()

        reader = asyncio.create_task(read(), name="reply-stream")
        try:
            while not reader.done():
                waiter = asyncio.ensure_future(arrived.wait())
                await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if reader.done():
                    break
                arrived.clear()
                if not self._live or not self._showable("".join(raw)):
                    continue
                await self._wait_for_turn(reader)
                if reader.done():
                    break
                await self._update(shown_so_far("".join(raw)), live=True)
            await reader  # the stream's own error, if any
        except BaseException:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
            await self._unmark()
            raise
        if on_complete is not None:
            on_complete()
        final = visible_answer("".join(raw))
        await self._finish(final)
        return StreamedReply(final, list(self._messages))

    def _showable(self, raw: str) -> bool:
        return may_show(self._reveal, raw) and bool(shown_so_far(raw))

    async def _wait_for_turn(self, reader: asyncio.Task[None]) -> None:
        """Before the first post: a short grace (a fast answer is posted whole). After: the edit interval."""
        if self._last_update is None:
            if self._grace > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(reader), self._grace)
            return
        remaining = self._last_update + self._interval - self._clock()
        if remaining > 0:
            await self._sleep(remaining)

    async def _update(self, text: str, *, live: bool) -> None:
        """Bring the messages to `text` (one edit per message at most, new messages posted)."""
        chunks = reply_chunks(text)
        if live and chunks:
            chunks[-1] = with_mark(chunks[-1], self._mark)
        try:
            await self._apply(chunks)
        finally:
            self._last_update = self._clock()  # the interval counts from the end of an update: Discord's view

    async def _apply(self, chunks: list[str]) -> None:
        for index, chunk in enumerate(chunks):
            if index < len(self._messages):
                if self._shown[index] == chunk:
                    continue
                try:
                    await self._sink.edit(self._messages[index], chunk)
                except Exception as error:  # noqa: BLE001 -- any failed edit: the reply goes on
                    log.warning("could not edit a streamed reply (%s); the rest is shown when it is complete",
                                _kind(error))
                    self._live = False
                    return
                self._shown[index] = chunk
            else:
                self._messages.append(await self._sink.post(chunk, first=index == 0))
                self._shown.append(chunk)

    async def _unmark(self) -> None:
        """After a failure mid-answer: take the "still writing" mark off what was shown (best effort)."""
        if not self._messages or not self._shown[-1].endswith(self._mark):
            return
        with contextlib.suppress(Exception):
            if self._last_update is not None:
                await self._sleep(max(0.0, self._last_update + self._interval - self._clock()))
            await self._sink.edit(self._messages[-1], self._shown[-1][: -len(self._mark)])

    async def _finish(self, final: str) -> None:
        """Show exactly the final chunks: edit what differs (after the interval), post what is missing, replace
        messages that cannot be edited, and remove messages left over."""
        chunks = reply_chunks(final) or [self._empty_text]
        if self._last_update is not None:
            remaining = self._last_update + self._interval - self._clock()
            if remaining > 0 and any(
                i < len(self._shown) and self._shown[i] != chunk for i, chunk in enumerate(chunks)
            ):
                await self._sleep(remaining)
        kept: list[M] = []
        for index, chunk in enumerate(chunks):
            if index >= len(self._messages):
                kept.append(await self._sink.post(chunk, first=index == 0))
                continue
            if self._shown[index] != chunk:
                try:
                    await self._sink.edit(self._messages[index], chunk)
                except Exception as error:  # noqa: BLE001 -- any failed edit: the reply goes on
                    log.warning("could not edit a streamed reply (%s); sending its end as new messages", _kind(error))
                    for stale in self._messages[index:]:
                        await self._delete(stale)
                    for number, rest in enumerate(chunks[index:], index):
                        kept.append(await self._sink.post(rest, first=number == 0))
                    break
            kept.append(self._messages[index])
        else:
            for extra in self._messages[len(chunks):]:
                await self._delete(extra)
        self._messages = kept
        self._shown = []

    async def _delete(self, message: M) -> None:
        try:
            await self._sink.delete(message)
        except Exception as error:  # noqa: BLE001 -- a stale message left behind is not worth failing over
            log.warning("could not delete a stale part of a streamed reply (%s)", _kind(error))
