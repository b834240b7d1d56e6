"""Sharding: the bot runs the shards SHARD_COUNT and SHARD_IDS give it, names them in its log, keeps health per
shard (heartbeat, health check, metrics gauge), and leaves the slash-command sync to the process with shard 0.

Events go through the bot's real dispatch: directly (`bot.dispatch("shard_ready", 2)`, as a gateway delivers
them) and through discord.py's own gateway code (`tests/gateway.py`), so the names and arguments are the
library's.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from discord import app_commands
from discord.ext import commands

from bot.ops.health import check_heartbeat, healthcheck_main
from tests.cogs.conftest import MakeHarness
from tests.gateway import bind_shards, shard_connection_lost, shard_ready, shard_resumed
from tests.helpers import Harness, dispatch


def heartbeat(h: Harness) -> dict[str, Any]:
    return dict(json.loads((h.settings.data_dir / "heartbeat.json").read_bytes()))


def shard_states(h: Harness) -> dict[int, bool]:
    return {shard["id"]: shard["connected"] for shard in heartbeat(h)["shards"]}


def health(h: Harness) -> tuple[bool, str]:
    return check_heartbeat(h.settings.data_dir, max_age_seconds=90)


def messages(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.client.memory_bot" and r.levelno == level]


async def test_the_bot_runs_exactly_the_configured_shards(make_harness: MakeHarness) -> None:
    h = await make_harness(shard_count=8, shard_ids=(3, 2))
    assert isinstance(h.bot, commands.AutoShardedBot)
    assert (h.bot.shard_count, h.bot.shard_ids) == (8, [2, 3])  # what discord.py's launch_shards reads
    assert h.bot.own_shard_ids() == [2, 3]
    assert h.bot.shard_plan() == "running shards 2,3 of 8"
    assert not h.bot.runs_shard_zero

    every = await make_harness(shard_count=4)
    assert (every.bot.shard_count, every.bot.shard_ids) == (4, None)  # all four, in this process
    assert every.bot.shard_plan() == "running shards 0-3 of 4"
    assert every.bot.runs_shard_zero


async def test_unset_lets_discord_recommend_the_count(make_harness: MakeHarness) -> None:
    h = await make_harness()
    assert (h.bot.shard_count, h.bot.shard_ids) == (None, None)  # discord.py asks GET /gateway/bot at connect
    assert h.bot.shard_plan() == "running as many shards as Discord recommends"
    assert h.bot.runs_shard_zero
    assert not h.bot.gateway_connected


async def test_health_follows_each_shard_through_the_bots_dispatch(
    make_harness: MakeHarness, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    h = await make_harness(shard_count=8, shard_ids=(2, 3))
    caplog.set_level(logging.INFO, logger="bot.client.memory_bot")

    await dispatch(h.bot, "shard_ready", 2)
    assert shard_states(h) == {2: True, 3: False}
    assert heartbeat(h)["connected"] is False and heartbeat(h)["shardCount"] == 8
    assert health(h) == (False, "unhealthy: shard 3 of 8 not connected to Discord")
    assert not h.resources.metrics.gateway_connected

    await dispatch(h.bot, "shard_ready", 3)
    assert shard_states(h) == {2: True, 3: True} and heartbeat(h)["connected"] is True
    ok, reason = health(h)
    assert ok and reason.startswith("healthy: connected, heartbeat ") and "shards 2,3 of 8" in reason
    assert h.resources.metrics.gateway_connected

    await dispatch(h.bot, "shard_disconnect", 3)
    await dispatch(h.bot, "shard_disconnect", 3)  # discord.py repeats it for each failed reconnect
    assert shard_states(h) == {2: True, 3: False}
    assert healthcheck_main(h.settings.data_dir, 90) == 1
    assert capsys.readouterr().out == "unhealthy: shard 3 of 8 not connected to Discord\n"
    assert not h.resources.metrics.gateway_connected

    await dispatch(h.bot, "shard_resumed", 3)
    assert shard_states(h) == {2: True, 3: True}
    assert healthcheck_main(h.settings.data_dir, 90) == 0
    assert "shards 2,3 of 8" in capsys.readouterr().out

    assert messages(caplog) == [
        "shard 2 ready with 0 guilds", "shard 3 ready with 0 guilds", "shard 3 resumed its gateway session",
    ]
    assert messages(caplog, logging.WARNING) == [  # once, not once per reconnect attempt
        "shard 3 disconnected from the Discord gateway; discord.py is reconnecting",
    ]


async def test_discord_pys_own_gateway_events_reach_the_heartbeat(
    make_harness: MakeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(shard_count=4, shard_ids=(1,))
    bind_shards(h.bot)
    caplog.set_level(logging.INFO, logger="bot.client.memory_bot")

    await shard_ready(h.bot, 1, guilds=2)
    assert h.bot.is_ready()  # discord.py's `ready`: every shard of this process is ready
    assert shard_states(h) == {1: True} and heartbeat(h)["guilds"] == 2
    assert messages(caplog)[:2] == [
        "shard 1 ready with 2 guilds", "connected as MemoryBot (id 424242424242424242) to 2 guilds, shard 1 of 4",
    ]

    queued = await shard_connection_lost(h.bot, 1)
    assert [item.shard.id for item in queued if item.shard is not None] == [1]  # discord.py will resume it
    assert health(h) == (False, "unhealthy: shard 1 of 4 not connected to Discord")

    await shard_resumed(h.bot, 1)
    assert health(h)[0] and shard_states(h) == {1: True}
    assert "shard 1 resumed its gateway session" in messages(caplog)


async def test_closing_marks_every_shard_disconnected(make_harness: MakeHarness) -> None:
    h = await make_harness(shard_count=2)
    await dispatch(h.bot, "shard_ready", 0)
    await dispatch(h.bot, "shard_ready", 1)
    assert health(h)[0]
    await h.close()
    assert shard_states(h) == {0: False, 1: False} and heartbeat(h)["connected"] is False
    assert health(h) == (False, "unhealthy: shards 0,1 of 2 not connected to Discord")


def record_syncs(h: Harness) -> list[object]:
    calls: list[object] = []

    async def sync(*, guild: object = None) -> list[app_commands.AppCommand]:
        calls.append(guild)
        return []

    h.bot.tree.sync = sync  # type: ignore[method-assign]  # Discord's HTTP API
    return calls


@pytest.mark.parametrize(
    ("shards", "syncs"),
    [({}, True), ({"shard_count": 4, "shard_ids": (0, 1)}, True), ({"shard_count": 4, "shard_ids": (2, 3)}, False)],
    ids=["unsharded", "with-shard-0", "without-shard-0"],
)
async def test_only_the_process_with_shard_zero_syncs_commands(
    make_harness: MakeHarness, caplog: pytest.LogCaptureFixture, shards: dict[str, Any], syncs: bool
) -> None:
    h = await make_harness(sync_commands=True, **shards)  # forced, as a shared .env would force every process
    calls = record_syncs(h)
    caplog.set_level(logging.INFO, logger="bot.client.memory_bot")
    await h.bot.sync_commands()
    assert calls == ([None] if syncs else [])
    left_to_shard_zero = "slash commands are synced by the process running shard 0; not syncing here"
    assert (left_to_shard_zero in messages(caplog)) == (not syncs)
