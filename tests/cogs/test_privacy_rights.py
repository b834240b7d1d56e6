"""`/privacy` says, from the live settings, which of a channel's messages go to the model provider with each reply,
that credentials are never kept, and that sensitive categories are kept only on request; through the bot's command
tree."""

from __future__ import annotations

from typing import Any

import discord

from tests.cogs.conftest import MakeHarness, make_scene
from tests.helpers import calls, make_interaction, run_slash


async def statement(h: Any, **where: Any) -> str:
    interaction = await run_slash(h.bot, make_interaction(make_scene(h).alice_user, **where), "privacy")
    (call,) = calls(interaction)
    assert call.kwargs["ephemeral"] is True
    embeds = call.kwargs["embeds"] if "embeds" in call.kwargs else [call.kwargs["embed"]]  # as long as it takes
    assert all(isinstance(embed, discord.Embed) and len(embed.description or "") <= 4096 for embed in embeds)
    return "\n\n".join(str(embed.description) for embed in embeds)


async def test_it_says_bystanders_messages_go_to_the_provider_by_default(make_harness: MakeHarness) -> None:
    text = await statement(await make_harness())
    assert "the channel's last **20** messages, including those of members who never talked to the bot" in text
    assert "sent, not stored" in text


async def test_it_follows_the_history_settings(make_harness: MakeHarness) -> None:
    text = await statement(await make_harness(history_scope="conversation", history_messages=12))
    assert "up to **12** recent messages of the channel that were to or from the bot" in text
    assert "never talked to the bot" not in text
    none = await statement(await make_harness(history_messages=0))
    assert "no other messages of the channel" in none and "last **" not in none


async def test_it_says_credentials_are_never_kept_and_sensitive_data_only_on_request(
    make_harness: MakeHarness,
) -> None:
    text = await statement(await make_harness())
    assert "Passwords, PINs, API keys, tokens, card and bank account numbers are never written into your memory" in text
    assert "health, sex life, religion, politics and finances are kept only when you ask" in text
    assert "`/memory remember`" in text and "“remember that ...”" in text
    assert "not what you say later" in text
