"""The admins' memory switches on both backends (file, PostgreSQL): kept across restarts, only what is off is
stored, the operator's lists win; on PostgreSQL an admin's change on one process applies on all."""

from __future__ import annotations

from pathlib import Path

from bot.switches import SWITCHES_FILE, MemorySwitch, MemorySwitches, SwitchBoard, SwitchTarget
from bot.switches_pg import PostgresMemorySwitches
from tests.conftest_state import Databases, seen_by

GUILD, CHANNEL, OTHER_CHANNEL = 5, 6, 7


async def opened(tmp_path: Path, databases: Databases | None, *, operator_guilds: frozenset[int] = frozenset()
                 ) -> SwitchBoard:
    switches: SwitchBoard
    if databases is None:
        switches = MemorySwitches(tmp_path / SWITCHES_FILE, disabled_guilds=operator_guilds)
    else:
        switches = PostgresMemorySwitches(await databases.open(), disabled_guilds=operator_guilds)
    await switches.open()
    return switches


async def test_switches_survive_restarts_and_only_what_is_off_is_kept(
    tmp_path: Path, databases: Databases | None
) -> None:
    switches = await opened(tmp_path, databases)
    await switches.set_guild(GUILD, learning=False, recall=True)
    await switches.set_channel(CHANNEL, learning=False)
    await switches.set_channel(OTHER_CHANNEL, learning=True)
    again = await opened(tmp_path, databases)
    assert again.guild_switch(GUILD) == MemorySwitch(learning=False, recall=True)
    assert not again.channel_learning(CHANNEL) and again.channel_learning(OTHER_CHANNEL)
    assert again.at(SwitchTarget(GUILD, OTHER_CHANNEL)) == MemorySwitch(learning=False, recall=True)
    assert again.at(SwitchTarget(None, CHANNEL)) == MemorySwitch()  # DMs are never switched off
    await again.set_guild(GUILD, learning=True, recall=True)
    await again.set_channel(CHANNEL, learning=True)
    third = await opened(tmp_path, databases)
    assert third.at(SwitchTarget(GUILD, CHANNEL)) == MemorySwitch()
    if databases is None:
        assert (tmp_path / SWITCHES_FILE).read_text().count("learning") == 0
    else:
        database = await databases.open()
        assert await database.fetchval("SELECT count(*) FROM guild_switches") == 0
        assert await database.fetchval("SELECT count(*) FROM channel_switches") == 0


async def test_the_operators_list_wins(tmp_path: Path, databases: Databases | None) -> None:
    switches = await opened(tmp_path, databases, operator_guilds=frozenset({GUILD}))
    await switches.set_guild(GUILD, learning=True, recall=True)
    assert switches.at(SwitchTarget(GUILD, CHANNEL)) == MemorySwitch(learning=False, recall=False)


# --- PostgreSQL: several processes ------------------------------------------------------------------------------


async def test_an_admins_change_on_one_process_applies_on_all(pg_databases: Databases) -> None:
    one = PostgresMemorySwitches(await pg_databases.open())
    other = PostgresMemorySwitches(await pg_databases.open())
    await one.open()
    await other.open()
    mirror = other._mirror
    await one.set_guild(GUILD, learning=True, recall=False)
    await one.set_channel(CHANNEL, learning=False)
    await seen_by(mirror, lambda: other.at(SwitchTarget(GUILD, CHANNEL)) == MemorySwitch(False, False))
    await other.set_guild(GUILD, learning=True, recall=True)
    await seen_by(one._mirror, lambda: one.guild_switch(GUILD) == MemorySwitch())
    assert not one.channel_learning(CHANNEL)  # the channel's own switch is untouched
