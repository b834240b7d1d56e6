"""`/memory forget` and `/memory show` buttons survive a restart of the bot (a new bot on the same data), answer a late
press with "expired", and answer only their owner; `/memory show` stays within every embed limit with many places
and the longest names Discord allows. Presses go through discord.py's own component dispatch (the view store), as
the gateway delivers them."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import discord
from discord.components import _component_factory

from bot.memory.doors import ForgetEverything
from bot.memory.models import SECTION_NAMES, Fact, MemoryFile, Place
from cogs.memory.views import CONFIRM_EXPIRED, OWNER_ONLY, PAGES_EXPIRED
from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness
from tests.helpers import (
    Harness,
    calls,
    check_discord_limits,
    make_guild,
    make_interaction,
    make_user,
    next_id,
    run_slash,
    seed_memory,
    spec,
)
from tests.support.engine import parts, save_memory

ALICE = make_user(ALICE_ID, "Alice")
BOB = make_user(BOB_ID, "Bob")


def as_sent(view: discord.ui.View, *, pressed_late: bool = False) -> Any:
    """The message the view was sent with, as discord.py reads it back from Discord (its components parsed).
    `pressed_late`: as if the buttons' expiry (carried in their custom ids) had passed."""
    rows = view.to_components()
    if pressed_late:
        for row in rows:
            for child in row["components"]:
                child["custom_id"] = expired(child["custom_id"])
    return spec(discord.Message, id=next_id(), components=[_component_factory(row) for row in rows],
                flags=discord.MessageFlags())


def custom_ids(message: Any) -> dict[str, str]:
    return {child.label: child.custom_id for row in message.components for child in row.children}


async def press(h: Harness, message: Any, custom_id: str, user: Any, **where: Any) -> Any:
    """A button press as the gateway delivers it: `ConnectionState` hands it to the view store, which finds the
    dynamic item by its custom id (also after a restart) or the live view by message."""
    interaction = make_interaction(user, **where)
    interaction.message = message
    interaction.client = h.bot
    interaction.type = discord.InteractionType.component
    interaction.data = {"custom_id": custom_id, "component_type": 2}
    before = asyncio.all_tasks()
    h.bot._connection._view_store.dispatch_view(2, custom_id, interaction)
    await asyncio.gather(*(asyncio.all_tasks() - before))
    return interaction


def expired(custom_id: str) -> str:
    """The same button pressed after its expiry: its custom id carries the expiry time."""
    return re.sub(r":(\d{10,12})(?=(:|$))", ":1000000000", custom_id, count=1)


# --- /memory forget ------------------------------------------------------------------------------------------


async def ask_to_forget(h: Harness, *, pressed_late: bool = False) -> Any:
    asked = await run_slash(h.bot, make_interaction(ALICE), "memory forget")
    view = calls(asked)[0].kwargs["view"]
    assert type(view).__name__ == "ConfirmForgetView"
    return as_sent(view, pressed_late=pressed_late)


async def test_confirm_after_a_restart_forgets_everything(make_harness: MakeHarness, tmp_path: Path) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data)
    await seed_memory(h.memory, ALICE_ID, ["Lives in Lisbon"])
    message = await ask_to_forget(h)
    await h.close()

    restarted = await make_harness(data_dir=data)
    ids = custom_ids(message)
    intruder = await press(restarted, message, ids["Forget everything"], BOB)
    assert [c.content for c in calls(intruder)] == [OWNER_ONLY]
    assert calls(intruder)[0].kwargs["ephemeral"] is True
    assert restarted.memory_on_disk(ALICE_ID) is not None

    confirmed = await press(restarted, message, ids["Forget everything"], ALICE)
    assert [c.name for c in calls(confirmed)] == ["defer", "edit_original_response"]
    assert "forgotten everything" in calls(confirmed)[-1].content
    assert calls(confirmed)[-1].kwargs["view"] is None
    assert restarted.memory_on_disk(ALICE_ID) is None


async def test_a_late_press_says_it_expired_and_changes_nothing(make_harness: MakeHarness) -> None:
    h = await make_harness()
    await seed_memory(h.memory, ALICE_ID, ["Lives in Lisbon"])
    message = await ask_to_forget(h, pressed_late=True)
    late = await press(h, message, custom_ids(message)["Forget everything"], ALICE)
    [call] = calls(late)
    assert call.name == "edit_message" and call.content == CONFIRM_EXPIRED and call.kwargs["view"] is None
    assert h.memory_on_disk(ALICE_ID) is not None


async def test_cancel_after_a_restart_keeps_the_memory(make_harness: MakeHarness, tmp_path: Path) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data)
    await seed_memory(h.memory, ALICE_ID, ["Lives in Lisbon"])
    message = await ask_to_forget(h)
    await h.close()
    restarted = await make_harness(data_dir=data)
    cancelled = await press(restarted, message, custom_ids(message)["Cancel"], ALICE)
    assert "unchanged" in calls(cancelled)[-1].content
    assert restarted.memory_on_disk(ALICE_ID) is not None


