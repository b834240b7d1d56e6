"""`/bot-settings`, through the bot's own command tree and message dispatch: an admin sets a channel's prompt and
model; the channel and its threads answer with them; another channel, another server and DMs do not; a member
without Manage Server is refused; a model outside the operator's list is refused with the list; the lookup goes
thread, channel, category, server; the settings survive a restart, live in PostgreSQL with DATABASE_URL, and are
forgotten when the bot leaves the server. Memory extraction keeps its own model and prompt throughout."""

from __future__ import annotations

from typing import Any

import asyncpg
import discord

from bot.config import DEFAULT_SYSTEM_PROMPT
from bot.memory.drivers.bundle import COMMUNITY_FILE
from bot.memory.pipeline.extractor import EXTRACTION_SYSTEM_PROMPT
from cogs.privacy import statement_embeds
from cogs.settings import NOT_ALLOWED
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import (
    CHAT_MODEL,
    MEMORY_MODEL,
    Harness,
    calls,
    dispatch,
    last_text,
    make_guild,
    make_interaction,
    make_member,
    next_id,
    run_slash,
    spec,
    system_text,
)
from tests.support.llm_server import extraction, reply

BIG = "big-model"
PIRATE = "You are Captain Byte, a pirate. Answer every question like a pirate would."


def answer_by_model(h: Harness) -> None:
    """Chat requests for any model get an answer naming it; extraction keeps its own route."""
    h.llm.extract = lambda body: (
        extraction() if body.get("model") == MEMORY_MODEL else reply(f"answered by {body.get('model')}")
    )


def chat_bodies(h: Harness) -> list[dict[str, Any]]:
    return [r["body"] for r in h.llm.server.requests if r["body"].get("model") != MEMORY_MODEL]


def admin(s: Scene, channel: Any = None, *, allowed: bool = True, guild: Any = None) -> Any:
    interaction = make_interaction(s.alice, guild=guild or s.guild, channel=channel or s.general)
    interaction.permissions = discord.Permissions(manage_guild=True) if allowed else discord.Permissions.none()
    return interaction


async def settings(h: Harness, interaction: Any, path: str, **options: Any) -> str:
    await run_slash(h.bot, interaction, f"bot-settings {path}", **options)
    assert calls(interaction) and all(c.kwargs.get("ephemeral") is True for c in calls(interaction))
    return last_text(interaction)


async def ask(h: Harness, channel: Any, author: Any, text: str) -> dict[str, Any]:
    """A message to the bot there, through discord.py's dispatch; the chat request it caused."""
    before = len(chat_bodies(h))
    dm = channel.guild is None
    message = h.discord.message(channel, author, text) if dm else h.discord.mention_bot(channel, author, text)
    await dispatch(h.bot, "message", message)
    bodies = chat_bodies(h)
    assert len(bodies) == before + 1
    return bodies[-1]


def test_the_group_is_for_manage_server_in_servers_only(harness: Harness) -> None:
    group = harness.bot.tree.get_command("bot-settings")
    assert isinstance(group, discord.app_commands.Group)
    assert group.default_permissions is not None and group.default_permissions.manage_guild
    definition = group.to_dict(harness.bot.tree)
    assert definition["contexts"] == [0] and definition["dm_permission"] is False
    assert {c.name for c in group.commands} == {"prompt", "model", "reset", "show", "roles", "dms"}
    options = {(sub["name"], o["name"]): o for sub in definition["options"] for o in sub.get("options", [])}
    assert [c["value"] for c in options[("prompt", "scope")]["choices"]] == ["channel", "server"]
    assert options[("model", "name")]["autocomplete"] is True
    assert options[("prompt", "text")]["max_length"] == 4000
    assert discord.ChannelType.category.value in options[("prompt", "channel")]["channel_types"]


