"""Slash-command sync only on change (bot/command_sync.py), with a real discord.py CommandTree.

Only `CommandTree.sync` is replaced (it is Discord's HTTP API); everything the fingerprint is computed from is
discord.py's own serialisation of the commands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord
import pytest
from discord import app_commands

from bot.command_sync import STATE_FILE, sync_if_changed


def build_tree(*, show_description: str = "See what I remember about you", extra: bool = False) -> Any:
    client = discord.Client(intents=discord.Intents.none())
    tree: app_commands.CommandTree[discord.Client] = app_commands.CommandTree(client)
    group = app_commands.Group(name="memory", description="Your memory")

    @group.command(name="show", description=show_description)
    async def show(interaction: discord.Interaction) -> None: ...

    @group.command(name="forget", description="Forget a fact, or everything")
    @app_commands.describe(fact="The id of one fact")
    async def forget(interaction: discord.Interaction, fact: str | None = None) -> None: ...

    tree.add_command(group)
    if extra:

        @tree.command(name="ping", description="Check the bot is alive")
        async def ping(interaction: discord.Interaction) -> None: ...

    return tree


def record_syncs(tree: Any, *, fail: Callable[[], BaseException] | None = None) -> list[discord.abc.Snowflake | None]:
    calls: list[discord.abc.Snowflake | None] = []

    async def sync(*, guild: discord.abc.Snowflake | None = None) -> list[app_commands.AppCommand]:
        calls.append(guild)
        if fail is not None:
            raise fail()
        return []

    tree.sync = sync
    return calls


async def test_first_call_syncs_and_writes_the_state_file(tmp_path: Path) -> None:
    tree = build_tree()
    calls = record_syncs(tree)
    assert await sync_if_changed(tree, tmp_path) is True
    assert calls == [None]  # global
    state = json.loads((tmp_path / STATE_FILE).read_text())
    assert len(state["fingerprint"]) == 64


async def test_unchanged_commands_do_not_sync_again(tmp_path: Path) -> None:
    first = build_tree()
    record_syncs(first)
    await sync_if_changed(first, tmp_path)
    second = build_tree()  # a restart: a new tree with the same definitions
    calls = record_syncs(second)
    assert await sync_if_changed(second, tmp_path) is False
    assert calls == []


@pytest.mark.parametrize(
    "changed",
    [
        lambda: build_tree(show_description="Show everything I know about you"),
        lambda: build_tree(extra=True),
    ],
    ids=["description", "new command"],
)
async def test_a_changed_definition_syncs_again(tmp_path: Path, changed: Callable[[], Any]) -> None:
    original = build_tree()
    record_syncs(original)
    await sync_if_changed(original, tmp_path)
    before = (tmp_path / STATE_FILE).read_text()
    tree = changed()
    calls = record_syncs(tree)
    assert await sync_if_changed(tree, tmp_path) is True
    assert calls == [None]
    assert (tmp_path / STATE_FILE).read_text() != before
    again = changed()
    again_calls = record_syncs(again)
    assert await sync_if_changed(again, tmp_path) is False
    assert again_calls == []


async def test_force_syncs_even_when_unchanged(tmp_path: Path) -> None:
    tree = build_tree()
    calls = record_syncs(tree)
    await sync_if_changed(tree, tmp_path)
    assert await sync_if_changed(tree, tmp_path, force=True) is True
    assert calls == [None, None]


async def test_a_failed_sync_is_retried_at_the_next_start(tmp_path: Path) -> None:
    tree = build_tree()
    calls = record_syncs(tree, fail=lambda: RuntimeError("429 Too Many Requests"))
    with pytest.raises(RuntimeError):
        await sync_if_changed(tree, tmp_path)
    assert not (tmp_path / STATE_FILE).exists()
    retry = build_tree()
    retry_calls = record_syncs(retry)
    assert await sync_if_changed(retry, tmp_path) is True
    assert (calls, retry_calls) == ([None], [None])


async def test_guild_sync_targets_the_guild_and_is_tracked_separately(tmp_path: Path) -> None:
    tree = build_tree()
    calls = record_syncs(tree)
    await sync_if_changed(tree, tmp_path)
    guild_tree = build_tree()
    guild_calls = record_syncs(guild_tree)
    assert await sync_if_changed(guild_tree, tmp_path, guild_id=1234) is True
    assert [getattr(g, "id", None) for g in guild_calls] == [1234]
    assert [c.name for c in guild_tree.get_commands(guild=discord.Object(1234))] == ["memory"]
    assert calls == [None]


async def test_a_corrupt_state_file_means_sync(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{not json")
    tree = build_tree()
    calls = record_syncs(tree)
    assert await sync_if_changed(tree, tmp_path) is True
    assert calls == [None]
