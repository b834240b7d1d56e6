"""Building the reply prompt from plain history entries (no Discord types, so the console and tests share it).

Laid out so that an endpoint's prefix cache can reuse most of each prompt (a prompt is cached up to its first
change since an earlier one):
- the system message, which changes only when the memory does: the admin's system prompt, today's date, who is
  speaking, and that speaker's memory profile (summaries; nobody else's memory);
- the recent conversation, oldest first, trimmed in chunks: its first message stays the same for several replies
  instead of moving on with every new message (`bounded_history`);
- the newest message last, with the facts selected for it in front of it: what changes from reply to reply.
Other people's messages are labelled with their display names so the model can tell speakers apart. The memory tag
is the bot's alone: written in a message or a display name, it is disarmed, so no message can pose as memory.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from openai.types.chat import ChatCompletionMessageParam

from bot.memory.render import BLOCK_TAG, quote

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


def starts_chunk(entry: HistoryEntry, chunk: int) -> bool:
    """Whether the history may start at `entry`: about one message in `chunk`, decided by the message alone (its id,
    or its author and text when it has none), so every reply and every process agrees without keeping state."""
    key = str(entry.message_id) if entry.message_id is not None else f"{entry.author_id}:{entry.text}"
    return zlib.crc32(key.encode()) % chunk == 0


def bounded_history(
    history: Sequence[HistoryEntry], *, max_messages: int, max_chars: int, chunk: int = 1
) -> list[HistoryEntry]:
    """The newest entries that fit both bounds, oldest first, cut at a chunk start.

    With `chunk` 1, every entry that fits is kept, so the first one moves on with every new message. With a larger
    `chunk`, the kept history starts at the oldest entry that `starts_chunk` among those that fit: it stays the
    same while that entry fits, then moves on to the next chunk start, dropping about `chunk` messages at once. When
    the whole conversation is in view (fewer entries than `max_messages`, all fitting) it is all kept; when no entry
    that fits starts a chunk, every one that fits is.
    """
    kept: list[HistoryEntry] = []
    used = 0
    for entry in reversed(history[-max_messages:] if max_messages else []):
        if used + _cost(entry) > max_chars:
            break
        kept.append(entry)
        used += _cost(entry)
    kept.reverse()
    if chunk <= 1 or (len(kept) == len(history) < max_messages):
        return kept
    start = next((i for i, entry in enumerate(kept) if starts_chunk(entry, chunk)), 0)
    return kept[start:]


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
    """The messages for the model; `memory_facts` (the facts selected for this reply) opens the newest message."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
    for entry in history:
        if entry.is_self:
            messages.append({"role": "assistant", "content": disarm(entry.text)})
        else:
            messages.append({"role": "user", "content": f"{disarm(entry.author_name)}: {disarm(entry.text)}"})
    said = f"{disarm(current.author_name)}: {disarm(current.text)}"
    messages.append({"role": "user", "content": f"{memory_facts}\n\n{said}" if memory_facts else said})
    return messages


def recent_texts(history: Sequence[HistoryEntry], current: HistoryEntry, turns: int = 3) -> list[str]:
    """The last few turns' texts, what the fact selector scores against."""
    return [entry.text for entry in [*history, current]][-turns:]
