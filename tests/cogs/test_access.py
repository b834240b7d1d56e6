"""Who may talk to the bot, through discord.py's dispatch: DM_POLICY=off and =members (a member of a server the
bot is in that has not switched DMs off, with its allowed roles if it set any), and a server's allowed roles. A
refused user gets one short notice (not one per message), no model call, and nothing of theirs is learned."""

from __future__ import annotations

from typing import Any

import discord

from bot.client.reply_policy import DMS_MEMBERS_ONLY, DMS_OFF
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.helpers import (
    Harness,
    behave,
    dispatch,
    http_error,
    last_text,
    make_guild,
    make_interaction,
    make_member,
    make_role,
    make_user,
    next_id,
)


def chats(h: Harness) -> int:
    return len(h.llm.chat_requests)


def bot_is_in(h: Harness, guild: Any, members: dict[int, Any]) -> None:
    """The bot is in `guild` (this process's cache) and Discord knows these members of it; the cache has none of
    them (no members intent), so they are asked for with `fetch_member`."""
    h.bot._connection._guilds[guild.id] = guild
    behave(guild, discord.Guild, "get_member", lambda user_id: None)

    async def fetch_member(member_id: int) -> Any:
        if member_id not in members:
            raise http_error(404, "Unknown Member")
        return members[member_id]

    behave(guild, discord.Guild, "fetch_member", fetch_member)


def with_roles(member: Any, *roles: Any, admin: bool = False) -> Any:
    member.roles = list(roles)
    member.guild_permissions = discord.Permissions(manage_guild=admin)
    return member


async def dm(h: Harness, user: Any, text: str) -> None:
    await dispatch(h.bot, "message", h.discord.message(h.discord.dm(user), user, text))


async def test_dm_policy_off_refuses_dms_with_one_notice(make_harness: MakeHarness) -> None:
    h = await make_harness(dm_policy="off")
    s = make_scene(h)
    await dm(h, s.alice_user, "hello?")
    await dm(h, s.alice_user, "hello again?")
    assert chats(h) == 0 and [sent.content for sent in h.discord.sent] == [DMS_OFF]
    await h.settle()
    assert h.llm.extraction_requests == []  # nothing learned from a refused user
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, s.alice, "and in the server?"))
    assert chats(h) == 1


async def test_dm_policy_members_admits_members_of_servers_that_allow_it(make_harness: MakeHarness) -> None:
    h = await make_harness(dm_policy="members")
    s = make_scene(h)
    role = make_role("Supporters")
    other = make_guild(name="Quiet server")
    carol_user, dave_user, erin_user = make_user(next_id(), "Carol"), make_user(next_id(), "Dave"), make_user(
        next_id(), "Erin"
    )
    bot_is_in(h, s.guild, {
        s.alice_user.id: with_roles(s.alice), carol_user.id: with_roles(make_member(carol_user, s.guild)),
    })
    bot_is_in(h, other, {dave_user.id: with_roles(make_member(dave_user, other))})

    await dm(h, s.alice_user, "I'm a member here")
    assert chats(h) == 1
    await dm(h, s.bob_user, "I'm in no server of yours")
    assert chats(h) == 1 and h.discord.sent[-1].content == DMS_MEMBERS_ONLY

    # The quiet server switches DMs off: its membership no longer opens DMs.
    admin = make_interaction(s.alice, guild=other, channel=h.discord.text_channel(other))
    admin.permissions = discord.Permissions(manage_guild=True)
    cog: Any = h.bot.get_cog("SettingsCog")
    await cog.dms.callback(cog, admin, allow=False)
    assert "does not let anyone DM me" in last_text(admin)
    await dm(h, dave_user, "my server said no")
    assert chats(h) == 1

    # A server that lists allowed roles opens DMs only to members with one of them.
    admin = make_interaction(s.alice, guild=s.guild, channel=s.general)
    admin.permissions = discord.Permissions(manage_guild=True)
    await cog.roles.callback(cog, admin, add=role)
    await dm(h, carol_user, "I have no role")
    assert chats(h) == 1
    bot_is_in(h, s.guild, {erin_user.id: with_roles(make_member(erin_user, s.guild), role)})
    await dm(h, erin_user, "I'm a supporter")
    assert chats(h) == 2


async def test_allowed_roles_in_a_server(make_harness: MakeHarness) -> None:
    h = await make_harness()
    s: Scene = make_scene(h)
    role = make_role("Regulars")
    admin = make_interaction(s.alice, guild=s.guild, channel=s.general)
    admin.permissions = discord.Permissions(manage_guild=True)
    cog: Any = h.bot.get_cog("SettingsCog")
    await cog.roles.callback(cog, admin, add=role)
    assert f"only members with <@&{role.id}>" in last_text(admin)

    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, with_roles(s.bob), "may I?"))
    await dispatch(h.bot, "message", h.discord.mention_bot(s.thread, with_roles(s.bob), "may I now?"))
    assert chats(h) == 0
    assert [sent.content for sent in h.discord.sent] == [
        f"In this server, only members with these roles can talk to me: <@&{role.id}>."
    ]
    assert h.discord.sent[0].kwargs["allowed_mentions"].roles is False  # named, never pinged
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, with_roles(s.bob, role), "now?"))
    assert chats(h) == 1
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, with_roles(s.alice, admin=True), "admin here"))
    assert chats(h) == 2
    await dispatch(h.bot, "message", h.discord.message(s.bob_dm, s.bob_user, "and in DMs?"))
    assert chats(h) == 3  # DM_POLICY=all: a server's roles decide nothing in DMs
    await h.settle()
    assert not any("may I" in str(body) for body in h.llm.extraction_requests)

    admin = make_interaction(s.alice, guild=s.guild, channel=s.general)
    admin.permissions = discord.Permissions(manage_guild=True)
    await cog.roles.callback(cog, admin, everyone=True)
    assert last_text(admin) == "Everyone in this server can talk to me."
    await dispatch(h.bot, "message", h.discord.mention_bot(s.general, with_roles(s.bob), "and now?"))
    assert chats(h) == 4
