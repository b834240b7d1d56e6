"""Building the reply prompt from plain history entries (no Discord types, so the console and tests share it).

The system message carries the admin's system prompt, today's date, who is speaking, and that speaker's rendered
memory (and nobody else's). The recent conversation follows, bounded by count and characters, newest kept; other
people's messages are labelled with their display names so the model can tell speakers apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from openai.types.chat import ChatCompletionMessageParam

from bot.memory.render import quote


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    author_id: int
    author_name: str
    text: str
    is_self: bool = False
    message_id: int | None = None


def system_message(base_prompt: str, *, now: datetime, speaker_name: str, memory_block: str) -> str:
    parts = [
        base_prompt.strip(),
        f"Today is {now:%A, %d %B %Y} (UTC).",
        f"You are replying to the user named {quote(speaker_name)}. Messages from people are prefixed with their "
        "display name; that prefix is not part of what they wrote.",
    ]
    if memory_block:
        parts.append(memory_block)
    return "\n\n".join(parts)


def bounded_history(history: Sequence[HistoryEntry], *, max_messages: int, max_chars: int) -> list[HistoryEntry]:
    """The newest entries that fit both bounds, oldest first."""
    kept: list[HistoryEntry] = []
    used = 0
    for entry in reversed(history[-max_messages:] if max_messages else []):
        cost = len(entry.text) + len(entry.author_name) + 2
        if used + cost > max_chars:
            break
        kept.append(entry)
        used += cost
    kept.reverse()
    return kept


def chat_messages(
    *,
    system: str,
    history: Sequence[HistoryEntry],
    current: HistoryEntry,
) -> list[ChatCompletionMessageParam]:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
    for entry in [*history, current]:
        if entry.is_self:
            messages.append({"role": "assistant", "content": entry.text})
        else:
            messages.append({"role": "user", "content": f"{entry.author_name}: {entry.text}"})
    return messages


def recent_texts(history: Sequence[HistoryEntry], current: HistoryEntry, turns: int = 3) -> list[str]:
    """The last few turns' texts, what the fact selector scores against."""
    return [entry.text for entry in [*history, current]][-turns:]
