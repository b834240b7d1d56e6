"""The memory file and the extractor's answer: round trips, ids, and coercion of what LLMs really write."""

from __future__ import annotations

import copy
import json
import math
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from bot.memory.models import (
    FACT_CATEGORIES,
    MEMORY_VERSION,
    Fact,
    MemoryFile,
    Turn,
    new_fact_id,
)
from bot.memory.pipeline.answer import ExtractionResult, NewFact

FULL_FILE_WITH_UNKNOWN_FIELDS = {
    "version": "1.0",
    "writtenBy": "memory-bot 9.9",  # top level
    "user": {
        "workContext": {"summary": "Writes Go.", "updatedAt": "2024-01-02T03:04:05+00:00", "source": "chat"},
        "personalContext": {"summary": "", "updatedAt": ""},
        "topOfMind": {"summary": "", "updatedAt": ""},
        "mood": {"summary": "calm"},  # unknown user section
    },
    "history": {
        "recentMonths": {"summary": "Moved to Berlin.", "updatedAt": "", "weight": 3},  # section field
        "earlierContext": {"summary": "", "updatedAt": ""},
        "longTermBackground": {"summary": "", "updatedAt": ""},
        "childhood": "somewhere",  # unknown history field
    },
    "facts": [
        {
            "id": "fact_0123abcd",
            "content": "Writes Go microservices",
            "category": "knowledge",
            "confidence": 0.9,
            "createdAt": "2024-01-02T03:04:05+00:00",
            "source": "conversation:1",
            "lastConfirmedAt": "",
            "embedding": [0.1, 0.2],  # fact field from a future version
            "tags": {"nested": {"deeper": True}},
        }
    ],
    "appliedTurnIds": ["1", "2"],
    "settings": {"paused": False},
}


def as_migrated(seed_file: dict[str, Any]) -> dict[str, Any]:
    """A "1.0" file as this version writes it back: version 2.0, no other places' summaries yet, and every fact
    learned in DMs and not shared (the safe reading of a file from before places)."""
    migrated = copy.deepcopy(seed_file)
    migrated["version"] = "2.0"
    migrated["places"] = {}
    for fact in migrated["facts"]:
        fact.update(place="dm", shared=False)
    return migrated


def test_round_trip_keeps_unknown_fields_at_every_level() -> None:
    memory = MemoryFile.model_validate_json(json.dumps(FULL_FILE_WITH_UNKNOWN_FIELDS))
    dumped = json.loads(memory.model_dump_json())
    assert dumped == as_migrated(FULL_FILE_WITH_UNKNOWN_FIELDS)


def test_round_trip_through_model_validate_and_model_dump() -> None:
    memory = MemoryFile.model_validate(FULL_FILE_WITH_UNKNOWN_FIELDS)
    again = MemoryFile.model_validate(memory.model_dump(mode="json"))
    assert again.model_dump(mode="json") == as_migrated(FULL_FILE_WITH_UNKNOWN_FIELDS)
    assert again.facts[0].model_extra == {"embedding": [0.1, 0.2], "tags": {"nested": {"deeper": True}}}


def test_known_fields_are_typed_after_loading() -> None:
    memory = MemoryFile.model_validate(FULL_FILE_WITH_UNKNOWN_FIELDS)
    assert memory.user.workContext.summary == "Writes Go."
    assert memory.history.recentMonths.summary == "Moved to Berlin."
    assert memory.facts[0].confidence == 0.9
    assert memory.fact_by_id("fact_0123abcd") is memory.facts[0]
    assert memory.fact_by_id("fact_ffffffff") is None


def test_new_file_has_version_2_0_and_every_section() -> None:
    dumped = MemoryFile().model_dump(mode="json")
    assert MEMORY_VERSION == "2.0"
    assert dumped["version"] == "2.0"
    assert dumped["places"] == {}
    assert set(dumped["user"]) == {"workContext", "personalContext", "topOfMind"}
    assert set(dumped["history"]) == {"recentMonths", "earlierContext", "longTermBackground"}
    assert dumped["user"]["workContext"] == {"summary": "", "updatedAt": ""}
    assert dumped["facts"] == []


