"""Leaving the console (`/quit`, Ctrl-D, Ctrl-C, SIGTERM): learn what is pending, say what that changed, close.

The person trying the bot sees what the session taught it, in the same words as `/flush` (each new fact with its
id, what the memory guard held back, a failure with the endpoint it tried), and where the memory now lives, so
leaving never looks as if the conversation was thrown away. The flush gets most of SHUTDOWN_TIMEOUT_SECONDS; what
it cannot finish stays journaled for the next start, and the line says so.
"""

from __future__ import annotations

from bot.app import Resources
from bot.config import describe_endpoint
from bot.console.commands import MemoryState, Say, flush_summary

FLUSH_SHARE = 0.8  # of SHUTDOWN_TIMEOUT_SECONDS; the rest is for closing the storage


async def save_and_say(resources: Resources, *, user_id: int, say: Say) -> None:
    """Flush, tell what was saved for `user_id`, then shut the memory down."""
    memory, settings = resources.memory, resources.settings
    say("\nSaving what I learned…")
    mine = memory.user(user_id)
    before = MemoryState.of(await mine.show())
    report = await memory.ops.flush(settings.shutdown_timeout_seconds * FLUSH_SHARE)
    after = MemoryState.of(await mine.show())
    summary = flush_summary(report, before, after, endpoint=describe_endpoint(settings.openai_base_url))
    if report.nothing_pending:
        summary = "(nothing new to learn: your memory is as it was)"
    say(summary)
    await memory.ops.shutdown(settings.shutdown_timeout_seconds * (1 - FLUSH_SHARE))
    say(f"(memory kept in {memory.ops.where})")

