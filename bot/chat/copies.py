"""The inventory of every copy of a message's text the process keeps outside the memory engine.

A deleted message's words must never reach the model again, and an edited one must read as it does now, wherever
the process keeps them. Each copy implements `TextCopy` and is registered, by name, in the one `MessageCopies` the
bot holds (`MemoryBot.message_copies`); the deletes cog hands every delete and edit to it, beside the engine's own
copies (the pending turns in RAM and on disk, the extraction in flight: `memory.events`). What the process keeps:

- `reply chains` (`bot.chat.reply_chain.ReplyChains`): the links walked up a reply chain, each with its text;
- `history starts` (`bot.chat.conversation.HistoryTrimmer`): the first entry of each conversation's kept history.

discord.py's own message cache is kept current by discord.py itself, and the channel history is read from Discord
for every prompt. `tests/cogs/test_message_copies.py` walks this inventory and checks that every cache of message
text in the application is in it, so a new one cannot be added without it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Protocol

log = logging.getLogger(__name__)


class TextCopy(Protocol):
    """A copy of message text: drops deleted messages and takes an edited message's new text."""

    def drop_messages(self, message_ids: Collection[int]) -> int:
        """Forget these messages; returns how many entries held one."""
        ...

    def edit_message(self, message_id: int, text: str) -> int:
        """The message now reads `text`; returns how many entries held it."""
        ...


class MessageCopies:
    """Every `TextCopy` of the process, by name."""

    def __init__(self) -> None:
        self._copies: dict[str, TextCopy] = {}

    def add(self, name: str, copy: TextCopy) -> None:
        self._copies[name] = copy

    def names(self) -> list[str]:
        return sorted(self._copies)

    def get(self, name: str) -> TextCopy:
        return self._copies[name]

    def deleted(self, message_ids: Collection[int]) -> int:
        dropped = sum(copy.drop_messages(message_ids) for copy in self._copies.values())
        if dropped:
            log.debug("%d deleted messages: %d copies of their text dropped", len(message_ids), dropped)
        return dropped

    def edited(self, message_id: int, text: str) -> int:
        return sum(copy.edit_message(message_id, text) for copy in self._copies.values())
