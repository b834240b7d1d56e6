"""The servers' community settings on both backends: the lookup goes thread, channel, category, server; a model
the operator no longer allows is skipped; reset, roles and the DM switch; everything a server set (its channels'
settings included, no other server's) is forgotten when the bot leaves it; the settings survive a restart, and
on PostgreSQL another process sees a change."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.memory.drivers.bundle import COMMUNITY_FILE
from bot.memory.models import Location
from bot.memory.records.community_settings import Chosen, CommunityBook
from bot.storage.errors import RecordsUnreadable
from bot.storage.pg.records import PostgresRecords
from bot.storage.records import FileRecords
from tests.conftest_state import WAIT_SECONDS, Databases

GUILD, OTHER_GUILD = 500, 600
CATEGORY, CHANNEL, THREAD, NEIGHBOUR = 510, 520, 530, 540
IN_THREAD = Location(guild_id=GUILD, thread_id=THREAD, channel_id=CHANNEL, category_id=CATEGORY)
IN_CHANNEL = Location(guild_id=GUILD, channel_id=CHANNEL, category_id=CATEGORY)
IN_NEIGHBOUR = Location(guild_id=GUILD, channel_id=NEIGHBOUR, category_id=CATEGORY)
ELSEWHERE = Location(guild_id=OTHER_GUILD, channel_id=CHANNEL + 1000)
ALLOWED = ("base-model", "big-model", "other-model")


async def opened(tmp_path: Path, databases: Databases | None) -> CommunityBook:
    table = (
        FileRecords(tmp_path / COMMUNITY_FILE, on_damaged="refuse")
        if databases is None
        else PostgresRecords(await databases.open(), "community")
    )
    book = CommunityBook(table)
    await book.open()
    return book


async def test_the_most_specific_setting_wins_and_each_place_keeps_its_own(
    tmp_path: Path, databases: Databases | None
) -> None:
    book = await opened(tmp_path, databases)
    assert book.at(IN_THREAD).prompt is None and book.at(Location()).prompt is None
    await book.set_prompt(GUILD, None, "Server voice.")
    await book.set_model(GUILD, None, "other-model")
    await book.set_prompt(GUILD, CATEGORY, "Category voice.")
    await book.set_model(GUILD, CHANNEL, "big-model")
    await book.set_prompt(GUILD, THREAD, "Thread voice.")

    assert book.at(IN_THREAD).prompt == Chosen("Thread voice.", "thread", THREAD)
    assert book.at(IN_CHANNEL).prompt == Chosen("Category voice.", "category", CATEGORY)
    assert book.at(IN_CHANNEL).model(ALLOWED) == Chosen("big-model", "channel", CHANNEL)
    assert book.at(IN_THREAD).model(ALLOWED) == Chosen("big-model", "channel", CHANNEL)  # threads follow
    assert book.at(IN_NEIGHBOUR).model(ALLOWED) == Chosen("other-model", "server", GUILD)
    assert book.at(Location(guild_id=GUILD, channel_id=NEIGHBOUR)).prompt == Chosen("Server voice.", "server", GUILD)
    assert book.at(ELSEWHERE) == book.at(Location())  # another server, and DMs: nothing set
    # The operator took big-model off the list: the next level's model applies instead.
    assert book.at(IN_CHANNEL).model(("base-model", "other-model")) == Chosen("other-model", "server", GUILD)

    again = await opened(tmp_path, databases)  # a restart
    assert again.at(IN_THREAD) == book.at(IN_THREAD)
    assert again.set_here(GUILD, CHANNEL) == {"guild": str(GUILD), "model": "big-model"}

    assert await again.reset(GUILD, CHANNEL) is True
    assert await again.reset(GUILD, CHANNEL) is False
    assert again.at(IN_CHANNEL).model(ALLOWED) == Chosen("other-model", "server", GUILD)
    assert again.set_here(GUILD, CHANNEL) == {}  # a record without settings is not kept


async def test_roles_dms_and_leaving_a_server(tmp_path: Path, databases: Databases | None) -> None:
    book = await opened(tmp_path, databases)
    assert book.allowed_roles(GUILD) == frozenset() and book.dms_allowed(GUILD)
    await book.set_allowed_roles(GUILD, frozenset({7, 8}))
    await book.set_dms_allowed(GUILD, False)
    await book.set_prompt(GUILD, None, "Server voice.")
    await book.set_prompt(GUILD, CHANNEL, "Channel voice.")
    await book.set_prompt(OTHER_GUILD, None, "Their voice.")
    await book.set_model(OTHER_GUILD, CHANNEL + 1000, "big-model")
    assert await book.reset(GUILD, None) is True  # the prompt goes; roles and the DM choice stay
    assert book.allowed_roles(GUILD) == frozenset({7, 8}) and not book.dms_allowed(GUILD)
    assert book.guilds_with_dms_off() == frozenset({GUILD})

    again = await opened(tmp_path, databases)
    assert again.allowed_roles(GUILD) == frozenset({7, 8}) and not again.dms_allowed(GUILD)
    assert await again.forget_guild(GUILD) == 2  # the server's record and its channel's
    assert again.at(IN_CHANNEL).prompt is None and again.allowed_roles(GUILD) == frozenset()
    assert again.dms_allowed(GUILD)
    assert again.at(ELSEWHERE).prompt == Chosen("Their voice.", "server", OTHER_GUILD)
    assert again.at(ELSEWHERE).model(ALLOWED) == Chosen("big-model", "channel", CHANNEL + 1000)
    assert (await opened(tmp_path, databases)).at(IN_CHANNEL).prompt is None


async def test_an_unreadable_file_refuses_to_start(tmp_path: Path) -> None:
    """Starting without the file would silently lift a server's restrictions (allowed roles, DMs off)."""
    (tmp_path / COMMUNITY_FILE).write_bytes(b"{broken")
    with pytest.raises(RecordsUnreadable):
        await opened(tmp_path, None)


async def test_another_process_sees_a_change(pg_databases: Databases) -> None:
    one = CommunityBook(PostgresRecords(await pg_databases.open(), "community"))
    other_table = PostgresRecords(await pg_databases.open(), "community")
    other = CommunityBook(other_table)
    await one.open()
    await other.open()
    await one.set_model(GUILD, CHANNEL, "big-model")
    # By the notification: no reload asked for.
    await asyncio.wait_for(other_table.wait_for(lambda: other.at(IN_CHANNEL).model(ALLOWED) is not None), WAIT_SECONDS)
    assert other.at(IN_CHANNEL).model(ALLOWED) == Chosen("big-model", "channel", CHANNEL)
