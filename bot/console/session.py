"""`python -m bot console --user-id N`: chat in the terminal through the real pipeline, without Discord.

Lets an admin try a model and an endpoint before inviting the bot anywhere: replies use the same prompt building,
memory selection and rendering; turns go through the same filter, journal, debouncer, extractor and store, into the
same `DATA_DIR`. It says where it talks to (the endpoint's URL, never the key) and where memory lives, and names the
URL again when the endpoint cannot be reached. Lines starting with `/` are commands (`bot.console.commands`: the
`/memory` commands of Discord, `/flush`, `/help`, `/quit`) and never reach the model. The log goes to
`DATA_DIR/console.log`, so it never lands in the middle of the prompt; lines are read with readline (editing, history
for this session only, no length limit), and input that is not UTF-8 is read with replacement characters instead of
ending the session.

Replies stream while the endpoint streams (`bot.console.streaming`); a configured model the endpoint does not list
is named with the ones it offers (`bot.chat.catalog`); a memory found damaged is told of once; leaving says what
was saved (`bot.console.leaving`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import queue
import signal
import sys
import threading
import time
from datetime import UTC, datetime

import openai

from bot.app import DataDirError, Resources, build_resources, start_memory
from bot.chat.catalog import configured_models, offered_models, start_check, unknown_model_line
from bot.chat.conversation import (
    HistoryEntry,
    HistoryTrimmer,
    chat_messages,
    recent_texts,
    system_message,
)
from bot.chat.model import UnusableAnswer
from bot.config import Settings, describe_endpoint
from bot.console.commands import EXPORTS_FOLDER, HELP, ConsoleCommands, parse_command
from bot.console.leaving import save_and_say
from bot.console.streaming import PaceNotes, console_reply
from bot.memory.models import IncomingMessage, Location

CONSOLE_CONVERSATION_ID = 1
CONSOLE_HERE = Location.dm(CONSOLE_CONVERSATION_ID)  # private, like a DM: no server switch applies
BOT_ID = 2
LOG_FILE = "console.log"
MAX_ERROR_CHARS = 300
UNREADABLE_NOTICE = (
    "(what I remembered about you earlier could not be read (the stored copy was damaged), so I started a new "
    "memory; the damaged copy was kept aside for the operator, and /forget deletes it with the rest)"
)


def _say(text: str) -> None:
    print(text, flush=True)


def _write(text: str) -> None:
    print(text, end="", flush=True)


def model_failure(error: openai.OpenAIError, endpoint: str, secrets: list[str]) -> str:
    """One line on why the model did not answer, naming the endpoint tried; never a secret, even one the endpoint
    echoed back."""
    if isinstance(error, openai.APIConnectionError):  # refused, unresolvable, timed out
        line = f"could not reach the LLM endpoint {endpoint}: {type(error).__name__}: {error}"
    elif isinstance(error, openai.APIStatusError):
        line = f"the LLM endpoint {endpoint} answered {error.status_code}: {type(error).__name__}: {error.message}"
    elif isinstance(error, UnusableAnswer):
        line = f"the LLM endpoint {endpoint} gave an unusable answer: {error}"
    else:
        line = f"the model could not answer ({endpoint}): {type(error).__name__}: {error}"
    line = " ".join(line.split())
    for secret in secrets:
        line = line.replace(secret, "[redacted]")
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def prepare_terminal() -> None:
    """Line editing and no length limit (readline reads in raw mode, not through the tty's 4,095-byte line
    buffer), the prompt on stdout (without readline CPython writes it to stderr), and bytes that are not UTF-8
    read as replacement characters instead of raising in the reader thread."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it is what turns it on for input())
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")


class _StdinReader:
    """Reads lines in a daemon thread, one per request, so a pending read never keeps the process alive.

    `asyncio.to_thread(input)` cannot be interrupted: after Ctrl-C the interpreter would wait at exit for the
    executor thread still blocked in `input()`, i.e. until the user pressed Enter. A daemon thread is abandoned.
    """

    def __init__(self) -> None:
        self._prompts: queue.SimpleQueue[tuple[str, asyncio.Future[str | None]]] = queue.SimpleQueue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._run, name="console-stdin", daemon=True).start()

    def _run(self) -> None:
        while True:
            prompt, future = self._prompts.get()
            try:
                line: str | None = input(prompt)
            except EOFError:
                line = None
            self._loop.call_soon_threadsafe(_resolve, future, line)
            if line is None:
                return

    async def read(self, prompt: str) -> str | None:
        """The next line, or None at the end of input."""
        future: asyncio.Future[str | None] = self._loop.create_future()
        self._prompts.put((prompt, future))
        return await future


def _resolve(future: asyncio.Future[str | None], line: str | None) -> None:
    if not future.done():
        future.set_result(line)


