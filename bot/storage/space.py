"""Whether a folder takes a write again: the probe that ends a storage outage on files.

A full disk sends no event when space comes back, so the engine asks: `probe_writable` writes a small file in the
folder through the same atomic writer the memory files use (so it meets the same faults), then removes it. It
raises the `OSError` a real write would (ENOSPC, EIO, EROFS) and leaves nothing behind either way. The probe is
larger than a pending turn, so a disk that takes it can take the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from bot.storage.atomic import AtomicWriter

PROBE_BYTES = 64 * 1024
PROBE_NAME = ".space-probe"


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


async def probe_writable(folder: Path, writer: AtomicWriter, size: int = PROBE_BYTES) -> None:
    """Return once `size` bytes were written (and synced, when the writer is durable) in `folder`; the write's
    `OSError` otherwise."""
    path = folder / PROBE_NAME
    try:
        await writer.write(path, bytes(size))
    finally:
        await asyncio.to_thread(_remove, path)
