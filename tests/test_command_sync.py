"""Slash-command sync only on change (bot/client/command_sync.py), with a real discord.py CommandTree.

Only `CommandTree.sync` is replaced (it is Discord's HTTP API); everything the fingerprint is computed from is
discord.py's own serialisation of the commands.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord
import pytest
from discord import app_commands

from bot.client.command_sync import STATE_FILE, commands_fingerprint, sync_if_changed
from tests.helpers import http_error

GUILD = 1234
OTHER_GUILD = 5678


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


class Discord:
    """What Discord holds per target (None = global, else a server id) after each bulk overwrite: the names the
    tree sent there, from discord.py's own serialisation (`CommandTree.sync` sends `_get_all_commands`)."""

    def __init__(self) -> None:
        self.registered: dict[int | None, list[str]] = {}
        self.syncs: list[int | None] = []
        self.refuse: set[int | None] = set()

    def attach(self, tree: Any) -> Any:
        async def sync(*, guild: discord.abc.Snowflake | None = None) -> list[app_commands.AppCommand]:
            target = guild.id if guild is not None else None
            self.syncs.append(target)
            if target in self.refuse:
                raise http_error(403, "Missing Access")
            self.registered[target] = sorted(c.name for c in tree._get_all_commands(guild=guild))
            return []

        tree.sync = sync
        return tree

    def visible_in(self, guild_id: int) -> list[str]:
        """What a member of that server sees in the command picker: global commands and the server's own."""
        return sorted(self.registered.get(None, []) + self.registered.get(guild_id, []))


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
    assert [getattr(g, "id", None) for g in guild_calls] == [1234, None]  # then the global copy is emptied
    assert [c.name for c in guild_tree.get_commands(guild=discord.Object(1234))] == ["memory"]
    assert calls == [None]


