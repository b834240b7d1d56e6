"""Fixtures for cog tests: the real bot with real resources against the test Chat Completions server, and a cast
of spec'd Discord fakes (a server with a channel and a thread, two members, their DMs)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.storage.sealing import new_master_key_text
from tests.helpers import Harness, ScriptedLLM, build_harness, make_guild, make_member, make_user
from tests.support.llm_server import ChatServer

ALICE_ID = 111111111111111111
BOB_ID = 222222222222222222
CAROL_ID = 333333333333333333

MakeHarness = Callable[..., Awaitable[Harness]]
SEALED = new_master_key_text()


@pytest.fixture(params=["files", "postgres", "files-sealed", "postgres-sealed"])
def storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings of each backend, in the clear and with MEMORY_ENCRYPTION_KEY, for a test run on all four (ask
    for it before `make_harness`)."""
    settings: dict[str, Any] = {"memory_encryption_key": SEALED} if request.param.endswith("sealed") else {}
    if request.param.startswith("postgres"):
        settings["database_url"] = request.getfixturevalue("postgres_url")
    return settings


@pytest.fixture
def llm(chat_server: ChatServer) -> ScriptedLLM:
    return ScriptedLLM(chat_server)


@pytest.fixture
async def make_harness(llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[MakeHarness]:
    """Build bots with settings overrides; `data_dir=` reuses a folder (a restart)."""
    made: list[Harness] = []

    async def make(*, data_dir: Path | None = None, **overrides: Any) -> Harness:
        harness = await build_harness(llm, data_dir or tmp_path / "data", **overrides)
        made.append(harness)
        return harness

    yield make
    for harness in reversed(made):
        await harness.close()


@pytest.fixture
async def harness(make_harness: MakeHarness) -> Harness:
    return await make_harness()


@dataclass
class Scene:
    """Who and where: Alice and Bob in a server channel and its thread, and each in a DM with the bot."""

    h: Harness
    guild: Any
    general: Any
    thread: Any
    alice_user: Any
    bob_user: Any
    alice: Any  # Member
    bob: Any  # Member
    alice_dm: Any
    bob_dm: Any


def make_scene(h: Harness) -> Scene:
    guild = make_guild()
    general = h.discord.text_channel(guild)
    thread = h.discord.thread(general)
    alice_user = make_user(ALICE_ID, "Alice")
    bob_user = make_user(BOB_ID, "Bob")
    return Scene(
        h=h,
        guild=guild,
        general=general,
        thread=thread,
        alice_user=alice_user,
        bob_user=bob_user,
        alice=make_member(alice_user, guild),
        bob=make_member(bob_user, guild, nick="Bobby"),
        alice_dm=h.discord.dm(alice_user),
        bob_dm=h.discord.dm(bob_user),
    )


@pytest.fixture
def scene(harness: Harness) -> Scene:
    return make_scene(harness)
