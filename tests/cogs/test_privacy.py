"""`/privacy`: the statement is built from the live settings and the commands the bot really registered."""

from __future__ import annotations

import re
from typing import Any

import discord

from bot.client.privacy_statement import privacy_statement
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import Harness, calls, make_interaction, make_settings


async def ask(h: Harness, interaction: Any) -> str:
    cog: Any = h.bot.get_cog("PrivacyCog")
    await cog.privacy.callback(cog, interaction)
    (call,) = calls(interaction)
    assert call.name == "send_message" and call.kwargs["ephemeral"] is True
    embeds = call.kwargs["embeds"] if "embeds" in call.kwargs else [call.kwargs["embed"]]  # as long as it takes
    assert all(isinstance(embed, discord.Embed) for embed in embeds)
    return "\n\n".join(str(embed.description) for embed in embeds)


def minutes_promised(text: str) -> int:
    match = re.search(r"at most \*\*(\d+) minutes\*\*", text)
    assert match, text
    return int(match.group(1))


async def test_the_statement_follows_the_settings(make_harness: MakeHarness) -> None:
    h = await make_harness(memory_retention_days=30, privacy_contact="privacy@example.org")
    s = make_scene(h)
    text = await ask(h, make_interaction(s.alice_user))
    assert "after **30 days**" in text
    assert "privacy@example.org" in text
    assert "127.0.0.1" not in text and "bot's own server" in text  # the test endpoint runs on this machine
    for command in ("memory show", "memory export", "memory forget", "memory pause", "memory incognito"):
        assert f"`/{command}`" in text
    assert "message menu **What did you remember?**" in text and "ids, never their text" in text
    assert minutes_promised(text) * 60 >= h.memory.ops.longest_pending_seconds(h.settings.llm_timeout_seconds)
    assert "In Test server" not in text  # a DM: no server switches to report


async def test_with_a_database_the_statement_says_where_memory_is(
    postgres_url: str, make_harness: MakeHarness
) -> None:
    files = await ask(h := await make_harness(), make_interaction(make_scene(h).alice_user))
    assert "In files on the server" in files and "PostgreSQL" not in files
    db = await make_harness(data_dir=h.settings.data_dir.parent / "db-data", database_url=postgres_url)
    text = await ask(db, make_interaction(make_scene(db).alice_user))
    assert "In a PostgreSQL database" in text and "In files" not in text
    assert "wait in the bot's database" in text and "access to its database" in text
    assert postgres_url not in text and "127.0.0.1" not in text


async def test_with_encryption_the_statement_says_forgetting_reaches_the_backups(make_harness: MakeHarness) -> None:
    from bot.storage.sealing import new_master_key_text

    async def statement(h: Harness) -> str:
        """The statement as sent, in one embed or split over several."""
        cog: Any = h.bot.get_cog("PrivacyCog")
        interaction = make_interaction(make_scene(h).alice_user)
        await cog.privacy.callback(cog, interaction)
        (call,) = calls(interaction)
        embeds = call.kwargs.get("embeds") or [call.kwargs["embed"]]
        assert all(len(str(embed.description)) <= 4096 for embed in embeds)
        return "\n\n".join(str(embed.description) for embed in embeds)

    plain = await statement(h := await make_harness())
    assert "encrypted" not in plain
    key = new_master_key_text()
    sealed = await make_harness(data_dir=h.settings.data_dir.parent / "sealed", memory_encryption_key=key)
    text = await statement(sealed)
    assert "encrypted with a key of your own" in text and "backups can no longer be read" in text
    assert key not in text


async def test_forever_and_no_contact_are_said_plainly(make_harness: MakeHarness) -> None:
    h = await make_harness(memory_retention_days=0)
    text = await ask(h, make_interaction(make_scene(h).alice_user))
    assert "Kept until you delete it" in text and "days" not in text.split("**For how long**")[1].split("**")[0]
    assert "has not published a contact" in text


