"""`python -m bot console --user-id N`: chat in the terminal through the real pipeline, without Discord.

Lets an admin try a model and an endpoint before inviting the bot anywhere: replies use the same prompt building,
memory selection and rendering; turns go through the same filter, journal, debouncer, extractor and store, into the
same `DATA_DIR`. Its own commands (`/help` lists them) never reach the model. It says what happened: `/flush`
reports "+1 fact", "nothing pending" or "failed: <why>", and gives up waiting after `FLUSH_WAIT_SECONDS` when the
endpoint keeps failing (the turns stay journaled). The log goes to `DATA_DIR/console.log`, so it never lands in the
middle of the prompt; lines are read with readline (editing, history for this session only, no length limit), and
input that is not UTF-8 is read with replacement characters instead of ending the session.
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
from bot.config import Settings
from bot.conversation import (
    HistoryEntry,
    HistoryTrimmer,
    chat_messages,
    recent_texts,
    system_message,
)
from bot.memory.models import ConversationKey, IncomingMessage, Place, SwitchTarget
from bot.memory.render import memory_as_text
from bot.memory.service import FlushReport

CONSOLE_CONVERSATION_ID = 1
CONSOLE_TARGET = SwitchTarget.dm(CONSOLE_CONVERSATION_ID)  # a DM: no server switch applies
BOT_ID = 2
FLUSH_WAIT_SECONDS = 20.0
LOG_FILE = "console.log"
COMMANDS = {
    "/show": "what I remember about you: summaries and facts with their ids",
    "/flush": "learn from the conversation now instead of after the quiet time, and say what changed",
    "/forget": "forget everything I remember about you",
    "/help": "this list",
    "/quit": "save what is pending and leave (Ctrl-D does the same)",
}
HELP = "Commands: " + "  ".join(COMMANDS) + "   (/help explains them)"


def help_text() -> str:
    return "\n".join(f"  {name:<8} {meaning}" for name, meaning in COMMANDS.items())


def prepare_terminal() -> None:
    """Line editing and no length limit (readline reads in raw mode, not through the tty's 4,095-byte line
    buffer), the prompt on stdout (without readline CPython writes it to stderr), and bytes that are not UTF-8
    read as replacement characters instead of raising in the reader thread."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it is what turns it on for input())
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")


def flush_summary(report: FlushReport) -> str:
    """One line saying what a flush did: "+1 fact", "nothing pending", "failed: unusable answer (...)"."""
    if report.nothing_pending:
        return "(nothing pending)"
    parts = []
    if report.batches_saved:
        plural = "" if report.facts_added == 1 else "s"
        parts.append(f"+{report.facts_added} fact{plural}")
    if report.batches_failed:
        parts.append("failed: " + "; ".join(report.problems or ("unknown error",)))
    if not report.finished:
        why = f" ({report.problems[-1]})" if report.problems else ""
        parts.append(
            f"still trying after {FLUSH_WAIT_SECONDS:.0f}s{why}; it goes on in the background and what is "
            "pending stays journaled"
        )
    elif report.batches_failed:
        parts.append("the turns stay journaled for the next start")
    return "(" + "; ".join(parts or ["nothing learned"]) + ")"


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


async def _chat(resources: Resources, *, user_id: int, name: str) -> None:
    settings = resources.settings
    memory = resources.memory
    key = ConversationKey(CONSOLE_CONVERSATION_ID, user_id, Place.dm())  # private, like a DM
    history: list[HistoryEntry] = []
    trimmer = HistoryTrimmer()
    ids = itertools.count(int(time.time() * 1000))
    prepare_terminal()
    reader = _StdinReader()
    print(f"Chatting as {name} (user {user_id}) with {settings.chat_model}. {HELP}", flush=True)
    print(f"(the log goes to {settings.data_dir / LOG_FILE})", flush=True)
    while True:
        line = await reader.read(f"{name}> ")
        if line is None or line.strip() == "/quit":
            return
        text = line.strip()
        if not text:
            continue
        if text == "/help":
            print(help_text(), flush=True)
            continue
        if text == "/show":
            shown = await memory.show(user_id)
            print(memory_as_text(shown) if not shown.is_empty() else "(I do not remember anything yet)", flush=True)
            continue
        if text == "/flush":
            print(f"(learning from what is pending; up to {FLUSH_WAIT_SECONDS:.0f}s…)", flush=True)
            print(flush_summary(await memory.flush(FLUSH_WAIT_SECONDS)), flush=True)
            continue
        if text == "/forget":
            await memory.forget_all(user_id)
            print("(memory wiped)", flush=True)
            continue
        if text.startswith("/") and " " not in text and text not in COMMANDS:
            print(f"(unknown command {text}; /help lists them)", flush=True)
            continue
        ticket = memory.learning_ticket(user_id)
        current = HistoryEntry(user_id, name, text)
        prompt = await memory.memory_prompt(
            user_id, recent_texts(history, current), user_label=name, place=key.place, target=CONSOLE_TARGET
        )
        system = system_message(settings.system_prompt, now=datetime.now(UTC), speaker_name=name,
                                memory_profile=prompt.profile)
        past = trimmer.trim(0, history, max_messages=settings.history_messages, max_chars=settings.history_chars)
        try:
            answer = await resources.chat.reply(
                chat_messages(system=system, history=past, current=current, memory_facts=prompt.facts)
            )
        except openai.OpenAIError as error:
            print(f"(the model could not answer: {type(error).__name__}: {error})", flush=True)
            continue
        print(f"bot> {answer}", flush=True)
        reply = HistoryEntry(BOT_ID, "bot", answer, is_self=True)
        history += [current, reply]
        now = datetime.now(UTC)
        user_id_msg, bot_id_msg = next(ids), next(ids)
        exchange = [
            IncomingMessage(user_id_msg, user_id, name, text, now),
            IncomingMessage(bot_id_msg, BOT_ID, "bot", answer, now, is_self=True, reply_to_id=user_id_msg),
        ]
        await memory.remember(key, exchange, ticket=ticket, target=CONSOLE_TARGET, bot_id=BOT_ID)


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
        print("\nSaving what I learned…", flush=True)
        await resources.memory.shutdown(settings.shutdown_timeout_seconds)
        await resources.aclose()
    if not chat.cancelled() and (failure := chat.exception()) is not None:
        raise failure  # after saving: a crash in the chat does not cost what was learned before it
    return 0
