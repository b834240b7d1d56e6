"""Keeping an unreadable file's bytes aside, never overwriting them: `<name>.corrupt-<UTC time>`.

One helper for every file the engine reads back (memory files, the pause list, the journal's torn lines): an
operator finds every such copy under one pattern, a user's `/memory forget` can find and delete theirs, and nothing
is lost by being "repaired" over. Copies are private to the bot's user (0600) and the folder is fsynced, so a move
aside survives a power cut. The calls block: code on the event loop runs them in a worker thread.
"""

from __future__ import annotations

import itertools
import os
from datetime import UTC, datetime
from pathlib import Path

from bot.storage.atomic import PRIVATE_FILE, fsync_dir

CORRUPT_MARK = ".corrupt-"


def aside_path(path: Path) -> Path:
    """A free name `<name>.corrupt-<UTC time>[-n]` next to `path`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}")
    counter = itertools.count(1)
    while target.exists():
        target = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}-{next(counter)}")
    return target


def move_aside(path: Path) -> Path | None:
    """Rename `path` to a `.corrupt-<time>` name (durably); the new path, or None when `path` was gone already."""
    target = aside_path(path)
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    os.chmod(target, PRIVATE_FILE)
    fsync_dir(path.parent)
    return target


def copy_aside(path: Path, data: bytes) -> Path:
    """Keep `data` (bytes read from `path` that could not be used) in a new `.corrupt-<time>` file next to it."""
    target = aside_path(path)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    with open(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    fsync_dir(path.parent)
    return target


def copies_of(path: Path) -> list[Path]:
    """The copies kept aside for `path`, oldest first."""
    return sorted(path.parent.glob(f"{path.name}{CORRUPT_MARK}*"))