async def _greet(resources: Resources, *, user_id: int, name: str, endpoint: str) -> None:
    """Who is chatting with which model where, where memory lives, and a configured model the endpoint lacks."""
    settings, memory = resources.settings, resources.memory
    _say(f"Chatting as {name} (user {user_id}) with {settings.chat_model} at {endpoint}. {HELP}")
    _say(f"(memory in {memory.ops.where}; the log goes to {settings.data_dir / LOG_FILE})")
    wanted = configured_models(settings.chat_model, settings.memory_model)
    for warning in await start_check(resources.client, wanted, endpoint):
        _say(f"({warning})")
    await memory.user(user_id).show()  # read now, so a damaged memory is told of before the first message


async def _report_failure(resources: Resources, error: openai.OpenAIError, endpoint: str, secrets: list[str]) -> None:
    """The failure's line, and after a 404 the line naming what the endpoint offers instead."""
    _say(f"({model_failure(error, endpoint, secrets)})")
    if isinstance(error, openai.NotFoundError):
        offered = await offered_models(resources.client)
        _say(f"({unknown_model_line('CHAT_MODEL', resources.settings.chat_model, endpoint, offered)})")


async def _chat(resources: Resources, *, user_id: int, name: str) -> None:
    settings = resources.settings
    memory = resources.memory
    endpoint = describe_endpoint(settings.openai_base_url)
    secrets = [key_value for key_value in [settings.api_key_value()] if len(key_value) >= 6]
    history: list[HistoryEntry] = []
    trimmer = HistoryTrimmer()
    ids = itertools.count(int(time.time() * 1000))
    prepare_terminal()
    reader = _StdinReader()
    commands = ConsoleCommands(
        memory, user_id=user_id, place=CONSOLE_HERE.place, endpoint=endpoint, ask=reader.read, say=_say,
        exports=settings.data_dir / EXPORTS_FOLDER,
    )
    await _greet(resources, user_id=user_id, name=name, endpoint=endpoint)
    mine = memory.user(user_id)
    paces = PaceNotes()
    while True:
        if mine.take_unreadable_notice():
            _say(UNREADABLE_NOTICE)
        line = await reader.read(f"{name}> ")
        if line is None:
            return
        text = line.strip()
        if not text:
            continue
        command = parse_command(text)
        if command is not None:
            if not await commands.run(command):
                return
            continue
        if text.startswith("//"):  # a message that starts with a slash
            text = text[1:]
        ticket = memory.learning.ticket(user_id)
        current = HistoryEntry(user_id, name, text)
        recent = recent_texts(history, current)
        query = memory.recall.query(user_id, recent, where=CONSOLE_HERE)
        prompt = await memory.recall.prompt(user_id, recent, user_label=name, where=CONSOLE_HERE, query=query)
        system = system_message(settings.system_prompt, now=datetime.now(UTC), speaker_name=name,
                                memory_profile=prompt.profile)
        past = trimmer.trim(0, history, max_messages=settings.history_messages, max_chars=settings.history_chars)
        try:
            written = await console_reply(
                resources.chat, chat_messages(system=system, history=past, current=current, memory_facts=prompt.facts),
                stream=settings.stream_replies, write=_write, say=_say,
            )
        except openai.OpenAIError as error:
            await _report_failure(resources, error, endpoint, secrets)
            continue
        answer = written.text
        if (pace := paces.after(written)) is not None:  # how this endpoint streams, until one has streamed live
            _say(pace)
        reply = HistoryEntry(BOT_ID, "bot", answer, is_self=True)
        history += [current, reply]
        now = datetime.now(UTC)
        user_id_msg, bot_id_msg = next(ids), next(ids)
        exchange = [
            IncomingMessage(user_id_msg, user_id, name, text, now),
            IncomingMessage(bot_id_msg, BOT_ID, "bot", answer, now, is_self=True, reply_to_id=user_id_msg),
        ]
        await memory.learning.remember(CONSOLE_HERE, exchange, ticket=ticket, bot_id=BOT_ID,
                                       shown=[entry.text for entry in past])
        await memory.recall.record_reply([bot_id_msg], user_id, prompt, ticket)  # for /recalled, as for a Discord reply
        commands.last_reply_id = bot_id_msg


async def run_console(settings: Settings, *, user_id: int, name: str) -> int:
    """Chat until /quit, end of input, Ctrl-C or SIGTERM; then save what is pending, like the bot does."""
    resources = build_resources(settings)
    try:
        await start_memory(resources)
    except DataDirError as error:
        print(f"memory-bot: {error}", file=sys.stderr)
        await resources.aclose()
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    chat = asyncio.create_task(_chat(resources, user_id=user_id, name=name), name="console")
    stopper = asyncio.create_task(stop.wait(), name="console-stop")
    try:
        await asyncio.wait({chat, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        chat.cancel()
        await asyncio.wait({chat})  # let a cancelled reply unwind; never raises
        await save_and_say(resources, user_id=user_id, say=_say)
        await resources.aclose()
    if not chat.cancelled() and (failure := chat.exception()) is not None:
        raise failure  # after saving: a crash in the chat does not cost what was learned before it
    return 0
