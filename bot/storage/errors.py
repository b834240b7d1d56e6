"""The one root of the errors the memory engine and the storage beneath it raise on purpose.

It is declared here, at the bottom of the import graph, so that storage failures are engine errors too: a caller of
the engine (a cog, the console) catches `MemoryBotError` once and has covered a refused request, a failed
extraction and a database that went away alike. `bot.memory.errors` re-exports it with the engine's own errors.

Storage failures are also `OSError`s: the engine treats a lost database like a full disk (a batch is tried again
later, a reply goes out without memory, a command apologises). Messages are one line without secrets.
"""

from __future__ import annotations


class MemoryBotError(Exception):
    """Root of every error the engine and its storage raise on purpose."""


class StorageUnavailable(MemoryBotError, OSError):
    """The storage cannot be reached or refused the work (a database down, a pool exhausted, a disk full)."""


class InvalidUserId(MemoryBotError, ValueError):
    """Anything that is not a decimal Discord snowflake where a user id is expected."""


class SchemaError(MemoryBotError):
    """The database's schema cannot be used by this version; the message is one line for the operator."""


class RecordsUnreadable(MemoryBotError):
    """A file of small records exists but cannot be read, and its owner refuses to start without it."""


class EncryptionRefused(MemoryBotError):
    """The storage cannot start with the encryption settings given (a missing or wrong MEMORY_ENCRYPTION_KEY, a
    missing key store, an unfinished conversion); the message is one line for the operator, never the key."""


class KeyDestroyed(MemoryBotError, ValueError):
    """Sealed data whose data key no longer exists: its user was forgotten, so it can never be read again (a
    `ValueError`, so readers treat it like any unreadable record)."""


class SealedDamaged(MemoryBotError, ValueError):
    """Sealed data that does not open with its user's key: changed on disk, or moved from another user's record."""


class KeyUnusable(StorageUnavailable):
    """A stored data key that the master key does not unwrap, or sealed data met without MEMORY_ENCRYPTION_KEY:
    nothing is read or overwritten (an `OSError`, so the engine waits as for a failing disk)."""
