"""PauseRegistry: `/memory pause` survives restarts, refuses bad ids, and never loses a pause to a bad file."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import re
from pathlib import Path

import pytest

from bot.memory.pauses import PauseRegistry
from bot.storage.atomic import AtomicWriter
from bot.storage.errors import InvalidUserId

ALICE, BOB = 80351110224678912, 1001
CORRUPT = re.compile(r"paused\.json\.corrupt-\d{8}T\d{12}Z(?:-\d+)?")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "paused.json"


def reopened(path: Path) -> PauseRegistry:
    registry = PauseRegistry(path)
    registry.load()
    return registry


async def test_set_and_unset_persist_across_instances(path: Path) -> None:
    registry = reopened(path)
    assert not registry.is_paused(ALICE)
    assert await registry.set_paused(ALICE, True) is True
    assert await registry.set_paused(str(BOB), True) is True
    assert await registry.set_paused(ALICE, True) is False  # already paused: nothing written
    assert registry.is_paused(ALICE) and registry.is_paused(str(ALICE))

    again = reopened(path)
    assert again.is_paused(ALICE) and again.is_paused(BOB)
    assert json.loads(path.read_bytes()) == {"users": [str(BOB), str(ALICE)]}

    assert await again.set_paused(ALICE, False) is True
    assert await again.set_paused(ALICE, False) is False
    third = reopened(path)
    assert not third.is_paused(ALICE) and third.is_paused(BOB)


async def test_unchanged_state_is_not_rewritten(path: Path) -> None:
    registry = reopened(path)
    await registry.set_paused(ALICE, True)
    before = os.stat(path)
    await registry.set_paused(ALICE, True)
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


async def test_missing_file_means_nobody_paused(path: Path) -> None:
    registry = reopened(path)
    assert not registry.is_paused(ALICE)
    assert not path.exists()


@pytest.mark.parametrize("bad", ["../x", "abc", "", "0", "-1", " 1", "１", True, 2**64])
async def test_invalid_ids_are_refused(path: Path, bad: object) -> None:
    registry = reopened(path)
    with pytest.raises(InvalidUserId):
        await registry.set_paused(bad, True)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserId):
        registry.is_paused(bad)  # type: ignore[arg-type]
    assert not path.exists()


@pytest.mark.parametrize(
    "raw",
    [b"\x00garbage", b"{not json", b"[1, 2]", b'{"users": "1001"}', b'{"users": 5}', b"null", b"{}", b"\xff\xfe",
     b"[" * 50_000],
    ids=["binary", "truncated", "list", "string-users", "int-users", "null", "no-users", "bad-utf8", "deep"],
)
async def test_an_unreadable_file_is_kept_aside_and_fails_closed(
    path: Path, raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path.write_bytes(raw)
    caplog.set_level(logging.WARNING, logger="bot.memory.pauses")
    registry = reopened(path)
    assert registry.held
    assert registry.is_paused(BOB) and registry.is_paused(ALICE)  # nobody is learned from until an operator looks
    kept = [p for p in path.parent.iterdir() if CORRUPT.fullmatch(p.name)]
    assert len(kept) == 1
    assert kept[0].read_bytes() == raw
    assert [r.levelname for r in caplog.records] == ["ERROR"] and "learning is paused for everyone" in caplog.text
    await registry.set_paused(ALICE, True)
    assert reopened(path).held  # a restart alone does not lift the hold
    assert kept[0].read_bytes() == raw  # never overwritten

    kept[0].unlink()  # the operator checked the copy
    released = reopened(path)
    assert not released.held and released.is_paused(ALICE)


async def test_ids_still_legible_in_a_damaged_file_stay_paused_after_the_hold(path: Path) -> None:
    path.write_bytes(f'{{"users": ["{BOB}", "{ALICE}"'.encode())  # torn
    assert reopened(path).held
    for copy in path.parent.glob("paused.json.corrupt-*"):
        copy.unlink()
    released = reopened(path)
    assert not released.held
    assert released.is_paused(ALICE) and released.is_paused(BOB) and not released.is_paused(4242)


async def test_two_bad_files_in_a_row_keep_both_copies(path: Path) -> None:
    path.write_bytes(b"first")
    reopened(path)
    path.write_bytes(b"second")
    reopened(path)
    copies = sorted(p.read_bytes() for p in path.parent.iterdir() if CORRUPT.fullmatch(p.name))
    assert copies == [b"first", b"second"]


async def test_invalid_entries_keep_the_valid_pauses_and_hold_learning(path: Path) -> None:
    raw = json.dumps({"users": [str(ALICE), "../../etc", 7, "abc", None]}).encode()
    path.write_bytes(raw)
    registry = reopened(path)
    assert registry.is_paused(ALICE) and registry.is_paused(7)  # failing towards "paused"
    assert registry.held  # an entry it cannot read may have been someone's pause
    assert json.loads(path.read_bytes()) == {"users": ["7", str(ALICE)]}  # the readable pauses, cleanly
    copies = [p for p in path.parent.iterdir() if p != path]
    assert len(copies) == 1 and copies[0].read_bytes() == raw
    copies[0].unlink()
    released = reopened(path)
    assert not released.held and released.is_paused(ALICE) and not released.is_paused(BOB)


async def test_concurrent_pauses_all_land(path: Path) -> None:
    registry = reopened(path)
    users = list(range(1, 51))
    await asyncio.gather(*(registry.set_paused(uid, True) for uid in users))
    assert all(reopened(path).is_paused(uid) for uid in users)
    await asyncio.gather(*(registry.set_paused(uid, False) for uid in users[::2]))
    fresh = reopened(path)
    assert [uid for uid in users if fresh.is_paused(uid)] == users[1::2]


async def test_failed_write_keeps_the_old_state(path: Path) -> None:
    failing = {"on": False}

    def fsync(fd: int) -> None:
        if failing["on"]:
            raise OSError(errno.ENOSPC, "No space left on device")
        os.fsync(fd)

    registry = PauseRegistry(path, writer=AtomicWriter(fsync=fsync))
    registry.load()
    await registry.set_paused(ALICE, True)
    before = path.read_bytes()
    failing["on"] = True
    with pytest.raises(OSError):
        await registry.set_paused(BOB, True)
    assert not registry.is_paused(BOB)  # not claimed until saved
    with pytest.raises(OSError):
        await registry.set_paused(ALICE, False)
    assert registry.is_paused(ALICE)  # a resume that was not saved does not take effect either
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["paused.json"]


async def test_load_sweeps_temp_files_of_an_interrupted_save(path: Path) -> None:
    registry = reopened(path)
    await registry.set_paused(ALICE, True)
    stray = path.parent / ".paused.json.0a1b2c3d.tmp"
    stray.write_bytes(b'{"users": ["half-written')
    unrelated = path.parent / ".other.json.0a1b2c3d.tmp"
    unrelated.write_bytes(b"not ours to judge")
    assert reopened(path).is_paused(ALICE)
    assert not stray.exists() and unrelated.exists()
