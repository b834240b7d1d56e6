"""The admins' memory switches on both backends (file, PostgreSQL): kept across restarts, only what is off is
stored, the operator's lists win; on PostgreSQL an admin's change on one process applies on all; a switches file
of an earlier version is converted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.memory.drivers.bundle import SWITCHES_FILE, build_file_storage
from bot.memory.models import Location
from bot.memory.records.switches import MemorySwitch, SwitchBoard
from bot.storage.pg.records import PostgresRecords
from tests.conftest_state import WAIT_SECONDS, Databases

GUILD, CHANNEL, OTHER_CHANNEL = 5, 6, 7


async def opened(
    tmp_path: Path, databases: Databases | None, *, operator_guilds: frozenset[int] = frozenset()
) -> SwitchBoard:
    switches: SwitchBoard
    if databases is None:
        switches = build_file_storage(tmp_path, durable=False, disabled_guilds=operator_guilds).switches
    else:
        switches = SwitchBoard(PostgresRecords(await databases.open(), "switches"), disabled_guilds=operator_guilds)
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
    assert again.at(Location(guild_id=GUILD, channel_id=OTHER_CHANNEL)) == MemorySwitch(learning=False, recall=True)
    assert again.at(Location.dm(CHANNEL)) == MemorySwitch()  # DMs are never switched off
    assert again.admin_choices() == ({GUILD: MemorySwitch(False, True)}, {CHANNEL: False})
    await again.set_guild(GUILD, learning=True, recall=True)
    await again.set_channel(CHANNEL, learning=True)
    third = await opened(tmp_path, databases)
    assert third.at(Location(guild_id=GUILD, channel_id=CHANNEL)) == MemorySwitch()
    assert len(third.table) == 0 and await third.table.dump() == {}


async def test_the_operators_list_wins(tmp_path: Path, databases: Databases | None) -> None:
    switches = await opened(tmp_path, databases, operator_guilds=frozenset({GUILD}))
    await switches.set_guild(GUILD, learning=True, recall=True)
    assert switches.at(Location(guild_id=GUILD, channel_id=CHANNEL)) == MemorySwitch(learning=False, recall=False)


async def test_a_switches_file_of_an_earlier_version_is_converted(tmp_path: Path) -> None:
    path = tmp_path / SWITCHES_FILE
    old = {"guilds": {"5": {"learning": False, "recall": True}}, "channels": {"6": {"learning": False}}}
    path.write_text(json.dumps(old))
    switches = await opened(tmp_path, None)
    assert switches.at(Location(guild_id=GUILD, channel_id=CHANNEL)) == MemorySwitch(learning=False, recall=True)
    assert switches.guild_switch(GUILD) == MemorySwitch(False, True) and not switches.channel_learning(CHANNEL)
    assert json.loads(path.read_bytes()) == {
        "records": {"guild:5": {"learning": False, "recall": True}, "channel:6": {"learning": False}}
    }


# --- PostgreSQL: several processes ------------------------------------------------------------------------------


async def test_an_admins_change_on_one_process_applies_on_all(pg_databases: Databases) -> None:
    one = await opened(Path(), pg_databases)
    other = await opened(Path(), pg_databases)
    table, other_table = one.table, other.table
    assert isinstance(table, PostgresRecords) and isinstance(other_table, PostgresRecords)
    await one.set_guild(GUILD, learning=True, recall=False)
    await one.set_channel(CHANNEL, learning=False)
    expected = MemorySwitch(False, False)
    await asyncio.wait_for(
        other_table.wait_for(lambda: other.at(Location(guild_id=GUILD, channel_id=CHANNEL)) == expected), WAIT_SECONDS
    )
    await other.set_guild(GUILD, learning=True, recall=True)
    await asyncio.wait_for(table.wait_for(lambda: one.guild_switch(GUILD) == MemorySwitch()), WAIT_SECONDS)
    assert not one.channel_learning(CHANNEL)  # the channel's own switch is untouched