async def test_a_corrupt_state_file_means_sync(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{not json")
    tree = build_tree()
    calls = record_syncs(tree)
    assert await sync_if_changed(tree, tmp_path) is True
    assert calls == [None]


# --- moving the target never leaves two copies ---------------------------------------------------------------


async def test_global_then_one_server_leaves_one_copy_in_that_server(tmp_path: Path) -> None:
    discord_side = Discord()
    await sync_if_changed(discord_side.attach(build_tree()), tmp_path)
    assert discord_side.visible_in(GUILD) == ["memory"]
    tree = discord_side.attach(build_tree())
    assert await sync_if_changed(tree, tmp_path, guild_id=GUILD) is True
    assert discord_side.visible_in(GUILD) == ["memory"], "a duplicate /memory in the test server"
    assert discord_side.registered[None] == [], "COMMAND_SYNC_GUILD_ID means this one server only"
    assert [c.name for c in tree.get_commands()] == ["memory"], "the tree itself keeps its global commands"
    again = discord_side.attach(build_tree())
    assert await sync_if_changed(again, tmp_path, guild_id=GUILD) is False


async def test_one_server_then_global_removes_the_server_copy(tmp_path: Path) -> None:
    discord_side = Discord()
    await sync_if_changed(discord_side.attach(build_tree()), tmp_path, guild_id=GUILD)
    assert await sync_if_changed(discord_side.attach(build_tree()), tmp_path) is True
    assert discord_side.registered == {None: ["memory"], GUILD: []}
    assert discord_side.visible_in(GUILD) == ["memory"]


async def test_one_server_then_another_empties_the_first(tmp_path: Path) -> None:
    discord_side = Discord()
    await sync_if_changed(discord_side.attach(build_tree()), tmp_path, guild_id=GUILD)
    assert await sync_if_changed(discord_side.attach(build_tree()), tmp_path, guild_id=OTHER_GUILD) is True
    assert discord_side.registered[GUILD] == [] and discord_side.registered[OTHER_GUILD] == ["memory"]


async def test_a_state_file_without_a_target_counts_as_unknown(tmp_path: Path) -> None:
    """Written by an earlier version after a global sync and a switch to one server: the duplicate it left is
    removed once, even though the server's commands did not change."""
    discord_side = Discord()
    discord_side.registered = {None: ["memory"], GUILD: ["memory"]}
    tree = build_tree()
    tree.copy_global_to(guild=discord.Object(GUILD))
    (tmp_path / STATE_FILE).write_text(json.dumps({"fingerprint": await commands_fingerprint(tree, GUILD)}))
    assert await sync_if_changed(discord_side.attach(build_tree()), tmp_path, guild_id=GUILD) is True
    assert discord_side.visible_in(GUILD) == ["memory"]


async def test_a_refused_cleanup_is_a_warning_and_the_sync_still_counts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    discord_side = Discord()
    await sync_if_changed(discord_side.attach(build_tree()), tmp_path, guild_id=GUILD)
    discord_side.refuse = {GUILD}  # the bot left that server
    with caplog.at_level(logging.WARNING):
        assert await sync_if_changed(discord_side.attach(build_tree()), tmp_path) is True
    assert "could not remove the slash commands synced to guild 1234" in caplog.text
    assert json.loads((tmp_path / STATE_FILE).read_text())["target"] is None


# --- translations ----------------------------------------------------------------------------------------------


class OneWord(app_commands.Translator):
    """Translates every description into French as `word`; names stay as they are."""

    def __init__(self, word: str) -> None:
        self.word = word

    async def translate(
        self, string: app_commands.locale_str, locale: discord.Locale, context: app_commands.TranslationContextTypes
    ) -> str | None:
        where = app_commands.TranslationContextLocation
        names = (where.command_name, where.group_name)
        if locale is not discord.Locale.french or context.location in names:
            return None
        return self.word


async def translated_tree(translator: app_commands.Translator | None) -> Any:
    tree = build_tree()
    if translator is not None:
        await tree.set_translator(translator)
    return tree


async def test_the_fingerprint_covers_the_localizations() -> None:
    """The hash is of what the sync sends: with a translator, the localizations are part of it."""
    plain = await commands_fingerprint(await translated_tree(None))
    french = await commands_fingerprint(await translated_tree(OneWord("Ta mémoire")))
    again = await commands_fingerprint(await translated_tree(OneWord("Ta mémoire")))
    other = await commands_fingerprint(await translated_tree(OneWord("Tes souvenirs")))
    assert french == again and len({plain, french, other}) == 3


async def test_a_changed_translation_syncs_again(tmp_path: Path) -> None:
    first = await translated_tree(OneWord("Ta mémoire"))
    record_syncs(first)
    assert await sync_if_changed(first, tmp_path) is True
    same = await translated_tree(OneWord("Ta mémoire"))  # a restart with the same catalogs
    assert record_syncs(same) == [] and await sync_if_changed(same, tmp_path) is False
    updated = await translated_tree(OneWord("Tes souvenirs"))  # a catalog was updated
    calls = record_syncs(updated)
    assert await sync_if_changed(updated, tmp_path) is True and calls == [None]


# --- the state file --------------------------------------------------------------------------------------------


async def test_an_unwritable_state_file_is_a_warning_not_a_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / STATE_FILE).mkdir()  # something in the way: the write raises IsADirectoryError
    calls = record_syncs(tree := build_tree())
    with caplog.at_level(logging.WARNING):
        assert await sync_if_changed(tree, tmp_path) is True
    assert calls == [None]
    assert "could not record the command sync" in caplog.text and "next start syncs again" in caplog.text


async def test_the_state_file_is_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record_syncs(first := build_tree())
    await sync_if_changed(first, tmp_path)
    before = (tmp_path / STATE_FILE).read_bytes()
    assert (tmp_path / STATE_FILE).stat().st_mode & 0o777 == 0o600

    def failing_replace(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)  # the rename step of the atomic write
    record_syncs(changed := build_tree(extra=True))
    assert await sync_if_changed(changed, tmp_path) is True
    assert (tmp_path / STATE_FILE).read_bytes() == before, "the old record is intact"
    assert sorted(p.name for p in tmp_path.iterdir()) == [STATE_FILE], "no temp file left behind"