def test_sections_come_in_a_fixed_order_and_emptiness_follows_content() -> None:
    memory = MemoryFile()
    assert [name for name, _ in memory.sections()] == [
        "workContext", "personalContext", "topOfMind", "recentMonths", "earlierContext", "longTermBackground",
    ]
    assert memory.is_empty()
    memory.history.longTermBackground.summary = "Grew up in Osaka."
    assert not memory.is_empty()
    memory = MemoryFile(facts=[Fact(id=new_fact_id(), content="Likes tea")])
    assert not memory.is_empty()


def test_fact_ids_look_like_fact_and_eight_hex_digits_and_do_not_repeat() -> None:
    ids = [new_fact_id() for _ in range(2000)]
    assert all(re.fullmatch(r"fact_[0-9a-f]{8}", fact_id) for fact_id in ids)
    assert len(set(ids)) == len(ids)


def test_a_fact_out_of_range_in_a_file_is_a_validation_error() -> None:
    with pytest.raises(ValueError):
        Fact(id="fact_00000000", content="x", confidence=1.5)


# --- the extractor's answer --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (0.9, 0.9),
        ("0.9", 0.9),
        (" 0.9 ", 0.9),
        ("90%", 0.9),
        ("85", 0.85),
        (85, 0.85),
        ("high", 0.9),
        ("Very High", 0.95),
        ("low", 0.4),
        (1, 1.0),
        (0, 0.0),
        (None, 0.0),
        ("abc", 0.0),
        ("", 0.0),
        (float("nan"), 0.0),
        ("nan", 0.0),
        (float("inf"), 0.0),
        ("1e999", 0.0),
        (10**400, 0.0),  # too big for a float: used to raise OverflowError out of validation
        (True, 0.0),
        (-1, 0.0),
        ("-0.5", 0.0),
        (7, 0.07),  # above 1 is read as a percentage
        (150, 1.0),
        ([0.9], 0.0),
    ],
)
def test_confidence_is_coerced_into_zero_to_one(raw: object, expected: float) -> None:
    fact = NewFact.model_validate({"content": "Likes tea", "confidence": raw})
    assert 0.0 <= fact.confidence <= 1.0
    assert not math.isnan(fact.confidence)
    assert fact.confidence == pytest.approx(expected)


def test_missing_confidence_means_zero_so_the_threshold_drops_it() -> None:
    assert NewFact.model_validate({"content": "Likes tea"}).confidence == 0.0


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("preference", "preference"),
        ("Preference", "preference"),
        (" GOAL ", "goal"),
        ("relationship", "relationship"),
        ("hobby", "context"),
        ("</user_memory>", "context"),
        ("", "context"),
        (None, "context"),
        (42, "context"),
    ],
)
def test_unknown_categories_become_context(raw: object, expected: str) -> None:
    fact = NewFact.model_validate({"content": "x", "category": raw, "confidence": 0.9})
    assert fact.category == expected
    assert fact.category in FACT_CATEGORIES


def test_fact_content_is_trimmed() -> None:
    assert NewFact.model_validate({"content": "  Likes tea \n", "confidence": 0.9}).content == "Likes tea"


def test_null_lists_become_empty_lists() -> None:
    result = ExtractionResult.model_validate({"newFacts": None, "factsToRemove": None})
    assert result.newFacts == []
    assert result.factsToRemove == []


def test_null_user_history_and_sections_become_empty_updates() -> None:
    result = ExtractionResult.model_validate(
        {"user": None, "history": {"recentMonths": None, "earlierContext": {"summary": None, "shouldUpdate": None}}}
    )
    assert all(not update.shouldUpdate and update.summary == "" for _, update in result.section_updates())


