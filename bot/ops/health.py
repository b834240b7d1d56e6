"""Heartbeat file behind the container's HEALTHCHECK.

A process that merely exists is not a healthy bot: it can be stuck reconnecting to Discord forever. So the
running bot rewrites ``DATA_DIR/heartbeat.json`` on a timer while connected, and ``python -m bot healthcheck``
(a separate, short-lived process) reads it and fails when it is missing, stale, or says "disconnected".

The checking side is standard library only: the health check runs every 30 seconds on a small VPS, from source,
and must start fast and work without any bot settings (no DISCORD_TOKEN). So it reads its two settings itself
(`health_settings`), resolved as pydantic-settings resolves them for the bot, instead of importing `bot.config`.
Only the bot's writer imports the engine's atomic-write helper, when it first writes.

A sharded bot's heartbeat also lists this process's shards (`shardCount`, and `shards`: id, connected, latency),
and one disconnected shard makes the process unhealthy: its servers hear nothing from the bot, however well the
other shards are doing. A heartbeat without `shards` (written by an older bot) is judged by `connected` alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.ops.shards import ShardHealth, describe_shards

HEARTBEAT_FILE = "heartbeat.json"
"""File name of the heartbeat, directly inside DATA_DIR."""
DEFAULT_DATA_DIR = Path("./data")
DEFAULT_MAX_AGE_SECONDS = 90.0
ENV_FILE = ".env"


@dataclass(frozen=True, slots=True)
class HealthSettings:
    data_dir: Path = DEFAULT_DATA_DIR
    max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS


class HealthSettingsError(ValueError):
    """A malformed setting, as one line naming it (the health check prints it as the reason)."""


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.split(" #", 1)[0].split("\t#", 1)[0].strip()  # an unquoted value ends at a comment


def read_env_file(path: Path) -> dict[str, str]:
    """`KEY=value` lines of a `.env` (optional `export`, quotes, comments), keys upper-cased; {} when absent."""
    try:
        text = path.read_text("utf-8")
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return {}
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        values[key.upper()] = _unquote(value)
    return values


def health_settings(environ: Mapping[str, str] | None = None, env_file: Path = Path(ENV_FILE)) -> HealthSettings:
    """DATA_DIR and HEALTHCHECK_MAX_AGE_SECONDS as the bot's settings resolve them: the environment (any case)
    over `.env` in the working directory over the defaults, a blank value meaning "the default"."""
    source = os.environ if environ is None else environ
    environment = {key.upper(): value for key, value in source.items()}
    file_values = read_env_file(env_file)

    def lookup(name: str) -> str | None:
        for values in (environment, file_values):
            value = values.get(name)
            if value is not None and value.strip():
                return value
        return None

    data_dir = lookup("DATA_DIR")
    max_age = lookup("HEALTHCHECK_MAX_AGE_SECONDS")
    seconds = DEFAULT_MAX_AGE_SECONDS
    if max_age is not None:
        try:
            seconds = float(max_age.strip())
        except ValueError:
            seconds = float("nan")
        if not seconds > 0:
            raise HealthSettingsError(
                "invalid configuration: HEALTHCHECK_MAX_AGE_SECONDS must be a number of seconds greater than 0"
            )
    return HealthSettings(Path(data_dir.strip()) if data_dir is not None else DEFAULT_DATA_DIR, seconds)


def heartbeat_path(data_dir: Path) -> Path:
    """Where the heartbeat lives: one fixed name in DATA_DIR, shared by the bot and the checker."""
    return Path(data_dir) / HEARTBEAT_FILE


def _milliseconds(value: float | None) -> float | None:
    return None if value is None else round(float(value), 1)


async def write_heartbeat(
    data_dir: Path,
    *,
    connected: bool,
    latency_ms: float | None,
    guilds: int,
    shards: Sequence[ShardHealth] | None = None,
    shard_count: int | None = None,
) -> None:
    """Record that the bot is alive, and whether it is connected to Discord right now (`connected`: every shard of
    this process is; `shards`, when given, says which are).

    The blocking file write runs in a worker thread so the event loop (and the Discord gateway heartbeat it
    keeps) is never held up by a slow disk. Imported here, not at the top: the checker must not load them.
    """
    import asyncio

    from bot.storage.atomic import replace_file_sync

    record: dict[str, Any] = {
        "pid": os.getpid(),
        "connected": bool(connected),
        "latencyMs": _milliseconds(latency_ms),
        "guilds": int(guilds),
        "updatedAt": datetime.now(UTC).isoformat(),
    }
    if shards is not None:
        record["shardCount"] = shard_count
        record["shards"] = [
            {"id": shard.id, "connected": bool(shard.connected), "latencyMs": _milliseconds(shard.latency_ms)}
            for shard in sorted(shards, key=lambda shard: shard.id)
        ]
    payload = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
    path = heartbeat_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Atomic so the checker never reads half a file. No fsync: the heartbeat is advisory and rewritten often.
    # 0644: it holds nothing secret, and a checker running as another user should be able to read it.
    await asyncio.to_thread(replace_file_sync, path, payload, fsync=None, mode=0o644)


def _read_shards(record: dict[str, Any]) -> tuple[list[ShardHealth], int | None] | None:
    """The `shards` of a heartbeat, or None when it has none; raises ValueError when they are malformed."""
    entries = record.get("shards")
    if entries is None:
        return None
    count = record.get("shardCount")
    if not isinstance(entries, list) or not (count is None or _is_int(count)):
        raise ValueError("malformed shards")
    shards = []
    for entry in entries:
        if not isinstance(entry, dict) or not _is_int(entry.get("id")):
            raise ValueError("malformed shard")
        shards.append(ShardHealth(entry["id"], entry.get("connected") is True))
    return shards, count


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class _Heartbeat:
    """A heartbeat file as read: its record, when it was written (aware), and its shards (none for a bot with a
    single shard, which reads as an unsharded one: "shard 0 of 1" would tell its operator nothing)."""

    record: dict[str, Any]
    updated_at: datetime
    shards: list[ShardHealth]
    shard_count: int | None


class _Unreadable(Exception):
    """No heartbeat to judge; the message is the unhealthy reason."""


def _read_heartbeat(path: Path) -> _Heartbeat:
    """The heartbeat at `path`; `_Unreadable` when it is missing, cannot be read or does not parse."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _Unreadable(f"unhealthy: no heartbeat file at {path} (is the bot running?)") from None
    except OSError as exc:
        raise _Unreadable(f"unhealthy: heartbeat file unreadable ({exc.__class__.__name__})") from None

    try:
        record = json.loads(raw)
        if not isinstance(record, dict):
            raise ValueError("heartbeat is not a JSON object")
        updated_at = datetime.fromisoformat(str(record["updatedAt"]))
        sharding = _read_shards(record)
    except (ValueError, KeyError, TypeError):
        raise _Unreadable("unhealthy: heartbeat file unreadable") from None
    if updated_at.tzinfo is None:
        # Written by us it is always aware; treat a naive stamp as UTC rather than crash on comparison.
        updated_at = updated_at.replace(tzinfo=UTC)
    shards, count = sharding if sharding is not None and sharding[1] != 1 else ([], None)
    return _Heartbeat(record, updated_at, shards, count)


