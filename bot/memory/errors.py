"""Every error the memory engine raises on purpose, under one root: `MemoryBotError`.

The root is declared with the storage plumbing (`bot.storage.errors`), so a storage failure is an engine error too:
a cog or the console catches `MemoryBotError` once. Messages are one line without secrets; `InvalidRequest`'s is
meant for the user who asked, and carries it as a `Phrase` too, so the application can say it in their language.
"""

from __future__ import annotations

from bot.memory.phrases import Phrase
from bot.storage.errors import InvalidUserId, MemoryBotError, RecordsUnreadable, SchemaError, StorageUnavailable

__all__ = [
    "ClaimLost",
    "ExtractionFailed",
    "InvalidRequest",
    "InvalidUserId",
    "MemoryBotError",
    "Phrase",
    "RecordsUnreadable",
    "SchemaError",
    "Stale",
    "StorageUnavailable",
]


class InvalidRequest(MemoryBotError, ValueError):
    """A user's request that cannot be carried out as asked; the message is one line to show them.

    `InvalidRequest("Minutes must be between 1 and {most}.", most=1440)`, or a ready `Phrase`: `phrase` keeps the
    template and its values for translation, `str(error)` is the English line."""

    def __init__(self, message: str | Phrase, /, **values: str | int | float | Phrase) -> None:
        self.phrase = message if isinstance(message, Phrase) else Phrase(message, **values)
        super().__init__(str(self.phrase))


class ExtractionFailed(MemoryBotError):
    """The extraction did not produce a usable answer; `transient` tells whether a later retry may succeed."""

    def __init__(self, reason: str, *, transient: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


class ClaimLost(MemoryBotError):
    """The claimed turns are gone: forgotten by their user, or taken over by another process."""


class Stale(MemoryBotError):
    """The user forgot (or paused) since this work started: nothing was written.

    One message for every backend and every kind of write: what was refused and whose, never any of its text."""

    def __init__(self, what: str, user_id: int) -> None:
        super().__init__(f"{what} of user {user_id} refused: they forgot or paused since this work began")
        self.what = what
        self.user_id = user_id