def test_section_updates_come_in_the_file_order() -> None:
    result = ExtractionResult.model_validate(
        {"user": {"topOfMind": {"summary": "exam", "shouldUpdate": True}},
         "history": {"longTermBackground": {"summary": "Osaka", "shouldUpdate": True}}}
    )
    names = [name for name, _ in result.section_updates()]
    assert names == [name for name, _ in MemoryFile().sections()]
    assert dict(result.section_updates())["topOfMind"].summary == "exam"
    assert dict(result.section_updates())["longTermBackground"].shouldUpdate is True


@pytest.mark.parametrize(("raw", "expected"), [("true", True), ("Yes", True), ("1", True), ("false", False),
                                              ("no", False), (1, True), (0, False), (None, False)])
def test_should_update_accepts_the_spellings_models_use(raw: object, expected: bool) -> None:
    result = ExtractionResult.model_validate({"user": {"workContext": {"summary": "x", "shouldUpdate": raw}}})
    assert result.user.workContext.shouldUpdate is expected


def test_facts_to_remove_keeps_only_strings_and_numbers_as_strings() -> None:
    result = ExtractionResult.model_validate({"factsToRemove": ["fact_0123abcd", 12, None, {"id": "x"}, ["y"]]})
    assert result.factsToRemove == ["fact_0123abcd", "12"]


def test_unknown_answer_fields_are_ignored() -> None:
    result = ExtractionResult.model_validate({"reasoning": "because", "newFacts": [{"content": "x", "confidence": 1,
                                                                                     "why": "stated"}]})
    assert "reasoning" not in result.model_dump()
    assert result.newFacts[0].model_dump() == {"content": "x", "category": "context", "confidence": 1.0}


@pytest.mark.parametrize(
    "answer",
    [
        {"newFacts": "Likes tea"},
        {"newFacts": ["Likes tea"]},
        {"user": ["workContext"]},
        {"history": "none"},
        {"factsToRemove": "fact_0123abcd"},
        {"newFacts": [{"confidence": 0.9}]},
        {"user": {"workContext": {"summary": 5, "shouldUpdate": True}}},
    ],
)
def test_wrong_shapes_are_validation_errors(answer: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ExtractionResult.model_validate(answer)


# --- turns ------------------------------------------------------------------------------------------------


def test_turn_json_round_trip_keeps_an_aware_utc_time() -> None:
    at = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone(timedelta(hours=2)))
    turn = Turn(role="assistant", author_id=42, author_name="bot", text="hi", at=at, turn_id="99")
    data = turn.to_json()
    assert data["at"] == "2024-05-06T05:08:09+00:00"
    back = Turn.from_json(json.loads(json.dumps(data)))
    assert back == Turn(role="assistant", author_id=42, author_name="bot", text="hi",
                        at=at.astimezone(UTC), turn_id="99")


def test_turn_from_json_treats_unknown_roles_as_user() -> None:
    turn = Turn.from_json({"role": "system", "authorId": "1", "text": "x", "at": "2024-01-01T00:00:00+00:00"})
    assert turn.role == "user"


def test_turn_from_json_without_timezone_is_read_as_utc() -> None:
    from datetime import UTC

    from bot.memory.models import Turn

    turn = Turn.from_json({"role": "user", "authorId": "5", "text": "hi", "at": "2026-01-02T03:04:05"})
    assert turn.at.tzinfo is not None and turn.at.utcoffset() == UTC.utcoffset(None)
    assert turn.to_json()["at"] == "2026-01-02T03:04:05+00:00"


def test_origin_marks_user_facts_and_a_stray_value_reads_as_learned() -> None:
    facts = [Fact.model_validate({"id": f"fact_{n}", "content": "x", "origin": value})
             for n, value in enumerate(["user", "corrected", {"msg": 42}, "admin", None])]
    assert [fact.user_owned for fact in facts] == [True, True, False, False, False]
    assert [fact.model_dump().get("origin") for fact in facts] == ["user", "corrected", None, None, None]
