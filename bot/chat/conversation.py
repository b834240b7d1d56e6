"""Building the reply prompt from plain history entries (no Discord types, so the console and tests share it).

Laid out so that an endpoint's prefix cache can reuse most of each prompt (a prompt is cached up to its first
change since an earlier one):
- the system message, which changes only when the memory does: the admin's system prompt, today's date, who is
  speaking, and that speaker's memory profile (summaries; nobody else's memory);
- the recent conversation, oldest first, trimmed in chunks: its first message stays the same for several replies
  instead of moving on with every new message (`HistoryTrimmer`);
- the newest message last, followed by the facts selected for it: what changes from reply to reply (after the
  message's text, so that the next prompt, which has the message without them, still shares the text).
Other people's messages are labelled with their display names so the model can tell speakers apart. The memory tag
is the bot's alone: written in a message or a display name, it is disarmed, so no message can pose as memory.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from openai.types.chat import ChatCompletionMessageParam

from bot.memory.pipeline.render import BLOCK_TAG, quote
from bot.storage.lru import LruCache

HISTORY_CHUNK = 8  # history is dropped about this many messages at a time
_TAG = re.compile(rf"<(\s*/?\s*){BLOCK_TAG}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    author_id: int
    author_name: str
    text: str
    is_self: bool = False
    message_id: int | None = None


def system_message(base_prompt: str, *, now: datetime, speaker_name: str, memory_profile: str) -> str:
    parts = [
        base_prompt.strip(),
        f"Today is {now:%A, %d %B %Y} (UTC).",
        f"You are replying to the user named {quote(speaker_name)}. Messages from people are prefixed with their "
        "display name; that prefix is not part of what they wrote.",
    ]
    if memory_profile:
        parts.append(memory_profile)
    return "\n\n".join(parts)


def _cost(entry: HistoryEntry) -> int:
    return len(entry.text) + len(entry.author_name) + 2


def bounded_history(history: Sequence[HistoryEntry], *, max_messages: int, max_chars: int) -> list[HistoryEntry]:
    """The newest entries that fit both bounds, oldest first."""
    kept: list[HistoryEntry] = []
    used = 0
    for entry in reversed(history[-max_messages:] if max_messages else []):
        if used + _cost(entry) > max_chars:
            break
        kept.append(entry)
        used += _cost(entry)
    kept.reverse()
    return kept


class HistoryTrimmer:
    """Trims each conversation's history in chunks, so that consecutive prompts share their start.

    It remembers where each conversation's kept history starts (its first entry) and keeps starting there while
    that entry still fits the bounds; when it no longer does, the start moves on `chunk` entries past the oldest one
    that fits, dropping that many at once (at most half of what fits). Per-message trimming would move the start,
    and so change every prompt's history from its first message, with every new message. A conversation seen for the
    first time keeps everything that fits. At most `conversations` starts are remembered (least recently used go);
    a forgotten one costs one prompt that shares less, nothing else.
    """

    def __init__(self, chunk: int = HISTORY_CHUNK, conversations: int = 10_000) -> None:
        self.chunk = chunk
        self._starts: LruCache[int, HistoryEntry] = LruCache(conversations)

    def drop_messages(self, message_ids: Collection[int]) -> int:
        """A deleted message is no conversation's start any more (the next prompt starts afresh there)."""
        gone = set(message_ids)
        keys = [key for key in self._starts if (start := self._starts.peek(key)) and start.message_id in gone]
        for key in keys:
            self._starts.discard(key)
        return len(keys)

    def edit_message(self, message_id: int, text: str) -> int:
        """A start that is an edited message takes its new text (so it still matches the history read afresh)."""
        keys = [key for key in self._starts if (start := self._starts.peek(key)) and start.message_id == message_id]
        for key in keys:
            start = self._starts.peek(key)
            assert start is not None
            self._starts.put(key, dataclasses.replace(start, text=text))
        return len(keys)

    def trim(
        self, key: int, history: Sequence[HistoryEntry], *, max_messages: int, max_chars: int
    ) -> list[HistoryEntry]:
        """The history of conversation `key` (oldest first) to put in a prompt: a suffix of what fits both bounds."""
        fits = bounded_history(history, max_messages=max_messages, max_chars=max_chars)
        if self.chunk <= 1 or not fits:
            return fits
        start = self._starts.peek(key)
        if start is None:
            first = 0  # nothing remembered (a new conversation, or a restart): everything that fits
        elif start in fits:
            first = fits.index(start)
        else:
            first = min(self.chunk, len(fits) // 2)
        self._starts.put(key, fits[first])
        return fits[first:]


def disarm(text: str) -> str:
    """`text` with every memory tag made inert (`<user_memory` becomes `‹user_memory`): only the bot writes one."""
    return _TAG.sub(lambda match: f"\u2039{match.group(1)}{BLOCK_TAG}", text)


def chat_messages(
    *,
    system: str,
    history: Sequence[HistoryEntry],
    current: HistoryEntry,
    memory_facts: str = "",
) -> list[ChatCompletionMessageParam]:
    """The messages for the model; `memory_facts` (the facts selected for this reply) ends the newest message."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
    for entry in history:
        if entry.is_self:
            messages.append({"role": "assistant", "content": disarm(entry.text)})
        else:
            messages.append({"role": "user", "content": f"{disarm(entry.author_name)}: {disarm(entry.text)}"})
    said = f"{disarm(current.author_name)}: {disarm(current.text)}"
    messages.append({"role": "user", "content": f"{said}\n\n{memory_facts}" if memory_facts else said})
    return messages


def recent_texts(history: Sequence[HistoryEntry], current: HistoryEntry, turns: int = 3) -> list[str]:
    """The last few turns' texts, what the fact selector scores against."""
    return [entry.text for entry in [*history, current]][-turns:]
