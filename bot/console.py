"""`python -m bot console --user-id N`: chat in the terminal through the real pipeline, without Discord.

Lets an admin try a model and an endpoint before inviting the bot anywhere: replies use the same prompt building,
memory selection and rendering; turns go through the same filter, journal, debouncer, extractor and store, into the
same `DATA_DIR`. Type `/show` to see the memory, `/flush` to extract now, `/forget` to wipe it, `/quit` to leave.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from datetime import UTC, datetime

import openai

from bot.app import DataDirError, build_resources, start_memory
from bot.config import Settings
from bot.conversation import HistoryEntry, bounded_history, chat_messages, recent_texts, system_message
from bot.memory.filter import filter_messages
from bot.memory.models import ConversationKey, IncomingMessage

CONSOLE_CONVERSATION_ID = 1
BOT_ID = 2
HELP = "Commands: /show  /flush  /forget  /quit   (Ctrl-D also quits and saves)"


async def _read_line(prompt: str) -> str | None:
    def read() -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    return await asyncio.to_thread(read)


async def run_console(settings: Settings, *, user_id: int, name: str) -> int:
    resources = build_resources(settings)
    try:
        start_memory(resources)
    except DataDirError as error:
        print(f"memory-bot: {error}", file=sys.stderr)
        return 2
    memory = resources.memory
    key = ConversationKey(CONSOLE_CONVERSATION_ID, user_id)
    history: list[HistoryEntry] = []
    ids = itertools.count(int(time.time() * 1000))
    print(f"Chatting as {name} (user {user_id}) with {settings.chat_model}. {HELP}")
    try:
        while True:
            line = await _read_line(f"{name}> ")
            if line is None or line.strip() == "/quit":
                break
            text = line.strip()
            if not text:
                continue
            if text == "/show":
                print((await memory.store.export_bytes(user_id)).decode())
                continue
            if text == "/flush":
                await memory.debouncer.flush()
                print("(memory updated)")
                continue
            if text == "/forget":
                await memory.forget_all(user_id)
                print("(memory wiped)")
                continue
            current = HistoryEntry(user_id, name, text)
            block = await memory.memory_prompt(user_id, recent_texts(history, current), user_label=name)
            system = system_message(
                settings.system_prompt, now=datetime.now(UTC), speaker_name=name, memory_block=block
            )
            past = bounded_history(history, max_messages=settings.history_messages, max_chars=settings.history_chars)
            try:
                answer = await resources.chat.reply(chat_messages(system=system, history=past, current=current))
            except openai.OpenAIError as error:
                print(f"(the model could not answer: {type(error).__name__}: {error})")
                continue
            print(f"bot> {answer}")
            reply = HistoryEntry(BOT_ID, "bot", answer, is_self=True)
            history += [current, reply]
            now = datetime.now(UTC)
            user_id_msg, bot_id_msg = next(ids), next(ids)
            turns = filter_messages(
                [
                    IncomingMessage(user_id_msg, user_id, name, text, now),
                    IncomingMessage(bot_id_msg, BOT_ID, "bot", answer, now, is_self=True, reply_to_id=user_id_msg),
                ],
                bot_id=BOT_ID,
                max_chars=settings.memory_max_turn_chars,
            )
            await memory.remember(key, turns)
    finally:
        print("Saving what I learned…")
        await memory.shutdown(settings.shutdown_timeout_seconds)
        await resources.aclose()
    return 0
