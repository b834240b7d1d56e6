"""Heartbeat file behind the container's HEALTHCHECK.

A process that merely exists is not a healthy bot: it can be stuck reconnecting to Discord forever. So the
running bot rewrites ``DATA_DIR/heartbeat.json`` on a timer while connected, and ``python -m bot healthcheck``
(a separate, short-lived process) reads it and fails when it is missing, stale, or says "disconnected".

This module imports neither discord nor the LLM client (only the engine's atomic-write helper): the health check
runs every 30 seconds on a small VPS and must start fast and work without any bot settings (no DISCORD_TOKEN).
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.memory.atomic import replace_file_sync

HEARTBEAT_FILE = "heartbeat.json"
"""File name of the heartbeat, directly inside DATA_DIR."""


def heartbeat_path(data_dir: Path) -> Path:
    """Where the heartbeat lives: one fixed name in DATA_DIR, shared by the bot and the checker."""
    return Path(data_dir) / HEARTBEAT_FILE


async def write_heartbeat(data_dir: Path, *, connected: bool, latency_ms: float | None, guilds: int) -> None:
    """Record that the bot is alive, and whether it is connected to Discord right now.

    The blocking file write runs in a worker thread so the event loop (and the Discord gateway heartbeat it
    keeps) is never held up by a slow disk.
    """
    record: dict[str, Any] = {
        "pid": os.getpid(),
        "connected": bool(connected),
        "latencyMs": None if latency_ms is None else round(float(latency_ms), 1),
        "guilds": int(guilds),
        "updatedAt": datetime.now(UTC).isoformat(),
    }
    payload = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
    path = heartbeat_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Atomic so the checker never reads half a file. No fsync: the heartbeat is advisory and rewritten often.
    # 0644: it holds nothing secret, and a checker running as another user should be able to read it.
    await asyncio.to_thread(replace_file_sync, path, payload, fsync=None, mode=0o644)


def check_heartbeat(data_dir: Path, *, max_age_seconds: float, now: datetime | None = None) -> tuple[bool, str]:
    """Decide whether the heartbeat says "healthy", with a one-line reason for ``docker inspect``.

    Healthy means: the file exists and parses, ``connected`` is true, and ``updatedAt`` is no older than
    ``max_age_seconds``. ``now`` is injectable so tests need no sleeping or clock patching.
    """
    path = heartbeat_path(data_dir)
    current = now if now is not None else datetime.now(UTC)
    if current.tzinfo is None:
        current = current.replace(tzinfo=UTC)

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return False, f"unhealthy: no heartbeat file at {path} (is the bot running?)"
    except OSError as exc:
        return False, f"unhealthy: heartbeat file unreadable ({exc.__class__.__name__})"

    try:
        record = json.loads(raw)
        if not isinstance(record, dict):
            raise ValueError("heartbeat is not a JSON object")
        updated_at = datetime.fromisoformat(str(record["updatedAt"]))
    except (ValueError, KeyError, TypeError):
        return False, "unhealthy: heartbeat file unreadable"
    if updated_at.tzinfo is None:
        # Written by us it is always aware; treat a naive stamp as UTC rather than crash on comparison.
        updated_at = updated_at.replace(tzinfo=UTC)

    age = (current - updated_at).total_seconds()
    if age > max_age_seconds:
        return False, f"unhealthy: heartbeat {age:.0f}s old (max {max_age_seconds:.0f}s)"
    if record.get("connected") is not True:
        return False, "unhealthy: not connected to Discord"

    parts = [f"healthy: connected, heartbeat {max(age, 0.0):.0f}s old"]
    guilds = record.get("guilds")
    if isinstance(guilds, int) and not isinstance(guilds, bool):
        parts.append(f"{guilds} guild" + ("" if guilds == 1 else "s"))
    latency = record.get("latencyMs")
    if isinstance(latency, int | float) and not isinstance(latency, bool):
        parts.append(f"latency {latency:.0f} ms")
    return True, ", ".join(parts)


def healthcheck_main(data_dir: Path, max_age_seconds: float) -> int:
    """Entry point of ``python -m bot healthcheck``: print the reason, return the exit code (0 ok, 1 not).

    Docker keeps the printed line in ``State.Health.Log``, which is what an operator sees first.
    """
    ok, reason = check_heartbeat(Path(data_dir), max_age_seconds=max_age_seconds)
    print(reason, flush=True)
    return 0 if ok else 1