async def test_a_channel_prompt_and_model_apply_there_and_in_its_threads_only(make_harness: MakeHarness) -> None:
    h = await make_harness(allowed_chat_models=(BIG,))
    s = make_scene(h)
    answer_by_model(h)
    said = await settings(h, admin(s), "prompt", scope="channel", text=PIRATE)
    assert f"<#{s.general.id}> and its threads" in said and "Captain Byte" in said
    said = await settings(h, admin(s), "model", scope="channel", name=BIG)
    assert f"`{BIG}`" in said

    for place in (s.general, s.thread):
        body = await ask(h, place, s.bob, "where is the treasure?")
        assert body["model"] == BIG and system_text(body).startswith(PIRATE)
        assert DEFAULT_SYSTEM_PROMPT not in system_text(body)
        assert h.discord.bot_messages(place)[-1].content == f"answered by {BIG}"
    other = h.discord.text_channel(s.guild, name="random")
    elsewhere_guild = make_guild(name="Elsewhere")
    elsewhere = h.discord.text_channel(elsewhere_guild, channel_id=next_id())
    outsiders = ((other, s.bob), (elsewhere, make_member(s.bob_user, elsewhere_guild)), (s.bob_dm, s.bob_user))
    for place, author in outsiders:
        body = await ask(h, place, author, "hello")
        assert body["model"] == CHAT_MODEL and system_text(body).startswith(DEFAULT_SYSTEM_PROMPT)
        assert "Captain Byte" not in system_text(body)

    await h.settle()  # extraction kept its own model and fixed prompt throughout
    assert h.llm.extraction_requests
    assert all(system_text(body) == EXTRACTION_SYSTEM_PROMPT for body in h.llm.extraction_requests)

    shown = await settings(h, admin(s, s.thread), "show")
    assert f"set for the channel <#{s.general.id}>" in shown and f"`{BIG}`" in shown and "Captain Byte" in shown

    await h.close()  # the settings survive a restart
    again = await make_harness(data_dir=h.settings.data_dir, allowed_chat_models=(BIG,))
    answer_by_model(again)
    again_scene = make_scene(again)
    general = again.discord.text_channel(s.guild, channel_id=s.general.id)
    body = await ask(again, general, again_scene.bob, "still a pirate?")
    assert body["model"] == BIG and system_text(body).startswith(PIRATE)
    said = await settings(again, admin(again_scene, general, guild=s.guild), "reset", scope="channel")
    assert "removed" in said
    body = await ask(again, general, again_scene.bob, "and now?")
    assert body["model"] == CHAT_MODEL and system_text(body).startswith(DEFAULT_SYSTEM_PROMPT)


async def test_members_without_manage_server_and_unknown_models_are_refused(make_harness: MakeHarness) -> None:
    h = await make_harness(allowed_chat_models=(BIG, "small-model"))
    s = make_scene(h)
    for path, options in (
        ("prompt", {"scope": "server", "text": PIRATE}), ("model", {"scope": "channel", "name": BIG}),
        ("reset", {"scope": "server"}), ("show", {}), ("roles", {"everyone": True}), ("dms", {"allow": False}),
    ):
        assert await settings(h, admin(s, allowed=False), path, **options) == NOT_ALLOWED
    assert not (h.settings.data_dir / COMMUNITY_FILE).exists()

    said = await settings(h, admin(s), "model", scope="server", name="gpt-9-ultra")
    assert "I can't use `gpt-9-ultra`" in said
    assert f"`{CHAT_MODEL}`, `{BIG}`, `small-model`" in said
    assert not (h.settings.data_dir / COMMUNITY_FILE).exists()
    body = await ask(h, s.general, s.bob, "hi")
    assert body["model"] == CHAT_MODEL

    cog: Any = h.bot.get_cog("SettingsCog")
    choices = await cog._model_names(admin(s), "MOD")
    assert [c.value for c in choices] == [CHAT_MODEL, BIG, "small-model"]
    assert [c.value for c in await cog._model_names(admin(s), "small")] == ["small-model"]


async def test_the_lookup_goes_thread_channel_category_server(make_harness: MakeHarness) -> None:
    h = await make_harness(allowed_chat_models=(BIG, "server-model"))
    s = make_scene(h)
    answer_by_model(h)
    category = spec(discord.CategoryChannel, id=next_id(), name="Games", guild=s.guild)
    s.general.category_id = category.id
    lounge = h.discord.text_channel(s.guild, name="lounge")
    lounge.category_id = category.id
    cog: Any = h.bot.get_cog("SettingsCog")

    await settings(h, admin(s), "prompt", scope="server", text="Server voice.")
    await settings(h, admin(s), "model", scope="server", name="server-model")
    await cog.prompt.callback(cog, admin(s), scope="channel", text="Category voice.", channel=category)
    await settings(h, admin(s, s.thread), "prompt", scope="channel", text="Thread voice.")  # typed in the thread
    await cog.model.callback(cog, admin(s), scope="channel", name=BIG, channel=s.general)

    thread = await ask(h, s.thread, s.bob, "hi")
    assert system_text(thread).startswith("Thread voice.") and thread["model"] == BIG
    general = await ask(h, s.general, s.bob, "hi")
    assert system_text(general).startswith("Category voice.") and general["model"] == BIG
    in_lounge = await ask(h, lounge, s.bob, "hi")
    assert system_text(in_lounge).startswith("Category voice.") and in_lounge["model"] == "server-model"
    plain = await ask(h, h.discord.text_channel(s.guild, name="plain"), s.bob, "hi")
    assert system_text(plain).startswith("Server voice.") and plain["model"] == "server-model"
    shown = await settings(h, admin(s, lounge), "show")
    assert f"set for the category <#{category.id}>" in shown and "set for the whole server" in shown

    other_guild = make_guild(name="Other")
    foreign = h.discord.text_channel(other_guild)
    refused = admin(s)
    await cog.model.callback(cog, refused, scope="channel", name=BIG, channel=foreign)
    assert last_text(refused) == "That channel is not in this server."


