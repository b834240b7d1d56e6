"""Every copy of a message's text the process keeps drops a deleted message and takes an edited one's new text
(`bot.chat.copies`), through the bot's real dispatch: a reply into a chain whose message was deleted or edited
sends the model none of the old words. The inventory is walked: each registered copy forgets and updates, and
every cache of message text in the application (an `LruCache` of a type that carries text) is registered."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.cogs.conftest import MakeHarness, make_scene
from tests.cogs.test_deletes import deleted, edited
from tests.helpers import dispatch
from tests.support.llm_server import reply

ROOT = Path(__file__).resolve().parents[2]
SECRET = "zebra-cobalt-77"
TEXT_TYPES = frozenset({"HistoryEntry", "Link", "Turn", "IncomingMessage", "PendingTurn", "str"})


async def chain_after(make_harness: MakeHarness, change: str) -> str:
    """Bob's message, the bot's answer to it, Alice replying into the chain (which caches it); then Bob's message
    is `change`d ("delete" or "edit") and Alice replies into the chain again: that request, as text."""
    h = await make_harness(history_messages=0)
    s = make_scene(h)
    h.llm.chat_reply = lambda body: reply("Noted.")
    said = h.discord.message(s.general, s.bob, f"my locker code is {SECRET}")
    answer = h.discord.reply_to(s.general, h.discord.me, said, "Noted.", resolved=False)
    await dispatch(h.bot, "message", h.discord.reply_to(s.general, s.alice, answer, "which locker?"))
    assert SECRET in str(h.llm.chat_requests[-1]["messages"])  # the chain carried Bob's words, and cached them
    if change == "delete":
        h.discord.delete(said)
        await dispatch(h.bot, "raw_message_delete", deleted(said, cached=False))
    else:
        await dispatch(h.bot, "raw_message_edit", edited(said, "never mind", cached=False))
    await dispatch(h.bot, "message", h.discord.reply_to(s.general, s.alice, answer, "and the other one?"))
    return str(h.llm.chat_requests[-1]["messages"])


async def test_a_deleted_message_leaves_the_reply_chain(make_harness: MakeHarness) -> None:
    assert SECRET not in await chain_after(make_harness, "delete")


async def test_an_edited_message_reads_as_edited_in_the_reply_chain(make_harness: MakeHarness) -> None:
    request = await chain_after(make_harness, "edit")
    assert SECRET not in request and "never mind" in request


async def test_each_copy_in_the_inventory_drops_and_updates(make_harness: MakeHarness) -> None:
    from bot.chat.conversation import HistoryEntry
    from bot.chat.reply_chain import Link

    h = await make_harness()
    copies = h.bot.message_copies
    assert copies.names() == ["history starts", "reply chains"]
    chains, starts = copies.get("reply chains"), copies.get("history starts")
    entry = HistoryEntry(1, "Bob", f"code {SECRET}", message_id=42)
    chains._cache.put(42, Link(entry, 7, None, None))  # type: ignore[attr-defined]
    starts._starts.put(7, entry)  # type: ignore[attr-defined]
    assert copies.edited(42, "edited") == 2
    assert chains._cache.peek(42).entry.text == "edited"  # type: ignore[attr-defined]
    assert starts._starts.peek(7).text == "edited"  # type: ignore[attr-defined]
    assert copies.deleted([42]) == 2 and copies.deleted([42]) == 0
    assert chains._cache.peek(42) is None and starts._starts.peek(7) is None  # type: ignore[attr-defined]


NOT_MESSAGE_TEXT = {"LocaleBook"}  # its strings are language codes ("ja"), one per user id: no message's words


def _text_caches() -> set[str]:
    """`Class` for every class of the application (not the engine, not the plumbing) that keeps an `LruCache` of a
    type carrying message text."""
    found = set()
    for path in [*(ROOT / "bot").rglob("*.py"), *(ROOT / "cogs").rglob("*.py")]:
        if {"memory", "storage"} & set(path.relative_to(ROOT).parts[1:2]):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in ast.walk(node):
                    if isinstance(item, ast.AnnAssign) and "LruCache" in ast.unparse(item.annotation):
                        names = {n.id for n in ast.walk(item.annotation) if isinstance(n, ast.Name)}
                        if names & TEXT_TYPES:
                            found.add(node.name)
    return found


async def test_every_cache_of_message_text_is_in_the_inventory(make_harness: MakeHarness) -> None:
    h = await make_harness()
    registered = {type(h.bot.message_copies.get(name)).__name__ for name in h.bot.message_copies.names()}
    caches = _text_caches() - NOT_MESSAGE_TEXT
    assert {"ReplyChains", "HistoryTrimmer"} <= caches  # the scan finds the ones we know of
    assert caches <= registered
