"""The bot with MEMORY_ENCRYPTION_KEY, through discord.py's own dispatch, on files and on PostgreSQL: a DM is learned
and comes back in the next reply and in `/memory show`, while no file under DATA_DIR and no database row holds the
user's words; after a restart with the key the memory is still there, and `/memory forget` destroys the user's key,
so the sealed memory a backup took before it can no longer be opened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.app import DataDirError
from bot.storage.errors import KeyDestroyed
from bot.storage.file_codec import FileCodec
from bot.storage.sealing import MasterKey, new_master_key_text
from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.cogs.test_memory_buttons import ALICE, as_sent, custom_ids, press
from tests.helpers import calls, dispatch, make_interaction, run_slash
from tests.support.importing import press as press_import
from tests.support.importing import preview_of, run_import
from tests.support.llm_server import extraction
from tests.support.storage import everything_stored, stored_text, words_in_clear

FACT = "Keeps bees on a rooftop in Lyon and sells the honey at the Saturday market."
WORDS = ("bees", "Lyon", "honey", "Beekeeper")
KEY = new_master_key_text()


@pytest.fixture(params=["files", "postgres"])
def database(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "files":
        return {}
    return {"database_url": request.getfixturevalue("postgres_url")}


def test_a_word_is_found_in_plain_text_and_not_inside_a_sealed_value() -> None:
    plain = json.dumps({"content": FACT, "summary": "Beekeeper in Lyon."}).encode()
    assert words_in_clear(WORDS, plain) == list(WORDS)
    assert words_in_clear(WORDS, b'{"sealed": "AE1CUzG+beesLyon/honey9Beekeeper="}') == []


async def test_sealed_memory_is_learned_recalled_shown_and_forgotten_through_dispatch(
    database: dict[str, Any], make_harness: MakeHarness, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data, memory_encryption_key=KEY, **database)
    scene = make_scene(h)
    h.llm.extract = lambda body: extraction(personal="Beekeeper in Lyon", facts=[(FACT, "personal")])
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "I keep bees in Lyon."))
    await h.settle()
    stored = stored_text(await everything_stored(h.settings)).encode()
    assert words_in_clear(WORDS, stored) == []

    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "what do I sell?"))
    assert FACT in str(h.llm.chat_requests[-1]["messages"])  # opened for the reply
    shown = await run_slash(h.bot, make_interaction(ALICE), "memory show")
    assert FACT in json.dumps([call.kwargs["embed"].to_dict() for call in calls(shown) if "embed" in call.kwargs])
    await h.close()

    with pytest.raises(DataDirError, match="is encrypted: set MEMORY_ENCRYPTION_KEY"):
        await make_harness(data_dir=data, **database)
    restarted = await make_harness(data_dir=data, memory_encryption_key=KEY, **database)
    assert [fact.content for fact in (await restarted.memory.user(ALICE_ID).show()).facts] == [FACT]
    backup = (data / "memory" / f"{ALICE_ID}.json").read_bytes() if not database else b""

    asked = await run_slash(restarted.bot, make_interaction(ALICE), "memory forget")
    message = as_sent(calls(asked)[0].kwargs["view"])
    confirmed = await press(restarted, message, custom_ids(message)["Forget everything"], ALICE)
    assert "forgotten everything" in calls(confirmed)[-1].content
    if backup:  # files: the memory file a backup took before the forget no longer opens
        codec = FileCodec(data, MasterKey.parse(KEY))
        with pytest.raises(KeyDestroyed):
            codec.open_json(ALICE_ID, "memory", json.loads(backup))
    assert not (data / "keys" / f"{ALICE_ID}.key").exists()
    if database:  # PostgreSQL: her key row is gone with her memory
        conn = await asyncpg.connect(database["database_url"])
        try:
            assert await conn.fetchval("SELECT count(*) FROM memory_keys WHERE user_id = $1", ALICE_ID) == 0
            assert await conn.fetchval("SELECT count(*) FROM memories WHERE user_id = $1", ALICE_ID) == 0
        finally:
            await conn.close()


async def test_an_import_waiting_for_its_button_and_the_imported_facts_are_sealed(
    database: dict[str, Any], make_harness: MakeHarness, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data, memory_encryption_key=KEY, **database)
    notes = f"- {FACT}\n- My email password is Zebra-Lantern-42!x\n".encode()
    _, message = preview_of(await run_import(h.bot, ALICE, "notes.md", notes))
    assert message is not None
    stored = stored_text(await everything_stored(h.settings)).encode()
    assert words_in_clear(WORDS, stored) == [] and b"Zebra-Lantern" not in stored
    await press_import(h, message, "Import", ALICE)
    shown = await h.memory.user(ALICE_ID).show()
    assert [fact.content for fact in shown.facts] == [FACT]
    stored = stored_text(await everything_stored(h.settings)).encode()
    assert words_in_clear(WORDS, stored) == [] and b"Zebra-Lantern" not in stored
