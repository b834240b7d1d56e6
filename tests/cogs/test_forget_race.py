"""A message sent just before "forget everything" is never learned after it, even when its reply is still being
generated when the wipe is confirmed (turns reach the engine only after the reply is sent)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from tests.cogs.conftest import ALICE_ID, MakeHarness
from tests.cogs.test_memory_cog import ALICE, ask_to_forget_everything
from tests.helpers import calls, extraction_input, make_interaction, press, reply
from tests.memory.test_service import Gated
from tests.support.engine import parts
from tests.support.llm_server import extraction

SECRET = "quokka-saffron-5150"


def files_holding(root: Path, needle: str) -> list[Path]:
    every = [Path(folder) / name for folder, _, names in os.walk(root) for name in names]
    return [path for path in every if needle.encode() in path.read_bytes()]


async def test_a_wipe_confirmed_while_the_reply_is_generated_wins(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.llm.extract = lambda body: extraction(
        facts=[(f"Said: {t['text']}", "context") for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    )
    released = threading.Event()
    h.llm.say(Gated(released, reply("Nice name!")))  # the model takes its time with this reply
    message = h.discord.message(h.discord.dm(ALICE), ALICE, f"my quokka is called {SECRET}")
    handler = asyncio.create_task(h.chat.on_message(message))  # as discord.py runs it: one task per message
    try:
        await h.llm.server.await_requests(1)  # the reply is being generated

        _, view = await ask_to_forget_everything(h, ALICE)
        confirm = make_interaction(ALICE)
        assert await press(view, view.confirm, confirm)
        assert calls(confirm)[-1].name == "edit_original_response"
    finally:
        released.set()
    await asyncio.wait_for(handler, 10)  # replied, and handed its turns to memory
    assert any(sent.content == "Nice name!" for sent in h.discord.bot_messages())
    assert await parts(h.memory).learning.debouncer.flush(10)

    assert h.llm.extraction_requests == []  # nothing of that message was learned...
    assert h.memory_on_disk(ALICE_ID) is None
    assert files_holding(h.settings.data_dir, SECRET) == []  # ...nor kept anywhere on disk

