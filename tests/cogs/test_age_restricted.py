"""Age-restricted (`nsfw`) channels are places of their own (DESIGN section 15), through the bot's real dispatch,
on files and on PostgreSQL: what Alice says in one is used in that server's age-restricted channels and nowhere
else (not in #general, not in her DMs, not even shared), the server's public memory is used there, the reply
prompt says whether the channel is age-restricted, `/memory show` names the place and `/privacy` says the rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.helpers import calls, dispatch, extraction_input, last_text, make_interaction, run_slash
from tests.support.llm_server import Response, extraction

AFTER_DARK = "I run the midnight horror roleplay club"
PUBLIC = "I bake sourdough every weekend"


@pytest.fixture(params=["files", "postgres"])
def storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "postgres":
        return {"database_url": request.getfixturevalue("postgres_url")}
    return {}


def takes_it_down(body: dict[str, Any]) -> Response:
    said = [t["text"] for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    facts = [(f"Said: {text.split('> ', 1)[-1]}", "context", 0.95) for text in said]
    return extraction(facts=facts, top=" ".join(f"Mentioned: {t}." for t in said) or None)


def system_of(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


async def test_what_is_said_in_an_age_restricted_channel_stays_in_the_servers_age_restricted_channels(
    storage: dict[str, Any], make_harness: MakeHarness
) -> None:
    h = await make_harness(**storage)
    s = make_scene(h)
    h.llm.extract = takes_it_down
    h.bot._connection._guilds[s.guild.id] = s.guild  # in the bot's cache, as after GUILD_CREATE
    lounge = h.discord.text_channel(s.guild, name="after-dark")
    lounge.nsfw = True
    other = h.discord.text_channel(s.guild, name="late-night")
    other.nsfw = True

    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, s.alice, PUBLIC))
    await h.settle()
    await dispatch(h.bot, "message", h.discord.mention_bot(lounge, s.alice, AFTER_DARK))
    await h.settle()
    assert "age-restricted" in system_of(h.llm.chat_requests[-1]) and "minors" not in system_of(
        h.llm.chat_requests[-1]
    )
    doc = h.memory_on_disk(ALICE_ID) if storage == {} else None
    shown = await run_slash(h.bot, make_interaction(s.alice_user), "memory show")
    description = json.dumps(calls(shown)[-1].kwargs["embed"].to_dict())
    assert "age-restricted channels of Test server" in description  # /memory show names the place
    fact_id = next(
        line.split("`")[1] for line in calls(shown)[-1].kwargs["embed"].description.splitlines() if "midnight" in line
    )
    assert last_text(await run_slash(h.bot, make_interaction(s.alice_user), "memory share", fact=fact_id)) == (
        "That fact was learned in an age-restricted channel: it stays there."
    )

    for channel in (s.general, s.alice_dm, h.discord.thread(s.general)):
        message = (h.discord.message(channel, s.alice_user, "what do I do for fun?") if channel is s.alice_dm
                   else h.discord.mention_bot(channel, s.alice, "what do I do for fun?"))
        await dispatch(h.bot, "message", message)
        request = json.dumps(h.llm.chat_requests[-1])
        assert "midnight" not in request  # neither the fact nor the summary
        assert "suitable for minors" in system_of(h.llm.chat_requests[-1])
        if channel is not s.alice_dm:
            assert "sourdough" in request
    await h.settle()
    for body in h.llm.extraction_requests[-3:]:  # nor the extractions of those places
        assert "midnight" not in json.dumps(body)

    await dispatch(h.bot, "message", h.discord.mention_bot(other, s.alice, "what do I do for fun?"))
    request = json.dumps(h.llm.chat_requests[-1])
    assert "midnight" in request and "sourdough" in request  # another age-restricted channel of the server
    assert doc is None or any(f["place"] == f"nsfw:{s.guild.id}" for f in doc["facts"])


async def test_privacy_says_the_rule(make_harness: MakeHarness) -> None:
    h = await make_harness()
    s = make_scene(h)
    shown = await run_slash(h.bot, make_interaction(s.alice_user), "privacy")
    (call,) = calls(shown)
    text = " ".join(str(embed.description) for embed in call.kwargs.get("embeds") or [call.kwargs["embed"]])
    assert "age-restricted (NSFW) channel is used only in that server's age-restricted channels" in text


def test_the_place_rule_keeps_age_restricted_memory_where_it_was_learned() -> None:
    from bot.memory.models import Place
    from bot.memory.rules.places import may_use, reader

    public, restricted = Place.nsfw(7, 7), Place.nsfw(55, 7)
    assert public.key == "nsfw:7" and Place.from_json(restricted.to_json()) == restricted
    for where in (Place.dm(), Place.guild(7), Place.channel(56, 7), restricted, Place.nsfw(8, 8)):
        assert not may_use(where, public.key) and not may_use(where, public.key, shared=True)
    assert may_use(public, public.key) and may_use(public, "guild:7") and not may_use(public, "dm")
    assert not may_use(public, "channel:56") and may_use(public, "dm", shared=True)
    assert reader(public, "user") == public  # a place of its own whatever MEMORY_SCOPE says


async def test_locations_of_age_restricted_channels(make_harness: MakeHarness) -> None:
    from bot.client.locations import location_of
    from bot.memory.models import Place

    h = await make_harness()
    s = make_scene(h)
    lounge = h.discord.text_channel(s.guild, name="after-dark")
    lounge.nsfw = True
    staff = h.discord.text_channel(s.guild, name="staff-after-dark", private=True)
    staff.nsfw = True
    assert location_of(lounge).place == Place.nsfw(s.guild.id, s.guild.id)
    assert location_of(h.discord.thread(lounge)).place == Place.nsfw(s.guild.id, s.guild.id)
    private_thread = h.discord.thread(lounge, private=True)
    assert location_of(private_thread).place == Place.nsfw(private_thread.id, s.guild.id)
    assert location_of(staff).place == Place.nsfw(staff.id, s.guild.id)
    assert location_of(s.general).place == Place.guild(s.guild.id)
