"""Crash-safe file replacement, the way Red-DiscordBot's JSON driver does it.

Why every step:
1. write the new bytes to a temp file *in the same folder* (a rename is only atomic within one filesystem), created
   exclusively so it can never clobber anything;
2. flush and fsync it, so the data is on disk before the name points at it (otherwise a power cut can leave the
   new name pointing at an empty file, the classic ext4 delayed-allocation trap);
3. `os.replace` it over the old file: readers see the old content or the new, never a mix;
4. fsync the folder, so the rename itself survives a power cut.
A crash at any moment leaves either the old file or the new one, plus at worst a stray temp file that the next
write or the store's start-up sweep removes.

One implementation of these steps (`_replace`) serves both entry points: `AtomicWriter.write` on the event loop,
through aiofiles and worker threads, and `replace_file_sync`, blocking, for code already on a worker thread.

Everything under DATA_DIR is private to the bot's user whatever the umask: files are created 0600 and folders 0700
(`private_opener`, `ensure_writable_folder`), and `make_private` tightens what an older version left readable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

import aiofiles
import aiofiles.os
from aiofiles.threadpool.binary import AsyncBufferedIOBase

TEMP_SUFFIX = ".tmp"
_TEMP_HEX_BYTES = 4
# `.<name>.<8 hex digits>.tmp`: exactly what `AtomicWriter.temp_path_for` makes, and nothing else.
_TEMP_NAME = re.compile(rf"\..+\.[0-9a-f]{{{2 * _TEMP_HEX_BYTES}}}{re.escape(TEMP_SUFFIX)}")

_TEMP_TAIL = 1 + 2 * _TEMP_HEX_BYTES + len(TEMP_SUFFIX)  # length of `.<hex>.tmp`

Fsync = Callable[[int], None]

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700

_File = TypeVar("_File")  # an open file, as one kind of disk (`_Disk`) hands it out


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """`opener=` for `open`/`aiofiles.open`: a file this creates is 0600 (before the umask, which only removes bits)."""
    return os.open(path, flags, PRIVATE_FILE)


def make_private(path: Path) -> bool:
    """Remove group and other permissions from a file or folder of ours (not following symlinks); True when it
    changed anything. A path that is gone or not ours is left alone."""
    try:
        stat = os.lstat(path)
    except FileNotFoundError:
        return False
    if not (stat.st_mode & 0o077) or os.path.islink(path):
        return False
    wanted = PRIVATE_FOLDER if os.path.isdir(path) else PRIVATE_FILE
    try:
        os.chmod(path, stat.st_mode & wanted & 0o777)
    except PermissionError:
        return False
    return True


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


def json_bytes(value: Any, *, indent: int | None = None, compact: bool = False) -> bytes:
    """`value` as UTF-8 JSON that can always be written and read back.

    Readable UTF-8 when possible; when a string holds a lone surrogate (JSON text may carry `"\\ud800"`, and
    such a string cannot be encoded as UTF-8), the whole document falls back to ASCII escapes instead of failing
    the write forever.
    """
    separators = (",", ":") if compact else None
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, indent=indent, separators=separators).encode("ascii")


class _Disk(Protocol[_File]):
    """The system calls of one replacement, in the order `_replace` makes them. Awaited either way: `_AsyncDisk`
    goes through aiofiles and worker threads, `_BlockingDisk` blocks and never suspends."""

    async def create(self, temp: Path) -> _File:
        """`temp`, created exclusively (0600) and open for writing."""
        ...

    async def chmod(self, file: _File, mode: int) -> None: ...

    async def write(self, file: _File, data: bytes) -> None: ...

    async def flush(self, file: _File) -> None: ...

    async def fsync(self, file: _File) -> None: ...

    async def close(self, file: _File) -> None: ...

    async def replace(self, temp: Path, path: Path) -> None: ...

    async def fsync_folder(self, folder: Path) -> None: ...


async def _replace(
    disk: _Disk[_File], path: Path, temp: Path, data: bytes, *, durable: bool, mode: int | None
) -> None:
    """The one sequence of a replacement (the module says why each step): `temp` in `path`'s folder, written,
    flushed and fsynced, renamed over `path`, the folder fsynced. Any error before the rename removes `temp` (once it
    is ours: a temp file that existed before is never touched) and leaves `path` as it was."""
    file = await disk.create(temp)
    try:
        try:
            if mode is not None:
                await disk.chmod(file, mode)
            await disk.write(file, data)
            await disk.flush(file)
            if durable:
                await disk.fsync(file)
        finally:
            await disk.close(file)
        await disk.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    if durable:
        await disk.fsync_folder(path.parent)


class _AsyncDisk:
    """The event loop's disk: aiofiles for the file, worker threads for the fsyncs, so no step blocks the loop."""

    def __init__(self, fsync: Fsync) -> None:
        self._fsync = fsync

    async def create(self, temp: Path) -> AsyncBufferedIOBase:
        return await aiofiles.open(temp, "xb", opener=private_opener)

    async def chmod(self, file: AsyncBufferedIOBase, mode: int) -> None:
        await asyncio.to_thread(os.fchmod, file.fileno(), mode)

    async def write(self, file: AsyncBufferedIOBase, data: bytes) -> None:
        await file.write(data)

    async def flush(self, file: AsyncBufferedIOBase) -> None:
        await file.flush()

    async def fsync(self, file: AsyncBufferedIOBase) -> None:
        await asyncio.to_thread(self._fsync, file.fileno())

    async def close(self, file: AsyncBufferedIOBase) -> None:
        await file.close()

    async def replace(self, temp: Path, path: Path) -> None:
        await aiofiles.os.replace(temp, path)

    async def fsync_folder(self, folder: Path) -> None:
        await asyncio.to_thread(fsync_dir, folder)


