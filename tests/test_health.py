"""Tests for the heartbeat behind the container's HEALTHCHECK, on real files in tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.config import Settings
from bot.ops.health import (
    HEARTBEAT_FILE,
    HealthSettingsError,
    check_heartbeat,
    health_settings,
    healthcheck_main,
    write_heartbeat,
)
from bot.ops.shards import ShardHealth, describe_shards, shard_list


def _write_raw(data_dir: Path, record: object) -> Path:
    path = data_dir / HEARTBEAT_FILE
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def _record(
    *, updated_at: datetime, connected: bool = True, guilds: int = 3, latency: float | None = 45.2
) -> dict[str, object]:
    return {
        "pid": 1234,
        "connected": connected,
        "latencyMs": latency,
        "guilds": guilds,
        "updatedAt": updated_at.isoformat(),
    }


async def test_write_heartbeat_writes_expected_fields(tmp_path: Path) -> None:
    before = datetime.now(UTC)
    await write_heartbeat(tmp_path, connected=True, latency_ms=45.27, guilds=3)
    after = datetime.now(UTC)

    record = json.loads((tmp_path / HEARTBEAT_FILE).read_text(encoding="utf-8"))
    assert set(record) == {"pid", "connected", "latencyMs", "guilds", "updatedAt"}
    assert record["pid"] == os.getpid()
    assert record["connected"] is True
    assert record["latencyMs"] == pytest.approx(45.3)
    assert record["guilds"] == 3
    stamp = datetime.fromisoformat(record["updatedAt"])
    assert stamp.tzinfo is not None and stamp.utcoffset() == timedelta(0)
    assert before <= stamp <= after


async def test_write_then_check_is_healthy(tmp_path: Path) -> None:
    await write_heartbeat(tmp_path, connected=True, latency_ms=45.0, guilds=3)

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90)

    assert ok is True
    assert reason.startswith("healthy: connected, heartbeat ")
    assert "3 guilds" in reason
    assert "latency 45 ms" in reason
    assert "\n" not in reason


async def test_write_heartbeat_creates_missing_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "not" / "yet"
    await write_heartbeat(data_dir, connected=False, latency_ms=None, guilds=0)

    record = json.loads((data_dir / HEARTBEAT_FILE).read_text(encoding="utf-8"))
    assert record["connected"] is False
    assert record["latencyMs"] is None


async def test_rewrites_replace_the_file_and_leave_no_temp_files(tmp_path: Path) -> None:
    for guilds in range(5):
        await write_heartbeat(tmp_path, connected=True, latency_ms=10.0, guilds=guilds)

    assert sorted(p.name for p in tmp_path.iterdir()) == [HEARTBEAT_FILE]
    record = json.loads((tmp_path / HEARTBEAT_FILE).read_text(encoding="utf-8"))
    assert record["guilds"] == 4


async def test_heartbeat_file_is_world_readable(tmp_path: Path) -> None:
    await write_heartbeat(tmp_path, connected=True, latency_ms=10.0, guilds=1)

    assert (tmp_path / HEARTBEAT_FILE).stat().st_mode & 0o777 == 0o644


async def test_failed_write_keeps_old_file_and_removes_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    await write_heartbeat(tmp_path, connected=True, latency_ms=10.0, guilds=1)
    old = (tmp_path / HEARTBEAT_FILE).read_bytes()

    def failing_replace(source: object, target: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", failing_replace)  # the rename step of the atomic write
    with pytest.raises(OSError, match="disk on fire"):
        await write_heartbeat(tmp_path, connected=False, latency_ms=None, guilds=2)

    assert sorted(p.name for p in tmp_path.iterdir()) == [HEARTBEAT_FILE]
    assert (tmp_path / HEARTBEAT_FILE).read_bytes() == old


def test_fresh_heartbeat_is_healthy_with_age_in_reason(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _record(updated_at=now - timedelta(seconds=12)))

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90, now=now)

    assert ok is True
    assert reason == "healthy: connected, heartbeat 12s old, 3 guilds, latency 45 ms"


def test_one_guild_is_singular_and_missing_latency_is_omitted(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _record(updated_at=now, guilds=1, latency=None))

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90, now=now)

    assert ok is True
    assert reason == "healthy: connected, heartbeat 0s old, 1 guild"


def test_stale_heartbeat_is_unhealthy(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _record(updated_at=now - timedelta(seconds=300)))

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90, now=now)

    assert ok is False
    assert reason == "unhealthy: heartbeat 300s old (max 90s)"


def test_age_exactly_at_the_limit_is_still_healthy(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _record(updated_at=now - timedelta(seconds=90)))

    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now)[0] is True
    assert check_heartbeat(tmp_path, max_age_seconds=89.5, now=now)[0] is False


def test_stamp_in_another_timezone_is_compared_correctly(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    plus_two = now.astimezone(timezone(timedelta(hours=2)))
    _write_raw(tmp_path, _record(updated_at=plus_two - timedelta(seconds=5)))

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90, now=now)

    assert ok is True
    assert "heartbeat 5s old" in reason


def test_naive_stamp_is_read_as_utc(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    record = _record(updated_at=now)
    record["updatedAt"] = (now - timedelta(seconds=20)).replace(tzinfo=None).isoformat()
    _write_raw(tmp_path, record)

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90, now=now)

    assert ok is True
    assert "heartbeat 20s old" in reason


def test_disconnected_heartbeat_is_unhealthy_even_when_fresh(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _record(updated_at=now, connected=False))

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90, now=now)

    assert ok is False
    assert reason == "unhealthy: not connected to Discord"


def test_connected_must_be_a_real_true(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    record = _record(updated_at=now)
    record["connected"] = "yes"
    _write_raw(tmp_path, record)

    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (
        False,
        "unhealthy: not connected to Discord",
    )


def test_missing_file_is_unhealthy_and_names_the_path(tmp_path: Path) -> None:
    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90)

    assert ok is False
    assert reason == f"unhealthy: no heartbeat file at {tmp_path / HEARTBEAT_FILE} (is the bot running?)"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[1, 2, 3]",
        b'{"connected": true}',
        b'{"connected": true, "updatedAt": "yesterday"}',
        b'{"connected": true, "updatedAt": null}',
        b"\xff\xfe\x00garbage",
    ],
    ids=["empty", "truncated", "not-an-object", "no-stamp", "bad-stamp", "null-stamp", "binary"],
)
def test_corrupt_file_is_unhealthy(tmp_path: Path, content: bytes) -> None:
    (tmp_path / HEARTBEAT_FILE).write_bytes(content)

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90)

    assert ok is False
    assert reason == "unhealthy: heartbeat file unreadable"


def test_heartbeat_path_that_is_a_directory_is_unhealthy(tmp_path: Path) -> None:
    (tmp_path / HEARTBEAT_FILE).mkdir()

    ok, reason = check_heartbeat(tmp_path, max_age_seconds=90)

    assert ok is False
    assert reason.startswith("unhealthy: heartbeat file unreadable")


async def test_healthcheck_main_exit_codes_and_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert healthcheck_main(tmp_path, 90) == 1
    out = capsys.readouterr().out
    assert out.startswith("unhealthy: no heartbeat file at ")
    assert out.count("\n") == 1

    await write_heartbeat(tmp_path, connected=True, latency_ms=12.0, guilds=2)
    assert healthcheck_main(tmp_path, 90) == 0
    out = capsys.readouterr().out
    assert out.startswith("healthy: connected, ")
    assert "2 guilds" in out

    await write_heartbeat(tmp_path, connected=False, latency_ms=None, guilds=2)
    assert healthcheck_main(tmp_path, 90) == 1
    assert capsys.readouterr().out == "unhealthy: not connected to Discord\n"


HEAVY = ("pydantic", "pydantic_settings", "discord", "openai", "aiofiles", "asyncio", "bot.config", "bot.cli")


def test_python_m_bot_healthcheck_imports_only_the_standard_library(tmp_path: Path) -> None:
    """It runs every 30 s on a 1-vCPU VPS from source: no pydantic, discord.py, openai, aiofiles, not even asyncio.
    (Before, `python -m bot healthcheck` imported pydantic and pydantic-settings.)"""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", "healthcheck"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
    )
    assert result.returncode == 1 and result.stdout.startswith("unhealthy: no heartbeat file")
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "bot.ops.health" in imported
    assert not {name for name in imported if name.split(".")[0] in HEAVY or name in HEAVY}


ENV_CASES = [
    ({}, "", None),
    ({"DATA_DIR": "/srv/env-data"}, "DATA_DIR=/srv/file-data\n", None),  # the environment wins
    ({}, "# comment\nexport DATA_DIR='/srv/quoted data'\nHEALTHCHECK_MAX_AGE_SECONDS=45 # inline\n", None),
    ({"data_dir": "/srv/lower"}, 'DATA_DIR="/srv/double"\n', None),  # any case
    ({"DATA_DIR": ""}, "DATA_DIR=/srv/from-file\nHEALTHCHECK_MAX_AGE_SECONDS=\n", None),  # blank = unset
    ({"HEALTHCHECK_MAX_AGE_SECONDS": "1e2"}, "", None),
    ({"HEALTHCHECK_MAX_AGE_SECONDS": "soon"}, "", "HEALTHCHECK_MAX_AGE_SECONDS"),
    ({}, "HEALTHCHECK_MAX_AGE_SECONDS=-5\n", "HEALTHCHECK_MAX_AGE_SECONDS"),
]


@pytest.mark.parametrize(("environ", "dotenv", "error"), ENV_CASES)
def test_health_settings_resolve_like_the_bots_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], dotenv: str, error: str | None
) -> None:
    """The stdlib reader agrees with pydantic-settings (what the bot uses) on every case, errors included."""
    for name in list(os.environ):
        if name.upper() in {"DATA_DIR", "HEALTHCHECK_MAX_AGE_SECONDS"}:
            monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(dotenv, "utf-8")
    try:
        bot_settings = Settings(discord_token="x")  # reads os.environ and ./.env
    except ValidationError as failure:
        assert error is not None and error.lower() in str(failure).lower()
        with pytest.raises(HealthSettingsError, match=error):
            health_settings()
        return
    assert error is None
    mine = health_settings()
    assert (mine.data_dir, mine.max_age_seconds) == (bot_settings.data_dir, bot_settings.healthcheck_max_age_seconds)


# --- shards ---------------------------------------------------------------------------------------------------


def test_shard_lists_are_short_and_sorted() -> None:
    assert shard_list([3, 2]) == "2,3"
    assert shard_list([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10,11"
    assert shard_list(range(64)) == "0-63"
    assert describe_shards([0], 1) == "shard 0 of 1"
    assert describe_shards([5, 4], 8) == "shards 4,5 of 8"
    assert describe_shards([2], None) == "shard 2"


async def test_a_sharded_heartbeat_records_each_shard(tmp_path: Path) -> None:
    shards = [ShardHealth(3, False), ShardHealth(2, True, 41.26)]
    await write_heartbeat(tmp_path, connected=False, latency_ms=None, guilds=7, shards=shards, shard_count=8)
    record = json.loads((tmp_path / HEARTBEAT_FILE).read_text(encoding="utf-8"))
    assert record["shardCount"] == 8
    assert record["shards"] == [
        {"id": 2, "connected": True, "latencyMs": 41.3}, {"id": 3, "connected": False, "latencyMs": None},
    ]


def _sharded(now: datetime, states: dict[int, bool], *, count: int | None = 8) -> dict[str, object]:
    record = _record(updated_at=now, connected=all(states.values()))
    record["shardCount"] = count
    record["shards"] = [{"id": shard, "connected": up, "latencyMs": 40.0} for shard, up in states.items()]
    return record


def test_every_shard_connected_is_healthy_and_named(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _sharded(now, {2: True, 3: True}))
    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (
        True, "healthy: connected, heartbeat 0s old, shards 2,3 of 8, 3 guilds, latency 45 ms",
    )


@pytest.mark.parametrize(
    ("states", "reason"),
    [
        ({2: True, 3: False}, "unhealthy: shard 3 of 8 not connected to Discord"),
        ({4: False, 5: True, 6: False}, "unhealthy: shards 4,6 of 8 not connected to Discord"),
    ],
)
def test_one_disconnected_shard_makes_the_process_unhealthy(
    tmp_path: Path, states: dict[int, bool], reason: str
) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    record = _sharded(now, states)
    record["connected"] = True  # even if the top-level flag disagreed, the shards decide
    _write_raw(tmp_path, record)
    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (False, reason)


def test_a_single_shard_reads_as_an_unsharded_bot(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _sharded(now, {0: True}, count=1))
    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (
        True, "healthy: connected, heartbeat 0s old, 3 guilds, latency 45 ms",
    )
    _write_raw(tmp_path, _sharded(now, {0: False}, count=1))
    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (False, "unhealthy: not connected to Discord")


def test_a_stale_sharded_heartbeat_is_stale_first(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    _write_raw(tmp_path, _sharded(now - timedelta(seconds=300), {0: False}))
    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (False, "unhealthy: heartbeat 300s old (max 90s)")


@pytest.mark.parametrize(
    "shards",
    ["all", [{"connected": True}], [{"id": "2", "connected": True}], [[2, True]], [{"id": True, "connected": True}]],
    ids=["not-a-list", "no-id", "text-id", "not-an-object", "bool-id"],
)
def test_malformed_shards_are_unreadable(tmp_path: Path, shards: object) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    record = _record(updated_at=now)
    record["shards"] = shards
    _write_raw(tmp_path, record)
    assert check_heartbeat(tmp_path, max_age_seconds=90, now=now) == (False, "unhealthy: heartbeat file unreadable")
