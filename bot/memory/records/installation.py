"""What belongs to the installation rather than to anyone: the key the fingerprints of forgotten facts are made with.

The key is made once (32 random bytes), on first use, and kept in the bundle's `installation` table (a file of its
own, or a row of PostgreSQL's records table that every process reads), so every process of one installation
computes the same fingerprints and another installation's fingerprints say nothing here. It holds no user's data.
"""

from __future__ import annotations

import secrets

from bot.memory.rules.forgotten import Fingerprints
from bot.storage.records import Record, RecordTable

FINGERPRINT_KEY = "fingerprint-key"


class InstallationKeys:
    """The installation's keys over one `RecordTable`."""

    def __init__(self, table: RecordTable) -> None:
        self.table = table
        self._prints: Fingerprints | None = None

    async def open(self) -> None:
        await self.table.open()

    async def close(self) -> None:
        await self.table.close()

    async def fingerprints(self) -> Fingerprints:
        """The fingerprints of this installation (the key made, durably, on first use; any process's first wins)."""
        if self._prints is None:
            record = self.table.get(FINGERPRINT_KEY)
            if record is None:
                _, record = await self.table.change(FINGERPRINT_KEY, _made)
            assert record is not None
            self._prints = Fingerprints(bytes.fromhex(str(record["key"])))
        return self._prints


def _made(old: Record | None) -> Record:
    return old if old is not None and "key" in old else {"key": secrets.token_hex(32)}