class _BlockingDisk:
    """The calling thread's disk: every step blocks until done and none suspends (see `_run_blocking`)."""

    def __init__(self, fsync: Fsync) -> None:
        self._fsync = fsync

    async def create(self, temp: Path) -> BinaryIO:
        return open(temp, "xb", opener=private_opener)  # `_replace` closes it

    async def chmod(self, file: BinaryIO, mode: int) -> None:
        os.fchmod(file.fileno(), mode)

    async def write(self, file: BinaryIO, data: bytes) -> None:
        file.write(data)

    async def flush(self, file: BinaryIO) -> None:
        file.flush()

    async def fsync(self, file: BinaryIO) -> None:
        self._fsync(file.fileno())

    async def close(self, file: BinaryIO) -> None:
        file.close()

    async def replace(self, temp: Path, path: Path) -> None:
        os.replace(temp, path)

    async def fsync_folder(self, folder: Path) -> None:
        fsync_dir(folder)


def _run_blocking(steps: Coroutine[Any, Any, None]) -> None:
    """Run `steps` to its end on this thread, without an event loop: over `_BlockingDisk` it never suspends, so
    one `send` finishes it (a suspension would be a bug, and is refused rather than left half-done)."""
    try:
        steps.send(None)
    except StopIteration:
        return
    steps.close()
    raise RuntimeError("a blocking replacement suspended")


class AtomicWriter:
    """Writes whole files atomically and durably, on the event loop (through aiofiles).

    `fsync` is a seam for the data file's fsync (before the rename): tests inject ENOSPC/EIO through it.
    `durable=False` skips both fsyncs (tests and benchmarks only; atomicity against a crash of the process stays).
    """

    def __init__(self, *, fsync: Fsync = os.fsync, durable: bool = True) -> None:
        self._fsync = fsync
        self._durable = durable

    @staticmethod
    def temp_path_for(path: Path) -> Path:
        return path.with_name(f".{path.name}.{secrets.token_hex(_TEMP_HEX_BYTES)}{TEMP_SUFFIX}")

    async def write(self, path: Path, data: bytes) -> None:
        """Replace `path` with `data`; on any error before the rename the old file is untouched and the temp file
        removed, and the error propagates.

        Cancelling the caller does not interrupt the disk work half-way: the rename runs in a worker thread and
        would land after the caller (and the per-user lock it holds) had gone, so a `/memory forget` waiting for
        that lock could delete the file and then see it reappear. The write finishes first, then the
        cancellation propagates.
        """
        steps = _replace(
            _AsyncDisk(self._fsync), path, self.temp_path_for(path), data, durable=self._durable, mode=None
        )
        work = asyncio.ensure_future(steps)
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            await asyncio.wait({work})
            raise


def replace_file_sync(path: Path, data: bytes, *, fsync: Fsync | None = os.fsync, mode: int | None = None) -> None:
    """`AtomicWriter.write` for code already on a worker thread or outside any event loop (the journal's
    compaction, the heartbeat, command-line tools): the same steps, run blocking. `fsync=None` skips both fsyncs
    where a lost write is harmless; `mode` sets the file's permissions (0600 otherwise, like every file the engine
    writes)."""
    disk = _BlockingDisk(fsync or os.fsync)
    temp = AtomicWriter.temp_path_for(path)
    _run_blocking(_replace(disk, path, temp, data, durable=fsync is not None, mode=mode))


def ensure_writable_folder(folder: Path) -> None:
    """Create `folder` (0700) if needed, make it private, and prove a file can be written in it (raises `OSError`
    when not): permissions and read-only mounts show up at start, not at the first save."""
    folder.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    make_private(folder)
    probe = folder / f".write-probe-{os.getpid()}"
    probe.write_bytes(b"ok")
    probe.unlink()


def is_temp_name(name: str) -> bool:
    """True for names of the `.<name>.<hex>.tmp` form our writes use."""
    return _TEMP_NAME.fullmatch(name) is not None


def sweep_temp_files(folder: Path, *, target: str | None = None) -> int:
    """Remove temp files a crash left behind; returns how many. Only our own `.<name>.<hex>.tmp` files (of the
    file `target` when given), never other dot files, folders or anything else."""
    removed = 0
    for stray in folder.glob(f".*{TEMP_SUFFIX}"):
        if not is_temp_name(stray.name) or not stray.is_file() or stray.is_symlink():
            continue
        if target is not None and stray.name[:-_TEMP_TAIL] != f".{target}":
            continue
        with contextlib.suppress(OSError):
            stray.unlink()
            removed += 1
    return removed
