"""A user whose memory file was found damaged is told once, privately: after their next reply in a DM, or in their
next `/memory` answer (ephemeral) when they next speak in a server, never in the server's channel. Through the
bot's real dispatch and command tree, on the file store (the one that keeps a damaged file aside)."""

from __future__ import annotations

from bot.client.notices import UNREADABLE_MEMORY_NOTICE
from bot.memory.doors import ForgetEverything
from tests.cogs.conftest import ALICE_ID, Scene
from tests.helpers import calls, dispatch, make_interaction, run_slash
from tests.support.llm_server import reply

DAMAGED = b'{"version": "2.0", "facts": [{"id": "fact_1", "content": "Lives in Par'  # torn mid-write


def damage(scene: Scene) -> None:
    path = scene.h.memory_path(ALICE_ID)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(DAMAGED)


def kept_aside(scene: Scene) -> list[bytes]:
    path = scene.h.memory_path(ALICE_ID)
    return [copy.read_bytes() for copy in path.parent.glob(f"{path.name}.corrupt-*")]


async def test_in_a_dm_the_next_reply_is_followed_by_the_notice_once(scene: Scene) -> None:
    h = scene.h
    damage(scene)
    h.llm.say(reply("Hi Alice!"), reply("Sure."))
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "hello again"))
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "and again"))
    assert [sent.content for sent in h.discord.bot_messages(scene.alice_dm)] == [
        "Hi Alice!", UNREADABLE_MEMORY_NOTICE, "Sure."
    ]
    assert kept_aside(scene) == [DAMAGED], "the bytes are kept for the operator"


async def test_in_a_server_the_channel_never_hears_of_it_and_memory_show_tells_once(scene: Scene) -> None:
    h = scene.h
    damage(scene)
    h.llm.say(reply("Hi Alice!"))
    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, "hello"))
    assert [sent.content for sent in h.discord.bot_messages(scene.general)] == ["Hi Alice!"]
    assert all("could not be read" not in (sent.content or "") for sent in h.discord.bot_messages())

    first = await run_slash(h.bot, make_interaction(scene.alice_user), "memory show")
    second = await run_slash(h.bot, make_interaction(scene.alice_user), "memory show")
    first_texts = [c.content or "" for c in calls(first)]
    assert all(c.kwargs.get("ephemeral") is True for c in calls(first) if c.name != "edit_original_response")
    assert any(UNREADABLE_MEMORY_NOTICE in text for text in first_texts), first_texts
    assert not any("could not be read" in (c.content or "") for c in calls(second))


async def test_someone_else_is_never_told(scene: Scene) -> None:
    h = scene.h
    damage(scene)
    h.llm.say(reply("Hi Alice!"), reply("Hi Bob!"))
    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, "hello"))
    await dispatch(h.bot, "message", h.discord.message(scene.bob_dm, scene.bob_user, "hello"))
    assert [sent.content for sent in h.discord.bot_messages(scene.bob_dm)] == ["Hi Bob!"]
    bob = await run_slash(h.bot, make_interaction(scene.bob_user), "memory show")
    assert not any("could not be read" in (c.content or "") for c in calls(bob))


async def test_forgetting_everything_deletes_the_kept_copy_and_the_notice_with_it(scene: Scene) -> None:
    h = scene.h
    damage(scene)
    h.llm.say(reply("Hi Alice!"), reply("Hello."))
    await dispatch(h.bot, "message", h.discord.mention_bot(scene.general, scene.alice, "hello"))  # kept aside now
    assert kept_aside(scene) == [DAMAGED]
    await h.memory.user(ALICE_ID).forget(ForgetEverything())
    assert kept_aside(scene) == []
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "hi"))
    assert [sent.content for sent in h.discord.bot_messages(scene.alice_dm)] == ["Hello."], "nothing left to tell of"
