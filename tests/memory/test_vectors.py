"""A fact's vector (`bot.memory.rules.vectors`) and the write gate's rule for it: stored compact, read back the same
direction, and kept only on the words it was computed from, whoever changes the memory."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from bot.memory.models import Fact, MemoryFile, Place
from bot.memory.rules import vectors
from bot.memory.rules.write_gate import ModelAuthor, SystemAuthor, UserAuthor, VectorAuthor, admit

MODEL = "e5"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def fact(fact_id: str, content: str, **more: object) -> Fact:
    return Fact(id=fact_id, content=content, confidence=0.9, createdAt="2026-11-01T00:00:00+00:00", **more)


def with_vector(item: Fact, seed: int = 1, size: int = 384) -> Fact:
    vectors.attach(item, MODEL, np.random.default_rng(seed).normal(size=size))
    return item


def test_a_stored_vector_keeps_its_direction_in_512_characters() -> None:
    original = np.random.default_rng(7).normal(size=384).astype(np.float32)
    text = vectors.encode(original)
    decoded = vectors.decode(text)
    assert decoded is not None and decoded.dtype == np.int8 and len(text) == 512
    cosine = float(decoded @ original / (np.linalg.norm(decoded) * np.linalg.norm(original)))
    assert cosine > 0.999
    assert vectors.dimensions_of(text) == 384
    assert vectors.dimensions_of(vectors.encode(np.ones(385))) == 385  # with base64 padding


@pytest.mark.parametrize("text", ["", "not base64 at all!", "===="])
def test_a_missing_or_damaged_vector_reads_as_none(text: str) -> None:
    assert vectors.decode(text) is None


def test_a_vector_is_current_only_for_its_model_and_length() -> None:
    item = with_vector(fact("fact_1", "Plays the cello"))
    assert vectors.is_current(item, MODEL, 384) and vectors.is_current(item, MODEL, None)
    assert not vectors.is_current(item, "another-model", 384)
    assert not vectors.is_current(item, MODEL, 768)
    memory = MemoryFile(facts=[item, fact("fact_2", "Bakes bread"), fact("fact_3", "Old", validTo="2026-01-01")])
    assert [f.id for f in vectors.needing(memory, MODEL, 384)] == ["fact_2"]  # closed facts need none


def test_an_export_leaves_the_vector_out() -> None:
    dumped = with_vector(fact("fact_1", "Plays the cello")).model_dump(mode="json")
    assert "vector" in dumped and "vectorModel" in dumped
    vectors.strip(dumped)
    assert "vector" not in dumped and "vectorModel" not in dumped
    assert "vector" not in fact("fact_2", "Bakes bread").model_dump(mode="json")  # none: no field at all


@pytest.mark.parametrize("author", [UserAuthor(), SystemAuthor(), ModelAuthor(Place.dm(), "place", NOW)])
def test_whoever_changes_the_words_the_vector_goes_with_them(author: object) -> None:
    before = MemoryFile(facts=[with_vector(fact("fact_1", "Plays the cello")), with_vector(fact("fact_2", "Bakes"))])
    after = before.model_copy(deep=True)
    after.facts[0].content = "Plays the viola"
    after.facts[1].confidence = 1.0  # only the confidence changed: the words' vector stays
    admit(before, after, author)  # type: ignore[arg-type]
    by_id = {f.id: f for f in after.facts}
    assert by_id["fact_1"].vector == "" and by_id["fact_1"].vectorModel == ""
    assert by_id["fact_2"].vector == before.facts[1].vector


@pytest.mark.parametrize("author", [UserAuthor(), SystemAuthor(), ModelAuthor(Place.dm(), "place", NOW)])
def test_nobody_but_the_keeper_sets_a_vector_and_a_new_fact_brings_none(author: object) -> None:
    before = MemoryFile(facts=[fact("fact_1", "Plays the cello")])
    after = before.model_copy(deep=True)
    with_vector(after.facts[0])  # set on a stored fact
    after.facts.append(with_vector(fact("fact_2", "Bakes bread on Sundays")))  # and on a new one
    admit(before, after, author)  # type: ignore[arg-type]
    assert all(not f.vector and not f.vectorModel for f in after.facts)


def test_the_keeper_may_set_vectors_and_nothing_else() -> None:
    before = MemoryFile(facts=[fact("fact_1", "Plays the cello"), fact("fact_2", "Bakes bread")])
    before.user.workContext.summary = "Works in logistics"
    after = before.model_copy(deep=True)
    with_vector(after.facts[0])
    after.facts[1].content = "Bakes bread and sells it"  # words changed under it: no vector, no new words
    with_vector(after.facts[1])
    after.facts.append(with_vector(fact("fact_3", "A fact the keeper has no business adding")))
    after.facts[0].confidence = 0.1
    after.user.workContext.summary = "rewritten"
    admit(before, after, VectorAuthor())
    assert [(f.id, f.content, f.confidence) for f in after.facts] == [
        ("fact_1", "Plays the cello", 0.9), ("fact_2", "Bakes bread", 0.9)
    ]
    assert after.facts[0].vector and after.facts[0].vectorModel == MODEL
    assert not after.facts[1].vector
    assert after.user.workContext.summary == "Works in logistics"
