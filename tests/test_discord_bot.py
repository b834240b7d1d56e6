"""The Bot subclass: both cogs load, a broken one is logged and skipped, intents are the minimum, no login needed."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import discord
import pytest

import bot.client.memory_bot
from bot.app import build_resources, start_memory
from bot.client.memory_bot import EXTENSIONS, MemoryBot, build_intents
from tests.helpers import make_client_user, make_settings
from tests.support.llm_server import ChatServer


@pytest.fixture
async def memory_bot(chat_server: ChatServer, tmp_path: Path) -> AsyncIterator[MemoryBot]:
    resources = build_resources(make_settings(chat_server, tmp_path / "data"))
    await start_memory(resources)
    instance = MemoryBot(resources)
    instance._connection.user = make_client_user()
    yield instance
    await instance.close()
    await resources.aclose()


async def test_load_extensions_loads_both_cogs(memory_bot: MemoryBot) -> None:
    await memory_bot.load_extensions()
    assert set(memory_bot.extensions) == set(EXTENSIONS) == {
        "cogs.chat", "cogs.memory", "cogs.privacy", "cogs.admin", "cogs.metrics", "cogs.settings", "cogs.usage",
        "cogs.reply_actions", "cogs.deletes",
    }
    assert set(memory_bot.cogs) == {
        "ChatCog", "MemoryCog", "PrivacyCog", "AdminCog", "MetricsCog", "SettingsCog", "UsageCog", "ReplyActionsCog",
        "DeletesCog",
    }
    assert memory_bot.failed_extensions == []
    assert memory_bot.tree.get_command("memory") is not None
    listeners = [name for name, _ in memory_bot.get_cog("ChatCog").get_listeners()]  # type: ignore[union-attr]
    assert listeners == ["on_message"]


async def test_a_broken_extension_is_logged_and_skipped(
    memory_bot: MemoryBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "extensions"
    broken.mkdir()
    (broken / "explodes_in_setup.py").write_text(
        "async def setup(bot):\n    raise RuntimeError('this cog is broken')\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(broken))
    monkeypatch.setattr(
        bot.client.memory_bot, "EXTENSIONS", ("cogs.chat", "cogs.does_not_exist", "explodes_in_setup", "cogs.memory")
    )
    with caplog.at_level(logging.ERROR, logger="bot.client.memory_bot"):
        await memory_bot.load_extensions()
    assert memory_bot.failed_extensions == ["cogs.does_not_exist", "explodes_in_setup"]
    assert set(memory_bot.cogs) == {"ChatCog", "MemoryCog"}  # the good ones still load, after a bad one too
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.args for r in errors] == [("cogs.does_not_exist",), ("explodes_in_setup",)]
    assert all(r.exc_info is not None for r in errors)  # with the traceback
    sys.modules.pop("explodes_in_setup", None)


def test_intents_are_the_minimum_with_message_content() -> None:
    intents = build_intents()
    assert intents.message_content
    assert intents.guilds and intents.guild_messages and intents.dm_messages
    assert not intents.members and not intents.presences
    expected = discord.Intents(guilds=True, guild_messages=True, dm_messages=True, message_content=True)
    assert intents == expected, "no intent beyond what the chat needs"


async def test_bot_user_comes_from_the_connection_without_logging_in(memory_bot: MemoryBot) -> None:
    assert memory_bot.user is not None and memory_bot.user.bot
    assert memory_bot.accepting
    assert not memory_bot.is_ready()
