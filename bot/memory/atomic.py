"""Crash-safe file replacement, the way Red-DiscordBot's JSON driver does it.

Why every step:
1. write the new bytes to a temp file *in the same folder* (a rename is only atomic within one filesystem);
2. flush and fsync it, so the data is on disk before the name points at it (otherwise a power cut can leave the
   new name pointing at an empty file, the classic ext4 delayed-allocation trap);
3. `os.replace` it over the old file: readers see the old content or the new, never a mix;
4. fsync the folder, so the rename itself survives a power cut.
A crash at any moment leaves either the old file or the new one, plus at worst a stray temp file that the next
write or the store's start-up sweep removes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

import aiofiles
import aiofiles.os

TEMP_SUFFIX = ".tmp"

Fsync = Callable[[int], None]


def fsync_dir(folder: Path) -> None:
    """fsync a directory so a rename in it is durable (a no-op where the platform cannot open directories)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AtomicWriter:
    """Writes whole files atomically and durably. `fsync` is a seam: tests inject ENOSPC/EIO through it."""

    def __init__(self, *, fsync: Fsync = os.fsync, durable: bool = True) -> None:
        self._fsync = fsync
        self._durable = durable

    async def write(self, path: Path, data: bytes) -> None:
        """Replace `path` with `data`; on any error the old file is untouched and the temp file removed."""
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            async with aiofiles.open(temp, "wb") as handle:
                await handle.write(data)
                await handle.flush()
                if self._durable:
                    await asyncio.to_thread(self._fsync, handle.fileno())
            await aiofiles.os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        if self._durable:
            await asyncio.to_thread(fsync_dir, path.parent)


def sweep_temp_files(folder: Path) -> int:
    """Remove temp files a crash left behind; returns how many. Only our own `.<name>.<hex>.tmp` pattern."""
    removed = 0
    for stray in folder.glob(f".*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            stray.unlink()
            removed += 1
    return removed