# --- /memory show pages ----------------------------------------------------------------------------------------


async def test_page_buttons_work_after_a_restart_for_their_owner_only(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data)
    await seed_memory(h.memory, ALICE_ID, [f"Fact {n}: " + "quite a long remembered statement " * 5 for n in range(30)])
    shown = await run_slash(h.bot, make_interaction(ALICE), "memory show")
    view = calls(shown)[-1].kwargs["view"]
    pages = [page.to_dict() for page in view.pages]
    message = as_sent(view)
    await h.close()

    restarted = await make_harness(data_dir=data)
    intruder = await press(restarted, message, custom_ids(message)["Next"], BOB)
    assert [c.content for c in calls(intruder)] == [OWNER_ONLY]

    turned = await press(restarted, message, custom_ids(message)["Next"], ALICE)
    [call] = calls(turned)
    assert call.name == "edit_message" and call.kwargs["embed"].to_dict() == pages[1]
    again = as_sent(call.kwargs["view"])
    back = await press(restarted, again, custom_ids(again)["Previous"], ALICE)
    assert calls(back)[-1].kwargs["embed"].to_dict() == pages[0]

    stale = as_sent(view, pressed_late=True)
    late = await press(restarted, stale, custom_ids(stale)["Next"], ALICE)
    assert calls(late)[-1].content == PAGES_EXPIRED and calls(late)[-1].kwargs["view"] is None


async def test_a_page_turned_after_a_forget_shows_the_memory_as_it_is_now(make_harness: MakeHarness) -> None:
    h = await make_harness()
    await seed_memory(h.memory, ALICE_ID, [f"Fact {n}: " + "quite a long remembered statement " * 5 for n in range(30)])
    shown = await run_slash(h.bot, make_interaction(ALICE), "memory show")
    message = as_sent(calls(shown)[-1].kwargs["view"])
    await h.memory.user(ALICE_ID).forget(ForgetEverything())
    turned = await press(h, message, custom_ids(message)["Next"], ALICE)
    embed = calls(turned)[-1].kwargs["embed"]
    assert "Fact" not in str(embed.to_dict())


# --- embed limits ------------------------------------------------------------------------------------------------


def crowded_memory(guilds: list[Any], channels: list[Any]) -> MemoryFile:
    """Every summary in every place and many long facts, each place named as long as Discord allows."""
    memory = MemoryFile()
    places = [Place.dm(), *(Place.guild(g.id) for g in guilds), *(Place.channel(c.id, c.guild.id) for c in channels)]
    for number, place in enumerate(places):
        in_place = memory.place_memory(place.key)
        for name in SECTION_NAMES:
            section = getattr(in_place.user, name, None) or getattr(in_place.history, name)
            section.summary = f"{name} in place {number}: " + "a summary that goes on " * 60
        memory.set_place_memory(place.key, in_place)
        for n in range(3):
            memory.facts.append(Fact(
                id=f"fact_{number:04x}{n:04x}", content=f"Fact {n} of place {number}: " + "long detail " * 30,
                category="context", confidence=0.9, createdAt="2024-05-01T00:00:00+00:00", place=place.key,
            ))
    return memory


async def test_show_with_many_places_and_the_longest_names_stays_within_every_embed_limit(
    harness: Harness, monkeypatch: Any
) -> None:
    guilds = [make_guild(name=f"{n:02d}" + "S" * 98) for n in range(12)]  # 100 characters, Discord's longest
    channels = [harness.discord.text_channel(guilds[n % 12], name=f"{n:02d}" + "c" * 98, private=True)
                for n in range(12)]
    by_id = {thing.id: thing for thing in [*guilds, *channels]}
    monkeypatch.setattr(harness.bot, "get_guild", lambda guild_id, /: by_id.get(guild_id))
    monkeypatch.setattr(harness.bot, "get_channel", lambda channel_id, /: by_id.get(channel_id))
    memory = crowded_memory(guilds, channels)
    await save_memory(parts(harness.memory).storage.memories, ALICE_ID, memory)

    # Asked in a public channel of yet another server: almost everything is marked "not used here".
    elsewhere = make_guild(name="X" * 100)
    channel = harness.discord.text_channel(elsewhere, name="y" * 100)
    shown = await run_slash(harness.bot, make_interaction(ALICE, guild=elsewhere, channel=channel), "memory show")
    kwargs = calls(shown)[-1].kwargs
    assert "embed" in kwargs, calls(shown)[-1].content
    pages = kwargs["view"].pages
    for embed in pages:
        check_discord_limits(embed=embed)
        assert len(embed) <= 6000 and len(embed.fields) <= 25 and len(embed.footer.text or "") <= 2048
        assert len(embed.title or "") <= 256
    shown_text = "".join(str(embed.to_dict()) for embed in pages)
    assert all(fact.id in shown_text for fact in memory.facts)
    assert sum(len(embed.fields) for embed in pages) == 25 * len(SECTION_NAMES)  # every summary of every place
    assert "S" * 98 in shown_text and "c" * 98 in shown_text  # named in full
