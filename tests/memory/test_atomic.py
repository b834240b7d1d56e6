"""AtomicWriter: whole-file replacement that is atomic and durable, and fails without touching the old file."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from bot.storage.atomic import AtomicWriter, is_temp_name, json_bytes, replace_file_sync, sweep_temp_files


def _failing_fsync(code: int) -> tuple[list[int], AtomicWriter]:
    calls: list[int] = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        raise OSError(code, os.strerror(code))

    return calls, AtomicWriter(fsync=fsync)


async def test_write_creates_file_with_exact_bytes(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    data = bytes(range(256)) * 40
    await AtomicWriter().write(target, data)
    assert target.read_bytes() == data


async def test_replace_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    writer = AtomicWriter()
    for round_ in range(5):
        await writer.write(target, f"round {round_}".encode())
    assert target.read_bytes() == b"round 4"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


async def test_real_fsync_is_called_through_the_seam(tmp_path: Path) -> None:
    seen: list[int] = []

    def fsync(fd: int) -> None:
        seen.append(fd)
        os.fsync(fd)

    await AtomicWriter(fsync=fsync).write(tmp_path / "a", b"x")
    assert len(seen) == 1
    # durable=False skips it (tests and benchmarks only)
    await AtomicWriter(fsync=fsync, durable=False).write(tmp_path / "a", b"y")
    assert len(seen) == 1
    assert (tmp_path / "a").read_bytes() == b"y"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
async def test_failed_fsync_keeps_old_file_and_removes_temp(tmp_path: Path, code: int) -> None:
    target = tmp_path / "123.json"
    old = b'{"version": "1.0", "facts": []}\n' * 100
    target.write_bytes(old)
    before = os.stat(target)
    calls, writer = _failing_fsync(code)

    with pytest.raises(OSError) as caught:
        await writer.write(target, b"new content that must never appear")

    assert caught.value.errno == code
    assert calls, "the seam was not used"
    assert target.read_bytes() == old
    after = os.stat(target)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["123.json"]


async def test_failed_fsync_of_new_file_leaves_nothing(tmp_path: Path) -> None:
    _, writer = _failing_fsync(errno.ENOSPC)
    with pytest.raises(OSError):
        await writer.write(tmp_path / "fresh.json", b"data")
    assert list(tmp_path.iterdir()) == []


def test_the_blocking_entry_point_takes_the_same_steps(tmp_path: Path) -> None:
    target = tmp_path / "heartbeat.json"
    seen: list[int] = []

    def fsync(fd: int) -> None:
        seen.append(fd)
        os.fsync(fd)

    replace_file_sync(target, b"one", fsync=fsync, mode=0o644)
    assert target.read_bytes() == b"one" and len(seen) == 1
    assert os.stat(target).st_mode & 0o777 == 0o644
    replace_file_sync(target, b"two", fsync=None)  # no fsync at all; 0600 like every file the engine writes
    assert target.read_bytes() == b"two" and len(seen) == 1
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heartbeat.json"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
def test_a_failed_blocking_fsync_keeps_old_file_and_removes_temp(tmp_path: Path, code: int) -> None:
    target = tmp_path / "pending.jsonl"
    target.write_bytes(b"old")

    def fsync(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    with pytest.raises(OSError) as caught:
        replace_file_sync(target, b"new", fsync=fsync)
    assert caught.value.errno == code
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pending.jsonl"]


async def test_the_blocking_entry_point_runs_inside_an_event_loop_too(tmp_path: Path) -> None:
    """It never suspends, so a caller on the loop (a start-up step) gets it done in place."""
    replace_file_sync(tmp_path / "a", b"x", fsync=None)
    assert (tmp_path / "a").read_bytes() == b"x"


async def test_temp_name_matches_the_sweep_pattern(tmp_path: Path) -> None:
    temp = AtomicWriter.temp_path_for(tmp_path / "42.json")
    assert temp.parent == tmp_path
    assert is_temp_name(temp.name)
    assert temp.name.startswith(".42.json.")


def test_sweep_removes_only_our_temp_pattern(tmp_path: Path) -> None:
    ours = [".1.json.0a1b2c3d.tmp", ".paused.json.ffffffff.tmp", ".x.y.z.12345678.tmp"]
    others = [
        "1.json",
        "1.json.corrupt-20240101T000000000000Z",
        ".hidden.tmp",  # a dot file ending in .tmp, but not ours
        ".1.json.0A1B2C3D.tmp",  # upper-case hex: not what we write
        ".1.json.0a1b2c3.tmp",  # 7 hex digits
        ".1.json.0a1b2c3d.tmp.bak",
        "1.json.0a1b2c3d.tmp",  # no leading dot
        ".git",
        "notes.tmp",
    ]
    for name in ours + others:
        (tmp_path / name).write_bytes(name.encode())
    (tmp_path / ".dir.0a1b2c3d.tmp").mkdir()  # a folder with our name shape is left alone

    assert sweep_temp_files(tmp_path) == len(ours)

    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*others, ".dir.0a1b2c3d.tmp"])
    for name in others:
        assert (tmp_path / name).read_bytes() == name.encode()


def test_sweep_for_one_target_spares_other_users(tmp_path: Path) -> None:
    for name in [".1.json.0a1b2c3d.tmp", ".11.json.0a1b2c3d.tmp", ".2.json.0a1b2c3d.tmp"]:
        (tmp_path / name).write_bytes(b"x")
    assert sweep_temp_files(tmp_path, target="1.json") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [".11.json.0a1b2c3d.tmp", ".2.json.0a1b2c3d.tmp"]


def test_json_bytes_survives_lone_surrogates() -> None:
    value = {"text": "caf\u00e9 \ud800 end"}
    data = json_bytes(value)
    data.decode("utf-8")  # always valid UTF-8
    assert json.loads(data) == value
    assert json_bytes({"text": "café"}) == '{"text": "café"}'.encode()  # readable when it can be


class _FixedTempName(AtomicWriter):
    @staticmethod
    def temp_path_for(path: Path) -> Path:
        return path.with_name(f".{path.name}.0badc0de.tmp")


async def test_temp_file_is_created_exclusively_and_a_foreign_one_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    target.write_bytes(b"old")
    foreign = tmp_path / ".a.json.0badc0de.tmp"
    foreign.write_bytes(b"someone else's bytes")
    with pytest.raises(FileExistsError):
        await _FixedTempName().write(target, b"new")
    assert foreign.read_bytes() == b"someone else's bytes"
    assert target.read_bytes() == b"old"
