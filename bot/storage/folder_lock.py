"""One process per data folder: an exclusive lock on a file in the folder, held for the process's life.

Two processes writing one `DATA_DIR` would rewrite one journal, one memory file, one heartbeat: each would lose the
other's changes, and a health check would describe whichever wrote last. The lock is `flock` on
`DATA_DIR/memory-bot.lock`: the operating system releases it when the process ends, however it ends (SIGKILL, a
crash, a container stopped), so a lock file left behind never blocks a restart. The file holds the holder's pid and
host, for the message a second process prints. Local file systems only: `flock` over NFS is not to be relied on.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = "memory-bot.lock"


class FolderInUse(Exception):
    """Another live process holds the folder; the message is one line naming the folder (and the holder)."""


@dataclass(slots=True)
class FolderLock:
    """The held lock; released by `release()` or when the process ends."""

    path: Path
    _fd: int | None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock


def lock_folder(folder: Path) -> FolderLock:
    """Lock `folder` for this process: `FolderInUse` when another process holds it, `OSError` when the lock file
    cannot be made (the caller checked the folder is writable first)."""
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise FolderInUse(
            f"DATA_DIR {folder} is in use by another memory-bot process{holder}: one folder serves one process "
            "(stop the other one, or give this one its own DATA_DIR)"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    with contextlib.suppress(OSError):  # only a label for the message above
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
    return FolderLock(path, fd)


def _holder(fd: int) -> str:
    """` (pid N on host H)` as the holder wrote it, or nothing when it cannot be read."""
    try:
        pid, _, host = os.pread(fd, 200, 0).decode("ascii").strip().partition(" ")
    except (OSError, UnicodeDecodeError):
        return ""
    if not pid.isdecimal():
        return ""
    return f" (pid {pid} on host {host})" if host.isprintable() and host else f" (pid {pid})"