async def test_the_server_switches_show_where_it_is_asked(scene: Scene) -> None:
    h = scene.h
    await h.resources.memory.switches.set_guild(scene.guild.id, learning=False, recall=True)
    text = await ask(h, make_interaction(scene.alice, guild=scene.guild, channel=scene.thread))
    assert "**In Test server**" in text
    assert "Learning is **off**" in text and "in replies is on" in text


async def test_the_pending_bound_grows_with_the_settings_that_make_turns_wait(make_harness: MakeHarness) -> None:
    defaults = {"memory_max_wait_seconds": 300, "memory_debounce_seconds": 30, "llm_timeout_seconds": 60,
                "memory_extraction_retries": 4}
    base = await make_harness(**defaults)
    longer_wait = await make_harness(**{**defaults, "memory_max_wait_seconds": 900})
    bound = base.memory.ops.longest_pending_seconds(60)
    assert longer_wait.memory.ops.longest_pending_seconds(60) - bound == 600
    assert base.memory.ops.longest_pending_seconds(120) - bound == 4 * 5 * 60  # four rounds of five attempts
    # The defaults: five attempts of 60 s, four waits of up to 60 s, four rounds, the 300 s max wait, 3 quiet periods.
    assert bound == 300 + 4 * (5 * 60 + 4 * 60) + 3 * 30
    text = await ask(base, make_interaction(make_scene(base).alice_user))
    assert minutes_promised(text) == 43


def test_an_openai_endpoint_and_a_remote_one_are_named(chat_server: Any, tmp_path: Any) -> None:
    remote = make_settings(chat_server, tmp_path, openai_base_url="https://user:pw@llm.example.net/v1?key=abc")
    text = privacy_statement(remote, pending_seconds=60, commands=[])
    assert "**llm.example.net**" in text and "pw" not in text and "abc" not in text
    openai = remote.model_copy(update={"openai_base_url": None})
    assert "**OpenAI**" in privacy_statement(openai, pending_seconds=60, commands=[])


def test_an_embedding_endpoint_is_named_with_what_it_receives(chat_server: Any, tmp_path: Any) -> None:
    """With `embedding_endpoint`, the statement says the text of facts and recent messages goes there to become
    vectors for recall by meaning, stored with the facts (encrypted like them when encryption is on) and deleted with
    them; the endpoint is named by its host, never its path or credentials."""
    from bot.i18n.speech import speech_in
    from bot.storage.sealing import new_master_key_text

    settings = make_settings(chat_server, tmp_path)
    english = privacy_statement(settings, pending_seconds=60, commands=[], embedding_endpoint="embeddings.example.com")
    assert (
        "- The text of your facts and of your recent messages is also sent to **embeddings.example.com**, which turns "
        "it into vectors (lists of numbers) so that the bot can recall facts by their meaning. The vectors are stored "
        "with your facts and deleted with them."
    ) in english
    assert english.index("embeddings.example.com") > english.index("**Where**")
    german = privacy_statement(
        settings, pending_seconds=60, commands=[], embedding_endpoint="embeddings.example.com", speech=speech_in("de")
    )
    assert (
        "- Der Text deiner Fakten und deiner letzten Nachrichten wird außerdem an **embeddings.example.com** gesendet"
    ) in german and "mit ihnen gelöscht" in german and "vectors" not in german
    sealed = settings.model_copy(update={"memory_encryption_key": new_master_key_text()})
    url = "https://user:secret@embeddings.example.com/v1/embeddings?key=abc"
    encrypted = privacy_statement(sealed, pending_seconds=60, commands=[], embedding_endpoint=url)
    assert "stored with your facts, encrypted like them, and deleted with them" in encrypted
    assert "**embeddings.example.com**" in encrypted and "secret" not in encrypted and "abc" not in encrypted
    local = privacy_statement(settings, pending_seconds=60, commands=[], embedding_endpoint="http://localhost:11434")
    assert "**an embedding model running on the bot's own server**" in local


def test_without_an_embedding_endpoint_nothing_is_said_of_vectors(chat_server: Any, tmp_path: Any) -> None:
    text = privacy_statement(make_settings(chat_server, tmp_path), pending_seconds=60, commands=[])
    assert "vector" not in text and "embedding" not in text
