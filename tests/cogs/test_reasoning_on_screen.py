"""Reasoning never on screen, through the real bot's dispatch against the test Chat Completions server: a server
that strips the `<think>` opener streams the reasoning as plain text and ends it with a lone `</think>`. A model's
first reply is posted whole; a model that has sent a lone closer is never shown before it, also after a restart;
other models stream from their first words; `THINKING_MODELS` names models known to do it."""

from __future__ import annotations

import json
from pathlib import Path

from bot.memory.drivers.bundle import MODEL_TRAITS_FILE
from tests.cogs.conftest import MakeHarness, make_scene
from tests.helpers import CHAT_MODEL, Harness, Sent, dispatch
from tests.support.llm_server import Response, reply

REASONING = "The memory says the user is being treated for depression, so I should be careful. " * 6
ANSWER = "Here is a hiking plan for Saturday: " + "walk, rest, look at the view. " * 40


def every_text_shown(records: list[Sent]) -> list[str]:
    return [text for r in records for text in (r.posted_content, *(e.content for e in r.edits))]


def thinking_reply() -> Response:
    return reply(REASONING + "</think>" + ANSWER, first_token_seconds=0.05, stream_seconds=1.6, chunks=48)


def plain_reply() -> Response:
    return reply(ANSWER, first_token_seconds=0.05, stream_seconds=1.6, chunks=48)


async def ask(h: Harness, response: Response, text: str = "plan my hike") -> list[Sent]:
    s = make_scene(h)
    h.llm.say(response)
    message = h.discord.mention_bot(s.general, s.alice, text)
    await dispatch(h.bot, "message", message)
    records = h.discord.replies_to(message)
    assert "\n".join(r.content for r in records).startswith("Here is a hiking plan")
    return records


def traits_on_disk(data_dir: Path) -> dict[str, str]:
    records = json.loads((data_dir / MODEL_TRAITS_FILE).read_bytes())["records"]
    return {model: record["habit"] for model, record in records.items()}


async def test_a_lone_closer_model_never_shows_its_reasoning_and_is_remembered_across_restarts(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    h = await make_harness(data_dir=data, stream_edit_seconds=0.2)
    first = await ask(h, thinking_reply())
    assert not any("depression" in text for text in every_text_shown(first))
    assert [len(r.edits) for r in first] == [0] * len(first)  # the first reply is posted whole
    assert traits_on_disk(data) == {CHAT_MODEL: "lone_closer"}
    await h.close()

    restarted = await make_harness(data_dir=data, stream_edit_seconds=0.2)
    second = await ask(restarted, thinking_reply())
    assert not any("depression" in text for text in every_text_shown(second))
    assert any(r.edits for r in second), "the answer after the closer still streams"


async def test_a_plain_model_is_posted_whole_once_then_streams_from_its_first_words(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    h = await make_harness(data_dir=tmp_path / "data", stream_edit_seconds=0.2)
    first = await ask(h, plain_reply())
    assert all(not r.edits for r in first)
    assert traits_on_disk(tmp_path / "data") == {CHAT_MODEL: "plain"}
    second = await ask(h, plain_reply())
    assert second[0].edits, "posted before the answer was complete"
    assert second[0].posted_content.startswith("Here is a hiking plan")


async def test_a_plain_model_that_sends_a_lone_closer_is_held_back_from_then_on(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    h = await make_harness(data_dir=tmp_path / "data", stream_edit_seconds=0.2)
    await ask(h, plain_reply())
    await ask(h, thinking_reply())  # streamed live: this one can still flash its reasoning, and teaches the rule
    assert traits_on_disk(tmp_path / "data") == {CHAT_MODEL: "lone_closer"}
    third = await ask(h, thinking_reply())
    assert not any("depression" in text for text in every_text_shown(third))


async def test_thinking_models_stream_after_the_closer_from_their_first_reply(make_harness: MakeHarness) -> None:
    h = await make_harness(stream_edit_seconds=0.2, thinking_models=CHAT_MODEL)
    records = await ask(h, thinking_reply())
    assert not any("depression" in text for text in every_text_shown(records))
    assert any(r.edits for r in records), "streamed, not held to the end"


async def test_whole_replies_learn_the_models_habit_too(make_harness: MakeHarness, tmp_path: Path) -> None:
    h = await make_harness(data_dir=tmp_path / "data", stream_replies=False)
    records = await ask(h, thinking_reply())
    assert not any("depression" in text for text in every_text_shown(records))
    assert traits_on_disk(tmp_path / "data") == {CHAT_MODEL: "lone_closer"}
