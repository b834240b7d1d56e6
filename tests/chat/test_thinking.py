"""What a model does with its reasoning: detecting a lone `</think>`, the reveal decision, and the record that
survives restarts (a real file, written atomically)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.chat.thinking import (
    RecordModelTraits,
    Reveal,
    ThinkingGuard,
    ThinkingHabit,
    lone_closer_in,
    may_show,
)
from bot.memory.drivers.bundle import MODEL_TRAITS_FILE, build_file_storage
from bot.storage.pg.records import PostgresRecords
from bot.storage.records import RecordTable
from tests.conftest_state import Databases


@pytest.mark.parametrize(
    ("raw", "lone"),
    [
        ("plain answer", False),
        ("<think>reasoning</think>answer", False),
        ("<think>a<think>b</think>c</think>answer", False),
        ("reasoning</think>answer", True),
        ("reasoning</THINKING>answer", True),
        ("<think>a</think>b</think>c", True),
        ("<think>never closed", False),
    ],
)
def test_a_lone_closer_is_one_that_closes_no_opener(raw: str, lone: bool) -> None:
    assert lone_closer_in(raw) is lone


def test_what_each_reveal_may_show() -> None:
    assert may_show(Reveal.LIVE, "reasoning so far")
    assert not may_show(Reveal.AFTER_CLOSER, "reasoning so far")
    assert may_show(Reveal.AFTER_CLOSER, "reasoning</think>answer")
    assert not may_show(Reveal.WHOLE, "reasoning</think>answer")


async def traits_in(tmp_path: Path, databases: Databases | None) -> RecordModelTraits:
    """What a freshly started process knows (files: through the file builder, as the bot)."""
    table: RecordTable
    if databases is None:
        table = build_file_storage(tmp_path, durable=False).model_traits
    else:
        table = PostgresRecords(await databases.open(), "model-traits")
    await table.open()
    return RecordModelTraits(table)


async def test_a_model_is_unknown_then_plain_and_a_lone_closer_sticks_across_restarts(
    tmp_path: Path, databases: Databases | None
) -> None:
    guard = ThinkingGuard(await traits_in(tmp_path, databases))
    assert guard.reveal_for("m") is Reveal.WHOLE  # never answered: its first reply is posted whole
    await guard.learn("m", "a plain answer", complete=True)
    assert guard.reveal_for("m") is Reveal.LIVE
    await guard.learn("m", "it reasoned</think>then answered", complete=False)  # even from a broken stream
    assert guard.reveal_for("m") is Reveal.AFTER_CLOSER
    await guard.learn("m", "a plain answer again", complete=True)
    assert guard.reveal_for("m") is Reveal.AFTER_CLOSER  # never downgraded

    restarted = ThinkingGuard(await traits_in(tmp_path, databases))
    assert restarted.reveal_for("m") is Reveal.AFTER_CLOSER
    assert restarted.reveal_for("other") is Reveal.WHOLE
    if databases is None:
        path = tmp_path / MODEL_TRAITS_FILE
        assert json.loads(path.read_bytes()) == {"records": {"m": {"habit": "lone_closer"}}}
        assert os.stat(path).st_mode & 0o077 == 0  # readable by the bot's user only


async def test_an_incomplete_answer_without_a_closer_teaches_nothing(tmp_path: Path) -> None:
    guard = ThinkingGuard(await traits_in(tmp_path, None))
    await guard.learn("m", "cut off mid", complete=False)
    assert guard.reveal_for("m") is Reveal.WHOLE
    assert not (tmp_path / MODEL_TRAITS_FILE).exists()


async def test_models_the_operator_names_wait_for_the_closer_from_their_first_reply(tmp_path: Path) -> None:
    guard = ThinkingGuard(await traits_in(tmp_path, None), thinking_models=["qwen3:8b"])
    assert guard.reveal_for("qwen3:8b") is Reveal.AFTER_CLOSER
    assert guard.reveal_for("gpt-4o-mini") is Reveal.WHOLE


@pytest.mark.parametrize(
    "content", [b"{not json", b'{"records": ["a"]}', b'{"records": {"m": {"habit": "sometimes"}}}']
)
async def test_an_unreadable_record_counts_as_unknown(tmp_path: Path, content: bytes) -> None:
    (tmp_path / MODEL_TRAITS_FILE).write_bytes(content)
    traits = await traits_in(tmp_path, None)
    assert traits.habit("m") is ThinkingHabit.UNKNOWN  # the safe reading: the next reply is posted whole
    await traits.record("m", ThinkingHabit.PLAIN)
    assert traits.habit("m") is ThinkingHabit.PLAIN
    assert (await traits_in(tmp_path, None)).habit("m") is ThinkingHabit.PLAIN
