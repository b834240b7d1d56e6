"""`/memory import` as Discord delivers it, for the cog tests and the hostile world: the command with a file attached
(discord.py's own namespace builds the `discord.Attachment`, whose download returns the test's bytes), the preview's
message as Discord sends it back, and a press of one of its buttons through discord.py's view store."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import NonCallableMagicMock

import discord
from discord.components import _component_factory

from tests.helpers import Harness, behave, calls, command_payload, make_interaction, next_id, spec


async def run_import(bot: Any, user: Any, filename: str, data: bytes, *, size: int | None = None) -> Any:
    """`/memory import file:<attachment>` as the gateway delivers it: the attachment in the payload's `resolved`
    part, built by discord.py's own namespace into a `discord.Attachment` whose download returns `data`."""
    interaction = make_interaction(user)
    attachment_id = str(next_id())
    payload = command_payload("memory import")
    payload["options"][0]["options"] = [{"type": 11, "name": "file", "value": attachment_id}]
    url = f"https://cdn.discordapp.com/attachments/1/2/{filename}"
    payload["resolved"] = {"attachments": {attachment_id: {
        "id": attachment_id, "filename": filename, "size": len(data) if size is None else size, "url": url,
        "proxy_url": url,
    }}}
    http = spec(discord.http.HTTPClient)
    fetched: list[str] = []

    async def get_from_cdn(address: str) -> bytes:
        fetched.append(address)
        return data

    behave(http, discord.http.HTTPClient, "get_from_cdn", get_from_cdn)
    state = NonCallableMagicMock(spec=discord.state.ConnectionState)  # `http` is set per instance, not a slot
    state.http = http
    interaction._state = state
    interaction.data = payload
    interaction.type = discord.InteractionType.application_command
    interaction.client = bot
    interaction.command_failed = False
    interaction.command = bot.tree._get_app_command_options(payload)[0]
    interaction.extras["fetched"] = fetched
    before = asyncio.all_tasks()
    bot.tree._from_interaction(interaction)
    await asyncio.gather(*(asyncio.all_tasks() - before))
    return interaction


def as_sent(view: discord.ui.View) -> Any:
    return spec(discord.Message, id=next_id(), components=[_component_factory(row) for row in view.to_components()],
                flags=discord.MessageFlags())


def buttons(message: Any) -> dict[str, str]:
    return {child.label: child.custom_id for row in message.components for child in row.children}


async def press(h: Harness, message: Any, label: str, user: Any) -> Any:
    """A press as the gateway delivers it: the view store finds the dynamic item by its custom id."""
    custom_id = buttons(message)[label]
    interaction = make_interaction(user)
    interaction.message = message
    interaction.client = h.bot
    interaction.type = discord.InteractionType.component
    interaction.data = {"custom_id": custom_id, "component_type": 2}
    before = asyncio.all_tasks()
    h.bot._connection._view_store.dispatch_view(2, custom_id, interaction)
    await asyncio.gather(*(asyncio.all_tasks() - before))
    return interaction


def preview_of(answered: Any) -> tuple[str, Any]:
    """The preview's text and the message its buttons were sent with (None without buttons)."""
    call = calls(answered)[-1]
    embed = call.kwargs.get("embed")
    assert embed is not None, call
    view = call.kwargs.get("view")
    return embed.description or "", as_sent(view) if view is not None else None