def _disconnection(heartbeat: _Heartbeat) -> str | None:
    """The unhealthy reason when a shard, or the bot, is not connected to Discord; None when all are."""
    down = [shard.id for shard in heartbeat.shards if not shard.connected]
    if down:
        return f"unhealthy: {describe_shards(down, heartbeat.shard_count)} not connected to Discord"
    if heartbeat.record.get("connected") is not True:
        return "unhealthy: not connected to Discord"
    return None


def _healthy_reason(heartbeat: _Heartbeat, age: float) -> str:
    """The healthy line: the heartbeat's age, then its shards, guilds and latency where it has them."""
    parts = [f"healthy: connected, heartbeat {max(age, 0.0):.0f}s old"]
    if heartbeat.shards:
        parts.append(describe_shards((shard.id for shard in heartbeat.shards), heartbeat.shard_count))
    guilds = heartbeat.record.get("guilds")
    if isinstance(guilds, int) and not isinstance(guilds, bool):
        parts.append(f"{guilds} guild" + ("" if guilds == 1 else "s"))
    latency = heartbeat.record.get("latencyMs")
    if isinstance(latency, int | float) and not isinstance(latency, bool):
        parts.append(f"latency {latency:.0f} ms")
    return ", ".join(parts)


def check_heartbeat(data_dir: Path, *, max_age_seconds: float, now: datetime | None = None) -> tuple[bool, str]:
    """Decide whether the heartbeat says "healthy", with a one-line reason for ``docker inspect``.

    Healthy means: the file exists and parses, ``connected`` is true, every shard listed is connected, and
    ``updatedAt`` is no older than ``max_age_seconds``. A disconnected shard is named in the reason. ``now`` is
    injectable so tests need no sleeping or clock patching.
    """
    path = heartbeat_path(data_dir)
    current = now if now is not None else datetime.now(UTC)
    if current.tzinfo is None:
        current = current.replace(tzinfo=UTC)
    try:
        heartbeat = _read_heartbeat(path)
    except _Unreadable as unreadable:
        return False, str(unreadable)
    age = (current - heartbeat.updated_at).total_seconds()
    if age > max_age_seconds:
        return False, f"unhealthy: heartbeat {age:.0f}s old (max {max_age_seconds:.0f}s)"
    disconnection = _disconnection(heartbeat)
    if disconnection is not None:
        return False, disconnection
    return True, _healthy_reason(heartbeat, age)


def healthcheck_main(data_dir: Path | None = None, max_age_seconds: float | None = None) -> int:
    """Entry point of ``python -m bot healthcheck``: print the reason, return the exit code (0 ok, 1 not).

    Settings not passed in are read from the environment and `.env`. Docker keeps the printed line in
    ``State.Health.Log``, which is what an operator sees first; it reserves exit status 2, so failures are 1.
    """
    if data_dir is None or max_age_seconds is None:
        try:
            settings = health_settings()
        except HealthSettingsError as error:
            print(f"unhealthy: {error}", flush=True)
            return 1
        data_dir = settings.data_dir if data_dir is None else data_dir
        max_age_seconds = settings.max_age_seconds if max_age_seconds is None else max_age_seconds
    ok, reason = check_heartbeat(Path(data_dir), max_age_seconds=max_age_seconds)
    print(reason, flush=True)
    return 0 if ok else 1
