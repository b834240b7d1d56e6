"""Tolerant parsing of the extractor's answer: find the JSON wherever the model put it, refuse anything else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.pipeline import parsing
from bot.memory.pipeline.answer import ExtractionResult
from bot.memory.pipeline.parsing import MAX_FAILED_STARTS, ExtractionParseError, parse_extraction, strip_thinking


def answer(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "user": {
            "workContext": {"summary": "Writes Go microservices.", "shouldUpdate": True},
            "personalContext": {"summary": "", "shouldUpdate": False},
            "topOfMind": {"summary": "", "shouldUpdate": False},
        },
        "history": {
            "recentMonths": {"summary": "", "shouldUpdate": False},
            "earlierContext": {"summary": "", "shouldUpdate": False},
            "longTermBackground": {"summary": "", "shouldUpdate": False},
        },
        "newFacts": [{"content": "Writes Go microservices", "category": "knowledge", "confidence": 0.9}],
        "factsToRemove": ["fact_0123abcd"],
    }
    base.update(overrides)
    return base


ANSWER = json.dumps(answer())


def assert_is_the_answer(result: ExtractionResult) -> None:
    assert result.user.workContext.shouldUpdate is True
    assert result.user.workContext.summary == "Writes Go microservices."
    assert [(fact.content, fact.category, fact.confidence) for fact in result.newFacts] == [
        ("Writes Go microservices", "knowledge", 0.9)
    ]
    assert result.factsToRemove == ["fact_0123abcd"]


@pytest.mark.parametrize(
    "text",
    [
        ANSWER,
        f"  \n{ANSWER}\n",
        json.dumps(answer(), indent=2),
        f"```json\n{ANSWER}\n```",
        f"```JSON\n{ANSWER}```",
        f"```\n{ANSWER}\n```",
        f"Here is the update:\n```json\n{ANSWER}\n```\nLet me know if you need more.",
        f"Sure! Here is the JSON you asked for: {ANSWER} Hope this helps.",
        f"<think>The user said they write Go. I should add {{\"newFacts\": []}}... no, a fact.</think>\n{ANSWER}",
        f"<thinking>\nplan\n</thinking>```json\n{ANSWER}\n```",
        f"<THINK>a</THINK><think>b</think>{ANSWER}",
        # The server stripped the opening tag: everything before the lone closing tag is reasoning.
        f'Okay, {{"newFacts": "draft"}} wait, let me redo this.\n</think>\n\n{ANSWER}',
        # An object that is not an extraction answer comes first and is skipped.
        f'{{"a": 1}} and then {ANSWER}',
        f'Memory now: {{"summaries": {{"x": {{"y": 1}}}}, "facts": [{{"id": "fact_1"}}]}}\nAnswer: {ANSWER}',
        # The answer wrapped one level down.
        json.dumps({"result": answer()}),
    ],
)
def test_finds_the_answer(text: str) -> None:
    assert_is_the_answer(parse_extraction(text))


def test_a_partial_answer_is_filled_with_defaults() -> None:
    result = parse_extraction('{"newFacts": [{"content": "Has a cat", "confidence": 0.95}]}')
    assert [fact.content for fact in result.newFacts] == ["Has a cat"]
    assert result.factsToRemove == []
    assert not any(update.shouldUpdate for _, update in result.section_updates())


def test_confidence_as_string_or_null_is_coerced() -> None:
    facts = [
        {"content": "a", "confidence": "0.8"},
        {"content": "b", "confidence": None},
        {"content": "c", "confidence": "95%"},
        {"content": "d", "confidence": "high"},
        {"content": "e"},
    ]
    result = parse_extraction(json.dumps(answer(newFacts=facts)))
    assert [fact.confidence for fact in result.newFacts] == pytest.approx([0.8, 0.0, 0.95, 0.9, 0.0])


def test_null_lists_are_empty() -> None:
    result = parse_extraction(json.dumps(answer(newFacts=None, factsToRemove=None)))
    assert result.newFacts == [] and result.factsToRemove == []


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "empty"),
        ("", "empty"),
        ("   \n", "empty"),
        ("I could not find anything worth remembering.", "no JSON"),
        ('{"a": 1}', "no JSON"),
        ("[1, 2, 3]", "no JSON"),
        (ANSWER[: len(ANSWER) // 2], "no JSON"),  # truncated
        (ANSWER[:-1], "no JSON"),  # truncated by one character
        (f"```json\n{ANSWER[:-20]}\n```", "no JSON"),
        (f"<think>{ANSWER}", "no JSON"),  # only ever inside unfinished reasoning
        (json.dumps(answer(newFacts="Writes Go")), "wrong shape"),
        (json.dumps(answer(newFacts=["Writes Go"])), "wrong shape"),
        (json.dumps(answer(user=["workContext"])), "wrong shape"),
        (json.dumps(answer(history=3)), "wrong shape"),
        (json.dumps(answer(factsToRemove="fact_0123abcd")), "wrong shape"),
        (json.dumps(answer(newFacts=[{"category": "goal", "confidence": 1}])), "wrong shape"),
    ],
)
def test_refuses_what_is_not_a_usable_answer(text: str | None, reason: str) -> None:
    with pytest.raises(ExtractionParseError, match=reason):
        parse_extraction(text)


def test_error_messages_never_repeat_the_answer() -> None:
    secret = "my password is hunter2"
    with pytest.raises(ExtractionParseError) as error:
        parse_extraction(json.dumps(answer(newFacts=secret)))
    assert "hunter2" not in str(error.value)


def test_a_ten_megabyte_answer_is_refused_without_being_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    def must_not_run(text: str) -> list[str]:
        raise AssertionError("a huge answer was scanned")

    monkeypatch.setattr(parsing, "_candidates", must_not_run)
    huge = ANSWER + " " * (10 * 1024 * 1024)
    with pytest.raises(ExtractionParseError, match="too long"):
        parse_extraction(huge)


class CountingDecoder(json.JSONDecoder):
    calls = 0

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        CountingDecoder.calls += 1
        return super().raw_decode(s, idx)


@pytest.mark.parametrize(
    "pathological",
    [
        "{" * 150_000,
        '{"a":"' * 30_000,
        '{"a":1,' * 25_000,
        '{"' + '\\"' * 90_000,
        '{"a":' + "[" * 100_000,
        "<think>" * 28_000,
        "<thinking>a" * 18_000,
        "```json" * 28_000,
    ],
)
def test_pathological_answers_cost_a_bounded_number_of_decode_attempts(
    pathological: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each failed decode costs time proportional to the text; before the cap, a page of `{"` meant ~10^5 attempts
    # (seconds of CPU on the event loop). Counting attempts proves the bound without timing anything.
    CountingDecoder.calls = 0
    monkeypatch.setattr(json, "JSONDecoder", CountingDecoder)  # the module parsing uses
    with pytest.raises(ExtractionParseError):
        parse_extraction(pathological)
    assert CountingDecoder.calls <= 2 * MAX_FAILED_STARTS


def test_deep_nesting_before_the_answer_does_not_hide_it() -> None:
    assert_is_the_answer(parse_extraction('{"a": ' + "[" * 5000 + " " + ANSWER))


def test_many_small_objects_before_the_answer_are_skipped_not_counted_as_failures() -> None:
    noise = '{"a": {}} ' * (MAX_FAILED_STARTS * 3)
    assert_is_the_answer(parse_extraction(noise + ANSWER))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a<think>b</think>c", "ac"),
        ("a<THINKING>b</thinking>c<think>d</think>e", "ace"),
        ("a<think>b<think>c</think>d</think>e", "ae"),
        ("reasoning</think>answer", "answer"),
        ("x</think>y</think>z", "z"),
        ("a<think>never closed", "a"),
        ("no tags at all", "no tags at all"),
    ],
)
def test_strip_thinking(text: str, expected: str) -> None:
    assert strip_thinking(text) == expected


_JSONISH = st.text(alphabet='{}[]":,0123456789.truefalsn \n\\`<>/thinkuserFacts', max_size=400)


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(
        st.none(),
        st.text(max_size=2000),
        _JSONISH,
        st.builds(lambda before, after: before + ANSWER + after, st.text(max_size=50), st.text(max_size=50)),
        st.builds(lambda cut: ANSWER[:cut], st.integers(min_value=0, max_value=len(ANSWER))),
        st.recursive(
            st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
            lambda children: st.lists(children, max_size=4)
            | st.dictionaries(
                st.sampled_from(["user", "history", "newFacts", "factsToRemove", "content", "confidence",
                                 "category", "summary", "shouldUpdate", "workContext", "x"]),
                children,
                max_size=4,
            ),
            max_leaves=20,
        ).map(json.dumps),
    )
)
def test_any_text_gives_a_result_or_a_parse_error(text: str | None) -> None:
    try:
        result = parse_extraction(text)
    except ExtractionParseError:
        return
    assert isinstance(result, ExtractionResult)
    assert all(0.0 <= fact.confidence <= 1.0 for fact in result.newFacts)