async def test_leaving_a_server_forgets_its_settings_on_postgres(
    postgres_url: str, make_harness: MakeHarness
) -> None:
    h = await make_harness(database_url=postgres_url, allowed_chat_models=(BIG,))
    s = make_scene(h)
    answer_by_model(h)
    await settings(h, admin(s), "prompt", scope="channel", text=PIRATE)
    await settings(h, admin(s), "model", scope="server", name=BIG)
    other = make_guild(name="Other")
    await settings(h, admin(s, h.discord.text_channel(other), guild=other), "prompt", scope="server", text="Other.")
    body = await ask(h, s.thread, s.bob, "ahoy")
    assert body["model"] == BIG and system_text(body).startswith(PIRATE)
    assert not (h.settings.data_dir / COMMUNITY_FILE).exists()  # in the database, not in DATA_DIR

    conn = await asyncpg.connect(postgres_url)
    try:
        keys = {row["key"] for row in await conn.fetch("SELECT key FROM records WHERE kind = 'community'")}
        assert keys == {f"channel:{s.general.id}", f"guild:{s.guild.id}", f"guild:{other.id}"}
        await dispatch(h.bot, "guild_remove", s.guild)
        keys = {row["key"] for row in await conn.fetch("SELECT key FROM records WHERE kind = 'community'")}
        assert keys == {f"guild:{other.id}"}
    finally:
        await conn.close()
    body = await ask(h, s.thread, s.bob, "still there?")
    assert body["model"] == CHAT_MODEL and system_text(body).startswith(DEFAULT_SYSTEM_PROMPT)


async def test_privacy_says_a_server_may_set_a_persona(make_harness: MakeHarness) -> None:
    h = await make_harness()
    s = make_scene(h)
    await settings(h, admin(s), "prompt", scope="channel", text=PIRATE)
    cog: Any = h.bot.get_cog("PrivacyCog")
    here = make_interaction(s.bob, guild=s.guild, channel=s.thread)
    await cog.privacy.callback(cog, here)
    text = statement_of(here)
    assert "persona" in text and "Here the bot speaks with a persona" in text
    assert "`/usage`" in text and "message menu **Regenerate**" in text and "message menu **Delete**" in text
    assert "**Contact**" in text and not text.endswith("…")  # all of it, in as many embeds as it takes
    elsewhere = make_interaction(s.bob, guild=s.guild, channel=h.discord.text_channel(s.guild, name="quiet"))
    await cog.privacy.callback(cog, elsewhere)
    assert "Here the bot speaks with a persona" not in statement_of(elsewhere)


def statement_of(interaction: Any) -> str:
    call = calls(interaction)[-1]
    embeds = call.kwargs["embeds"] if "embeds" in call.kwargs else [call.kwargs["embed"]]
    assert all(len(embed.description or "") <= 4096 for embed in embeds) and sum(len(e) for e in embeds) <= 6000
    return "\n\n".join(str(embed.description) for embed in embeds)


def test_a_long_statement_is_split_between_sections_and_never_refused() -> None:
    sections = [f"**Part {n}**\n" + "x" * 1500 for n in range(3)]
    embeds = statement_embeds("\n\n".join(sections))
    assert [embed.description for embed in embeds] == ["\n\n".join(sections[:2]), sections[2]]
    assert embeds[0].title and embeds[1].title is None
    huge = statement_embeds("**Contact**\n" + "y" * 9000)
    assert sum(len(embed) for embed in huge) <= 6000 and str(huge[-1].description).endswith("…")
