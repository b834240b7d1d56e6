"""The journal's unreadable lines kept aside (`pending.jsonl.corrupt-<time>`): they may hold users' words, so they
go when their user forgets, and all of them after a day."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta
from pathlib import Path

from bot.storage.atomic import replace_file_sync
from bot.storage.quarantine import copies_of


def purge_user_from_copies(path: Path, user_id: int) -> None:
    """Remove the user's records from the lines kept aside for `path` (a turn record names its user before its
    text, so any line holding their words holds their id)."""
    marker = f'"user":"{user_id}"'.encode()
    for copy in copies_of(path):
        try:
            lines = copy.read_bytes().splitlines(keepends=True)
        except OSError:
            continue
        kept = [line for line in lines if marker not in line]
        if len(kept) == len(lines):
            continue
        if kept:
            replace_file_sync(copy, b"".join(kept))
        else:
            copy.unlink(missing_ok=True)


def drop_old_copies(path: Path, older_than: timedelta) -> None:
    """Delete the copies kept aside for `path` longer than `older_than`."""
    horizon = time.time() - older_than.total_seconds()
    for copy in copies_of(path):
        with contextlib.suppress(OSError):
            if copy.stat().st_mtime < horizon:
                copy.unlink()
