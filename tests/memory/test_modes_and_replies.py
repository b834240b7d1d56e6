"""The timed privacy modes file and the reply records: they survive restarts, fail closed (modes) or start empty
(records) on a damaged file, stay bounded, and hold ids, never text."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.memory.modes import MAX_MODE_MINUTES, UNTIL_RESUME, ModeRegistry
from bot.memory.replies import ReplyLog

ALICE, BOB = 80351110224678912, 1001
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def reopened(path: Path, now: datetime = NOW) -> ModeRegistry:
    registry = ModeRegistry(path)
    registry.load(now)
    return registry


async def test_timers_persist_and_end_on_time(tmp_path: Path) -> None:
    path = tmp_path / "modes.json"
    modes = reopened(path)
    await modes.set_incognito(ALICE, NOW + timedelta(minutes=30), NOW)
    await modes.set_fresh(BOB, UNTIL_RESUME, NOW)
    again = reopened(path)
    assert again.incognito_until(ALICE, NOW) == NOW + timedelta(minutes=30)
    assert again.incognito_until(ALICE, NOW + timedelta(minutes=30)) is None  # ends exactly on time
    assert again.fresh_until(BOB, NOW + timedelta(days=300)) == UNTIL_RESUME
    assert again.fresh_until(ALICE, NOW) is None and again.incognito_until(BOB, NOW) is None
    assert await again.clear(BOB, NOW) is True and await again.clear(BOB, NOW) is False
    assert reopened(path).fresh_until(BOB, NOW) is None


async def test_expired_entries_are_dropped_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "modes.json"
    modes = reopened(path)
    await modes.set_incognito(ALICE, NOW + timedelta(minutes=1), NOW)
    later = NOW + timedelta(minutes=5)
    await modes.set_fresh(BOB, later + timedelta(minutes=10), later)
    assert set(json.loads(path.read_bytes())["users"]) == {str(BOB)}


async def test_a_damaged_file_fails_closed_until_each_user_resumes(tmp_path: Path) -> None:
    path = tmp_path / "modes.json"
    path.write_bytes(b'{"users": {"not-a-user": {}}')
    modes = reopened(path)
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]  # the bytes are kept aside
    longest = NOW + timedelta(minutes=MAX_MODE_MINUTES)
    assert modes.incognito_until(ALICE, NOW) == longest and modes.fresh_until(BOB, NOW) == longest
    await modes.clear(ALICE, NOW)
    restarted = reopened(path, NOW + timedelta(minutes=5))  # the fail-closed state itself survives a restart
    assert restarted.incognito_until(ALICE, NOW) is None
    assert restarted.incognito_until(BOB, NOW) == longest
    assert restarted.incognito_until(BOB, longest) is None  # and ends when any timer would have


async def test_reply_records_survive_restarts_stay_bounded_and_go_with_the_user(tmp_path: Path) -> None:
    path = tmp_path / "replies.json"
    log = ReplyLog(path, keep=1000)
    log.load()
    for n in range(1, 1101):
        await log.record([n * 10, n * 10 + 1], ALICE if n % 2 else BOB, ["workContext"], [f"fact_{n:08x}"])
    again = ReplyLog(path, keep=1000)
    again.load()
    assert len(again) == 1000
    assert await again.get(10) is None and await again.get(1000) is None  # oldest dropped
    assert await again.get(1010) is not None
    record = await again.get(11001)  # the second message of the newest reply
    assert record is not None and record.user_id == BOB and record.fact_ids == ("fact_0000044c",)
    assert await again.forget_user(ALICE) == 500
    assert str(ALICE) not in path.read_text()
    third = ReplyLog(path)
    third.load()
    assert len(third) == 500
    assert await third.get(11000) is not None and await third.get(10990) is None  # Bob's kept, Alice's gone


async def test_a_damaged_reply_file_is_kept_aside_and_the_log_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "replies.json"
    path.write_bytes(b"[[[")
    log = ReplyLog(path)
    log.load()
    assert len(log) == 0 and any(".corrupt-" in p.name for p in tmp_path.iterdir())
